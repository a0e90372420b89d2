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
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// probeInterval is how often each probe sends a request.
const probeInterval = 250 * time.Millisecond

// apiOutageBound is the longest the API may stay unreachable through the
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
const apiOutageBound = 10 * time.Second

// maxProbeGap is the longest time, while a worker is drained, that the
// canary probers may send nothing at all (every prober down or stalled)
// before "no request failed" stops meaning anything.
const maxProbeGap = 5 * time.Second

// haReport is what the HA test measured around its upgrade: the
// upgrade's events and both probes' samples.
type haReport struct {
	from, to string
	create   time.Duration // kind create cluster
	events   string        // --output json
	spans    []span        // of events; nil when they could not be read
	api      []sample      // the API through the load balancer, from the host
	canary   []sample      // the canary Service, from the probers (From: their node)
	// probers are the canary probers' restart counts, by node
	probers   map[string]int
	canaryURL string
	workers   []string
}

// window is the upgrade's run, from its events; without them, the time the
// probes ran.
func (r haReport) window() (time.Time, time.Time) {
	for _, s := range r.spans {
		if s.Kind == "upgrade" {
			return s.Start, s.End
		}
	}
	var from, to time.Time
	for _, s := range append(append([]sample{}, r.api...), r.canary...) {
		if from.IsZero() || s.Time.Before(from) {
			from = s.Time
		}
		if s.Time.After(to) {
			to = s.Time
		}
	}
	return from, to
}

func (r haReport) apiAvailability() availability {
	from, to := r.window()
	return measure(r.api, from, to)
}

func (r haReport) canaryAvailability() availability {
	from, to := r.window()
	return measure(r.canary, from, to)
}

// workerWindows are the workers' cordon windows: from the start of each
// worker's drain to the end of its uncordoning.
func (r haReport) workerWindows() []cordonWindow {
	windows, _ := cordonWindows(r.spans)
	var out []cordonWindow
	for _, w := range windows {
		if contains(r.workers, w.Node) {
			out = append(out, w)
		}
	}
	return out
}

// canaryDuringDrains fails when a canary request failed while a worker
// was drained (up to its uncordoning), or when the probers sent nothing
// for longer than maxProbeGap then.
func (r haReport) canaryDuringDrains() error {
	windows := r.workerWindows()
	if len(windows) != len(r.workers) {
		return fmt.Errorf("the events show %d workers drained, want %d", len(windows), len(r.workers))
	}
	missed, gap := missedDuring(r.canary, windows)
	var problems []string
	for _, w := range windows {
		if n := len(missed[w.Node]); n > 0 {
			first := missed[w.Node][0]
			problems = append(problems, fmt.Sprintf("%d requests failed while %s was out, the first from %s at %s: %s", n, w.Node, first.From, locate(r.spans, first.Time), first.Err))
		}
	}
	if gap > maxProbeGap {
		problems = append(problems, fmt.Sprintf("the probers sent nothing for %s while a worker was out: what the canary did then is unknown", gap.Round(time.Millisecond)))
	}
	return joinProblems("the canary while workers were drained", problems)
}

// describe is one line about a's longest outage.
func (r haReport) describe(a availability) string {
	l := a.Longest()
	if l.Missed == 0 {
		return a.String() + ", no outage"
	}
	return fmt.Sprintf("%s, longest outage %s (%d requests) at %s", a, l.Duration().Round(10*time.Millisecond), l.Missed, locate(r.spans, l.Start))
}

// outages lists the longest outages of a, at most n, longest first.
func (r haReport) outages(a availability, n int) string {
	sorted := append([]outage{}, a.Outages...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Duration() > sorted[j].Duration() })
	var b strings.Builder
	for i, o := range sorted {
		if i == n {
			fmt.Fprintf(&b, "    ... and %d shorter\n", len(sorted)-n)
			break
		}
		fmt.Fprintf(&b, "    %6.2fs %3d requests  %s\n", o.Duration().Seconds(), o.Missed, locate(r.spans, o.Start))
	}
	return b.String()
}

// apiText is the report's section on the API probe.
func (r haReport) apiText() string {
	a := r.apiAvailability()
	var b strings.Builder
	fmt.Fprintf(&b, "API through the load balancer's host port (from the host, GET /api/v1/namespaces/default every %s, a new connection each):\n", probeInterval)
	fmt.Fprintf(&b, "  %s (bound on the longest outage: %s)\n", r.describe(a), apiOutageBound)
	fmt.Fprintf(&b, "  outages: %d\n%s", len(a.Outages), r.outages(a, 10))
	from, to := r.window()
	var in []sample
	for _, s := range r.api {
		if !s.Time.Before(from) && !s.Time.After(to) {
			in = append(in, s)
		}
	}
	counts := answeredBy(in)
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

// canaryText is the report's section on the canary probers.
func (r haReport) canaryText() string {
	a := r.canaryAvailability()
	var b strings.Builder
	fmt.Fprintf(&b, "Canary Service from inside the cluster (a prober on each node, GET %s every %s each, a new connection each):\n", r.canaryURL, probeInterval)
	fmt.Fprintf(&b, "  %s\n", r.describe(a))
	fmt.Fprintf(&b, "  outages (no prober got an answer): %d\n%s", len(a.Outages), r.outages(a, 10))
	b.WriteString("  while each worker was out (drain to uncordon):\n")
	missed, _ := missedDuring(r.canary, r.workerWindows())
	for _, w := range r.workerWindows() {
		in := measure(r.canary, w.Start, w.End)
		fmt.Fprintf(&b, "    %s: %s to %s (%.1fs): %s, %d failed, longest time without a request %s\n", w.Node,
			locate(r.spans, w.Start), locate(r.spans, w.End), w.End.Sub(w.Start).Seconds(), in, len(missed[w.Node]), in.Gap.Round(time.Millisecond))
	}
	from, to := r.window()
	names, split := bySource(r.canary)
	b.WriteString("  by prober (a gap is the prober down or stalled, not the canary):\n")
	for _, node := range names {
		p := measure(split[node], from, to)
		fmt.Fprintf(&b, "    %s: %s, longest failure run %s, longest gap %s, container restarts %d\n",
			node, p, p.Longest().Duration().Round(10*time.Millisecond), p.Gap.Round(10*time.Millisecond), r.probers[node])
	}
	for node := range r.probers {
		if len(split[node]) == 0 {
			fmt.Fprintf(&b, "    %s: no request logged\n", node)
		}
	}
	return b.String()
}

// timesText is the create time and the upgrade's per-phase wall times.
func (r haReport) timesText() (string, []string, map[string]float64, float64) {
	order, times, total, err := phaseTimes(r.events)
	var b strings.Builder
	fmt.Fprintf(&b, "kind create cluster: %.1fs\n", r.create.Seconds())
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

// text is the whole report.
func (r haReport) text() string {
	times, _, _, _ := r.timesText()
	return fmt.Sprintf("HA upgrade %s -> %s: 3 control-plane nodes behind kind's load balancer, 2 workers; one run of kind alpha upgrade\n\n%s\n%s\n%s",
		r.from, r.to, times, r.apiText(), r.canaryText())
}

// summary is the figures of the report, for phase-times.json.
func (r haReport) summary() map[string]interface{} {
	_, order, times, total := r.timesText()
	figures := func(a availability) map[string]interface{} {
		l := a.Longest()
		m := map[string]interface{}{"ok": a.OK, "total": a.Total, "outages": len(a.Outages), "longestOutageSeconds": l.Duration().Seconds()}
		if l.Missed > 0 {
			m["longestOutageAt"] = locate(r.spans, l.Start)
		}
		return m
	}
	return map[string]interface{}{
		"from": r.from, "to": r.to, "topology": "3 control-plane nodes, 2 workers",
		"createSeconds": r.create.Seconds(), "phases": times, "order": order, "totalSeconds": total,
		"api":                   figures(r.apiAvailability()),
		"canary":                figures(r.canaryAvailability()),
		"apiOutageBoundSeconds": apiOutageBound.Seconds(),
	}
}

// write stores the report as ha-report.txt and its figures as
// phase-times.json, records the figures in the JUnit suite (test cases
// that pass, named after them) and returns the report.
func (r haReport) write(h *harness) string {
	text := r.text()
	writeFile(h.t, h.artifacts, "ha-report.txt", text)
	if b, err := json.MarshalIndent(r.summary(), "", "  "); err == nil {
		writeFile(h.t, h.artifacts, "phase-times.json", string(b)+"\n")
	}
	times, order, phases, total := r.timesText()
	var parts []string
	for _, p := range order {
		parts = append(parts, fmt.Sprintf("%s %.1fs", p, phases[p]))
	}
	h.suite.addWithOutput(fmt.Sprintf("wall time: kind create cluster %.1fs, kind alpha upgrade %.1fs (%s)", r.create.Seconds(), total, strings.Join(parts, ", ")), 0, nil, times)
	h.suite.addWithOutput("availability: API through the load balancer: "+r.describe(r.apiAvailability()), 0, nil, r.apiText())
	h.suite.addWithOutput("availability: canary Service from every node: "+r.describe(r.canaryAvailability()), 0, nil, r.canaryText())
	return text
}
