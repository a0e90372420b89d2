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

package upgrade_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/fakenode"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/options"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/report"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/stepid"
)

// chainEnv is a fake cluster at from and a release folder for each of
// targets.
type chainEnv struct {
	*env
	dirs    []string
	targets []string
}

func newChainEnv(t *testing.T, from string, controlPlanes, workers int, targets ...string) *chainEnv {
	t.Helper()
	e := &chainEnv{env: &env{t: t, cluster: fakenode.NewCluster("kind", from, controlPlanes, workers)}, targets: targets}
	for _, v := range targets {
		dir, err := fakenode.WriteRelease(t.TempDir(), v, "amd64", fakenode.ReleaseTree)
		if err != nil {
			t.Fatal(err)
		}
		e.dirs = append(e.dirs, dir)
	}
	return e
}

// chain sets the run's targets to e's folders.
func (e *chainEnv) chain(o *upgrade.Options) {
	o.ImageDir, o.Then = "", nil
	for _, d := range e.dirs {
		o.AddTarget("", d)
	}
}

func (e *chainEnv) run(modify func(*upgrade.Options)) (*recorder, error) {
	return e.env.run(func(o *upgrade.Options) {
		e.chain(o)
		if modify != nil {
			modify(o)
		}
	})
}

// phaseOutcomes are, per hop, each phase's outcome and message.
func phaseOutcomes(rec *recorder) map[int]map[string]string {
	out := map[int]map[string]string{}
	for _, ev := range rec.events {
		if ev.Kind != report.KindPhase || ev.Event.Event != report.EventFinished {
			continue
		}
		if out[ev.Hop] == nil {
			out[ev.Hop] = map[string]string{}
		}
		out[ev.Hop][ev.Phase] = strings.TrimSpace(ev.Outcome + " " + ev.Message)
	}
	return out
}

// assertAt checks the whole cluster runs version, with kubeadm and
// kubectl of version on every node.
func assertAt(t *testing.T, c *fakenode.Cluster, version string) {
	t.Helper()
	if c.KubernetesVersion != version {
		t.Errorf("cluster version %s, want %s", c.KubernetesVersion, version)
	}
	for _, n := range c.Nodes {
		if n.KubeletVersion != version || !n.Ready || n.Unschedulable {
			t.Errorf("node %s kubelet %s ready %v cordoned %v, want %s, Ready, uncordoned", n.Name, n.KubeletVersion, n.Ready, n.Unschedulable, version)
		}
		for _, b := range []string{"kubeadm", "kubelet", "kubectl"} {
			if !bytes.Equal(n.Files["/usr/bin/"+b].Content, fakenode.Binary(b, version, "amd64")) {
				t.Errorf("node %s /usr/bin/%s is not %s's", n.Name, b, version)
			}
		}
	}
}

func TestChainMovesTheKubeletsOnceAtTheLastTarget(t *testing.T) {
	t.Parallel()
	e := newChainEnv(t, "v1.33.13", 1, 2, "v1.34.4", "v1.35.4", "v1.36.3")
	// the control plane's kubectl moves with it: look at it after hop 1
	var afterFirst []byte
	rec, err := e.run(func(o *upgrade.Options) {
		o.Hook = func(p actions.HookPoint) error {
			if p.Hop == 1 && p.Phase == "" {
				afterFirst = append([]byte{}, e.cluster.Nodes[0].Files["/usr/bin/kubectl"].Content...)
				for _, n := range e.cluster.Nodes {
					if n.KubeletVersion != "v1.33.13" {
						t.Errorf("after target 1, node %s's kubelet runs %s", n.Name, n.KubeletVersion)
					}
				}
			}
			return nil
		}
	})
	if err != nil {
		t.Fatalf("chain failed: %v\ncalls:\n%s", err, dump(e.cluster.Calls))
	}
	assertAt(t, e.cluster, "v1.36.3")
	if !bytes.Equal(afterFirst, fakenode.Binary("kubectl", "v1.34.4", "amd64")) {
		t.Errorf("after target 1 the control plane's kubectl is not v1.34.4's")
	}
	got := phaseOutcomes(rec)
	for hop := 1; hop <= 2; hop++ {
		if want := "skipped the kubelets move at target 3 of 3 (v1.36.3)"; got[hop][actions.PhaseKubelets] != want {
			t.Errorf("target %d: kubelets phase %q, want %q", hop, got[hop][actions.PhaseKubelets], want)
		}
		if got[hop][actions.PhaseControlPlane] != report.OutcomeSuccess {
			t.Errorf("target %d: control-plane phase %q", hop, got[hop][actions.PhaseControlPlane])
		}
	}
	if got[3][actions.PhaseKubelets] != report.OutcomeSuccess {
		t.Errorf("target 3: kubelets phase %q, want success", got[3][actions.PhaseKubelets])
	}
	// each node's kubelet restarted once
	restarts := map[string]int{}
	for _, c := range e.cluster.Calls {
		if strings.Join(c.Argv, " ") == "systemctl restart kubelet" {
			restarts[c.Node]++
		}
	}
	for _, n := range e.cluster.Nodes {
		if restarts[n.Name] != 1 {
			t.Errorf("node %s's kubelet restarted %d times, want once", n.Name, restarts[n.Name])
		}
	}
}

func TestChainMovesTheKubeletsWhereTheSkewPolicyMakesThem(t *testing.T) {
	t.Parallel()
	e := newChainEnv(t, "v1.33.13", 1, 1, "v1.34.4", "v1.35.4", "v1.36.3", "v1.37.2")
	rec, err := e.run(nil)
	if err != nil {
		t.Fatalf("chain failed: %v\ncalls:\n%s", err, dump(e.cluster.Calls))
	}
	assertAt(t, e.cluster, "v1.37.2")
	got := phaseOutcomes(rec)
	want := map[int]string{
		1: "skipped the kubelets move at target 3 of 4 (v1.36.3)",
		2: "skipped the kubelets move at target 3 of 4 (v1.36.3)",
		// v1.37 would leave v1.33 kubelets 4 minor versions behind
		3: report.OutcomeSuccess,
		4: report.OutcomeSuccess,
	}
	for hop, w := range want {
		if got[hop][actions.PhaseKubelets] != w {
			t.Errorf("target %d: kubelets phase %q, want %q", hop, got[hop][actions.PhaseKubelets], w)
		}
	}
}

func TestChainRefusedBeforeAnyChange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		targets []string
		setup   func(t *testing.T, e *chainEnv)
		modify  func(*upgrade.Options)
		errHas  string
	}{
		{
			name:    "a target skips a minor version",
			targets: []string{"v1.34.4", "v1.36.3"},
			errHas:  "target 2 of the chain is v1.36.3, but the one before it is v1.34.4: each target must be one minor version above the one before",
		},
		{
			name:    "the third target lacks an image",
			targets: []string{"v1.34.4", "v1.35.4", "v1.36.3"},
			setup: func(t *testing.T, e *chainEnv) {
				if err := os.Remove(filepath.Join(e.dirs[2], "kubernetes", "server", "bin", "kube-apiserver.tar")); err != nil {
					t.Fatal(err)
				}
			},
			modify: func(o *upgrade.Options) { o.PullPolicy = options.PullNever },
			errHas: "target 3 of 3",
		},
		{
			name:    "kubelets left behind too far",
			targets: []string{"v1.34.4", "v1.35.4", "v1.36.3", "v1.37.2"},
			modify:  func(o *upgrade.Options) { o.SkipPhases = []string{actions.PhaseKubelets} },
			errHas:  `the kubelet of node "kind-control-plane" would stay at v1.33.13 while the API server goes to v1.37.2: a kubelet may be at most 3 minor versions older`,
		},
		{
			name:    "the control plane skipped",
			targets: []string{"v1.34.4", "v1.35.4"},
			modify:  func(o *upgrade.Options) { o.SkipPhases = []string{actions.PhaseControlPlane, actions.PhaseKubelets} },
			errHas:  "a chain of targets upgrades the control plane at each of them",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newChainEnv(t, "v1.33.13", 1, 1, tc.targets...)
			if tc.setup != nil {
				tc.setup(t, e)
			}
			snapshotUnchanged(t, e.env, func() {
				_, err := e.run(tc.modify)
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Errorf("got %v, want an error containing %q", err, tc.errHas)
				}
			})
		})
	}
}

func TestChainDryRunPlansEveryTarget(t *testing.T) {
	t.Parallel()
	e := newChainEnv(t, "v1.33.13", 1, 1, "v1.34.4", "v1.35.4")
	var plans []report.Event
	snapshotUnchanged(t, e.env, func() {
		rec, err := e.run(func(o *upgrade.Options) { o.DryRun = true })
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range rec.events {
			if ev.Kind == report.KindPlan {
				plans = append(plans, ev.Event)
			}
		}
	})
	if len(plans) != 2 || plans[0].Hop != 1 || plans[1].Hop != 2 {
		t.Fatalf("plans %+v, want one for each target", plans)
	}
	first := fmt.Sprint(plans[0].Plan)
	for _, want := range []string{"kubeletsAt:target 2 of 2 (v1.35.4)", "control-plane: installing kubeadm and kubectl v1.34.4"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first target's plan lacks %q:\n%s", want, first)
		}
	}
	if second := fmt.Sprint(plans[1].Plan); !strings.Contains(second, "kubelets: installing kubeadm, kubelet and kubectl v1.35.4") {
		t.Errorf("the second target's plan does not move the kubelets:\n%s", second)
	}
}

func TestChainResumesAfterAFailureAnywhereInTheSecondTarget(t *testing.T) {
	t.Parallel()
	targets := []string{"v1.34.4", "v1.35.4", "v1.36.3"}
	clean := newChainEnv(t, "v1.33.13", 1, 1, targets...)
	rec, err := clean.run(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := clean.cluster.Snapshot()
	// the calls of the second target: from its first event after the
	// first target's last (the chain looks at every target first) to its
	// last
	firstDone := 0
	for _, ev := range rec.events {
		if ev.Hop == 1 {
			firstDone = ev.seq
		}
	}
	first, last := -1, -1
	for _, ev := range rec.events {
		if ev.Hop == 2 && ev.seq >= firstDone {
			if first < 0 {
				first = ev.seq
			}
			last = ev.seq
		}
	}
	if first < 0 {
		t.Fatal("no event of the second target")
	}
	tried := 0
	for i := first; i < last; i++ {
		failed := clean.cluster.Calls[i]
		if !mutating(failed) {
			continue
		}
		occurrence := clean.cluster.Occurrence(i)
		for _, afterEffect := range []bool{false, true} {
			tried++
			t.Run(fmt.Sprintf("%03d %s #%d after effect %v", i+1, failed, occurrence, afterEffect), func(t *testing.T) {
				t.Parallel()
				e := newChainEnv(t, "v1.33.13", 1, 1, targets...)
				if afterEffect {
					e.cluster.FailAfterEffect(failed, occurrence)
				} else {
					e.cluster.FailOn(failed, occurrence)
				}
				if _, err := e.run(nil); err == nil {
					// a failed read inside a wait is retried: the run finishes
					if got := e.cluster.Snapshot(); got != want {
						t.Fatalf("the chain survived the failure but ended elsewhere:\n%s\nwant:\n%s", got, want)
					}
					return
				}
				n1 := len(e.cluster.Calls)
				if _, err := e.run(nil); err != nil {
					t.Fatalf("the rerun failed: %v\ncalls:\n%s", err, dump(e.calls(n1)))
				}
				if got := e.cluster.Snapshot(); got != want {
					t.Fatalf("the rerun ended elsewhere:\n%s\nwant:\n%s", got, want)
				}
			})
		}
	}
	if tried < 10 {
		t.Errorf("only %d changes in the second target to fail", tried)
	}
}

func TestHooksRunAfterEachPhaseNodeAndTarget(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2, fakenode.ReleaseTree)
	var (
		mu     sync.Mutex
		points []string
	)
	hook := func(p actions.HookPoint) error {
		mu.Lock()
		defer mu.Unlock()
		points = append(points, fmt.Sprintf("%d %s %s|%s|%s", p.Hop, p.Target, p.Phase, p.Node, p))
		return nil
	}
	if _, err := e.run(func(o *upgrade.Options) { o.Hook = hook }); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"1 v1.34.4 preflight||phase preflight",
		"1 v1.34.4 load-artifacts||phase load-artifacts",
		"1 v1.34.4 control-plane|kind-control-plane|node kind-control-plane in phase control-plane",
		"1 v1.34.4 control-plane||phase control-plane",
		"1 v1.34.4 kubelets|kind-control-plane|node kind-control-plane in phase kubelets",
		"1 v1.34.4 kubelets|kind-worker|node kind-worker in phase kubelets",
		"1 v1.34.4 kubelets|kind-worker2|node kind-worker2 in phase kubelets",
		"1 v1.34.4 kubelets||phase kubelets",
		"1 v1.34.4 verify||phase verify",
		"1 v1.34.4 ||the upgrade to v1.34.4",
	}
	if strings.Join(points, "\n") != strings.Join(want, "\n") {
		t.Errorf("hooks ran at\n%s\nwant\n%s", strings.Join(points, "\n"), strings.Join(want, "\n"))
	}
}

func TestAHookThatFailsStopsTheUpgradeAndARerunGoesOn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 1, fakenode.ReleaseTree)
	fail := true
	calls := 0
	hook := func(p actions.HookPoint) error {
		if p.Phase == actions.PhaseControlPlane && p.Node == "" {
			calls++
			if fail {
				return fmt.Errorf("the workload is down")
			}
		}
		return nil
	}
	rec, err := e.run(func(o *upgrade.Options) { o.Hook = hook })
	if err == nil || !strings.Contains(err.Error(), "the caller's hook after phase control-plane failed (run the upgrade again to go on from there): the workload is down") {
		t.Fatalf("got %v, want the hook's failure", err)
	}
	for _, n := range e.cluster.Nodes {
		if n.KubeletVersion != from {
			t.Errorf("node %s's kubelet moved to %s after the hook failed", n.Name, n.KubeletVersion)
		}
	}
	failed := false
	for _, ev := range rec.events {
		if ev.StepID == stepid.CallerHook && ev.Outcome == report.OutcomeFailure {
			failed = true
		}
	}
	if !failed {
		t.Error("no failed event of the hook's step")
	}
	fail = false
	if _, err := e.run(func(o *upgrade.Options) { o.Hook = hook }); err != nil {
		t.Fatal(err)
	}
	assertUpgraded(t, e.cluster)
	if calls != 2 {
		t.Errorf("the hook after the control plane ran %d times, want twice", calls)
	}
}

// TestChainNeedsDiskForEveryTarget: every target is staged beside the
// others, so the chain needs the disk of all of them before it starts.
func TestChainNeedsDiskForEveryTarget(t *testing.T) {
	t.Parallel()
	targets := []string{"v1.34.4", "v1.35.4", "v1.36.3"}
	// the least free space that the first target alone fits in
	fits := func(freeKB int64, targets ...string) error {
		e := newChainEnv(t, "v1.33.13", 1, 1, targets...)
		for _, n := range e.cluster.Nodes {
			n.DiskFreeKB = freeKB
		}
		_, err := e.run(func(o *upgrade.Options) { o.DryRun = true })
		return err
	}
	lo, hi := int64(0), int64(1)
	for fits(hi, targets[0]) != nil {
		lo, hi = hi, hi*2
		if hi > 1<<30 {
			t.Fatal("the first target fits in no disk")
		}
	}
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; fits(mid, targets[0]) == nil {
			hi = mid
		} else {
			lo = mid
		}
	}
	one := hi
	if err := fits(one, targets...); err == nil || !strings.Contains(err.Error(), "free disk space") {
		t.Errorf("with room for one target, the chain of three: %v, want the disk refused", err)
	}
	if err := fits(3*one+3, targets...); err != nil {
		t.Errorf("with room for three targets, the chain of three: %v", err)
	}
}

// kubeletsOf lists each node's kubelet version, "name=version".
func kubeletsOf(c *fakenode.Cluster) string {
	var out []string
	for _, n := range c.Nodes {
		out = append(out, n.Name+"="+n.KubeletVersion)
	}
	return strings.Join(out, " ")
}

func TestNodesLeavesTheOtherKubeletsAndARerunMovesThem(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2, fakenode.ReleaseTree)
	rec, err := e.run(func(o *upgrade.Options) { o.Nodes = []string{"control-plane", "kind-worker"} })
	if err != nil {
		t.Fatalf("upgrade failed: %v\ncalls:\n%s", err, dump(e.cluster.Calls))
	}
	if got, want := kubeletsOf(e.cluster), "kind-control-plane=v1.34.4 kind-worker=v1.34.4 kind-worker2=v1.33.13"; got != want {
		t.Errorf("kubelets %s, want %s", got, want)
	}
	left := e.cluster.Node("kind-worker2")
	if left.Unschedulable || !bytes.Equal(left.Files["/usr/bin/kubelet"].Content, fakenode.Binary("kubelet", from, "amd64")) {
		t.Errorf("the node left out was cordoned (%v) or got another kubelet", left.Unschedulable)
	}
	summary := ""
	for _, ev := range rec.events {
		if ev.Kind == report.KindUpgrade && ev.Event.Event == report.EventInfo {
			summary = ev.Message
		}
	}
	if want := "Left at their version by --nodes: kind-worker2 (v1.33.13)"; !strings.Contains(summary, want) {
		t.Errorf("summary %q lacks %q", summary, want)
	}
	if _, err := e.run(func(o *upgrade.Options) { o.Nodes = []string{"kind-worker2"} }); err != nil {
		t.Fatalf("the rerun failed: %v", err)
	}
	assertUpgraded(t, e.cluster)
}

func TestNodesRefusedBeforeAnyChange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		from    string
		targets []string
		setup   func(c *fakenode.Cluster)
		nodes   []string
		errHas  string
	}{
		{
			name: "an unknown node", from: "v1.33.13", targets: []string{"v1.34.4"},
			nodes:  []string{"kind-worker3"},
			errHas: `--nodes kind-worker3 names no node of cluster "kind": give node names (kind-control-plane, kind-worker, kind-worker2) or the roles control-plane and worker`,
		},
		{
			name: "a kubelet left too far behind", from: "v1.36.3", targets: []string{"v1.37.2"},
			setup:  func(c *fakenode.Cluster) { c.Node("kind-worker2").KubeletVersion = "v1.33.13" },
			nodes:  []string{"control-plane", "kind-worker"},
			errHas: `--nodes leaves it out: the kubelet of node "kind-worker2" would stay at v1.33.13 while the API server goes to v1.37.2`,
		},
		{
			name: "a chain leaving a kubelet too far behind", from: "v1.33.13", targets: []string{"v1.34.4", "v1.35.4", "v1.36.3", "v1.37.2"},
			nodes:  []string{"control-plane", "kind-worker"},
			errHas: `the kubelet of node "kind-worker2" would stay at v1.33.13 while the API server goes to v1.37.2`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newChainEnv(t, tc.from, 1, 2, tc.targets...)
			if tc.setup != nil {
				tc.setup(e.cluster)
			}
			snapshotUnchanged(t, e.env, func() {
				_, err := e.run(func(o *upgrade.Options) { o.Nodes = tc.nodes })
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Errorf("got %v, want an error containing %q", err, tc.errHas)
				}
			})
		})
	}
}

// TestChainLeavesAKubeletThreeMinorsBehind: the scenario on fake
// nodes: v1.34 to v1.37 in one command, one worker's kubelet left at
// v1.34 (N-3), then moved by a rerun of the chain with it chosen.
func TestChainLeavesAKubeletThreeMinorsBehind(t *testing.T) {
	t.Parallel()
	e := newChainEnv(t, "v1.34.4", 1, 2, "v1.35.4", "v1.36.3", "v1.37.2")
	if _, err := e.run(func(o *upgrade.Options) { o.Nodes = []string{"control-plane", "kind-worker"} }); err != nil {
		t.Fatalf("chain failed: %v\ncalls:\n%s", err, dump(e.cluster.Calls))
	}
	if got, want := kubeletsOf(e.cluster), "kind-control-plane=v1.37.2 kind-worker=v1.37.2 kind-worker2=v1.34.4"; got != want {
		t.Errorf("kubelets %s, want %s", got, want)
	}
	rec, err := e.run(func(o *upgrade.Options) { o.Nodes = []string{"kind-worker2"} })
	if err != nil {
		t.Fatalf("the rerun failed: %v", err)
	}
	assertAt(t, e.cluster, "v1.37.2")
	skipped := 0
	for _, ev := range rec.events {
		if ev.Kind == report.KindUpgrade && ev.Event.Event == report.EventInfo && strings.Contains(ev.Message, "already runs a later version, skipped") {
			skipped++
		}
	}
	if skipped != 2 {
		t.Errorf("the rerun skipped %d targets, want the 2 the control plane passed", skipped)
	}
}

func TestAFinishedChainIsNothingToDo(t *testing.T) {
	t.Parallel()
	e := newChainEnv(t, "v1.33.13", 1, 1, "v1.34.4", "v1.35.4")
	if _, err := e.run(nil); err != nil {
		t.Fatal(err)
	}
	var rec *recorder
	snapshotUnchanged(t, e.env, func() {
		var err error
		if rec, err = e.run(nil); err != nil {
			t.Fatal(err)
		}
	})
	last := rec.events[len(rec.events)-1]
	if last.Kind != report.KindUpgrade || last.Outcome != report.OutcomeSkipped || !strings.Contains(last.Message, "already runs v1.35.4, the chain's last target: nothing to do") {
		t.Errorf("the rerun ended with %+v, want skipped: nothing to do", last.Event)
	}
}

// TestChainCarriesTheEmulation: the skip-version jobs' shape on fake
// nodes: from v1.33 through v1.35 emulating 1.33 at every target, then
// the emulation raised at the last target's version.
func TestChainCarriesTheEmulation(t *testing.T) {
	t.Parallel()
	e := newChainEnv(t, "v1.33.13", 1, 1, "v1.34.4", "v1.35.4")
	var seen []string
	if _, err := e.run(func(o *upgrade.Options) {
		emulating("1.33", true)(o)
		o.Hook = func(p actions.HookPoint) error {
			if p.Phase == actions.PhaseControlPlane && p.Node == "" {
				// every control-plane node emulates 1.33 after each target
				seen = append(seen, p.Target)
				wantEmulation(t, e.cluster, "1.33", true)
			}
			return nil
		}
	}); err != nil {
		t.Fatalf("chain failed: %v\ncalls:\n%s", err, dump(e.cluster.Calls))
	}
	if strings.Join(seen, " ") != "v1.34.4 v1.35.4" {
		t.Errorf("the emulation was checked after %v, want both targets", seen)
	}
	assertAt(t, e.cluster, "v1.35.4")
	// raised at the same version: the last target alone
	if _, err := e.env.run(func(o *upgrade.Options) {
		o.ImageDir, o.Then = e.dirs[1], nil
		o.EmulatedVersion = "1.34"
	}); err != nil {
		t.Fatal(err)
	}
	wantEmulation(t, e.cluster, "1.34", true)
}
