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

package probe

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kindupgrade/kind-upgrade/internal/lab/timeline"
)

// Interval is how often each probe sends a request.
const Interval = 250 * time.Millisecond

// APIOutageBound is the longest the API may stay unreachable through the
// load balancer during the upgrade: the longest run of failed requests of
// the API probe, from the first failed one to the next one that succeeded.
//
// The upgrade restarts one API server (and one etcd member) at a time, so
// two stay up; requests fail while the balancer still sends connections to
// the one that restarts. kind's balancer configuration (which the envoy
// stand-in of hack/e2e/envoy follows) checks each server's /healthz every
// 2s and takes it out after 2 failed checks: at most 2 x 2s = 4s after it
// stopped answering (a server that answers /healthz with an error is taken
// out at the first check), plus the 0.25s connect timeout of a connection
// that finds it gone. A request the server accepted just before it stopped
// fails at the probe's 2s timeout (apiProbeTimeout). An etcd leader change,
// when the member that restarts leads, holds reads on every server for
// about etcd's 1s election timeout, within that time. Round robin sends
// only every third connection to the restarting server, so runs of
// failures are far shorter in practice: the bound is that worst case,
// 6.25s, plus margin for a 2-core machine running six containers. The same
// bound and reasoning are in site/content/docs/user/upgrade-ha.md (HA
// clusters).
const APIOutageBound = 10 * time.Second

// MaxGap is the longest time, while a worker is drained, that the
// canary probers may send nothing at all (every prober down or stalled)
// before "no request failed" stops meaning anything.
const MaxGap = 5 * time.Second

// HAReport is what the HA test measured around its upgrade: the
// upgrade's events and both probes' samples.
type HAReport struct {
	From, To string
	Create   time.Duration   // kind create cluster
	Events   string          // --output json
	Spans    []timeline.Span // of events; nil when they could not be read
	API      []Sample        // the API through the load balancer, from the host
	Canary   []Sample        // the canary Service, from the probers (From: their node)
	// Probers are the canary probers' restart counts, by node
	Probers   map[string]int
	CanaryURL string
	Workers   []string
}

// Window is the upgrade's run, from its events; without them, the time the
// probes ran.
func (r HAReport) Window() (time.Time, time.Time) {
	for _, s := range r.Spans {
		if s.Kind == "upgrade" {
			return s.Start, s.End
		}
	}
	var from, to time.Time
	for _, s := range append(append([]Sample{}, r.API...), r.Canary...) {
		if from.IsZero() || s.Time.Before(from) {
			from = s.Time
		}
		if s.Time.After(to) {
			to = s.Time
		}
	}
	return from, to
}

// APIAvailability is what the API probe saw during the upgrade.
func (r HAReport) APIAvailability() Availability {
	from, to := r.Window()
	return Measure(r.API, from, to)
}

// CanaryAvailability is what the canary probers saw during the upgrade.
func (r HAReport) CanaryAvailability() Availability {
	from, to := r.Window()
	return Measure(r.Canary, from, to)
}

// WorkerWindows are the workers' cordon windows: from the start of each
// worker's drain to the end of its uncordoning.
func (r HAReport) WorkerWindows() []timeline.CordonWindow {
	windows, _ := timeline.CordonWindows(r.Spans)
	var out []timeline.CordonWindow
	for _, w := range windows {
		if slices.Contains(r.Workers, w.Node) {
			out = append(out, w)
		}
	}
	return out
}

// CanaryDuringDrains fails when a canary request failed while a worker
// was drained (up to its uncordoning), or when the probers sent nothing
// for longer than MaxGap then.
func (r HAReport) CanaryDuringDrains() error {
	windows := r.WorkerWindows()
	if len(windows) != len(r.Workers) {
		return fmt.Errorf("the events show %d workers drained, want %d", len(windows), len(r.Workers))
	}
	missed, gap := MissedDuring(r.Canary, windows)
	var problems []string
	for _, w := range windows {
		if n := len(missed[w.Node]); n > 0 {
			first := missed[w.Node][0]
			problems = append(problems, fmt.Sprintf("%d requests failed while %s was out, the first from %s at %s: %s", n, w.Node, first.From, timeline.Locate(r.Spans, first.Time), first.Err))
		}
	}
	if gap > MaxGap {
		problems = append(problems, fmt.Sprintf("the probers sent nothing for %s while a worker was out: what the canary did then is unknown", gap.Round(time.Millisecond)))
	}
	return timeline.JoinProblems("the canary while workers were drained", problems)
}

// Describe is one line about a's longest Outage.
func (r HAReport) Describe(a Availability) string {
	l := a.Longest()
	if l.Missed == 0 {
		return a.String() + ", no outage"
	}
	return fmt.Sprintf("%s, longest outage %s (%d requests) at %s", a, l.Duration().Round(10*time.Millisecond), l.Missed, timeline.Locate(r.Spans, l.Start))
}

// outages lists the longest outages of a, at most n, longest first.
func (r HAReport) outages(a Availability, n int) string {
	sorted := append([]Outage{}, a.Outages...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Duration() > sorted[j].Duration() })
	var b strings.Builder
	for i, o := range sorted {
		if i == n {
			fmt.Fprintf(&b, "    ... and %d shorter\n", len(sorted)-n)
			break
		}
		fmt.Fprintf(&b, "    %6.2fs %3d requests  %s\n", o.Duration().Seconds(), o.Missed, timeline.Locate(r.Spans, o.Start))
	}
	return b.String()
}

// APIText is the report's section on the API probe.
func (r HAReport) APIText() string {
	a := r.APIAvailability()
	var b strings.Builder
	fmt.Fprintf(&b, "API through the load balancer's host port (from the host, GET /api/v1/namespaces/default every %s, a new connection each):\n", Interval)
	fmt.Fprintf(&b, "  %s (bound on the longest outage: %s)\n", r.Describe(a), APIOutageBound)
	fmt.Fprintf(&b, "  outages: %d\n%s", len(a.Outages), r.outages(a, 10))
	from, to := r.Window()
	var in []Sample
	for _, s := range r.API {
		if !s.Time.Before(from) && !s.Time.After(to) {
			in = append(in, s)
		}
	}
	counts := AnsweredBy(in)
	var servers []string
	for server := range counts {
		servers = append(servers, server)
	}
	sort.Strings(servers)
	for i, server := range servers {
		servers[i] = fmt.Sprintf("%s %d", server, counts[server])
	}
	fmt.Fprintf(&b, "  answered by: %s\n", strings.Join(servers, ", "))
	return b.String()
}

// CanaryText is the report's section on the canary probers.
func (r HAReport) CanaryText() string {
	a := r.CanaryAvailability()
	var b strings.Builder
	fmt.Fprintf(&b, "Canary Service from inside the cluster (a prober on each node, GET %s every %s each, a new connection each):\n", r.CanaryURL, Interval)
	fmt.Fprintf(&b, "  %s\n", r.Describe(a))
	fmt.Fprintf(&b, "  outages (no prober got an answer): %d\n%s", len(a.Outages), r.outages(a, 10))
	b.WriteString("  while each worker was out (drain to uncordon):\n")
	missed, _ := MissedDuring(r.Canary, r.WorkerWindows())
	for _, w := range r.WorkerWindows() {
		in := Measure(r.Canary, w.Start, w.End)
		fmt.Fprintf(&b, "    %s: %s to %s (%.1fs): %s, %d failed, longest time without a request %s\n", w.Node,
			timeline.Locate(r.Spans, w.Start), timeline.Locate(r.Spans, w.End), w.End.Sub(w.Start).Seconds(), in, len(missed[w.Node]), in.Gap.Round(time.Millisecond))
	}
	from, to := r.Window()
	names, split := BySource(r.Canary)
	b.WriteString("  by prober (a gap is the prober down or stalled, not the canary):\n")
	for _, node := range names {
		p := Measure(split[node], from, to)
		fmt.Fprintf(&b, "    %s: %s, longest failure run %s, longest gap %s, container restarts %d\n",
			node, p, p.Longest().Duration().Round(10*time.Millisecond), p.Gap.Round(10*time.Millisecond), r.Probers[node])
	}
	for node := range r.Probers {
		if len(split[node]) == 0 {
			fmt.Fprintf(&b, "    %s: no request logged\n", node)
		}
	}
	return b.String()
}

// TimesText is the create time and the upgrade's per-phase wall times.
func (r HAReport) TimesText() (string, []string, map[string]float64, float64) {
	order, times, total, err := timeline.PhaseTimes(r.Events)
	var b strings.Builder
	fmt.Fprintf(&b, "kind create cluster: %.1fs\n", r.Create.Seconds())
	if err != nil {
		fmt.Fprintf(&b, "the upgrade's events could not be read: %v\n", err)
	}
	b.WriteString("kind alpha upgrade, per-phase wall time:\n")
	for _, p := range order {
		fmt.Fprintf(&b, "  %-15s %7.1fs\n", p, times[p])
	}
	fmt.Fprintf(&b, "  %-15s %7.1fs\n", "total", total)
	return b.String(), order, times, total
}

// Text is the whole report.
func (r HAReport) Text() string {
	times, _, _, _ := r.TimesText()
	return fmt.Sprintf("HA upgrade %s -> %s: 3 control-plane nodes behind kind's load balancer, 2 workers; one run of kind alpha upgrade\n\n%s\n%s\n%s",
		r.From, r.To, times, r.APIText(), r.CanaryText())
}

// Summary is the figures of the report, for phase-times.json.
func (r HAReport) Summary() map[string]interface{} {
	_, order, times, total := r.TimesText()
	figures := func(a Availability) map[string]interface{} {
		l := a.Longest()
		m := map[string]interface{}{"ok": a.OK, "total": a.Total, "outages": len(a.Outages), "longestOutageSeconds": l.Duration().Seconds()}
		if l.Missed > 0 {
			m["longestOutageAt"] = timeline.Locate(r.Spans, l.Start)
		}
		return m
	}
	return map[string]interface{}{
		"from": r.From, "to": r.To, "topology": "3 control-plane nodes, 2 workers",
		"createSeconds": r.Create.Seconds(), "phases": times, "order": order, "totalSeconds": total,
		"api":                   figures(r.APIAvailability()),
		"canary":                figures(r.CanaryAvailability()),
		"apiOutageBoundSeconds": APIOutageBound.Seconds(),
	}
}
