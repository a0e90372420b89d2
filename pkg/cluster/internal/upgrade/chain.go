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
	"time"

	"github.com/Masterminds/semver/v3"

	"sigs.k8s.io/kind/pkg/errors"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/preflight"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/options"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/plan"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/report"
)

// chainSkips are the phases a chain cannot do without: every hop's
// control plane is upgraded from what the hop loaded.
var chainSkips = []string{actions.PhaseLoadArtifacts, actions.PhaseControlPlane}

// runChain upgrades through a chain of targets (options.Upgrade.Then):
// first it looks ahead, running every hop's preflight against the
// cluster as it is and planning the chain (plan.Chain), so that a chain
// that cannot finish is refused before anything changes; then it runs the
// hops the control plane has not passed, each as a whole upgrade of its
// own, the kubelets moving only at the hops the plan says. Run again
// after an interruption, it finds the hop it stopped in the same way.
func runChain(ctx *actions.Context, r *report.Reporter, opts Options) (bool, string, error) {
	for _, phase := range chainSkips {
		if opts.Skips(phase) {
			return false, "", errors.Errorf("%s %s: a chain of targets upgrades the control plane at each of them from what it loads; skip %s only for a single target", opts.Name(options.SkipPhases), phase, phase)
		}
	}
	start := time.Now()
	hops := opts.Hops()
	ahead := make([]*actions.Context, len(hops))
	defer func() {
		for _, hc := range ahead {
			closeSource(hc)
		}
	}()
	planned := map[string]int64{}
	var prev *semver.Version
	for i, h := range hops {
		hc := hopContext(ctx, r, opts, i, h)
		hc.Hop.Ahead, hc.Hop.From, hc.Hop.DiskPlanned = true, prev, planned
		ahead[i] = hc
		ctx.Logger.V(0).Infof("Checking target %d of %d (%s) before any change ...", i+1, len(hops), hopName(h))
		if err := hc.Report.Run(report.Scope{Phase: preflight.Phase}, func() (bool, string, error) {
			return false, "", preflight.NewAction().Execute(hc)
		}); err != nil {
			return false, "", errors.Wrapf(err, "target %d of %d (%s)", i+1, len(hops), hopName(h))
		}
		prev = hc.State.TargetVersion
	}
	hopPlans, err := planChain(ahead, opts)
	if err != nil {
		return false, "", err
	}
	if opts.DryRun {
		for i, hc := range ahead {
			if hopPlans[i].Done {
				continue
			}
			hc.Hop.KubeletsAt = kubeletsAt(ahead, hopPlans, i)
			hc.State.KubeletsAt = hc.Hop.KubeletsAt
			hc.State.UpgradesKubelets = hc.State.UpgradesKubelets && hc.State.KubeletsAt == ""
			hc.State.Passed = false
			if err := writePlan(hc, hc.Report, hopOptions(opts, hops[i])); err != nil {
				return false, "", err
			}
		}
		return true, "dry run", nil
	}
	for i, hc := range ahead {
		closeSource(hc)
		ahead[i].Source = nil
	}
	var last *actions.State
	var ran []string
	for i, h := range hops {
		if hopPlans[i].Done {
			r.ForHop(i+1).Info(report.Scope{}, fmt.Sprintf("Target %d of %d (v%s): the control plane already runs a later version, skipped.", i+1, len(hops), hopPlans[i].Target))
			continue
		}
		hc := hopContext(ctx, r, opts, i, h)
		hc.Hop.KubeletsAt = kubeletsAt(ahead, hopPlans, i)
		ctx.Logger.V(0).Infof("Target %d of %d: v%s (%s) ...", i+1, len(hops), hopPlans[i].Target, hopName(h))
		nothing, _, err := runWorkflow(hc, hc.Report, hopOptions(opts, h))
		werr := hc.Wait()
		closeSource(hc)
		if err == nil {
			err = werr
		}
		if err == nil {
			err = hc.RunHook(actions.HookPoint{})
		}
		if err != nil {
			return false, "", err
		}
		last = hc.State
		if !nothing {
			ran = append(ran, hc.State.Target)
		}
	}
	if last == nil {
		// every hop was passed: the last target is behind the cluster
		return false, "", errors.Errorf("the control plane already runs a later version than every target of the chain (the last is v%s): nothing to upgrade to", hopPlans[len(hopPlans)-1].Target)
	}
	if len(ran) == 0 {
		msg := "The cluster already runs " + last.Target + ", the chain's last target: nothing to do."
		r.Info(report.Scope{}, msg)
		return true, msg, nil
	}
	r.Info(report.Scope{}, fmt.Sprintf("Went through the chain from %s: %s.", ahead[0].State.From, strings.Join(ran, " -> ")))
	closingLines(ctx, last, opts, start)
	return false, "", nil
}

// hopContext is ctx for hop i of the chain, whose target is h: its own
// options, state, source and events stamped with the hop; the work it
// leaves beside is waited for with ctx's.
func hopContext(ctx *actions.Context, r *report.Reporter, opts Options, i int, h options.Hop) *actions.Context {
	hc := ctx.WithContext(ctx.Context)
	hc.Options = opts.ForHop(h)
	hc.Report = r.ForHop(i + 1)
	hc.Logger = hc.Report.Logger()
	hc.State, hc.Source, hc.Nodes, hc.Neighbours = nil, nil, nil, nil
	hc.Hop = &actions.Hop{Index: i + 1, Count: len(opts.Hops())}
	return hc
}

// hopOptions are opts for one hop of the chain.
func hopOptions(opts Options, h options.Hop) Options {
	opts.Upgrade = opts.ForHop(h)
	return opts
}

// hopName names a hop's target as the user gave it.
func hopName(h options.Hop) string {
	if h.Image != "" {
		return h.Image
	}
	return h.ImageDir
}

// closeSource closes what a hop's preflight opened.
func closeSource(hc *actions.Context) {
	if hc == nil || hc.Source == nil {
		return
	}
	if err := hc.Source.Close(); err != nil {
		hc.Logger.Warnf("%v", err)
	}
	hc.Source = nil
}

// planChain applies the skew policy to the whole chain, from the cluster
// as the first hop's look found it.
func planChain(ahead []*actions.Context, opts Options) ([]plan.Hop, error) {
	first := ahead[0].State
	current := plan.ClusterVersions{Kubelets: map[string]*semver.Version{}}
	var err error
	if current.ControlPlane, err = plan.ParseVersion(first.From); err != nil {
		return nil, err
	}
	for name, info := range first.Info {
		current.Kubelets[name] = info.Kubelet
	}
	var targets []*semver.Version
	for _, hc := range ahead {
		targets = append(targets, hc.State.TargetVersion)
	}
	stay := func(name string) bool { return opts.Skips(actions.PhaseKubelets) || !first.MovesKubelet(name) }
	hops, err := plan.Chain(targets, current, stay)
	if err != nil {
		return nil, err
	}
	return hops, nil
}

// kubeletsAt names, when the kubelets do not move at hop i, the hop at
// which they do ("" when they move at i, or never move).
func kubeletsAt(ahead []*actions.Context, hops []plan.Hop, i int) string {
	if hops[i].MoveKubelets {
		return ""
	}
	for j := i + 1; j < len(hops); j++ {
		if hops[j].MoveKubelets {
			return fmt.Sprintf("target %d of %d (%s)", j+1, len(hops), ahead[j].State.Target)
		}
	}
	return ""
}
