/*
Copyright 2026 The kind-upgrade Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package upgrade

import (
	"fmt"
	"strings"

	"al.essio.dev/pkg/shellescape"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/controlplane"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/kubelets"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/loadartifacts"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/verify"
)

// summary is the closing line of a run that changed the cluster: what it
// did and, when phases were skipped, what still runs an older version and
// the command that finishes the upgrade.
func summary(st *actions.State, skips func(phase string) bool, clusterName, imageDir string) string {
	var behind []string
	if skips(controlplane.Phase) && st.From != st.Target {
		behind = append(behind, "the control plane ("+st.From+")")
	}
	if skips(kubelets.Phase) {
		var nodes []string
		for _, n := range st.Ordered() {
			if v := "v" + st.Info[n.String()].Kubelet.String(); v != st.Target {
				nodes = append(nodes, fmt.Sprintf("%s (%s)", n, v))
			}
		}
		if len(nodes) > 0 {
			behind = append(behind, "the kubelets and /kind/version of "+strings.Join(nodes, ", "))
		}
	}
	if len(behind) == 0 {
		msg := "Upgraded the cluster from " + st.From + " to " + st.Target + "."
		if st.From == st.Target {
			// a run that finished what an earlier one started
			msg = "Upgraded the cluster to " + st.Target + " (its control plane already ran it)."
		}
		if skips(verify.Phase) {
			msg += " The verify phase was skipped."
		}
		return msg
	}
	var done []string
	if !skips(loadartifacts.Phase) {
		done = append(done, "loaded the "+st.Target+" binaries and images into the nodes")
	}
	if !skips(controlplane.Phase) {
		done = append(done, "upgraded the control plane to "+st.Target)
	}
	if !skips(kubelets.Phase) {
		done = append(done, "upgraded the kubelets to "+st.Target)
	}
	if !skips(verify.Phase) {
		done = append(done, "verified the control plane")
	}
	did := "Skipped every phase that changes the cluster"
	if len(done) > 0 {
		did = "Partly upgraded to " + st.Target + ": " + strings.Join(done, ", ")
	}
	finish := "kind alpha upgrade"
	if clusterName != "" {
		finish += " --name " + shellescape.Quote(clusterName)
	}
	finish += " --image-dir " + shellescape.Quote(imageDir)
	return did + ". Still older: " + strings.Join(behind, "; ") + ". To finish, run without --skip-phases: " + finish
}
