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

// Package controlplane implements the control-plane phase: `kubeadm upgrade
// apply` on the bootstrap control-plane node, then `kubeadm upgrade node`
// on the other control-plane nodes, one at a time, each waited for until
// its static pods run the target and are Ready.
package controlplane

import (
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/staticpods"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/stepid"
)

// Phase is this phase's name.
const Phase = actions.PhaseControlPlane

type action struct{}

// NewAction returns the control-plane action.
func NewAction() actions.Action {
	return &action{}
}

// Execute upgrades the control-plane nodes strictly one after another.
func (a *action) Execute(ctx *actions.Context) error {
	for _, n := range ctx.State.ControlPlanes {
		if err := ctx.RunSteps(Phase, n.String(), Steps(ctx, n)); err != nil {
			return err
		}
	}
	return nil
}

// Steps are the steps of this phase on control-plane node n.
// A worker has none.
func Steps(ctx *actions.Context, n nodes.Node) []actions.Step {
	// kubeadm restarts the API servers all through this phase
	ctx = ctx.AfterAPIRestarts()
	st := ctx.State
	if !st.IsControlPlane(n) {
		return nil
	}
	bootstrap := n.String() == st.Bootstrap.String()
	upgrade := actions.Task{
		ID:   stepid.ControlPlaneNode,
		Name: "kubeadm upgrade node",
		Done: func() (bool, string, error) {
			done, _, err := staticpods.AtTarget(ctx, n)
			return done, "", err
		},
		Run: func() error {
			return ctx.Kubeadm(Phase, n, "upgrade", "node", ctx.KubeadmIgnorePreflightErrors())
		},
	}
	if bootstrap {
		upgrade = actions.Task{
			ID:   stepid.ControlPlaneApply,
			Name: "kubeadm upgrade apply " + st.Target,
			Done: func() (bool, string, error) {
				done, _, err := staticpods.AtTarget(ctx, n)
				if err != nil || !done {
					return false, "", err
				}
				cfg, err := ctx.Kube().ClusterConfiguration(ctx)
				if err != nil {
					return false, "", err
				}
				return cfg.KubernetesVersion == st.Target, "", nil
			},
			Run: func() error {
				args := []string{"upgrade", "apply", st.Target, "--yes", ctx.KubeadmIgnorePreflightErrors()}
				if st.TargetVersion.Prerelease() != "" {
					args = append(args, "--allow-experimental-upgrades", "--allow-release-candidate-upgrades")
				}
				return ctx.Kubeadm(Phase, n, args...)
			},
		}
	}
	steps := []actions.Step{upgrade}
	if waitedForByKubelets(ctx) {
		return steps
	}
	return append(steps, actions.Task{
		ID:   stepid.ControlPlaneWait,
		Name: "waiting for the control-plane pods to run " + st.Target + " and be Ready",
		Run: func() error {
			return staticpods.WaitReady(ctx, n)
		},
	})
}

// waitedForByKubelets reports whether the wait for a node's control-plane
// pods after its kubeadm upgrade can be left to the kubelets phase: with a
// single control-plane node, that phase restarts the node's kubelet next,
// which restarts those pods once more, and then waits for them (and for the
// new kubelet to report them). With several control-plane nodes the wait
// stays: the next one's upgrade must not start before these pods are back
// (etcd's quorum, the API server behind the load balancer).
func waitedForByKubelets(ctx *actions.Context) bool {
	return len(ctx.State.ControlPlanes) == 1 && ctx.State.UpgradesKubelets
}
