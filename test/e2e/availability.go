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
	"bufio"
	"fmt"
	"sort"
	"strings"
	"time"
)

// sample is one probe request.
type sample struct {
	Time    time.Time // when it was sent
	OK      bool
	Latency time.Duration
	From    string // who asked: a prober pod, or "host"
	By      string // who answered: an API server or a canary pod ("" on failure)
	Err     string
}

// outage is a time during which every probe request failed: from the
// first failed request to the next one that succeeded.
type outage struct {
	Start, End time.Time
	Missed     int // failed requests
}

func (o outage) Duration() time.Duration { return o.End.Sub(o.Start) }

// availability is what the requests of a window saw.
type availability struct {
	Total, OK int
	Outages   []outage // in time order
	// Gap is the longest time without any request sent (the probers
	// themselves were down): what happened then is unknown.
	Gap   time.Duration
	GapAt time.Time
}

// Longest is the longest outage; zero when there was none.
func (a availability) Longest() outage {
	var longest outage
	for _, o := range a.Outages {
		if o.Duration() > longest.Duration() || (longest.Missed == 0 && o.Missed > 0) {
			longest = o
		}
	}
	return longest
}

func (a availability) String() string {
	if a.Total == 0 {
		return "no requests"
	}
	return fmt.Sprintf("%d/%d requests ok (%.2f%%)", a.OK, a.Total, 100*float64(a.OK)/float64(a.Total))
}

// measure reads the samples sent from from to to (whoever sent them) in
// the order they were sent. An outage lasts from a failed request to the
// next request that succeeded: with several probers, while any of them got
// an answer the target was not down. An outage still running at to ends
// at to.
func measure(samples []sample, from, to time.Time) availability {
	var in []sample
	for _, s := range samples {
		if !s.Time.Before(from) && !s.Time.After(to) {
			in = append(in, s)
		}
	}
	sort.SliceStable(in, func(i, j int) bool { return in[i].Time.Before(in[j].Time) })
	var a availability
	var cur *outage
	last := from
	for _, s := range in {
		if gap := s.Time.Sub(last); gap > a.Gap {
			a.Gap, a.GapAt = gap, last
		}
		last = s.Time
		a.Total++
		if s.OK {
			a.OK++
			if cur != nil {
				cur.End = s.Time
				a.Outages = append(a.Outages, *cur)
				cur = nil
			}
			continue
		}
		if cur == nil {
			cur = &outage{Start: s.Time}
		}
		cur.Missed++
	}
	if cur != nil {
		cur.End = to
		a.Outages = append(a.Outages, *cur)
	}
	if gap := to.Sub(last); gap > a.Gap {
		a.Gap, a.GapAt = gap, last
	}
	return a
}

// missedDuring returns the failed samples sent within a window, and the
// longest time within a window during which no request was sent.
func missedDuring(samples []sample, windows []cordonWindow) (map[string][]sample, time.Duration) {
	missed := map[string][]sample{}
	var gap time.Duration
	for _, w := range windows {
		a := measure(samples, w.Start, w.End)
		if a.Gap > gap {
			gap = a.Gap
		}
		for _, s := range samples {
			if !s.OK && !s.Time.Before(w.Start) && !s.Time.After(w.End) {
				missed[w.Node] = append(missed[w.Node], s)
			}
		}
	}
	return missed, gap
}

// bySource splits samples by who sent them, sorted by name.
func bySource(samples []sample) ([]string, map[string][]sample) {
	split := map[string][]sample{}
	for _, s := range samples {
		split[s.From] = append(split[s.From], s)
	}
	names := make([]string, 0, len(split))
	for name := range split {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, split
}

// answeredBy counts the successful samples by who answered them.
func answeredBy(samples []sample) map[string]int {
	counts := map[string]int{}
	for _, s := range samples {
		if s.OK {
			counts[s.By]++
		}
	}
	return counts
}

// parseProbeLog reads the output of `canary probe` (hack/e2e/canary) run
// by prober from: after "#" comment lines, one line per request,
//
//	<sent at, RFC 3339> ok <latency> <first line of the answer>
//	<sent at> error <latency> <what went wrong>
func parseProbeLog(from, log string) ([]sample, error) {
	var samples []sample
	scanner := bufio.NewScanner(strings.NewReader(log))
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.SplitN(line, " ", 4)
		if len(fields) != 4 || (fields[1] != "ok" && fields[1] != "error") {
			return nil, fmt.Errorf("%s: not a probe line: %q", from, line)
		}
		sent, err := time.Parse(time.RFC3339Nano, fields[0])
		if err != nil {
			return nil, fmt.Errorf("%s: bad time in %q: %v", from, line, err)
		}
		latency, err := time.ParseDuration(fields[2])
		if err != nil {
			return nil, fmt.Errorf("%s: bad latency in %q: %v", from, line, err)
		}
		s := sample{Time: sent, OK: fields[1] == "ok", Latency: latency, From: from}
		if s.OK {
			s.By = fields[3]
		} else {
			s.Err = fields[3]
		}
		samples = append(samples, s)
	}
	return samples, scanner.Err()
}

// formatSamples writes samples one per line, in the order they were sent,
// for the artifacts.
func formatSamples(samples []sample) string {
	sorted := append([]sample{}, samples...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Time.Before(sorted[j].Time) })
	var b strings.Builder
	for _, s := range sorted {
		result, detail := "ok", s.By
		if !s.OK {
			result, detail = "error", s.Err
		}
		fmt.Fprintf(&b, "%s %s %s %s %s\n", s.Time.UTC().Format(time.RFC3339Nano), s.From, result, s.Latency.Round(time.Microsecond), detail)
	}
	return b.String()
}
