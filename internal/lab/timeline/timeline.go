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

// Package timeline reads the events `kind alpha upgrade --output json`
// prints into spans (what ran from its start to its finish) and checks the
// upgrade's order with them: one node at a time, the bootstrap node first,
// workers after the control plane, no drain while a node is cordoned.
package timeline

import (
	"bufio"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster"
)

// The phases the order checks look for (cluster.UpgradePhases names them).
const (
	PhaseControlPlane = "control-plane"
	PhaseKubelets     = "kubelets"
)

// Event is one line of `kind alpha upgrade --output json`.
type Event = cluster.UpgradeEvent

// StepID returns the identifier of the step named name, checked by
// cluster.ParseUpgradeStepID: a name that is no step's panics, so that a
// test naming a renamed step fails when it loads instead of matching
// nothing.
func StepID(name string) cluster.UpgradeStepID {
	id, err := cluster.ParseUpgradeStepID(name)
	if err != nil {
		panic(err)
	}
	return id
}

// The steps the order checks look for.
var (
	StepDrain    = StepID("kubelets/drain")
	StepRestart  = StepID("kubelets/restart")
	StepUncordon = StepID("kubelets/uncordon")
)

// Parse reads --output json: one event per line.
func Parse(out string) ([]Event, error) {
	var events []Event
	scanner := bufio.NewScanner(strings.NewReader(out))
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		if strings.TrimSpace(scanner.Text()) == "" {
			continue
		}
		var ev Event
		if err := json.Unmarshal(scanner.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("not a JSON event: %q", scanner.Text())
		}
		events = append(events, ev)
	}
	return events, scanner.Err()
}

// Span is what ran between a started event and its finished event: the
// whole upgrade, a phase, a node within a phase or a step.
type Span struct {
	Kind, Phase, Node string
	// StepID is the step's identifier, Step its display text.
	StepID        cluster.UpgradeStepID
	Step, Outcome string
	Start, End    time.Time
	// Wait is how the step's wait for a condition went (its finished
	// event's), nil for a step that did not wait.
	Wait *cluster.UpgradeWaitStats
}

func (s Span) String() string {
	var parts []string
	for _, p := range []string{s.Phase, s.Node, s.Step} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return "the upgrade"
	}
	return strings.Join(parts, ": ")
}

// SpansOf pairs each started event with its finished event, in the order
// they started. A started event without its finished event (the run was
// killed) is an error, as is a finished event that nothing started.
func SpansOf(events []Event) ([]Span, error) {
	type key struct {
		kind, phase, node string
		step              cluster.UpgradeStepID
	}
	var spans []Span
	open := map[key][]int{} // started spans not finished yet, by scope
	for _, ev := range events {
		k := key{ev.Kind, ev.Phase, ev.Node, ev.StepID}
		switch ev.Event {
		case "started":
			open[k] = append(open[k], len(spans))
			spans = append(spans, Span{Kind: ev.Kind, Phase: ev.Phase, Node: ev.Node, StepID: ev.StepID, Step: ev.Step, Start: ev.Time})
		case "finished":
			starts := open[k]
			if len(starts) == 0 {
				return nil, fmt.Errorf("%s finished at %s without having started", Span{Phase: ev.Phase, Node: ev.Node, Step: ev.Step}, ev.Time.Format(time.RFC3339Nano))
			}
			i := starts[len(starts)-1]
			open[k] = starts[:len(starts)-1]
			spans[i].End, spans[i].Outcome, spans[i].Wait = ev.Time, ev.Outcome, ev.Wait
		}
	}
	for _, s := range spans {
		if s.End.IsZero() {
			return nil, fmt.Errorf("%s started at %s and never finished", s, s.Start.Format(time.RFC3339Nano))
		}
	}
	return spans, nil
}

// Find returns the spans for which keep is true, in the order they started.
func Find(spans []Span, keep func(Span) bool) []Span {
	var out []Span
	for _, s := range spans {
		if keep(s) {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// NodesOneAtATime checks that in phase no node's work overlaps another's.
func NodesOneAtATime(spans []Span, phase string) error {
	nodes := Find(spans, func(s Span) bool { return s.Kind == "node" && s.Phase == phase })
	var problems []string
	for i := 1; i < len(nodes); i++ {
		if prev, cur := nodes[i-1], nodes[i]; cur.Start.Before(prev.End) {
			problems = append(problems, fmt.Sprintf("%s started %s before %s finished", cur.Node, prev.End.Sub(cur.Start), prev.Node))
		}
	}
	return JoinProblems(phase+": nodes overlap", problems)
}

// ControlPlanesInOrder checks that phase visited each control-plane node
// once and successfully, the bootstrap node first.
func ControlPlanesInOrder(spans []Span, phase, bootstrap string, controlPlanes []string) error {
	nodes := Find(spans, func(s Span) bool {
		return s.Kind == "node" && s.Phase == phase && slices.Contains(controlPlanes, s.Node)
	})
	var problems []string
	seen := map[string]int{}
	for _, n := range nodes {
		seen[n.Node]++
		if n.Outcome == "failure" {
			problems = append(problems, n.Node+" failed")
		}
	}
	for _, cp := range controlPlanes {
		if seen[cp] != 1 {
			problems = append(problems, fmt.Sprintf("%s was visited %d times, want once", cp, seen[cp]))
		}
	}
	if len(nodes) > 0 && nodes[0].Node != bootstrap {
		problems = append(problems, fmt.Sprintf("%s came first, not the bootstrap node %s", nodes[0].Node, bootstrap))
	}
	return JoinProblems(phase+": control-plane nodes out of order", problems)
}

// WorkersAfterControlPlanes checks that nothing happened on a worker in the
// kubelets phase before every control-plane node was done: the
// control-plane phase finished and each control-plane node's kubelet was
// upgraded.
func WorkersAfterControlPlanes(spans []Span, controlPlanes, workers []string) error {
	var done time.Time
	var problems []string
	cpPhase := Find(spans, func(s Span) bool { return s.Kind == "phase" && s.Phase == PhaseControlPlane })
	if len(cpPhase) == 0 {
		problems = append(problems, "no control-plane phase")
	}
	for _, s := range cpPhase {
		if s.End.After(done) {
			done = s.End
		}
	}
	for _, cp := range controlPlanes {
		kubelet := Find(spans, func(s Span) bool { return s.Kind == "node" && s.Phase == PhaseKubelets && s.Node == cp })
		if len(kubelet) == 0 {
			problems = append(problems, "the kubelets phase did not visit "+cp)
		}
		for _, s := range kubelet {
			if s.End.After(done) {
				done = s.End
			}
		}
	}
	for _, s := range Find(spans, func(s Span) bool { return s.Phase == PhaseKubelets && slices.Contains(workers, s.Node) }) {
		if s.Start.Before(done) {
			problems = append(problems, fmt.Sprintf("%s started %s before the control plane was done", s, done.Sub(s.Start)))
		}
	}
	return JoinProblems("workers touched before the control plane was done", problems)
}

// StepDrainBootstrap drains the bootstrap control-plane node beside its
// loading; its kubelets/drain is then skipped.
var StepDrainBootstrap = StepID("load-artifacts/drain-bootstrap")

// CordonWindow is the time the upgrade had a node cordoned, at most: from
// the start of its first drain (StepDrainBootstrap or StepDrain) to the
// end of its uncordoning.
type CordonWindow struct {
	Node       string
	Start, End time.Time
}

// CordonWindows returns, in the order they started, the kubelets phase's
// cordon windows, and an error for a node drained and never uncordoned.
func CordonWindows(spans []Span) ([]CordonWindow, error) {
	var windows []CordonWindow
	var problems []string
	drains := Find(spans, func(s Span) bool {
		return s.Kind == "step" && (s.StepID == StepDrain || s.StepID == StepDrainBootstrap)
	})
	for _, d := range drains {
		w := CordonWindow{Node: d.Node, Start: d.Start}
		for _, u := range Find(spans, func(s Span) bool {
			return s.Kind == "step" && s.StepID == StepUncordon && s.Node == d.Node && !s.Start.Before(d.End)
		}) {
			if u.Outcome != "failure" {
				w.End = u.End
				break
			}
		}
		if w.End.IsZero() {
			problems = append(problems, d.Node+" was never uncordoned after its drain")
			continue
		}
		if slices.ContainsFunc(windows, func(o CordonWindow) bool { return o.Node == w.Node && o.End.Equal(w.End) }) {
			// a later drain of the node before the same uncordoning (the
			// kubelets phase's, after the early one): the earlier start
			// stands
			continue
		}
		windows = append(windows, w)
	}
	return windows, JoinProblems("nodes left cordoned", problems)
}

// DrainsOneAtATime checks that no node was drained while the upgrade had
// another one cordoned: each node's drain started after the previous
// node's uncordoning finished.
func DrainsOneAtATime(spans []Span) error {
	windows, err := CordonWindows(spans)
	if err != nil {
		return err
	}
	var problems []string
	for i := 1; i < len(windows); i++ {
		if prev, cur := windows[i-1], windows[i]; cur.Start.Before(prev.End) {
			problems = append(problems, fmt.Sprintf("%s was drained %s before %s was uncordoned", cur.Node, prev.End.Sub(cur.Start), prev.Node))
		}
	}
	return JoinProblems("drains overlap", problems)
}

// UpgradeOrder runs every order check over one run's events; each is
// named for the JUnit suite.
func UpgradeOrder(spans []Span, bootstrap string, controlPlanes, workers []string) []NamedCheck {
	return []NamedCheck{
		{"control-plane phase: one control-plane node at a time, " + bootstrap + " first", func() error {
			return FirstError(NodesOneAtATime(spans, PhaseControlPlane), ControlPlanesInOrder(spans, PhaseControlPlane, bootstrap, controlPlanes))
		}},
		{"kubelets phase: one node at a time, the control-plane nodes first, " + bootstrap + " first", func() error {
			return FirstError(NodesOneAtATime(spans, PhaseKubelets), ControlPlanesInOrder(spans, PhaseKubelets, bootstrap, controlPlanes))
		}},
		{"no worker's kubelet was touched before every control-plane node was done", func() error {
			return WorkersAfterControlPlanes(spans, controlPlanes, workers)
		}},
		{"no node was drained while the upgrade had another one cordoned", func() error {
			return DrainsOneAtATime(spans)
		}},
	}
}

// NamedCheck is a check and its JUnit name.
type NamedCheck struct {
	Name string
	Fn   func() error
}

// Locate says where the upgrade was at t: the innermost span running
// then, and how long after the upgrade started.
func Locate(spans []Span, t time.Time) string {
	var upgrade *Span
	for i := range spans {
		if spans[i].Kind == "upgrade" {
			upgrade = &spans[i]
			break
		}
	}
	if upgrade == nil {
		return "(no upgrade events)"
	}
	offset := fmt.Sprintf("%+.1fs", t.Sub(upgrade.Start).Seconds())
	if t.Before(upgrade.Start) {
		return offset + ", before the upgrade"
	}
	if t.After(upgrade.End) {
		return offset + ", after the upgrade"
	}
	depth := map[string]int{"upgrade": 0, "phase": 1, "node": 2, "step": 3}
	best := *upgrade
	for _, s := range spans {
		if !t.Before(s.Start) && !t.After(s.End) && depth[s.Kind] > depth[best.Kind] {
			best = s
		}
	}
	if best.Kind == "upgrade" {
		return offset + ", between phases"
	}
	return offset + ", " + best.String()
}

// JoinProblems is nil without problems, else one error of what and them.
func JoinProblems(what string, problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s", what, strings.Join(problems, "; "))
}

// FirstError is the first of errs that is not nil.
func FirstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// PhaseTimes reads --output json events, of one run or several, and returns
// phase -> seconds (summed over the runs), in the order the phases first
// ran, plus the runs' total wall time.
func PhaseTimes(events string) ([]string, map[string]float64, float64, error) {
	var order []string
	times := map[string]float64{}
	total := 0.0
	scanner := bufio.NewScanner(strings.NewReader(events))
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		var ev struct {
			Kind, Event, Phase, Outcome string
			DurationSeconds             float64
		}
		if err := json.Unmarshal(scanner.Bytes(), &ev); err != nil {
			return nil, nil, 0, fmt.Errorf("not a JSON event: %q", scanner.Text())
		}
		if ev.Event != "finished" {
			continue
		}
		switch ev.Kind {
		case "phase":
			if _, seen := times[ev.Phase]; !seen {
				order = append(order, ev.Phase)
			}
			times[ev.Phase] += ev.DurationSeconds
		case "upgrade":
			total += ev.DurationSeconds
		}
	}
	return order, times, total, scanner.Err()
}
