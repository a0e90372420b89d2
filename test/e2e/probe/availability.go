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
	"bufio"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kindupgrade/kind-upgrade/internal/lab/timeline"
)

// Sample is one probe request.
type Sample struct {
	Time    time.Time // when it was sent
	OK      bool
	Latency time.Duration
	From    string // who asked: a prober pod, or "host"
	By      string // who answered: an API server or a canary pod ("" on failure)
	Err     string
}

// Outage is a time during which every probe request failed: from the
// first failed request to the next one that succeeded.
type Outage struct {
	Start, End time.Time
	Missed     int // failed requests
}

// Duration is how long the outage lasted.
func (o Outage) Duration() time.Duration { return o.End.Sub(o.Start) }

// Availability is what the requests of a Window saw.
type Availability struct {
	Total, OK int
	Outages   []Outage // in time order
	// Gap is the longest time without any request sent (the probers
	// themselves were down): what happened then is unknown.
	Gap   time.Duration
	GapAt time.Time
}

// Longest is the longest Outage; zero when there was none.
func (a Availability) Longest() Outage {
	var longest Outage
	for _, o := range a.Outages {
		if o.Duration() > longest.Duration() || (longest.Missed == 0 && o.Missed > 0) {
			longest = o
		}
	}
	return longest
}

func (a Availability) String() string {
	if a.Total == 0 {
		return "no requests"
	}
	return fmt.Sprintf("%d/%d requests ok (%.2f%%)", a.OK, a.Total, 100*float64(a.OK)/float64(a.Total))
}

// Measure reads the samples sent from from to to (whoever sent them) in
// the order they were sent. An Outage lasts from a failed request to the
// next request that succeeded: with several probers, while any of them got
// an answer the target was not down. An Outage still running at to ends
// at to.
func Measure(samples []Sample, from, to time.Time) Availability {
	var in []Sample
	for _, s := range samples {
		if !s.Time.Before(from) && !s.Time.After(to) {
			in = append(in, s)
		}
	}
	sort.SliceStable(in, func(i, j int) bool { return in[i].Time.Before(in[j].Time) })
	var a Availability
	var cur *Outage
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
			cur = &Outage{Start: s.Time}
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

// MissedDuring returns the failed samples sent within a Window, and the
// longest time within a Window during which no request was sent.
func MissedDuring(samples []Sample, windows []timeline.CordonWindow) (map[string][]Sample, time.Duration) {
	missed := map[string][]Sample{}
	var gap time.Duration
	for _, w := range windows {
		a := Measure(samples, w.Start, w.End)
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

// BySource splits samples by who sent them, sorted by name.
func BySource(samples []Sample) ([]string, map[string][]Sample) {
	split := map[string][]Sample{}
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

// AnsweredBy counts the successful samples by who answered them.
func AnsweredBy(samples []Sample) map[string]int {
	counts := map[string]int{}
	for _, s := range samples {
		if s.OK {
			counts[s.By]++
		}
	}
	return counts
}

// ParseProbeLog reads the output of `canary probe` (hack/e2e/canary) run
// by prober from: after "#" comment lines, one line per request,
//
//	<sent at, RFC 3339> ok <latency> <first line of the answer>
//	<sent at> error <latency> <what went wrong>
func ParseProbeLog(from, log string) ([]Sample, error) {
	var samples []Sample
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
		s := Sample{Time: sent, OK: fields[1] == "ok", Latency: latency, From: from}
		if s.OK {
			s.By = fields[3]
		} else {
			s.Err = fields[3]
		}
		samples = append(samples, s)
	}
	return samples, scanner.Err()
}

// FormatSamples writes samples one per line, in the order they were sent,
// for the artifacts.
func FormatSamples(samples []Sample) string {
	sorted := append([]Sample{}, samples...)
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
