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

// Package controlplane implements the control-plane phase: the emulation
// the user chose written to kubeadm's configuration, then `kubeadm upgrade
// apply` on the bootstrap control-plane node and `kubeadm upgrade node` on
// the other control-plane nodes, one at a time, each waited for until its
// static pods run the target and are Ready.
package controlplane

import (
	"path"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/staticpods"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/emulation"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/plan"
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
		Done: func() (bool, string, error) { return nodeDone(ctx, n) },
		Run: func() error {
			return ctx.Kubeadm(Phase, n, append([]string{"upgrade", "node"}, ctx.KubeadmUpgradeArgs()...)...)
		},
	}
	if bootstrap {
		upgrade = actions.Task{
			ID:   stepid.ControlPlaneApply,
			Name: "kubeadm upgrade apply " + st.Target,
			Done: func() (bool, string, error) {
				done, reason, err := nodeDone(ctx, n)
				if err != nil || !done {
					return false, "", err
				}
				cfg, err := ctx.Kube().ClusterConfiguration(ctx)
				if err != nil {
					return false, "", err
				}
				return cfg.KubernetesVersion == st.Target, reason, nil
			},
			Run: func() error {
				args := append([]string{"upgrade", "apply", st.Target, "--yes"}, ctx.KubeadmUpgradeArgs()...)
				if st.TargetVersion.Prerelease() != "" {
					args = append(args, "--allow-experimental-upgrades", "--allow-release-candidate-upgrades")
				}
				return ctx.Kubeadm(Phase, n, args...)
			},
		}
	}
	var steps []actions.Step
	if bootstrap && (ctx.Options.Emulation().Asked() || len(st.ConfigChanges) > 0) {
		steps = append(steps, configStep(ctx))
	}
	if gate := st.Loading[n.String()]; gate != nil {
		steps = append(steps, actions.Task{
			ID:   stepid.ControlPlaneLoaded,
			Name: "waiting for the node's images and binaries (loaded beside this phase)",
			Run:  func() error { return gate.Wait(ctx) },
		})
	}
	steps = append(steps, upgrade)
	if !waitedForByKubelets(ctx) {
		steps = append(steps, waitStep(ctx, n))
	}
	if ctx.Hop != nil && !st.UpgradesKubelets {
		steps = append(steps, installStep(ctx, n))
	}
	return steps
}

// waitStep waits after control-plane node n's kubeadm upgrade. Before
// the next control-plane node's upgrade, n's etcd and API server must be
// Ready (staticpods.WaitServing: etcd's quorum, the API server behind
// kind's load balancer); its controller-manager and scheduler, which
// their leader election keeps running on the other nodes, need only have
// started, and every control-plane node's are waited for until Ready
// after the last node's upgrade, before the phase ends.
func waitStep(ctx *actions.Context, n nodes.Node) actions.Step {
	st := ctx.State
	if cps := st.ControlPlanes; n.String() != cps[len(cps)-1].String() {
		return actions.Task{
			ID:   stepid.ControlPlaneWait,
			Name: "waiting for etcd and the API server to run " + st.Target + " and be Ready",
			Run:  func() error { return staticpods.WaitServing(ctx, n) },
		}
	}
	name := "waiting for the control-plane pods to run " + st.Target + " and be Ready"
	if len(st.ControlPlanes) > 1 {
		name = "waiting for the control-plane pods of every control-plane node to run " + st.Target + " and be Ready"
	}
	return actions.Task{
		ID:   stepid.ControlPlaneWait,
		Name: name,
		Run: func() error {
			// the last node's first: the others' have had longer
			for i := len(st.ControlPlanes) - 1; i >= 0; i-- {
				if err := staticpods.WaitReady(ctx, st.ControlPlanes[i]); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// BinDir is where kind nodes keep kubeadm, kubelet and kubectl.
const BinDir = "/usr/bin"

// movesWithControlPlane are the binaries that move with the control plane
// when its kubelet does not (a chain's earlier hops): the kubeadm that
// upgraded it, and a kubectl within one minor version of its API server.
var movesWithControlPlane = []string{"kubeadm", "kubectl"}

// installStep installs kubeadm and kubectl of the target on
// control-plane node n, the kubelet left as it is: installed ones are
// hard links to the staged ones, as the kubelets phase installs them.
func installStep(ctx *actions.Context, n nodes.Node) actions.Step {
	st := ctx.State
	var pairs [][2]string
	for _, name := range movesWithControlPlane {
		pairs = append(pairs, [2]string{st.Staged(name), path.Join(BinDir, name)})
	}
	why := "the kubelet stays"
	if st.KubeletsAt != "" {
		why = "the kubelet moves at " + st.KubeletsAt
	}
	return actions.Todo[[][2]string]{
		ID:   stepid.ControlPlaneInstall,
		Name: "installing kubeadm and kubectl " + st.Target + " (" + why + ")",
		Find: func() ([][2]string, bool, string, error) {
			found, err := nodeutils.Compare(ctx, n, pairs...)
			if err != nil {
				return nil, false, "", err
			}
			var stale [][2]string
			for i, c := range found {
				switch c {
				case nodeutils.Missing:
					return nil, false, "", errors.Errorf("%s is not staged on node %q: run the %s phase", pairs[i][0], n, actions.PhaseLoadArtifacts)
				case nodeutils.Differ:
					stale = append(stale, pairs[i])
				}
			}
			return stale, len(stale) == 0, "", nil
		},
		Run: func(stale [][2]string) error {
			return nodeutils.InstallBinaries(ctx, n, stale...)
		},
	}
}

// nodeDone reports whether kubeadm is done with control-plane node n: its
// static pods run the target (and the emulation the upgrade leaves) and,
// on the last control-plane node, whose kubeadm upgrades the add-ons once
// every control-plane node runs the target, kube-proxy does too unless it
// is left at its version.
func nodeDone(ctx *actions.Context, n nodes.Node) (bool, string, error) {
	st := ctx.State
	done, _, err := staticpods.AtTarget(ctx, n)
	if err != nil || !done {
		return false, "", err
	}
	last := st.ControlPlanes[len(st.ControlPlanes)-1]
	if n.String() != last.String() || !kubeProxyBehind(st) {
		return true, "", nil
	}
	// an earlier run left kube-proxy behind, or this one's kubeadm on
	// another node has upgraded it since preflight looked
	workloads, err := ctx.Kube().Workloads(ctx, "kube-system")
	if err != nil {
		return false, "", err
	}
	kp := plan.ImageVersion(kube.KubeProxyImage(workloads))
	return kp == nil || plan.SameRelease(kp, st.TargetVersion), "", nil
}

// kubeProxyBehind reports whether preflight found kube-proxy at another
// version than the target while the upgrade is to upgrade it.
func kubeProxyBehind(st *actions.State) bool {
	return st.KubeProxy != nil && !st.LeavesKubeProxy && !plan.SameRelease(st.KubeProxy, st.TargetVersion)
}

// configStep writes the emulation arguments the upgrade leaves into the
// extraArgs of kubeadm's ClusterConfiguration (the kubeadm-config
// ConfigMap), which `kubeadm upgrade apply` and `kubeadm upgrade node`
// render the control plane from, every other field as it was.
func configStep(ctx *actions.Context) actions.Step {
	st := ctx.State
	return actions.Todo[[]byte]{
		ID:   stepid.ControlPlaneConfig,
		Name: "setting the emulation in kubeadm's ClusterConfiguration",
		Find: func() ([]byte, bool, string, error) {
			client := ctx.Kube()
			doc, err := client.ClusterConfigurationDocument(ctx)
			if err != nil {
				return nil, false, "", errors.Wrap(err, "failed to read kubeadm's ClusterConfiguration")
			}
			cfg, err := kube.ParseClusterConfiguration(doc)
			if err != nil {
				return nil, false, "", err
			}
			now := emulation.FromConfig(cfg)
			if now.Equal(st.Emulation) {
				return nil, true, "kubeadm's ClusterConfiguration already has these arguments", nil
			}
			edited, err := kube.SetExtraArgs(doc, emulation.ArgChanges(now, st.Emulation))
			if err != nil {
				return nil, false, "", err
			}
			for _, c := range emulation.Changes(now, st.Emulation) {
				ctx.Logger.V(1).Infof("%s: kubeadm configuration: %s", Phase, c)
			}
			ctx.Logger.V(2).Infof("%s: kubeadm's ClusterConfiguration becomes:\n%s", Phase, edited)
			return edited, false, "", nil
		},
		Run: func(doc []byte) error {
			if err := ctx.Kube().SetClusterConfiguration(ctx, doc); err != nil {
				return errors.Wrap(err, "failed to write kubeadm's ClusterConfiguration")
			}
			return nil
		},
	}
}

// waitedForByKubelets reports whether the wait for a node's control-plane
// pods after its kubeadm upgrade can be left to the kubelets phase: with a
// single control-plane node, that phase restarts the node's kubelet next,
// which restarts those pods once more, and then waits for them (and for the
// new kubelet to report them). With several control-plane nodes the wait
// stays: the next one's upgrade must not start before these pods are back
// (etcd's quorum, the API server behind the load balancer).
func waitedForByKubelets(ctx *actions.Context) bool {
	st := ctx.State
	return len(st.ControlPlanes) == 1 && st.UpgradesKubelets && st.MovesKubelet(st.ControlPlanes[0].String())
}
