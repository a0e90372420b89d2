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

// Package upgrade is the `kind alpha upgrade` workflow: an ordered list of
// re-entrant phases run against a cluster's nodes.
package upgrade

import (
	"context"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/controlplane"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/kubelets"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/loadartifacts"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/preflight"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/verify"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/plan"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/report"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/nodeutils"
)

// Phase describes one phase of the workflow.
type Phase struct {
	Name        string
	Description string
	// Skippable is false for preflight, which always runs.
	Skippable bool
}

// phase is a Phase and how to build its action; skipped are the phases the
// user skips.
type phase struct {
	Phase
	action func(skipped map[string]bool) actions.Action
}

// workflow is the ordered list of phases.
var workflow = []phase{
	{Phase{preflight.Phase, "check the cluster and --image-dir and plan the upgrade; changes nothing and always runs", false},
		func(skipped map[string]bool) actions.Action {
			return preflight.NewAction(actions.Check{Name: "checking the phases to run", Run: func(ctx *actions.Context) error {
				return checkSkips(ctx, skipped)
			}})
		}},
	{Phase{loadartifacts.Phase, "stream kubeadm, kubelet, kubectl and the images each node needs into the nodes, all nodes in parallel", true},
		func(map[string]bool) actions.Action { return loadartifacts.NewAction() }},
	{Phase{controlplane.Phase, "kubeadm upgrade apply on the bootstrap control-plane node, then kubeadm upgrade node on the others, one at a time", true},
		func(map[string]bool) actions.Action { return controlplane.NewAction() }},
	{Phase{kubelets.Phase, "one node at a time, control plane first: drain, install kubeadm/kubelet/kubectl, restart the kubelet, wait until Ready, uncordon", true},
		func(map[string]bool) actions.Action { return kubelets.NewAction() }},
	{Phase{verify.Phase, "check that the control plane, kube-system and (unless kubelets is skipped) every node run the target version", true},
		func(skipped map[string]bool) actions.Action { return verify.NewAction(!skipped[kubelets.Phase]) }},
}

// Phases lists the workflow's phases in the order they run.
func Phases() []Phase {
	out := make([]Phase, 0, len(workflow))
	for _, p := range workflow {
		out = append(out, p.Phase)
	}
	return out
}

// ValidateSkipPhases checks names against the skippable phases.
func ValidateSkipPhases(names []string) error {
	known := map[string]Phase{}
	var skippable []string
	for _, p := range Phases() {
		known[p.Name] = p
		if p.Skippable {
			skippable = append(skippable, p.Name)
		}
	}
	for _, name := range names {
		p, ok := known[name]
		switch {
		case !ok:
			return errors.Errorf("unknown phase %q in --skip-phases: the phases are %s", name, strings.Join(skippable, ", "))
		case !p.Skippable:
			return errors.Errorf("phase %q cannot be skipped: it changes nothing and the other phases need what it finds", name)
		}
	}
	return nil
}

// Options configure a run.
type Options struct {
	ImageDir              string
	DryRun                bool
	SkipPhases            []string
	Wait                  time.Duration
	IgnorePreflightErrors []string
	// Settle is how long a control-plane node's pods must stay Ready after
	// its kubelet restarted.
	Settle time.Duration
	// PollInterval is how often waits look again (default 1s).
	PollInterval time.Duration
	Logger       log.Logger
	// Out receives results: the dry-run plan and JSON events.
	Out io.Writer
	// JSON writes one JSON event per line to Out.
	JSON bool
	// Terminal, when set, is the terminal the logger writes to: steps get
	// a spinner there.
	Terminal io.Writer
	Context  context.Context
}

// Validate checks the options that need no cluster: the phases to skip and
// that --image-dir exists.
func Validate(opts Options) error {
	if err := ValidateSkipPhases(opts.SkipPhases); err != nil {
		return err
	}
	if opts.ImageDir == "" {
		return errors.New("--image-dir is required: a folder (or release tarball) holding the target Kubernetes version's kubeadm, kubelet, kubectl and images")
	}
	if _, err := os.Stat(opts.ImageDir); err != nil {
		return errors.Wrap(err, "invalid --image-dir")
	}
	return nil
}

// Run upgrades the cluster made of nodes.
func Run(clusterNodes []nodes.Node, opts Options) error {
	if err := Validate(opts); err != nil {
		return err
	}
	if opts.Logger == nil {
		opts.Logger = log.NoopLogger{}
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	if opts.Context == nil {
		opts.Context = context.Background()
	}
	src, err := artifacts.Open(opts.ImageDir)
	if err != nil {
		return errors.Wrap(err, "invalid --image-dir")
	}

	var reportOpts []report.Option
	if opts.JSON {
		reportOpts = append(reportOpts, report.WithJSON(opts.Out))
	}
	if opts.Terminal != nil {
		reportOpts = append(reportOpts, report.WithSpinner(opts.Terminal))
	}
	r := report.New(opts.Logger, reportOpts...)
	defer r.Close()

	ctx := &actions.Context{
		Context: opts.Context,
		Logger:  opts.Logger,
		Report:  r,
		Nodes:   clusterNodes,
		Source:  src,
		Options: actions.Options{
			Wait:                  opts.Wait,
			IgnorePreflightErrors: opts.IgnorePreflightErrors,
			DryRun:                opts.DryRun,
			Settle:                opts.Settle,
			PollInterval:          opts.PollInterval,
		},
	}
	skipped := map[string]bool{}
	for _, name := range opts.SkipPhases {
		skipped[name] = true
	}
	return r.Run(report.Scope{}, func() (bool, string, error) {
		for _, p := range workflow {
			if err := r.Run(report.Scope{Phase: p.Name}, func() (bool, string, error) {
				if skipped[p.Name] {
					return true, "--skip-phases", nil
				}
				return false, "", p.action(skipped).Execute(ctx)
			}); err != nil {
				return false, "", err
			}
			if p.Name != preflight.Phase {
				continue
			}
			// preflight decided what follows
			if ctx.State.NothingToDo {
				msg := "The cluster already runs " + ctx.State.Target + ": nothing to do."
				r.Info(report.Scope{}, msg)
				return true, msg, nil
			}
			if opts.DryRun {
				return true, "dry run", writePlan(ctx, r, opts, skipped)
			}
		}
		r.Info(report.Scope{}, "Upgraded the cluster from "+ctx.State.From+" to "+ctx.State.Target+".")
		return false, "", nil
	})
}

// checkSkips refuses --skip-phases that would break the version-skew policy
// or leave a phase without what an earlier one provides.
func checkSkips(ctx *actions.Context, skipped map[string]bool) error {
	st := ctx.State
	if skipped[controlplane.Phase] && !skipped[kubelets.Phase] && st.From != st.Target {
		return errors.Errorf("--skip-phases %s would upgrade kubelets while the control plane still runs %s, but a kubelet must never be newer than the API server: skip %s too, or upgrade the control plane first", controlplane.Phase, st.From, kubelets.Phase)
	}
	if !skipped[loadartifacts.Phase] || (skipped[controlplane.Phase] && skipped[kubelets.Phase]) {
		return nil
	}
	for _, n := range ctx.Nodes {
		if load := st.Info[n.String()].Load; len(load) > 0 {
			return errors.Errorf("--skip-phases %s: node %q still lacks the images of %s: run the %s phase", loadartifacts.Phase, n, load[0].Name, loadartifacts.Phase)
		}
		for _, name := range artifacts.Binaries {
			ok, err := nodeutils.Exists(ctx, n, st.Staged(name))
			if err != nil {
				return err
			}
			if !ok {
				return errors.Errorf("--skip-phases %s: %s is not staged on node %q: run the %s phase", loadartifacts.Phase, st.Staged(name), n, loadartifacts.Phase)
			}
		}
	}
	return nil
}

// writePlan prints what the upgrade would do.
func writePlan(ctx *actions.Context, r *report.Reporter, opts Options, skipped map[string]bool) error {
	st := ctx.State
	p := &plan.Plan{From: st.From, To: st.Target, Images: st.Images}
	for name := range skipped {
		p.SkippedPhases = append(p.SkippedPhases, name)
	}
	sort.Strings(p.SkippedPhases)
	for _, n := range st.Ordered() {
		info := st.Info[n.String()]
		np := plan.Node{
			Name:      n.String(),
			Role:      info.Role,
			Bootstrap: n.String() == st.Bootstrap.String(),
			From:      "v" + info.Kubelet.String(),
			To:        st.Target,
		}
		for _, a := range info.Load {
			np.Load = append(np.Load, a.Name)
		}
		if !skipped[loadartifacts.Phase] {
			np.Steps = append(np.Steps, actions.StepNames(loadartifacts.Phase, loadartifacts.Steps(ctx, n))...)
		}
		if !skipped[controlplane.Phase] && st.IsControlPlane(n) {
			np.Steps = append(np.Steps, actions.StepNames(controlplane.Phase, controlplane.Steps(ctx, n))...)
		}
		if !skipped[kubelets.Phase] {
			np.Steps = append(np.Steps, actions.StepNames(kubelets.Phase, kubelets.Steps(ctx, n))...)
		}
		p.Nodes = append(p.Nodes, np)
	}
	if opts.JSON {
		r.Plan(p)
		return nil
	}
	return p.WriteText(opts.Out)
}
