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
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/fakenode"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/imageref"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/options"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/report"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/stepid"
)

// kubeletsInProgress replays the kubelets phase's node events in order and
// returns the most nodes in progress at once, and the nodes that were
// started while a control-plane node was in progress or before all of them
// were done.
func kubeletsInProgress(events []event, controlPlanes int) (most int, early []string) {
	inProgress := map[string]bool{}
	cpDone := 0
	for _, ev := range events {
		if ev.Kind != report.KindNode || ev.Phase != "kubelets" {
			continue
		}
		isCP := strings.Contains(ev.Node, "control-plane")
		switch ev.Event.Event {
		case report.EventStarted:
			if !isCP && cpDone < controlPlanes || len(inProgress) > 0 && (isCP || anyCP(inProgress)) {
				early = append(early, ev.Node)
			}
			inProgress[ev.Node] = true
			most = max(most, len(inProgress))
		case report.EventFinished:
			delete(inProgress, ev.Node)
			if isCP {
				cpDone++
			}
		}
	}
	return most, early
}

func anyCP(nodes map[string]bool) bool {
	for n := range nodes {
		if strings.Contains(n, "control-plane") {
			return true
		}
	}
	return false
}

// TestParallelWorkers: with ParallelWorkers 2, control-plane nodes are still
// upgraded one at a time and first, then the workers two at a time, never
// more, and the cluster ends upgraded.
func TestParallelWorkers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		parallel, want int
	}{
		{parallel: options.Defaults().ParallelWorkers, want: 1}, // the default: one at a time
		{parallel: 1, want: 1},
		{parallel: 2, want: 2},
		{parallel: 9, want: 4},
	} {
		// the bound must always hold; reaching it depends on how fast the
		// fake's workers finish, so it gets a few tries
		reached := 0
		for try := 0; try < 5 && reached != tc.want; try++ {
			e := newEnv(t, 2, 4, fakenode.Flat)
			// a restarted worker stays NotReady for a while (real ones
			// take seconds), long enough for the next ones to start
			e.cluster.Delays.NodeReads = 40
			rec, err := e.run(func(o *upgrade.Options) { o.ParallelWorkers = tc.parallel })
			if err != nil {
				t.Fatalf("ParallelWorkers %d: %v", tc.parallel, err)
			}
			assertUpgraded(t, e.cluster)
			most, early := kubeletsInProgress(rec.events, 2)
			if most > tc.want {
				t.Errorf("ParallelWorkers %d: %d nodes were in the kubelets phase at once, more than %d", tc.parallel, most, tc.want)
			}
			if len(early) > 0 {
				t.Errorf("ParallelWorkers %d: %v started beside a control-plane node or before the control plane was done", tc.parallel, early)
			}
			reached = max(reached, most)
		}
		if reached != tc.want {
			t.Errorf("ParallelWorkers %d: in 5 upgrades at most %d nodes were in the kubelets phase at once, want %d", tc.parallel, reached, tc.want)
		}
	}
}

// TestParallelWorkersStopAfterAFailure: a worker that fails stops the
// phase; no worker starts after it, the ones under way finish, and the
// same command run again finishes the upgrade.
func TestParallelWorkersStopAfterAFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 4, fakenode.Flat)
	clean := newEnv(t, 1, 4, fakenode.Flat)
	mustUpgrade(t, clean)
	var restart fakenode.Call
	for _, c := range clean.cluster.Calls {
		if c.Node == "kind-worker2" && strings.Join(c.Argv, " ") == "systemctl restart kubelet" {
			restart = c
		}
	}
	if restart.Node == "" {
		t.Fatal("no kubelet restart on kind-worker2 in a clean upgrade")
	}
	e.cluster.FailOn(restart, 1)
	rec, err := e.run(func(o *upgrade.Options) { o.ParallelWorkers = 2 })
	if err == nil || !strings.Contains(err.Error(), "kind-worker2") {
		t.Fatalf("want the failure on kind-worker2, got %v", err)
	}
	// the order of the events, not which nodes started: on a loaded
	// machine kind-worker3 may finish, and kind-worker4 start, before
	// kind-worker2 reaches its failing restart
	failed := false
	for _, ev := range rec.events {
		if ev.Kind != report.KindNode || ev.Phase != "kubelets" {
			continue
		}
		switch {
		case ev.Node == "kind-worker2" && ev.Event.Event == report.EventFinished && ev.Outcome == report.OutcomeFailure:
			failed = true
		case failed && ev.Event.Event == report.EventStarted && ev.Node != "kind-worker":
			// kind-worker was sent off with kind-worker2 (two at a
			// time), whenever its event comes
			t.Errorf("%s started after kind-worker2 failed", ev.Node)
		}
	}
	if !failed {
		t.Error("no event says kind-worker2 failed")
	}
	mustUpgrade(t, e)
	assertUpgraded(t, e.cluster)
}

// nodeSpans returns, for phase, each node's span as [first, last] index
// into events (started, finished).
func nodeSpans(events []event, phase string) map[string][2]int {
	spans := map[string][2]int{}
	for i, ev := range events {
		if ev.Kind != report.KindNode || ev.Phase != phase {
			continue
		}
		s := spans[ev.Node]
		switch ev.Event.Event {
		case report.EventStarted:
			s[0] = i
		case report.EventFinished:
			s[1] = i
		}
		spans[ev.Node] = s
	}
	return spans
}

// phaseSpan returns phase's [started, finished] indexes into events.
func phaseSpan(events []event, phase string) [2]int {
	var s [2]int
	for i, ev := range events {
		if ev.Kind != report.KindPhase || ev.Phase != phase {
			continue
		}
		switch ev.Event.Event {
		case report.EventStarted:
			s[0] = i
		case report.EventFinished:
			s[1] = i
		}
	}
	return s
}

// TestWorkersLoadBesideTheControlPlane: the other control-plane nodes'
// and the workers' load-artifacts starts once the bootstrap node is loaded
// and runs beside the control-plane phase, the control-plane nodes first;
// no node is upgraded before its load is done; with the control-plane
// phase skipped every node is loaded inside load-artifacts. kubeadm
// upgrade apply's health check runs a Job of kubeadm's pause image on any
// schedulable node, and kind's node images hold their sandbox image
// instead (a real chain from v1.34 failed when the Job landed on a worker
// still importing it; the fake's apply fails when a node lacks it): a
// node that lacks it imports it first, before the control-plane phase.
func TestWorkersLoadBesideTheControlPlane(t *testing.T) {
	t.Parallel()
	pause := kubeadmPause()
	// as kind's node images are: kubeadm's pause imported first
	e := newEnv(t, 1, 2, fakenode.ReleaseTree)
	rec := mustUpgrade(t, e)
	assertUpgraded(t, e.cluster)
	cp := phaseSpan(rec.events, "control-plane")
	first := map[string]bool{}
	for i, ev := range rec.events {
		if ev.Kind == report.KindStep && ev.StepID == stepid.LoadImportHealthCheck && ev.Event.Event == report.EventFinished && ev.Outcome == report.OutcomeSuccess && i < cp[0] {
			first[ev.Node] = true
		}
	}
	for _, w := range []string{"kind-worker", "kind-worker2"} {
		if !first[w] {
			t.Errorf("%s, which lacks %s, did not import it before the control-plane phase", w, pause)
		}
	}

	overlapped := false
	for try := 0; try < 5 && !overlapped; try++ {
		e := newEnv(t, 2, 2, fakenode.ReleaseTree)
		for _, w := range []string{"kind-control-plane2", "kind-worker", "kind-worker2"} {
			e.cluster.Node(w).Images[imageref.Normalize(pause)] = true
		}
		rec := mustUpgrade(t, e)
		assertUpgraded(t, e.cluster)
		loads, kubelets := nodeSpans(rec.events, "load-artifacts"), nodeSpans(rec.events, "kubelets")
		cp := phaseSpan(rec.events, "control-plane")
		// the other control-plane node is loaded beside the phase too,
		// before the workers, and upgraded only once it is loaded
		if loads["kind-control-plane2"][0] < loads["kind-control-plane"][1] {
			t.Error("kind-control-plane2's load started before the bootstrap node was loaded")
		}
		for i, ev := range rec.events {
			if ev.Kind == report.KindStep && ev.StepID == stepid.ControlPlaneNode && ev.Node == "kind-control-plane2" && i < loads["kind-control-plane2"][1] {
				t.Error("kubeadm upgrade node ran on kind-control-plane2 before it was loaded")
			}
		}
		if loads["kind-control-plane2"][1] > cp[0] {
			overlapped = true
		}
		for _, w := range []string{"kind-worker", "kind-worker2"} {
			for _, c := range []string{"kind-control-plane", "kind-control-plane2"} {
				if loads[w][0] < loads[c][1] {
					t.Errorf("%s's load started before %s was loaded", w, c)
				}
			}
			if kubelets[w][0] < loads[w][1] {
				t.Errorf("the kubelets phase started on %s before it was loaded", w)
			}
			if loads[w][1] > cp[0] {
				overlapped = true
			}
		}
	}
	if !overlapped {
		t.Error("in 5 upgrades no node was still loading when the control-plane phase started")
	}

	e = newEnv(t, 1, 2, fakenode.ReleaseTree)
	rec, err := e.run(func(o *upgrade.Options) { o.SkipPhases = []string{"control-plane", "kubelets", "verify"} })
	if err != nil {
		t.Fatal(err)
	}
	phase := phaseSpan(rec.events, "load-artifacts")
	for n, s := range nodeSpans(rec.events, "load-artifacts") {
		if s[0] < phase[0] || s[1] > phase[1] {
			t.Errorf("with control-plane skipped, %s was loaded outside the load-artifacts phase", n)
		}
	}
}
