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
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/options"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/plan"
)

// summary is the closing line of a run that changed the cluster: what it
// did and, when phases were skipped, what still runs an older version and
// the command that finishes the upgrade. The phase table says what each
// phase did or left behind.
func summary(st *actions.State, opts options.Upgrade) string {
	skips, clusterName, image, imageDir := opts.Skips, opts.ClusterName, opts.Image, opts.ImageDir
	var behind, done, notes []string
	for _, p := range workflow {
		if !p.Skippable {
			continue
		}
		switch {
		case !skips(p.Name) && p.unneeded != nil && p.unneeded(st) != "":
			// it had nothing to do
		case !skips(p.Name):
			if p.done != "" {
				phrase := p.done
				if strings.Contains(phrase, "%s") {
					phrase = fmt.Sprintf(phrase, st.Target)
				}
				done = append(done, phrase)
			}
		case p.behind != nil:
			if b := p.behind(st); b != "" {
				behind = append(behind, b)
			}
		case p.skippedNote != "":
			notes = append(notes, p.skippedNote)
		}
	}
	if b := kubeProxyBehind(st, opts); b != "" {
		behind = append(behind, b)
	}
	config := ""
	for _, c := range st.ConfigChanges {
		config += " kubeadm configuration: " + c.String() + "."
	}
	if left := leftByChoice(st); left != "" && !skips(actions.PhaseKubelets) {
		notes = append(notes, "Left at their version by "+opts.Name(options.Nodes)+": "+left+"; move them later by running again with them in "+opts.Name(options.Nodes)+".")
	}
	if st.ControlPlaneOnly {
		msg := "Re-applied the control plane at " + st.Target + " for its new emulation (the kubelets already ran it)." + config
		for _, note := range notes {
			msg += " " + note
		}
		return msg
	}
	if st.KubeletsAt != "" && len(behind) == 0 {
		// a chain's hop before the kubelets move
		msg := "Upgraded the control plane from " + st.From + " to " + st.Target + "; the kubelets move at " + st.KubeletsAt + "." + config
		if b := kubeletsBehind(st); b != "" {
			msg += " Still older until then: " + b + "."
		}
		return msg
	}
	if len(behind) == 0 {
		msg := "Upgraded the cluster from " + st.From + " to " + st.Target + "."
		if st.From == st.Target {
			// a run that finished what an earlier one started
			msg = "Upgraded the cluster to " + st.Target + " (its control plane already ran it)."
		}
		msg += config
		for _, note := range notes {
			msg += " " + note
		}
		return msg
	}
	did := "Skipped every phase that changes the cluster"
	if len(done) > 0 {
		did = "Partly upgraded to " + st.Target + ": " + strings.Join(done, ", ")
	}
	if opts.GoNames {
		return did + ". Still older: " + strings.Join(behind, "; ") + ". To finish, run the upgrade again without " + opts.Name(options.SkipPhases) + "."
	}
	finish := "kind alpha upgrade"
	if clusterName != "" {
		finish += " --name " + shellescape.Quote(clusterName)
	}
	if image != "" {
		finish += " --image " + shellescape.Quote(image)
	}
	if imageDir != "" {
		finish += " --image-dir " + shellescape.Quote(imageDir)
	}
	if opts.Patches != "" {
		// kubeadm keeps no patches: every run that renders the control
		// plane must hand them again
		finish += " --patches " + shellescape.Quote(opts.Patches)
	}
	return did + ". Still older: " + strings.Join(behind, "; ") + ". To finish, run without --skip-phases: " + finish
}

// kubeProxyBehind is what leaving kube-proxy at its version left older,
// when the control plane was upgraded.
func kubeProxyBehind(st *actions.State, opts options.Upgrade) string {
	if !st.LeavesKubeProxy || opts.Skips(actions.PhaseControlPlane) || st.KubeProxy == nil || plan.SameRelease(st.KubeProxy, st.TargetVersion) {
		return ""
	}
	return "kube-proxy (v" + st.KubeProxy.String() + ")"
}

// kubeletsUnneeded says why the kubelets phase has nothing to do: the run
// only re-applies the control plane.
func kubeletsUnneeded(st *actions.State) string {
	if st.ControlPlaneOnly {
		return "every kubelet already runs " + st.Target
	}
	if st.KubeletsAt != "" {
		return "the kubelets move at " + st.KubeletsAt
	}
	return ""
}

// controlPlaneBehind is what a skipped control-plane phase leaves older.
func controlPlaneBehind(st *actions.State) string {
	if st.From == st.Target {
		return ""
	}
	return "the control plane (" + st.From + ")"
}

// leftByChoice lists the nodes --nodes left out whose kubelets do not run
// the target.
func leftByChoice(st *actions.State) string {
	var left []string
	for _, n := range st.Ordered() {
		if st.MovesKubelet(n.String()) {
			continue
		}
		if v := "v" + st.Info[n.String()].Kubelet.String(); v != st.Target {
			left = append(left, fmt.Sprintf("%s (%s)", n, v))
		}
	}
	return strings.Join(left, ", ")
}

// kubeletsBehind is what a skipped kubelets phase leaves older.
func kubeletsBehind(st *actions.State) string {
	var nodes []string
	for _, n := range st.Ordered() {
		if v := "v" + st.Info[n.String()].Kubelet.String(); v != st.Target {
			nodes = append(nodes, fmt.Sprintf("%s (%s)", n, v))
		}
	}
	if len(nodes) == 0 {
		return ""
	}
	return "the kubelets and /kind/version of " + strings.Join(nodes, ", ")
}
