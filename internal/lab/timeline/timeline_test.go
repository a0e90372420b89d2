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

package timeline

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseEventsAndSpans(t *testing.T) {
	t.Parallel()
	const out = `{"time":"2026-11-30T12:00:00.5Z","kind":"upgrade","event":"started"}
{"time":"2026-11-30T12:00:01Z","kind":"step","event":"started","phase":"kubelets","node":"w","stepID":"kubelets/drain","step":"draining"}
{"time":"2026-11-30T12:00:02Z","kind":"step","event":"finished","phase":"kubelets","node":"w","stepID":"kubelets/drain","step":"draining","outcome":"skipped","durationSeconds":1,"message":"no other node can take its pods"}
{"time":"2026-11-30T12:00:03Z","kind":"upgrade","event":"info","message":"Upgraded"}
{"time":"2026-11-30T12:00:04Z","kind":"upgrade","event":"finished","outcome":"success","durationSeconds":3.5}
`
	events, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	spans, err := SpansOf(events)
	if err != nil {
		t.Fatal(err)
	}
	want := []Span{
		{Kind: "upgrade", Outcome: "success", Start: FixtureStart.Add(500 * time.Millisecond), End: FixtureStart.Add(4 * time.Second)},
		{Kind: "step", Phase: "kubelets", Node: "w", StepID: StepDrain, Step: "draining", Outcome: "skipped", Start: FixtureStart.Add(time.Second), End: FixtureStart.Add(2 * time.Second)},
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
			events, err := Parse(tc.out)
			if err == nil {
				_, err = SpansOf(events)
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("want an error with %q, got %v", tc.err, err)
			}
		})
	}
}

func TestUpgradeOrder(t *testing.T) {
	t.Parallel()
	endOf := func(spans []Span, keep func(Span) bool) time.Time {
		return Find(spans, keep)[0].End
	}
	for _, tc := range []struct {
		name string
		// change breaks the good upgrade's spans
		change func([]Span) []Span
		// want is, for each of UpgradeOrder's checks, "" for a pass or
		// what its error says
		want [4]string
	}{
		{name: "as the tool runs it", change: func(s []Span) []Span { return s }},
		{
			name: "the bootstrap node is not first",
			change: func(s []Span) []Span {
				a, b := Find(s, NodeIn(PhaseControlPlane, FixtureControlPlanes[0]))[0], Find(s, NodeIn(PhaseControlPlane, FixtureControlPlanes[1]))[0]
				s = Edit(s, NodeIn(PhaseControlPlane, FixtureControlPlanes[0]), func(x *Span) { x.Start, x.End = b.Start, b.End })
				return Edit(s, NodeIn(PhaseControlPlane, FixtureControlPlanes[1]), func(x *Span) { x.Start, x.End = a.Start, a.End })
			},
			want: [4]string{0: "ha-control-plane2 came first, not the bootstrap node ha-control-plane"},
		},
		{
			name: "two control-plane nodes at once",
			change: func(s []Span) []Span {
				end := endOf(s, NodeIn(PhaseControlPlane, FixtureControlPlanes[1]))
				return Edit(s, NodeIn(PhaseControlPlane, FixtureControlPlanes[2]), func(x *Span) { x.Start = end.Add(-time.Second) })
			},
			want: [4]string{0: "ha-control-plane3 started 1s before ha-control-plane2 finished"},
		},
		{
			name: "a control-plane node failed",
			change: func(s []Span) []Span {
				return Edit(s, NodeIn(PhaseControlPlane, FixtureControlPlanes[1]), func(x *Span) { x.Outcome = "failure" })
			},
			want: [4]string{0: "ha-control-plane2 failed"},
		},
		{
			name: "a control-plane kubelet left out",
			change: func(s []Span) []Span {
				return Drop(s, func(x Span) bool { return x.Phase == PhaseKubelets && x.Node == FixtureControlPlanes[2] })
			},
			want: [4]string{1: "ha-control-plane3 was visited 0 times", 2: "the kubelets phase did not visit ha-control-plane3"},
		},
		{
			name: "a worker's kubelet restarted before the last control plane's was done",
			change: func(s []Span) []Span {
				end := endOf(s, NodeIn(PhaseKubelets, FixtureControlPlanes[2]))
				return Edit(s, StepOn(FixtureWorkers[1], StepRestart), func(x *Span) { x.Start = end.Add(-2 * time.Second) })
			},
			want: [4]string{2: "kubelets: ha-worker2: restarting the kubelet started 2s before the control plane was done"},
		},
		{
			name: "a drain while another node is cordoned",
			change: func(s []Span) []Span {
				end := endOf(s, StepOn(FixtureWorkers[0], StepUncordon))
				return Edit(s, StepOn(FixtureWorkers[1], StepDrain), func(x *Span) { x.Start = end.Add(-3 * time.Second) })
			},
			want: [4]string{3: "ha-worker2 was drained 3s before ha-worker was uncordoned"},
		},
		{
			name: "a node never uncordoned",
			change: func(s []Span) []Span {
				return Drop(s, StepOn(FixtureWorkers[0], StepUncordon))
			},
			want: [4]string{3: "ha-worker was never uncordoned after its drain"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spans, err := SpansOf(FixtureUpgrade())
			if err != nil {
				t.Fatal(err)
			}
			checks := UpgradeOrder(tc.change(spans), FixtureControlPlanes[0], FixtureControlPlanes, FixtureWorkers)
			if len(checks) != len(tc.want) {
				t.Fatalf("%d checks, the test knows %d", len(checks), len(tc.want))
			}
			for i, c := range checks {
				err := c.Fn()
				switch {
				case tc.want[i] == "" && err != nil:
					t.Errorf("%s: unexpected error: %v", c.Name, err)
				case tc.want[i] != "" && (err == nil || !strings.Contains(err.Error(), tc.want[i])):
					t.Errorf("%s: want an error with %q, got %v", c.Name, tc.want[i], err)
				}
			}
		})
	}
}

func TestCordonWindows(t *testing.T) {
	t.Parallel()
	spans, err := SpansOf(FixtureUpgrade())
	if err != nil {
		t.Fatal(err)
	}
	windows, err := CordonWindows(spans)
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
	if want := append(append([]string{}, FixtureControlPlanes...), FixtureWorkers...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("windows of %v, want %v", got, want)
	}
	// the bootstrap node's window opens with its drain beside its loading
	early := Find(spans, StepOn(FixtureControlPlanes[0], StepDrainBootstrap))[0]
	if len(windows) > 0 && !windows[0].Start.Equal(early.Start) {
		t.Errorf("%s's window starts at %s, want its early drain's start %s", windows[0].Node, windows[0].Start, early.Start)
	}
}

func TestLocate(t *testing.T) {
	t.Parallel()
	spans, err := SpansOf(FixtureUpgrade())
	if err != nil {
		t.Fatal(err)
	}
	drain := Find(spans, StepOn(FixtureWorkers[0], StepDrain))[0]
	up := Find(spans, func(s Span) bool { return s.Kind == "upgrade" })[0]
	verify := Find(spans, func(s Span) bool { return s.Phase == "verify" })[0]
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
		if got := Locate(spans, tc.at); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
