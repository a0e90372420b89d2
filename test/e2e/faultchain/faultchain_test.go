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

package faultchain

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/internal/lab/timeline"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster"
)

// stepEvent is an event of step id on node; its display text is text.
func stepEvent(at int, ev string, id cluster.UpgradeStepID, node, text, outcome string) timeline.Event {
	phase, _, _ := strings.Cut(string(id), "/")
	return timeline.Event{Time: time.Unix(int64(at), 0), Kind: "step", Event: ev, Phase: phase, Node: node, StepID: id, Step: text, Outcome: outcome}
}

// the steps the fixtures use
var (
	drain          = timeline.StepDrain
	uncordon       = timeline.StepUncordon
	restart        = timeline.StepRestart
	stage          = timeline.StepID("load-artifacts/stage")
	images         = timeline.StepID("preflight/images")
	imports        = timeline.StepID("load-artifacts/import")
	pin            = timeline.StepID("load-artifacts/pin")
	preflightNodes = timeline.StepID("preflight/nodes")
)

func TestFaultPointMatches(t *testing.T) {
	t.Parallel()
	inside := Point{StepID: drain, Node: "worker", Delay: time.Second, Action: SIGKILL}
	boundary := Point{StepID: stage, Node: "control-plane", AtBoundary: true, Action: SIGINT}
	cluster := Point{StepID: images, Action: SIGINT}
	cases := []struct {
		p    Point
		ev   timeline.Event
		want bool
	}{
		{inside, stepEvent(1, "started", drain, "c-worker", "draining", ""), true},
		{inside, stepEvent(1, "started", drain, "c-worker2", "draining", ""), false},
		{inside, stepEvent(1, "finished", drain, "c-worker", "draining", "success"), false},
		// the display text does not matter, the identifier does
		{inside, stepEvent(1, "started", drain, "c-worker", "evicting the pods", ""), true},
		{inside, stepEvent(1, "started", uncordon, "c-worker", "draining", ""), false},
		{boundary, stepEvent(1, "finished", stage, "c-control-plane", "staging kubeadm, kubelet and kubectl in /kind/upgrade/v1.37.2", "success"), true},
		{boundary, stepEvent(1, "finished", stage, "c-control-plane", "staging kubeadm", "skipped"), false},
		{boundary, stepEvent(1, "started", stage, "c-control-plane", "staging kubeadm", ""), false},
		{cluster, stepEvent(1, "started", images, "", "checking images", ""), true},
		{cluster, stepEvent(1, "started", images, "c-control-plane", "checking images", ""), false},
		{cluster, timeline.Event{Kind: "phase", Event: "started", Phase: "preflight"}, false},
	}
	for _, tc := range cases {
		if got := tc.p.Matches(tc.ev, "c"); got != tc.want {
			t.Errorf("%s matches %+v = %v, want %v", tc.p, tc.ev, got, tc.want)
		}
	}
	if got := inside.String(); got != `SIGKILL 1s into kubelets/drain on worker` {
		t.Errorf("String() = %q", got)
	}
	if got := boundary.String(); got != `SIGINT after load-artifacts/stage on control-plane` {
		t.Errorf("String() = %q", got)
	}
}

func TestFaultLandedInside(t *testing.T) {
	t.Parallel()
	p := Point{StepID: drain, Node: "worker", Delay: time.Second, Action: SIGKILL}
	events := []timeline.Event{
		stepEvent(10, "started", drain, "c-worker", "draining", ""),
		stepEvent(12, "finished", drain, "c-worker", "draining", "success"),
	}
	if err := p.LandedInside(events, "c", time.Unix(11, 0)); err != nil {
		t.Errorf("a fault at 11 s inside a step of 10-12 s: %v", err)
	}
	if err := p.LandedInside(events, "c", time.Unix(13, 0)); err == nil || !strings.Contains(err.Error(), "had finished") {
		t.Errorf("a fault after the step finished: %v", err)
	}
	if err := p.LandedInside(events[1:], "c", time.Unix(11, 0)); err == nil || !strings.Contains(err.Error(), "never started") {
		t.Errorf("a step that never started: %v", err)
	}
}

func TestRepeatedWork(t *testing.T) {
	t.Parallel()
	run1 := []timeline.Event{
		stepEvent(1, "finished", imports, "c-cp", "importing 7 image archive(s)", "success"),
		stepEvent(2, "finished", pin, "c-cp", "pinning the target's images", "success"),
		stepEvent(3, "finished", drain, "c-w", "draining", "success"),
	}
	run2 := []timeline.Event{
		// skipped and checks are not work; pinning runs every time
		stepEvent(4, "finished", imports, "c-cp", "importing 0 image archive(s)", "skipped"),
		stepEvent(5, "finished", pin, "c-cp", "pinning the target's images", "success"),
		stepEvent(6, "finished", drain, "c-w", "draining", "skipped"),
		stepEvent(7, "finished", restart, "c-w", "restarting the kubelet", "failure"),
	}
	if got := RepeatedWork([][]timeline.Event{run1, run2}, nil); len(got) != 0 {
		t.Errorf("repeatedWork = %v, want none", got)
	}
	run3 := []timeline.Event{
		stepEvent(8, "finished", imports, "c-cp", "importing 2 image archive(s)", "success"),
		stepEvent(9, "finished", restart, "c-w", "restarting the kubelet", "success"),
	}
	got := RepeatedWork([][]timeline.Event{run1, run2, run3}, nil)
	if strings.Join(got, ";") != "load-artifacts/import/c-cp (run 1, again in run 3)" {
		t.Errorf("repeatedWork = %v", got)
	}
	if got := RepeatedWork([][]timeline.Event{run1, run3}, map[string]bool{"load-artifacts/import/c-cp": true}); len(got) != 0 {
		t.Errorf("excused work reported: %v", got)
	}
}

func TestParentOf(t *testing.T) {
	t.Parallel()
	if got := ParentOf("1234 (docker exec (x)) S 77 1234 1234 0 -1"); got != 77 {
		t.Errorf("parentOf = %d, want 77", got)
	}
	if got := ParentOf("garbage"); got != -1 {
		t.Errorf("parentOf(garbage) = %d", got)
	}
}

func TestExecChild(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sh", "-c", "sleep 30; : exec marker-for-test")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var got int
	for i := 0; i < 100 && got == 0; i++ {
		got = ExecChild(os.Getpid(), "marker-for-test")
		time.Sleep(10 * time.Millisecond)
	}
	if got != cmd.Process.Pid {
		t.Errorf("execChild = %d, want %d", got, cmd.Process.Pid)
	}
	if other := ExecChild(os.Getpid(), "no-such-marker"); other != 0 {
		t.Errorf("execChild(no-such-marker) = %d", other)
	}
}

func TestChainDriver(t *testing.T) {
	t.Parallel()
	inside := Point{StepID: drain, Node: "worker", Delay: time.Second, Action: SIGKILL}
	d := NewDriver("c", []Point{inside}, true)
	// run 1: the first successful step is a boundary (SIGKILL first)
	p := d.Pick(stepEvent(1, "finished", preflightNodes, "", "checking nodes", "success"))
	if p == nil || !p.AtBoundary || p.Action != SIGKILL || p.StepID != preflightNodes || p.Node != "" {
		t.Fatalf("first pick %+v", p)
	}
	d.Fired(*p)
	// run 2: that boundary is used; the next one is, with SIGINT
	if p := d.Pick(stepEvent(2, "finished", preflightNodes, "", "checking nodes", "success")); p != nil {
		t.Errorf("a used boundary picked again: %+v", p)
	}
	if p := d.Pick(stepEvent(2, "finished", images, "", "checking images", "skipped")); p != nil {
		t.Errorf("a skipped step picked: %+v", p)
	}
	p = d.Pick(stepEvent(3, "finished", stage, "c-worker", "staging x", "success"))
	if p == nil || p.Action != SIGINT || p.Node != "worker" {
		t.Fatalf("second pick %+v", p)
	}
	d.Fired(*p)
	if len(d.Missed()) != 1 {
		t.Errorf("missed %v before the explicit point fired", d.Missed())
	}
	// the explicit point wins when its step starts
	p = d.Pick(stepEvent(4, "started", drain, "c-worker", "draining", ""))
	if p == nil || *p != inside {
		t.Fatalf("explicit pick %+v", p)
	}
	d.Fired(*p)
	if len(d.Missed()) != 0 {
		t.Errorf("missed %v", d.Missed())
	}
	if !d.ExplicitStep(stepEvent(5, "finished", drain, "c-worker", "draining", "success")) {
		t.Error("the drain the explicit point stopped is not its step")
	}
	if d.ExplicitStep(stepEvent(5, "finished", drain, "c-worker2", "draining", "success")) {
		t.Error("another node's drain counted as the explicit point's")
	}
}

func TestFaultPointInsideACommand(t *testing.T) {
	t.Parallel()
	p := Point{StepID: drain, Node: "worker", Exec: " drain ", Delay: 500 * time.Millisecond, Action: SIGKILL}
	if got := p.String(); got != `SIGKILL 500ms into the "drain" command of kubelets/drain on worker` {
		t.Errorf("String() = %q", got)
	}
}
