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
	"sort"
	"strings"
	"time"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster"
)

// SettleDelay is how long `kind alpha upgrade` keeps watching a
// control-plane node's pods once its new kubelet shows them Ready
// (pkg/cluster's default): a margin of the tool's, not a wait Kubernetes
// needs.
const SettleDelay = 2 * time.Second

// Where the time of an upgrade goes, by what the steps do.
const (
	// KubernetesWork is kubeadm, drains, kubelet restarts and the waits
	// for pods and nodes that Kubernetes itself needs.
	KubernetesWork = "kubernetes"
	// LoadingWork is streaming binaries and importing image archives.
	LoadingWork = "loading"
	// OverheadWork is the rest: checks, node commands, polling, margins.
	OverheadWork = "overhead"
	// SettleMargin is the part of OverheadWork spent in the settle
	// margins.
	SettleMargin = "settle"
	// PollLatency is the part of OverheadWork spent noticing that a
	// waited-for condition had become so: the end of each wait step
	// other than wait-settled (whose margin holds it), as long as its
	// window (cluster.UpgradeWaitStats.NoticedWithinSeconds), an upper
	// bound.
	PollLatency = "polling"
)

// waitSettled and waitServing are the steps whose ends hold the settle
// margin.
var (
	waitSettled = StepID("kubelets/wait-settled")
	waitServing = StepID("kubelets/wait-serving")
)

// workOf says what kind of work the steps are that are not OverheadWork.
var workOf = map[cluster.UpgradeStepID]string{
	StepID("control-plane/kubeadm-upgrade-apply"):      KubernetesWork,
	StepID("control-plane/kubeadm-upgrade-node"):       KubernetesWork,
	StepID("kubelets/kubeadm-upgrade-node"):            KubernetesWork,
	StepDrain:                                          KubernetesWork,
	StepID("load-artifacts/drain-bootstrap"):           KubernetesWork,
	StepRestart:                                        KubernetesWork,
	StepID("control-plane/wait-pods"):                  KubernetesWork,
	waitSettled:                                        KubernetesWork,
	StepID("kubelets/wait-previous-settled"):           KubernetesWork,
	waitServing:                                        KubernetesWork,
	StepID("kubelets/wait-ready"):                      KubernetesWork,
	StepID("verify/workloads"):                         KubernetesWork,
	StepID("load-artifacts/stage"):                     LoadingWork,
	StepID("load-artifacts/import"):                    LoadingWork,
	StepID("load-artifacts/import-health-check-image"): LoadingWork,
	StepID("control-plane/wait-loaded"):                LoadingWork,
}

// WorkOf says what kind of work a step is: KubernetesWork, LoadingWork or
// OverheadWork.
func WorkOf(s Span) string {
	if w, ok := workOf[s.StepID]; ok {
		return w
	}
	return OverheadWork
}

// Split splits an upgrade's wall time, from its events, into
// KubernetesWork, LoadingWork and OverheadWork (and SettleMargin, the part
// of the overhead in settle margins), and returns the wall time. Steps run
// in parallel on several nodes, so each instant counts once: as Kubernetes
// work if any such step runs then, else as loading if a loading step runs,
// else as overhead. The last SettleDelay of each wait-settled and
// wait-serving step counts as overhead (SettleMargin), as does the end of
// each other wait step as long as its poll window (PollLatency).
func Split(events []Event) (map[string]float64, float64, error) {
	spans, err := SpansOf(events)
	if err != nil {
		return nil, 0, err
	}
	var total Span
	found := false
	for _, s := range spans {
		if s.Kind == "upgrade" {
			total, found = s, true
		}
	}
	if !found {
		return nil, 0, fmt.Errorf("no upgrade event")
	}
	intervals := map[string][][2]time.Time{}
	for _, s := range spans {
		if s.Kind != "step" {
			continue
		}
		end := s.End
		switch {
		case s.StepID == waitSettled || s.StepID == waitServing:
			end = end.Add(-SettleDelay)
			if end.Before(s.Start) {
				end = s.Start
			}
			intervals[SettleMargin] = append(intervals[SettleMargin], [2]time.Time{end, s.End})
		case s.Wait != nil && WorkOf(s) == KubernetesWork:
			end = end.Add(-time.Duration(s.Wait.NoticedWithinSeconds * float64(time.Second)))
			if end.Before(s.Start) {
				end = s.Start
			}
			intervals[PollLatency] = append(intervals[PollLatency], [2]time.Time{end, s.End})
		}
		if w := WorkOf(s); w != OverheadWork && end.After(s.Start) {
			intervals[w] = append(intervals[w], [2]time.Time{s.Start, end})
		}
	}
	k8s := union(intervals[KubernetesWork])
	work := union(append(append([][2]time.Time{}, k8s...), intervals[LoadingWork]...))
	split := map[string]float64{
		KubernetesWork: length(k8s),
		LoadingWork:    length(work) - length(k8s),
		SettleMargin:   length(append(work, intervals[SettleMargin]...)) - length(work),
		PollLatency:    length(append(work, intervals[PollLatency]...)) - length(work),
	}
	wall := total.End.Sub(total.Start).Seconds()
	split[OverheadWork] = wall - split[KubernetesWork] - split[LoadingWork]
	return split, wall, nil
}

// OverheadSteps sums, by "<phase>: <step>", the durations of the steps
// that are overhead (over all nodes): where to look for the tool's own
// time.
func OverheadSteps(events []Event) (map[string]float64, error) {
	spans, err := SpansOf(events)
	if err != nil {
		return nil, err
	}
	sums := map[string]float64{}
	for _, s := range spans {
		if s.Kind == "step" && WorkOf(s) == OverheadWork {
			sums[s.Phase+": "+s.Step] += s.End.Sub(s.Start).Seconds()
		}
	}
	return sums, nil
}

// StepTotal is where one step's time went over an upgrade.
type StepTotal struct {
	StepID cluster.UpgradeStepID
	// Work is the step's kind of work (WorkOf).
	Work string
	// Runs is how many times it ran (on all nodes); Nodes how many nodes.
	Runs, Nodes int
	// Sum is the time of all its runs, Longest the longest run's, Wall the
	// time during which at least one of its runs ran, in seconds.
	Sum, Longest, Wall float64
	// Polls and Noticed sum, over its runs that waited for a condition,
	// their polls and their windows for noticing it (seconds).
	Polls   int
	Noticed float64
}

// Steps returns, for each step that ran, its StepTotal, in the order the
// steps first started.
func Steps(events []Event) ([]StepTotal, error) {
	spans, err := SpansOf(events)
	if err != nil {
		return nil, err
	}
	var order []cluster.UpgradeStepID
	totals := map[cluster.UpgradeStepID]*StepTotal{}
	intervals := map[cluster.UpgradeStepID][][2]time.Time{}
	nodes := map[cluster.UpgradeStepID]map[string]bool{}
	for _, s := range spans {
		if s.Kind != "step" {
			continue
		}
		st, ok := totals[s.StepID]
		if !ok {
			st = &StepTotal{StepID: s.StepID, Work: WorkOf(s)}
			totals[s.StepID], nodes[s.StepID] = st, map[string]bool{}
			order = append(order, s.StepID)
		}
		d := s.End.Sub(s.Start).Seconds()
		st.Runs++
		st.Sum += d
		st.Longest = max(st.Longest, d)
		nodes[s.StepID][s.Node] = true
		intervals[s.StepID] = append(intervals[s.StepID], [2]time.Time{s.Start, s.End})
		if s.Wait != nil {
			st.Polls += s.Wait.Polls
			st.Noticed += s.Wait.NoticedWithinSeconds
		}
	}
	out := make([]StepTotal, 0, len(order))
	for _, id := range order {
		st := totals[id]
		st.Nodes = len(nodes[id])
		st.Wall = length(intervals[id])
		out = append(out, *st)
	}
	return out, nil
}

// StepsText is the per-step summary of an upgrade's events as a table:
// its wall time and Split, then each step (Steps), the longest by wall
// time first.
func StepsText(events []Event) (string, error) {
	split, wall, err := Split(events)
	if err != nil {
		return "", err
	}
	steps, err := Steps(events)
	if err != nil {
		return "", err
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].Wall > steps[j].Wall })
	var b strings.Builder
	fmt.Fprintf(&b, "wall time %.1f s: Kubernetes' work %.1f s, loading %.1f s, the tool's overhead %.1f s (of which settle margins %.1f s, noticing waited-for conditions at most %.1f s)\n",
		wall, split[KubernetesWork], split[LoadingWork], split[OverheadWork], split[SettleMargin], split[PollLatency])
	fmt.Fprintf(&b, "%-40s %-10s %5s %5s %9s %9s %9s %6s %9s\n", "step", "work", "nodes", "runs", "wall (s)", "sum (s)", "max (s)", "polls", "noticed (s)")
	for _, s := range steps {
		polls, noticed := "-", "-"
		if s.Polls > 0 {
			polls, noticed = fmt.Sprint(s.Polls), fmt.Sprintf("%.1f", s.Noticed)
		}
		fmt.Fprintf(&b, "%-40s %-10s %5d %5d %9.1f %9.1f %9.1f %6s %9s\n", s.StepID, s.Work, s.Nodes, s.Runs, s.Wall, s.Sum, s.Longest, polls, noticed)
	}
	b.WriteString("noticed: summed over the step's runs, from the start of the last poll that found the condition not yet so to the end of the one that found it so (an upper bound on the polling's latency)\n")
	return b.String(), nil
}

// union merges intervals into disjoint ones, in order.
func union(in [][2]time.Time) [][2]time.Time {
	sorted := append([][2]time.Time{}, in...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i][0].Before(sorted[j][0]) })
	var out [][2]time.Time
	for _, iv := range sorted {
		if n := len(out); n > 0 && !iv[0].After(out[n-1][1]) {
			if iv[1].After(out[n-1][1]) {
				out[n-1][1] = iv[1]
			}
			continue
		}
		out = append(out, iv)
	}
	return out
}

// length is the time the intervals cover, in seconds.
func length(intervals [][2]time.Time) float64 {
	total := 0.0
	for _, iv := range union(intervals) {
		total += iv[1].Sub(iv[0]).Seconds()
	}
	return total
}
