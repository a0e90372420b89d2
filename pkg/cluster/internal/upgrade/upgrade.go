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
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/exec"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/controlplane"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/kubelets"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/loadartifacts"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/preflight"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/verify"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/options"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/plan"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/report"
)

// Phase describes one phase of the workflow.
type Phase struct {
	Name        string
	Description string
	// Skippable is false for a phase that changes nothing and that the
	// others need (preflight): it always runs, and a dry run, or a cluster
	// that already runs the target, stops after it.
	Skippable bool
}

// phase is a Phase and what the runner needs of it: no phase knows its
// neighbours, the table says how they fit together.
type phase struct {
	Phase
	action actions.Action
	// steps are the phase's steps on a node, for the dry-run plan; nil
	// for a phase without steps per node, none for a node it leaves
	// alone.
	steps func(ctx *actions.Context, n nodes.Node) []actions.Step
	// leavesWorkBeside: work the phase started with ctx.Go may go on
	// while the next phase runs; every later phase waits for it.
	leavesWorkBeside bool
	// done is the closing summary's phrase for the phase when it ran
	// (%s: the target), "" for none.
	done string
	// behind is, when the phase was skipped, what it left at an older
	// version ("" for nothing); skippedNote what the summary says of the
	// skip when nothing is behind.
	behind      func(st *actions.State) string
	skippedNote string
	// unneeded says, when the plan leaves the phase nothing to do, why
	// ("" when it has work): the phase is then reported skipped.
	unneeded func(st *actions.State) string
	// parts are the parts of the phase --skip-phases also names
	// ("<phase>/<part>"); the phase reads the choice from the state.
	parts []Phase
}

// workflow is the ordered list of phases.
var workflow = []phase{
	{
		Phase:  Phase{preflight.Phase, "check the cluster and the target and plan the upgrade; changes nothing and always runs", false},
		action: preflight.NewAction(),
	},
	{
		Phase:            Phase{loadartifacts.Phase, "stream kubeadm, kubelet, kubectl and the images each node needs into the nodes: the bootstrap control-plane node (and kubeadm's pause image on the nodes that lack it), then, beside the control-plane phase, the other control-plane nodes in parallel (each before its own kubeadm upgrade node) and the workers in parallel; when the kubelets phase will upgrade the bootstrap node's kubelet, another node drains it beside its loading", true},
		action:           loadartifacts.NewAction(),
		steps:            loadartifacts.Steps,
		leavesWorkBeside: true,
		done:             "loaded the %s binaries and images into the nodes",
	},
	{
		Phase:  Phase{controlplane.Phase, "write the emulation asked for into kubeadm's configuration, then kubeadm upgrade apply on the bootstrap control-plane node, then kubeadm upgrade node on the others, one at a time; while kubeadm waits for the kubelet to restart a component, the kubelet is nudged through the component's mirror pod", true},
		action: controlplane.NewAction(),
		steps:  controlplane.Steps,
		done:   "upgraded the control plane to %s",
		behind: controlPlaneBehind,
		parts: []Phase{
			{actions.PhaseKubeProxy, "kubeadm's addon/kube-proxy phase: skipped, kube-proxy stays at its version (at most 3 minor versions behind the API server)", true},
		},
	},
	{
		Phase:    Phase{kubelets.Phase, "one node at a time (workers as many at a time as asked), control plane first: drain (the bootstrap node's pods are already gone), install kubeadm/kubelet/kubectl, restart the kubelet, wait until Ready, uncordon; with three control-plane nodes or more, a control-plane node's static pods settle beside the next one's drain and install, before its kubelet restart; the workers start once the last control-plane node's new etcd and API server run, and its other pods settle beside them", true},
		action:   kubelets.NewAction(),
		steps:    kubelets.Steps,
		done:     "upgraded the kubelets to %s",
		behind:   kubeletsBehind,
		unneeded: kubeletsUnneeded,
	},
	{
		Phase:       Phase{verify.Phase, "check that the control plane, kube-system and (unless kubelets is skipped) every node run the target version", true},
		action:      verify.NewAction(),
		done:        "verified the control plane",
		skippedNote: "The verify phase was skipped.",
	},
}

// Phases lists the workflow's phases in the order they run, each followed
// by its parts ("<phase>/<part>") that --skip-phases also names.
func Phases() []Phase {
	out := make([]Phase, 0, len(workflow))
	for _, p := range workflow {
		out = append(out, p.Phase)
		out = append(out, p.parts...)
	}
	return out
}

// ValidateSkipPhases checks names against the skippable phases; option is
// how messages name the choice.
func ValidateSkipPhases(names []string, option string) error {
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
			return errors.Errorf("unknown phase %q in %s: the phases are %s", name, option, strings.Join(skippable, ", "))
		case !p.Skippable:
			return errors.Errorf("phase %q cannot be skipped: it changes nothing and the other phases need what it finds", name)
		}
	}
	return nil
}

// heartbeat is how often a step that still runs says so, when stderr is
// not a terminal (a terminal has the spinner).
const heartbeat = 30 * time.Second

// ClusterFinder finds the cluster to upgrade and the nodes that share its
// host; Run asks it inside its first step, so that a cluster that cannot
// be found is reported like any other failure.
type ClusterFinder = actions.ClusterFinder

// KnownNodes is a ClusterFinder of nodes listed beforehand.
type KnownNodes struct {
	// Cluster are the cluster's nodes, Others its neighbours'.
	Cluster, Others []nodes.Node
}

// Nodes returns k.Cluster.
func (k KnownNodes) Nodes() ([]nodes.Node, error) { return k.Cluster, nil }

// Neighbours returns k.Others.
func (k KnownNodes) Neighbours() []nodes.Node { return k.Others }

// Options configure a run: the user's choices (options.Upgrade, the one
// type the command's flags, the public options and the phases share),
// the cluster, and where the run reports.
type Options struct {
	options.Upgrade
	// Cluster finds the cluster's nodes and its neighbours'.
	Cluster ClusterFinder
	// HostCmder runs the provider's commands on the host (reading
	// --image); exec.DefaultCmder when nil.
	HostCmder exec.Cmder
	Logger    log.Logger
	// Out receives results: the dry-run plan and JSON events.
	Out io.Writer
	// JSON writes one JSON event per line to Out.
	JSON bool
	// Spinner, when set, is the terminal the logger writes to: the running
	// step is animated there and its outcome coloured. The logger is not
	// changed.
	Spinner io.Writer
	Context context.Context
	// Hook, when set, runs after each phase that ran, each control-plane
	// and kubelets node, and each target (see actions.HookPoint): its
	// error fails the upgrade there.
	Hook func(actions.HookPoint) error
}

// Validate checks the choices that need no cluster: the phases to skip
// and the rest of options.Upgrade's.
func Validate(opts Options) error {
	if err := ValidateSkipPhases(opts.SkipPhases, opts.Name(options.SkipPhases)); err != nil {
		return err
	}
	if opts.Cluster == nil {
		return errors.New("no cluster to upgrade was given")
	}
	return opts.Validate()
}

// Run upgrades the cluster opts.Cluster finds. Everything it does, from
// checking the options on, is reported: with JSON output the last event
// is always the upgrade's finished event, whatever failed.
func Run(opts Options) error {
	if opts.Logger == nil {
		opts.Logger = log.NoopLogger{}
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	if opts.Context == nil {
		opts.Context = context.Background()
	}
	var reportOpts []report.Option
	if opts.JSON {
		reportOpts = append(reportOpts, report.WithJSON(opts.Out))
	}
	if opts.Spinner != nil {
		reportOpts = append(reportOpts, report.WithSpinner(opts.Spinner))
	} else {
		// a log has no spinner: say every so often what still runs
		reportOpts = append(reportOpts, report.WithHeartbeat(heartbeat))
	}
	r := report.New(opts.Logger, reportOpts...)
	defer r.Close()

	ctx := actions.NewContext(opts.Context)
	ctx.Logger = r.Logger()
	ctx.Report = r
	ctx.Cluster = opts.Cluster
	ctx.HostCmder = opts.HostCmder
	ctx.Options = opts.Upgrade
	ctx.Hook = opts.Hook
	return r.Run(report.Scope{}, func() (bool, string, error) {
		if err := Validate(opts); err != nil {
			return false, "", err
		}
		what := "Upgrading cluster " + strconv.Quote(opts.ClusterName) + " ..."
		if opts.DryRun {
			what = "Planning the upgrade of cluster " + strconv.Quote(opts.ClusterName) + " (dry run: nothing changes) ..."
		}
		ctx.Logger.V(0).Info(what)
		run := runSingle
		if len(opts.Then) > 0 {
			run = runChain
		}
		skipped, msg, err := run(ctx, r, opts)
		// work a phase left running beside the next ones (the workers'
		// load-artifacts) ends before the upgrade does, whatever happened,
		// and only then is the source closed
		werr := ctx.Wait()
		if ctx.Source != nil {
			if cerr := ctx.Source.Close(); cerr != nil {
				ctx.Logger.Warnf("%v", cerr)
			}
		}
		if werr != nil {
			if err != nil {
				return false, "", errors.NewAggregate([]error{err, werr})
			}
			return false, "", werr
		}
		return skipped, msg, err
	})
}

// runSingle upgrades to a single target: the workflow, then the closing
// lines and the caller's hook after the upgrade.
func runSingle(ctx *actions.Context, r *report.Reporter, opts Options) (bool, string, error) {
	start := time.Now()
	skipped, msg, err := runWorkflow(ctx, r, opts)
	if err != nil || skipped {
		return skipped, msg, err
	}
	if err := ctx.Wait(); err != nil {
		return false, "", err
	}
	if err := ctx.RunHook(actions.HookPoint{}); err != nil {
		return false, "", err
	}
	closingLines(ctx, ctx.State, opts, start)
	return false, "", nil
}

// runWorkflow runs the phases in order, each followed by the caller's
// hook, and reports the summary. A phase after control-plane starts once
// the work left running beside the earlier ones has ended.
func runWorkflow(ctx *actions.Context, r *report.Reporter, opts Options) (bool, string, error) {
	for i, p := range workflow {
		// the phases that always run decided whether any other does
		if p.Skippable && ctx.State.NothingToDo {
			msg := "The cluster already runs " + ctx.State.Target + ": nothing to do."
			r.Info(report.Scope{}, msg)
			return true, msg, nil
		}
		if p.Skippable && opts.DryRun {
			return true, "dry run", writePlan(ctx, r, opts)
		}
		if i == 0 || !workflow[i-1].leavesWorkBeside {
			if err := ctx.Wait(); err != nil {
				return false, "", err
			}
		}
		ran := false
		if err := r.Run(report.Scope{Phase: p.Name}, func() (bool, string, error) {
			if opts.Skips(p.Name) {
				return true, opts.Name(options.SkipPhases), nil
			}
			if p.unneeded != nil {
				if why := p.unneeded(ctx.State); why != "" {
					return true, why, nil
				}
			}
			ran = true
			return false, "", p.action.Execute(ctx)
		}); err != nil {
			return false, "", err
		}
		if ran && !ctx.State.NothingToDo && !opts.DryRun {
			if err := ctx.RunHook(actions.HookPoint{Phase: p.Name}); err != nil {
				return false, "", err
			}
		}
	}
	if err := ctx.Wait(); err != nil {
		return false, "", err
	}
	r.Info(report.Scope{}, summary(ctx.State, opts.Upgrade))
	return false, "", nil
}

// closingLines tell, after the summary, how long the upgrade took and what
// to do next: the kubeconfig kind wrote keeps working (its server and
// credentials do not change), and the host's kubectl may need the
// cluster's version. Only for people: with JSON output the upgrade's
// finished event has the duration, and the host is not asked.
func closingLines(ctx *actions.Context, st *actions.State, opts Options, start time.Time) {
	if opts.JSON {
		return
	}
	ctx.Logger.V(0).Infof("Took %s. The kubeconfig keeps working; try: kubectl cluster-info --context kind-%s", time.Since(start).Round(time.Second), opts.ClusterName)
	if opts.Skips(actions.PhaseControlPlane) || st.Bootstrap == nil {
		return
	}
	client, err := hostKubectl(ctx, opts.HostCmder)
	if err != nil {
		// no kubectl on the host, or one that cannot say: nothing to advise
		ctx.Logger.V(1).Infof("the host's kubectl: %v", err)
		return
	}
	target, err := semver.NewVersion(st.Target)
	if err != nil {
		return
	}
	if hint := kubectlSkewHint(client, target, opts.Provider(), st.Bootstrap.String()); hint != "" {
		ctx.Logger.Warn(hint)
	}
}

// writePlan prints what the upgrade would do.
func writePlan(ctx *actions.Context, r *report.Reporter, opts Options) error {
	st, skipped := ctx.State, ctx.Options.Skips
	p := &plan.Plan{From: st.From, To: st.Target, Source: ctx.Source.Name(), Images: st.Images, KubeadmConfig: st.ConfigChanges, ControlPlaneOnly: st.ControlPlaneOnly, KubeletsAt: st.KubeletsAt}
	if ctx.Hop != nil {
		p.Hop, p.Hops = ctx.Hop.Index, ctx.Hop.Count
	}
	p.SkippedPhases = append(p.SkippedPhases, opts.SkipPhases...)
	sort.Strings(p.SkippedPhases)
	if st.Patches != nil {
		p.Patches = &plan.Patches{Dir: st.Patches.Dir, NodeDir: st.PatchesDir(), Files: st.Patches.Names()}
	}
	for _, n := range st.Ordered() {
		info := st.Info[n.String()]
		np := plan.Node{
			Name:      n.String(),
			Role:      info.Role,
			Bootstrap: n.String() == st.Bootstrap.String(),
			From:      "v" + info.Kubelet.String(),
			To:        st.Target,
		}
		if ctx.Hop != nil && !st.UpgradesKubelets {
			// a chain's hop that leaves the kubelets
			np.To = np.From
		}
		for _, a := range info.Load {
			np.Load = append(np.Load, a.Name)
		}
		np.Pull = append(np.Pull, info.Pull...)
		for _, ph := range workflow {
			if ph.unneeded != nil && ph.unneeded(st) != "" {
				continue
			}
			if ph.steps != nil && !skipped(ph.Name) {
				np.Steps = append(np.Steps, actions.StepNames(ph.Name, ph.steps(ctx, n))...)
			}
		}
		p.Nodes = append(p.Nodes, np)
	}
	if opts.JSON {
		r.Plan(p)
		return nil
	}
	return p.WriteText(opts.Out)
}
