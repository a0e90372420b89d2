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

package main

import (
	"bufio"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kindupgrade/kind-upgrade/internal/lab/kindtest"
	"github.com/kindupgrade/kind-upgrade/internal/lab/timeline"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster"
)

var benchLine = regexp.MustCompile(`^BENCH phase=(\S+) seconds=([0-9.]+)$`)

// handPhases reads hack/bench/hand-upgrade.sh's `BENCH phase=<name>
// seconds=<s>` lines: the phases in order and their wall times.
func handPhases(out string) ([]string, map[string]float64, error) {
	var order []string
	times := map[string]float64{}
	scanner := bufio.NewScanner(strings.NewReader(out))
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(scanner.Text()))
		if m == nil {
			continue
		}
		s, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return nil, nil, err
		}
		order = append(order, m[1])
		times[m[1]] += s
	}
	if len(order) == 0 {
		return nil, nil, fmt.Errorf("no BENCH phase= line in the hand-typed upgrade's output")
	}
	return order, times, scanner.Err()
}

// part is a named part of a run and its wall time.
type part struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// Lines in `kubeadm upgrade apply`'s output (kubeadm v1.30 and later) that
// start and end its parts.
var (
	kubeadmComponentStart = regexp.MustCompile(`^\[upgrade/staticpods\] Preparing for "([^"]+)" upgrade`)
	kubeadmComponentDone  = regexp.MustCompile(`^\[upgrade/staticpods\] Component "([^"]+)" upgraded successfully`)
	kubeadmSuccess        = regexp.MustCompile(`^\[upgrade\] SUCCESS!`)
)

// Parts of `kubeadm upgrade apply` that are not a static pod.
const (
	kubeadmBefore = "before the static pods (config, preflight, health-check Job)"
	kubeadmAfter  = "after the static pods (config maps, RBAC, CoreDNS, kube-proxy)"
	kubeadmTotal  = "total (first line to SUCCESS)"
)

// kubeadmApplyParts splits the run of `kubeadm upgrade apply` found in a
// command's timed output into its parts: from its first `[upgrade]` line
// to the first static pod's "Preparing", each static pod from "Preparing"
// to "upgraded successfully", from the last of those to "SUCCESS!", and
// the whole, in that order.
func kubeadmApplyParts(lines []kindtest.TimedLine) ([]part, error) {
	var first, last time.Time
	var parts []part
	started := map[string]time.Time{}
	for _, l := range lines {
		text := strings.TrimSpace(l.Text)
		if first.IsZero() {
			if !strings.HasPrefix(text, "[upgrade] ") {
				continue
			}
			first, last = l.At, l.At
		}
		if m := kubeadmComponentStart.FindStringSubmatch(text); m != nil {
			if len(parts) == 0 {
				parts = append(parts, part{kubeadmBefore, l.At.Sub(first).Seconds()})
			}
			started[m[1]] = l.At
			continue
		}
		if m := kubeadmComponentDone.FindStringSubmatch(text); m != nil {
			begin, ok := started[m[1]]
			if !ok {
				return nil, fmt.Errorf("kubeadm's output says %q before it prepared it", text)
			}
			parts = append(parts, part{m[1], l.At.Sub(begin).Seconds()})
			last = l.At
			continue
		}
		if kubeadmSuccess.MatchString(text) {
			if len(parts) == 0 {
				return nil, fmt.Errorf("kubeadm upgrade apply succeeded without upgrading a static pod")
			}
			return append(parts, part{kubeadmAfter, l.At.Sub(last).Seconds()}, part{kubeadmTotal, l.At.Sub(first).Seconds()}), nil
		}
	}
	return nil, fmt.Errorf("no successful kubeadm upgrade apply in the output")
}

// stats are the median, minimum and maximum of some measurements.
type stats struct {
	Median, Min, Max float64
	N                int
}

func statsOf(values []float64) stats {
	if len(values) == 0 {
		return stats{}
	}
	v := append([]float64{}, values...)
	sort.Float64s(v)
	median := v[len(v)/2]
	if len(v)%2 == 0 {
		median = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return stats{Median: median, Min: v[0], Max: v[len(v)-1], N: len(v)}
}

func (s stats) String() string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f (%.1f–%.1f)", s.Median, s.Min, s.Max)
}

// Method names in the benchmark's runs.
const (
	methodTool = "kind alpha upgrade"
	methodHand = "hand-typed"
	// methodBaseline is -baseline's kind binary, an earlier build.
	methodBaseline = "baseline"
	methodKindLoad = "kind load image-archive"
	methodImageDir = "--image-dir"
	methodImage    = "--image"
)

// benchReport renders the benchmark as markdown.
func benchReport(machine map[string]string, from, to string, rounds int, upgrades, loads, sources []benchSize) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured on %s cores, %s, Docker %s, cgroup %s; %s → %s; %d round(s) per size and method, the methods alternating; seconds as median (min–max).\n\n",
		machine["cores"], machine["memory"], machine["docker"], machine["cgroup"], from, to, rounds)
	if len(upgrades) > 0 {
		methods := []string{methodTool, methodHand}
		if slices.ContainsFunc(upgrades, func(s benchSize) bool { return len(s.totals(methodBaseline)) > 0 }) {
			methods = []string{methodBaseline, methodTool, methodHand}
		}
		b.WriteString("### Upgrade: `kind alpha upgrade` against the hand-typed sequence\n\n")
		b.WriteString("| cluster | phase | " + strings.Join(methods, " | ") + " |\n|---|---|" + strings.Repeat("---|", len(methods)) + "\n")
		for _, s := range upgrades {
			for _, p := range []string{"preflight", "load-artifacts", "control-plane", "kubelets", "verify"} {
				var cells []string
				ran := false
				for _, m := range methods {
					st := statsOf(s.phase(m, p))
					ran = ran || st.N > 0
					cells = append(cells, st.String())
				}
				if ran {
					fmt.Fprintf(&b, "| %s | %s | %s |\n", s.name(), p, strings.Join(cells, " | "))
				}
			}
			var totals, outside []string
			for _, m := range methods {
				totals = append(totals, "**"+statsOf(s.totals(m)).String()+"**")
				outside = append(outside, statsOf(s.outsideApply(m)).String())
			}
			fmt.Fprintf(&b, "| %s | **total** | %s |\n", s.name(), strings.Join(totals, " | "))
			fmt.Fprintf(&b, "| %s | total minus `kubeadm upgrade apply` | %s |\n", s.name(), strings.Join(outside, " | "))
		}
		b.WriteString("\n| cluster | ratio of the medians (ours ÷ hand-typed) |\n|---|---|\n")
		for _, s := range upgrades {
			fmt.Fprintf(&b, "| %s | %.2f |\n", s.name(), ratio(s.totals(methodTool), s.totals(methodHand)))
		}
		for _, s := range upgrades {
			for _, r := range s.Runs {
				if r.Failed != "" {
					fmt.Fprintf(&b, "\nFailed, left out of the figures: %s, round %d, %s: %s\n", s.name(), r.Round, r.Method, r.Failed)
				}
			}
		}
		b.WriteString("\nWhere `kind alpha upgrade`'s time goes (from its `--output json` events; each instant counted once: Kubernetes work is kubeadm, drains, kubelet restarts and the waits for pods and nodes; loading is streaming binaries and importing images; the rest, including the 2 s settle margin per control-plane node, is overhead):\n\n")
		b.WriteString("| cluster | Kubernetes work | loading | overhead | of which settle margins | of which noticing waited-for conditions (at most) | overhead share | share without the settle margins |\n|---|---|---|---|---|---|---|---|\n")
		for _, s := range upgrades {
			over := statsOf(s.split(methodTool, timeline.OverheadWork))
			margins := statsOf(s.split(methodTool, timeline.SettleMargin))
			share, bare := 0.0, 0.0
			if total := statsOf(s.totals(methodTool)).Median; total > 0 {
				share = 100 * over.Median / total
				bare = 100 * (over.Median - margins.Median) / total
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %.1f%% | %.1f%% |\n", s.name(),
				statsOf(s.split(methodTool, timeline.KubernetesWork)), statsOf(s.split(methodTool, timeline.LoadingWork)), over, margins,
				statsOf(s.split(methodTool, timeline.PollLatency)), share, bare)
		}
		if slices.ContainsFunc(upgrades, func(s benchSize) bool { return len(s.waitSteps()) > 0 }) {
			b.WriteString("\nNoticing the waited-for conditions (`kind alpha upgrade`'s wait steps, summed over the nodes, median of the runs): the polls, and the windows from the start of the last poll that found the condition not yet so to the end of the one that found it so, which bound the latency the polling added:\n\n| cluster | step | polls | noticed within (s) |\n|---|---|---|---|\n")
			for _, s := range upgrades {
				for _, id := range s.waitSteps() {
					fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", s.name(), id, statsOf(s.waitValues(id, false)), statsOf(s.waitValues(id, true)))
				}
			}
		}
		if len(methods) == 3 {
			b.WriteString("\nStep by step, the baseline against this build (each step's wall time: while at least one node ran it; median of the runs; steps of at least 0.5 s in either):\n\n| cluster | step | baseline | kind alpha upgrade | difference of the medians |\n|---|---|---|---|---|\n")
			for _, s := range upgrades {
				for _, id := range s.stepIDs() {
					before, after := statsOf(s.stepWall(methodBaseline, id)), statsOf(s.stepWall(methodTool, id))
					if before.Median < 0.5 && after.Median < 0.5 {
						continue
					}
					fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %+.1f |\n", s.name(), id, before, after, after.Median-before.Median)
				}
			}
		}
		b.WriteString("\nThe overhead's largest steps (seconds summed over the nodes, median of the runs):\n\n| cluster | step | seconds |\n|---|---|---|\n")
		for _, s := range upgrades {
			for _, st := range s.topOverhead(8) {
				fmt.Fprintf(&b, "| %s | %s | %s |\n", s.name(), st.name, st.stats)
			}
		}
	}
	if slices.ContainsFunc(upgrades, func(s benchSize) bool { return len(s.kubeadmParts()) > 0 }) {
		b.WriteString("\nInside `kubeadm upgrade apply`, which both methods run (from the hand-typed runs, each line of kubeadm's output timed as it arrived; a static pod from kubeadm's \"Preparing\" to its \"upgraded successfully\"):\n\n| cluster | part | seconds |\n|---|---|---|\n")
		for _, s := range upgrades {
			for _, p := range s.kubeadmParts() {
				fmt.Fprintf(&b, "| %s | %s | %s |\n", s.name(), p.name, p.stats)
			}
		}
	}
	if len(loads) > 0 {
		b.WriteString("\n### Loading the target's artifacts: `kind alpha upgrade --skip-phases control-plane,kubelets,verify` against `kind load image-archive` of the same archives\n\n")
		b.WriteString("| nodes | kind alpha upgrade (whole command) | of which load-artifacts | kind load image-archive | ratio of the medians |\n|---|---|---|---|---|\n")
		for _, s := range loads {
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %.2f |\n", 1+s.Workers, statsOf(s.totals(methodTool)), statsOf(s.phase(methodTool, "load-artifacts")),
				statsOf(s.totals(methodKindLoad)), ratio(s.totals(methodTool), s.totals(methodKindLoad)))
		}
	}
	if len(sources) > 0 {
		b.WriteString("\n### The target's source: `--image` (the target's node image, plus the archive it lacks offline) against `--image-dir` (the release folder), each upgrading a fresh cluster\n\n")
		b.WriteString("| cluster | phase | --image-dir | --image |\n|---|---|---|---|\n")
		for _, s := range sources {
			for _, p := range []string{"preflight", "load-artifacts", "control-plane", "kubelets", "verify"} {
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", s.name(), p, statsOf(s.phase(methodImageDir, p)), statsOf(s.phase(methodImage, p)))
			}
			fmt.Fprintf(&b, "| %s | **total** | **%s** | **%s** |\n", s.name(), statsOf(s.totals(methodImageDir)), statsOf(s.totals(methodImage)))
		}
		b.WriteString("\n| cluster | ratio of the medians (--image ÷ --image-dir) |\n|---|---|\n")
		for _, s := range sources {
			fmt.Fprintf(&b, "| %s | %.2f |\n", s.name(), ratio(s.totals(methodImage), s.totals(methodImageDir)))
			for _, r := range s.Runs {
				if r.Failed != "" {
					fmt.Fprintf(&b, "\nFailed, left out of the figures: %s, round %d, %s: %s\n", s.name(), r.Round, r.Method, r.Failed)
				}
			}
		}
	}
	return b.String()
}

// benchRun is one measured run.
type benchRun struct {
	Method string             `json:"method"`
	Round  int                `json:"round"`
	Total  float64            `json:"totalSeconds"`
	Phases map[string]float64 `json:"phases"`
	Split  map[string]float64 `json:"split,omitempty"`
	// Overhead sums the overhead steps' durations by step name.
	Overhead map[string]float64 `json:"overheadSteps,omitempty"`
	// Failed is why the run failed; failed runs are left out of the
	// figures.
	Failed  string  `json:"failed,omitempty"`
	Created float64 `json:"createSeconds,omitempty"`
	// KubeadmApply is the hand-typed run's `kubeadm upgrade apply` in
	// parts, from its output's lines timed as they arrived.
	KubeadmApply []part `json:"kubeadmApply,omitempty"`
	// Steps is, for `kind alpha upgrade`, each step's wall time by step
	// identifier: while at least one node ran it.
	Steps map[string]float64 `json:"stepSeconds,omitempty"`
	// Waits are, for the steps that waited for a condition, their polls
	// and noticing windows summed over the nodes, by step identifier.
	Waits map[string]waitSum `json:"waits,omitempty"`
	// Apply is how long `kubeadm upgrade apply` took (ours: its step's
	// events; hand-typed: its output's first line to SUCCESS), which both
	// methods wait for alike; zero when the run had none.
	Apply float64 `json:"kubeadmApplySeconds,omitempty"`
}

// applySeconds is how long the kubeadm upgrade apply step took in an
// upgrade's events; zero when it did not run.
func applySeconds(events []timeline.Event) (float64, error) {
	spans, err := timeline.SpansOf(events)
	if err != nil {
		return 0, err
	}
	total := 0.0
	for _, s := range timeline.Find(spans, func(s timeline.Span) bool {
		return s.Kind == "step" && s.StepID == timeline.StepID("control-plane/kubeadm-upgrade-apply")
	}) {
		total += s.End.Sub(s.Start).Seconds()
	}
	return total, nil
}

// outsideApply are method's runs' totals minus their `kubeadm upgrade
// apply`: the time a method spends around the command both run.
func (s benchSize) outsideApply(method string) []float64 {
	return s.values(method, func(r benchRun) (float64, bool) { return r.Total - r.Apply, r.Apply > 0 })
}

// benchSize is the runs of one cluster size, every method.
type benchSize struct {
	Workers int        `json:"workers"`
	Runs    []benchRun `json:"runs"`
}

func (s benchSize) name() string { return fmt.Sprintf("1 control plane + %d worker(s)", s.Workers) }

// totals returns the total wall times of method's runs.
func (s benchSize) totals(method string) []float64 {
	return s.values(method, func(r benchRun) (float64, bool) { return r.Total, true })
}

// values returns f of each of method's runs that did not fail, where f
// has a value (its second result).
func (s benchSize) values(method string, f func(benchRun) (float64, bool)) []float64 {
	var v []float64
	for _, r := range s.Runs {
		if r.Method != method || r.Failed != "" {
			continue
		}
		if x, ok := f(r); ok {
			v = append(v, x)
		}
	}
	return v
}

// phase returns method's wall times of phase.
func (s benchSize) phase(method, phase string) []float64 {
	return s.values(method, func(r benchRun) (float64, bool) {
		t, ok := r.Phases[phase]
		return t, ok
	})
}

// split returns the share of method's runs' time in work.
func (s benchSize) split(method, work string) []float64 {
	return s.values(method, func(r benchRun) (float64, bool) { return r.Split[work], r.Split != nil })
}

// waitSum is a wait step's polls and noticing windows (seconds), summed
// over the nodes.
type waitSum struct {
	Polls   int     `json:"polls"`
	Noticed float64 `json:"noticedWithinSeconds"`
}

// stepSeconds is each step's wall time in an upgrade's events, and the
// waits of the steps that waited, by step identifier.
func stepSeconds(events []timeline.Event) (map[string]float64, map[string]waitSum, error) {
	steps, err := timeline.Steps(events)
	if err != nil {
		return nil, nil, err
	}
	out, waits := map[string]float64{}, map[string]waitSum{}
	for _, st := range steps {
		out[string(st.StepID)] = st.Wall
		if st.Polls > 0 {
			waits[string(st.StepID)] = waitSum{Polls: st.Polls, Noticed: st.Noticed}
		}
	}
	return out, waits, nil
}

// waitSteps lists the wait steps of s's runs of this build, in the
// upgrade's order.
func (s benchSize) waitSteps() []string {
	waited := map[string]bool{}
	for _, r := range s.Runs {
		if r.Method == methodTool {
			for id := range r.Waits {
				waited[id] = true
			}
		}
	}
	var ids []string
	for _, id := range cluster.UpgradeStepIDs() {
		if waited[string(id)] {
			ids = append(ids, string(id))
		}
	}
	return ids
}

// waitValues returns, over this build's runs, step id's polls (or, with
// noticed, its noticing windows).
func (s benchSize) waitValues(id string, noticed bool) []float64 {
	return s.values(methodTool, func(r benchRun) (float64, bool) {
		if noticed {
			return r.Waits[id].Noticed, r.Waits != nil
		}
		return float64(r.Waits[id].Polls), r.Waits != nil
	})
}

// stepIDs lists the steps the runs of s went through, in the order the
// upgrade runs them (cluster.UpgradeStepIDs).
func (s benchSize) stepIDs() []string {
	ran := map[string]bool{}
	for _, r := range s.Runs {
		for id := range r.Steps {
			ran[id] = true
		}
	}
	var ids []string
	for _, id := range cluster.UpgradeStepIDs() {
		if ran[string(id)] {
			ids = append(ids, string(id))
		}
	}
	return ids
}

// stepWall returns method's wall times of step id; a run without the step
// spent nothing there.
func (s benchSize) stepWall(method, id string) []float64 {
	return s.values(method, func(r benchRun) (float64, bool) { return r.Steps[id], r.Steps != nil })
}

// namedStats are a step's stats.
type namedStats struct {
	name  string
	stats stats
}

// topOverhead returns the n overhead steps of the tool's runs with the
// largest medians.
func (s benchSize) topOverhead(n int) []namedStats {
	values := map[string][]float64{}
	runs := 0
	for _, r := range s.Runs {
		if r.Method != methodTool || r.Overhead == nil || r.Failed != "" {
			continue
		}
		runs++
		for step, v := range r.Overhead {
			values[step] = append(values[step], v)
		}
	}
	var out []namedStats
	for step, v := range values {
		for len(v) < runs {
			v = append(v, 0) // a run without the step spent nothing there
		}
		out = append(out, namedStats{name: step, stats: statsOf(v)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].stats.Median != out[j].stats.Median {
			return out[i].stats.Median > out[j].stats.Median
		}
		return out[i].name < out[j].name
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// kubeadmParts returns the parts of the hand-typed runs' `kubeadm upgrade
// apply`, in the order they first ran, the part after the static pods and
// the total last.
func (s benchSize) kubeadmParts() []namedStats {
	var order []string
	values := map[string][]float64{}
	for _, r := range s.Runs {
		if r.Method != methodHand || r.Failed != "" {
			continue
		}
		for _, p := range r.KubeadmApply {
			if _, ok := values[p.Name]; !ok && p.Name != kubeadmAfter && p.Name != kubeadmTotal {
				order = append(order, p.Name)
			}
			values[p.Name] = append(values[p.Name], p.Seconds)
		}
	}
	for _, last := range []string{kubeadmAfter, kubeadmTotal} {
		if _, ok := values[last]; ok {
			order = append(order, last)
		}
	}
	var out []namedStats
	for _, name := range order {
		out = append(out, namedStats{name: name, stats: statsOf(values[name])})
	}
	return out
}

func ratio(ours, theirs []float64) float64 {
	if len(ours) == 0 || len(theirs) == 0 || statsOf(theirs).Median == 0 {
		return 0
	}
	return statsOf(ours).Median / statsOf(theirs).Median
}
