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

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster"
)

var (
	testCPs     = []string{"ha-control-plane", "ha-control-plane2", "ha-control-plane3"}
	testWorkers = []string{"ha-worker", "ha-worker2"}
	testT0      = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
)

// timeline writes the events of an upgrade, one second apart unless told.
type timeline struct {
	now    time.Time
	events []event
}

// The fixtures' steps, and their display texts as the tool shows them.
const (
	stepDrain    = cluster.UpgradeStepKubeletsDrain
	stepRestart  = cluster.UpgradeStepKubeletsRestart
	stepUncordon = cluster.UpgradeStepKubeletsUncordon
)

var displayed = map[string]string{
	cluster.UpgradeStepPreflightNodes:       "checking nodes",
	cluster.UpgradeStepControlPlaneApply:    "kubeadm upgrade apply v1.37.2",
	cluster.UpgradeStepControlPlaneNode:     "kubeadm upgrade node",
	cluster.UpgradeStepControlPlaneWait:     "waiting for the control-plane pods to run v1.37.2 and be Ready",
	cluster.UpgradeStepKubeletsUpgradeNode:  "kubeadm upgrade node",
	cluster.UpgradeStepKubeletsDrain:        "draining",
	cluster.UpgradeStepKubeletsInstall:      "installing kubeadm, kubelet and kubectl v1.37.2",
	cluster.UpgradeStepKubeletsRestart:      "restarting the kubelet",
	cluster.UpgradeStepKubeletsWaitReady:    "waiting for the node to be Ready at v1.37.2",
	cluster.UpgradeStepKubeletsWaitSettled:  "waiting for the control-plane pods and /readyz",
	cluster.UpgradeStepKubeletsUncordon:     "uncordoning",
	cluster.UpgradeStepKubeletsWriteVersion: "writing /kind/version",
}

// emit adds an event; stepID is "" for events that are not a step's.
func (tl *timeline) emit(kind, ev, phase, node, stepID, outcome string) {
	tl.now = tl.now.Add(time.Second)
	tl.events = append(tl.events, event{Time: tl.now, Kind: kind, Event: ev, Phase: phase, Node: node, StepID: stepID, Step: displayed[stepID], Outcome: outcome})
}

func (tl *timeline) steps(phase, node string, steps ...string) {
	tl.emit("node", "started", phase, node, "", "")
	for _, s := range steps {
		tl.emit("step", "started", phase, node, s, "")
		tl.emit("step", "finished", phase, node, s, "success")
	}
	tl.emit("node", "finished", phase, node, "", "success")
}

// goodUpgrade is the events of an upgrade of 3 control planes and 2
// workers as the tool runs it: load-artifacts on every node at once, the
// rest one node at a time.
func goodUpgrade() []event {
	tl := &timeline{now: testT0}
	all := append(append([]string{}, testCPs...), testWorkers...)
	tl.emit("upgrade", "started", "", "", "", "")
	tl.emit("phase", "started", "preflight", "", "", "")
	tl.emit("step", "started", "preflight", "", cluster.UpgradeStepPreflightNodes, "")
	tl.emit("step", "finished", "preflight", "", cluster.UpgradeStepPreflightNodes, "success")
	tl.emit("phase", "finished", "preflight", "", "", "success")
	tl.emit("phase", "started", "load-artifacts", "", "", "")
	for _, n := range all {
		tl.emit("node", "started", "load-artifacts", n, "", "")
	}
	for _, n := range all {
		tl.emit("node", "finished", "load-artifacts", n, "", "success")
	}
	tl.emit("phase", "finished", "load-artifacts", "", "", "success")
	tl.emit("phase", "started", phaseControlPlane, "", "", "")
	tl.steps(phaseControlPlane, testCPs[0], cluster.UpgradeStepControlPlaneApply, cluster.UpgradeStepControlPlaneWait)
	for _, n := range testCPs[1:] {
		tl.steps(phaseControlPlane, n, cluster.UpgradeStepControlPlaneNode, cluster.UpgradeStepControlPlaneWait)
	}
	tl.emit("phase", "finished", phaseControlPlane, "", "", "success")
	tl.emit("phase", "started", phaseKubelets, "", "", "")
	for _, n := range testCPs {
		tl.steps(phaseKubelets, n, stepDrain, cluster.UpgradeStepKubeletsInstall, stepRestart,
			cluster.UpgradeStepKubeletsWaitReady, cluster.UpgradeStepKubeletsWaitSettled, stepUncordon, cluster.UpgradeStepKubeletsWriteVersion)
	}
	for _, n := range testWorkers {
		tl.steps(phaseKubelets, n, cluster.UpgradeStepKubeletsUpgradeNode, stepDrain, cluster.UpgradeStepKubeletsInstall, stepRestart,
			cluster.UpgradeStepKubeletsWaitReady, stepUncordon, cluster.UpgradeStepKubeletsWriteVersion)
	}
	tl.emit("phase", "finished", phaseKubelets, "", "", "success")
	tl.emit("phase", "started", "verify", "", "", "")
	tl.emit("phase", "finished", "verify", "", "", "success")
	tl.emit("upgrade", "finished", "", "", "", "success")
	return tl.events
}

func TestParseEventsAndSpans(t *testing.T) {
	t.Parallel()
	const out = `{"time":"2026-11-30T12:00:00.5Z","kind":"upgrade","event":"started"}
{"time":"2026-11-30T12:00:01Z","kind":"step","event":"started","phase":"kubelets","node":"w","stepID":"kubelets/drain","step":"draining"}
{"time":"2026-11-30T12:00:02Z","kind":"step","event":"finished","phase":"kubelets","node":"w","stepID":"kubelets/drain","step":"draining","outcome":"skipped","durationSeconds":1,"message":"no other node can take its pods"}
{"time":"2026-11-30T12:00:03Z","kind":"upgrade","event":"info","message":"Upgraded"}
{"time":"2026-11-30T12:00:04Z","kind":"upgrade","event":"finished","outcome":"success","durationSeconds":3.5}
`
	events, err := parseEvents(out)
	if err != nil {
		t.Fatal(err)
	}
	spans, err := spansOf(events)
	if err != nil {
		t.Fatal(err)
	}
	want := []span{
		{Kind: "upgrade", Outcome: "success", Start: testT0.Add(500 * time.Millisecond), End: testT0.Add(4 * time.Second)},
		{Kind: "step", Phase: "kubelets", Node: "w", StepID: stepDrain, Step: "draining", Outcome: "skipped", Start: testT0.Add(time.Second), End: testT0.Add(2 * time.Second)},
	}
	if fmt.Sprint(spans) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", spans, want)
	}

	for _, tc := range []struct{ name, out, err string }{
		{"not JSON", "Upgraded the cluster\n", "not a JSON event"},
		{"never finished", `{"time":"2026-11-30T12:00:00Z","kind":"upgrade","event":"started"}`, "never finished"},
		{"never started", `{"time":"2026-11-30T12:00:00Z","kind":"phase","event":"finished","phase":"verify"}`, "without having started"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			events, err := parseEvents(tc.out)
			if err == nil {
				_, err = spansOf(events)
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("want an error with %q, got %v", tc.err, err)
			}
		})
	}
}

// edit changes the spans keep matches.
func edit(spans []span, keep func(span) bool, change func(*span)) []span {
	for i := range spans {
		if keep(spans[i]) {
			change(&spans[i])
		}
	}
	return spans
}

func drop(spans []span, keep func(span) bool) []span {
	var out []span
	for _, s := range spans {
		if !keep(s) {
			out = append(out, s)
		}
	}
	return out
}

func nodeIn(phase, node string) func(span) bool {
	return func(s span) bool { return s.Kind == "node" && s.Phase == phase && s.Node == node }
}

func stepOn(node, step string) func(span) bool {
	return func(s span) bool {
		return s.Kind == "step" && s.Node == node && s.StepID == step
	}
}

func TestUpgradeOrder(t *testing.T) {
	t.Parallel()
	endOf := func(spans []span, keep func(span) bool) time.Time {
		return find(spans, keep)[0].End
	}
	for _, tc := range []struct {
		name string
		// change breaks the good upgrade's spans
		change func([]span) []span
		// want is, for each of upgradeOrder's checks, "" for a pass or
		// what its error says
		want [4]string
	}{
		{name: "as the tool runs it", change: func(s []span) []span { return s }},
		{
			name: "the bootstrap node is not first",
			change: func(s []span) []span {
				a, b := find(s, nodeIn(phaseControlPlane, testCPs[0]))[0], find(s, nodeIn(phaseControlPlane, testCPs[1]))[0]
				s = edit(s, nodeIn(phaseControlPlane, testCPs[0]), func(x *span) { x.Start, x.End = b.Start, b.End })
				return edit(s, nodeIn(phaseControlPlane, testCPs[1]), func(x *span) { x.Start, x.End = a.Start, a.End })
			},
			want: [4]string{0: "ha-control-plane2 came first, not the bootstrap node ha-control-plane"},
		},
		{
			name: "two control-plane nodes at once",
			change: func(s []span) []span {
				end := endOf(s, nodeIn(phaseControlPlane, testCPs[1]))
				return edit(s, nodeIn(phaseControlPlane, testCPs[2]), func(x *span) { x.Start = end.Add(-time.Second) })
			},
			want: [4]string{0: "ha-control-plane3 started 1s before ha-control-plane2 finished"},
		},
		{
			name: "a control-plane node failed",
			change: func(s []span) []span {
				return edit(s, nodeIn(phaseControlPlane, testCPs[1]), func(x *span) { x.Outcome = "failure" })
			},
			want: [4]string{0: "ha-control-plane2 failed"},
		},
		{
			name: "a control-plane kubelet left out",
			change: func(s []span) []span {
				return drop(s, func(x span) bool { return x.Phase == phaseKubelets && x.Node == testCPs[2] })
			},
			want: [4]string{1: "ha-control-plane3 was visited 0 times", 2: "the kubelets phase did not visit ha-control-plane3"},
		},
		{
			name: "a worker's kubelet restarted before the last control plane's was done",
			change: func(s []span) []span {
				end := endOf(s, nodeIn(phaseKubelets, testCPs[2]))
				return edit(s, stepOn(testWorkers[1], stepRestart), func(x *span) { x.Start = end.Add(-2 * time.Second) })
			},
			want: [4]string{2: "kubelets: ha-worker2: restarting the kubelet started 2s before the control plane was done"},
		},
		{
			name: "a drain while another node is cordoned",
			change: func(s []span) []span {
				end := endOf(s, stepOn(testWorkers[0], stepUncordon))
				return edit(s, stepOn(testWorkers[1], stepDrain), func(x *span) { x.Start = end.Add(-3 * time.Second) })
			},
			want: [4]string{3: "ha-worker2 was drained 3s before ha-worker was uncordoned"},
		},
		{
			name: "a node never uncordoned",
			change: func(s []span) []span {
				return drop(s, stepOn(testWorkers[0], stepUncordon))
			},
			want: [4]string{3: "ha-worker was never uncordoned after its drain"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spans, err := spansOf(goodUpgrade())
			if err != nil {
				t.Fatal(err)
			}
			checks := upgradeOrder(tc.change(spans), testCPs[0], testCPs, testWorkers)
			if len(checks) != len(tc.want) {
				t.Fatalf("%d checks, the test knows %d", len(checks), len(tc.want))
			}
			for i, c := range checks {
				err := c.fn()
				switch {
				case tc.want[i] == "" && err != nil:
					t.Errorf("%s: unexpected error: %v", c.name, err)
				case tc.want[i] != "" && (err == nil || !strings.Contains(err.Error(), tc.want[i])):
					t.Errorf("%s: want an error with %q, got %v", c.name, tc.want[i], err)
				}
			}
		})
	}
}

func TestCordonWindows(t *testing.T) {
	t.Parallel()
	spans, err := spansOf(goodUpgrade())
	if err != nil {
		t.Fatal(err)
	}
	windows, err := cordonWindows(spans)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range windows {
		if !w.Start.Before(w.End) {
			t.Errorf("%s: window %s to %s", w.Node, w.Start, w.End)
		}
		got = append(got, w.Node)
	}
	if want := append(append([]string{}, testCPs...), testWorkers...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("windows of %v, want %v", got, want)
	}
}

func TestLocate(t *testing.T) {
	t.Parallel()
	spans, err := spansOf(goodUpgrade())
	if err != nil {
		t.Fatal(err)
	}
	drain := find(spans, stepOn(testWorkers[0], stepDrain))[0]
	up := find(spans, func(s span) bool { return s.Kind == "upgrade" })[0]
	verify := find(spans, func(s span) bool { return s.Phase == "verify" })[0]
	for _, tc := range []struct {
		name string
		at   time.Time
		want string
	}{
		{"before", up.Start.Add(-2 * time.Second), "-2.0s, before the upgrade"},
		{"in a step", drain.Start.Add(500 * time.Millisecond), fmt.Sprintf("%+.1fs, kubelets: ha-worker: draining", drain.Start.Add(500*time.Millisecond).Sub(up.Start).Seconds())},
		{"in a phase between its nodes", verify.Start, fmt.Sprintf("%+.1fs, verify", verify.Start.Sub(up.Start).Seconds())},
		{"after", up.End.Add(time.Second), fmt.Sprintf("%+.1fs, after the upgrade", up.End.Add(time.Second).Sub(up.Start).Seconds())},
	} {
		if got := locate(spans, tc.at); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
