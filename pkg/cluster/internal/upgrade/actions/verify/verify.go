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

// Package verify implements the verify phase: it checks that the cluster
// runs the target version everywhere and that kube-system is healthy.
package verify

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/staticpods"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/emulation"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/options"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/stepid"
)

// Phase is this phase's name.
const Phase = actions.PhaseVerify

type action struct{}

// NewAction returns the verify action.
func NewAction() actions.Action {
	return &action{}
}

// Execute runs the checks in order and stops at the first failure. When
// the kubelets phase is skipped only the control plane is checked.
func (a *action) Execute(ctx *actions.Context) error {
	checks := []actions.Check{
		{ID: stepid.VerifyServerVersion, Name: "checking the API server version", Run: checkServerVersion},
		{ID: stepid.VerifyControlPlanePods, Name: "checking the control-plane pods", Run: checkControlPlanes},
	}
	if ctx.State.UpgradesKubelets {
		name := "checking every node runs " + ctx.State.Target
		if ctx.State.Moving != nil {
			name = "checking the nodes " + ctx.Options.Name(options.Nodes) + " chose run " + ctx.State.Target + " and every node is Ready"
		}
		checks = append(checks, actions.Check{ID: stepid.VerifyNodes, Name: name, Run: checkNodes})
	}
	checks = append(checks, actions.Check{ID: stepid.VerifyWorkloads, Name: "waiting for the DaemonSets and Deployments of kube-system and kind's storage", Run: checkWorkloads})
	return ctx.RunChecks(Phase, checks, nil)
}

// checkServerVersion waits until the API server reports the target and,
// when the emulation is managed, emulates what the upgrade left.
func checkServerVersion(ctx *actions.Context) error {
	st := ctx.State
	want := ""
	if st.EmulationManaged {
		want = emulatedVersion(st)
	}
	return ctx.WaitFor("the API server to report "+st.Target, func(ctx *actions.Context) (bool, error) {
		got, err := ctx.Kube().Once().ServerVersion(ctx)
		if err != nil {
			return false, err
		}
		if got.GitVersion != st.Target {
			return false, errors.Errorf("the API server reports %s", got.GitVersion)
		}
		if emulated := got.Emulation(); want != "" && emulated != "" && emulated != want {
			return false, errors.Errorf("the API server emulates %s, not %s", emulated, want)
		}
		return true, nil
	})
}

// emulatedVersion is the version kube-apiserver emulates with the
// emulation the upgrade leaves: its own minor version when none.
func emulatedVersion(st *actions.State) string {
	own := fmt.Sprintf("%d.%d", st.TargetVersion.Major(), st.TargetVersion.Minor())
	value, ok := st.Emulation[emulation.Components[0].Section][emulation.EmulatedVersion]
	if !ok {
		return own
	}
	v, err := emulation.ParseValue(value)
	if err != nil || v == nil {
		return own
	}
	return fmt.Sprintf("%d.%d", v.Major(), v.Minor())
}

func checkControlPlanes(ctx *actions.Context) error {
	for _, n := range ctx.State.ControlPlanes {
		if err := staticpods.WaitReady(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

func checkNodes(ctx *actions.Context) error {
	st := ctx.State
	list, err := ctx.Kube().Nodes(ctx)
	if err != nil {
		return err
	}
	var problems []string
	for _, kn := range list {
		if kn.KubeletVersion != st.Target && st.MovesKubelet(kn.Name) {
			problems = append(problems, fmt.Sprintf("node %s reports kubelet %s", kn.Name, kn.KubeletVersion))
		}
		if !kn.Ready {
			problems = append(problems, fmt.Sprintf("node %s is not Ready", kn.Name))
		}
	}
	versions := make([]string, len(ctx.Nodes))
	if err := actions.OnNodes(ctx.Nodes, func(i int, n nodes.Node) error {
		content, _, err := nodeutils.ReadFile(ctx, n, "/kind/version")
		versions[i] = strings.TrimSpace(content)
		return err
	}); err != nil {
		return err
	}
	for i, n := range ctx.Nodes {
		if versions[i] != st.Target && st.MovesKubelet(n.String()) {
			problems = append(problems, fmt.Sprintf("node %s has /kind/version %q", n, versions[i]))
		}
	}
	if len(problems) > 0 {
		return errors.Errorf("the cluster does not run %s everywhere:\n  %s", st.Target, strings.Join(problems, "\n  "))
	}
	return nil
}

// workloadNamespaces are where the cluster's own DaemonSets and Deployments
// run: kubeadm's (kube-proxy, CoreDNS) and kind's add-ons, kindnet in
// kube-system and the local-path provisioner in local-path-storage. kubeadm
// upgrades neither add-on: they only have to be available again, at
// whatever version they run. A namespace a cluster does not have lists
// nothing.
var workloadNamespaces = []string{"kube-system", "local-path-storage"}

func checkWorkloads(ctx *actions.Context) error {
	return ctx.WaitFor("the DaemonSets and Deployments of "+strings.Join(workloadNamespaces, " and ")+" to be available", func(ctx *actions.Context) (bool, error) {
		lists := make([][]kube.Workload, len(workloadNamespaces))
		var reads []kube.Read
		for i, namespace := range workloadNamespaces {
			reads = append(reads, kube.ReadWorkloads(namespace, &lists[i]))
		}
		errs := ctx.Kube().Once().ReadAll(ctx, reads...)
		var pending []string
		for i, namespace := range workloadNamespaces {
			if errs[i] != nil {
				return false, errs[i]
			}
			for _, w := range lists[i] {
				if !w.Available {
					pending = append(pending, fmt.Sprintf("%s %s/%s (%s)", w.Kind, namespace, w.Name, w.Detail))
				}
			}
		}
		if len(pending) > 0 {
			return false, errors.Errorf("not available yet: %s", strings.Join(pending, ", "))
		}
		return true, nil
	})
}
