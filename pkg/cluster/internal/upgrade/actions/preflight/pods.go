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

package preflight

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kind/pkg/errors"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/options"
)

// checkDrains refuses to start when a node the kubelets phase will drain
// runs a pod that no controller recreates: kubectl drain stops there
// (half-way through the upgrade) unless told to delete it, and the pod is
// then lost.
func checkDrains(ctx *actions.Context) error {
	st := ctx.State
	if !st.UpgradesKubelets || ctx.Options.Force {
		return nil
	}
	pods, err := ctx.Kube().Pods(ctx)
	if err != nil {
		return errors.Wrap(err, "failed to list the cluster's pods")
	}
	if names := UnmanagedOnDrained(st.Registered, pods, st.Target, st.MovesKubelet); len(names) > 0 {
		return errors.Errorf("the upgrade drains nodes that run pods no controller recreates, which kubectl drain only deletes when forced:\n  %s\ndelete or move them first (e.g. run them from a Deployment), or run again with %s to let the drains delete them (they are lost)", strings.Join(names, "\n  "), ctx.Options.Name(options.Force))
	}
	return nil
}

// UnmanagedOnDrained lists, as "namespace/name on node", the pods that
// kubectl drain would refuse to delete on the nodes the kubelets phase
// drains (see actions.DrainNeeded). A pod that goes away by itself (one
// being deleted, or a storage helper its provisioner deletes when done) is
// not listed: the drain waits for it.
func UnmanagedOnDrained(list []kube.Node, pods []kube.Pod, target string, moves func(node string) bool) []string {
	drained := map[string]bool{}
	for _, n := range list {
		if needed, _ := actions.DrainNeeded(list, n, target); needed && moves(n.Name) {
			drained[n.Name] = true
		}
	}
	var names []string
	for _, p := range pods {
		if p.Unmanaged && !p.GoesAway() && drained[p.NodeName] {
			names = append(names, fmt.Sprintf("%s/%s on %s", p.Namespace, p.Name, p.NodeName))
		}
	}
	return names
}
