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
	"strings"
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/internal/lab/timeline"
)

// at is a Sample sent ms milliseconds after timeline.FixtureStart.
func at(ms int, ok bool, from string) Sample {
	s := Sample{Time: timeline.FixtureStart.Add(time.Duration(ms) * time.Millisecond), OK: ok, From: from, Latency: time.Millisecond}
	if ok {
		s.By = "canary-a"
	} else {
		s.Err = "connection refused"
	}
	return s
}

func TestMeasure(t *testing.T) {
	t.Parallel()
	ms := func(n int) time.Time { return timeline.FixtureStart.Add(time.Duration(n) * time.Millisecond) }
	for _, tc := range []struct {
		name     string
		samples  []Sample
		from, to int
		want     string
		longest  string
		gap      time.Duration
	}{
		{
			name:    "no failure",
			samples: []Sample{at(0, true, "a"), at(250, true, "a"), at(500, true, "a")},
			from:    0, to: 600,
			want: "3/3 requests ok (100.00%) []", longest: "0s 0", gap: 250 * time.Millisecond,
		},
		{
			name: "an outage, then one still running at the end",
			samples: []Sample{at(0, true, "a"), at(250, false, "a"), at(500, false, "a"), at(750, true, "a"),
				at(1000, true, "a"), at(1250, false, "a")},
			from: 0, to: 2000,
			want:    "3/6 requests ok (50.00%) [500ms 2 750ms 1]",
			longest: "750ms 1", gap: 750 * time.Millisecond,
		},
		{
			name:    "another prober's answer ends the outage",
			samples: []Sample{at(0, true, "a"), at(250, false, "a"), at(300, true, "b"), at(500, false, "a"), at(750, true, "a")},
			from:    0, to: 750,
			want:    "3/5 requests ok (60.00%) [50ms 1 250ms 1]",
			longest: "250ms 1", gap: 250 * time.Millisecond,
		},
		{
			name:    "samples outside the window do not count",
			samples: []Sample{at(-500, false, "a"), at(0, true, "a"), at(250, true, "a"), at(900, false, "a")},
			from:    0, to: 500,
			want: "2/2 requests ok (100.00%) []", longest: "0s 0", gap: 250 * time.Millisecond,
		},
		{
			name:    "no sample for a while",
			samples: []Sample{at(0, true, "a"), at(3000, true, "a")},
			from:    0, to: 3000,
			want: "2/2 requests ok (100.00%) []", longest: "0s 0", gap: 3 * time.Second,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := Measure(tc.samples, ms(tc.from), ms(tc.to))
			var outages []string
			for _, o := range a.Outages {
				outages = append(outages, fmt.Sprintf("%s %d", o.Duration(), o.Missed))
			}
			if got := fmt.Sprintf("%s [%s]", a, strings.Join(outages, " ")); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
			if l := a.Longest(); fmt.Sprintf("%s %d", l.Duration(), l.Missed) != tc.longest {
				t.Errorf("longest outage %s %d, want %s", l.Duration(), l.Missed, tc.longest)
			}
			if a.Gap != tc.gap {
				t.Errorf("gap %s, want %s", a.Gap, tc.gap)
			}
		})
	}
}

func TestMissedDuring(t *testing.T) {
	t.Parallel()
	samples := []Sample{at(0, false, "a"), at(1000, true, "a"), at(1100, false, "b"), at(1500, true, "a"), at(3000, false, "a")}
	windows := []timeline.CordonWindow{
		{Node: "w1", Start: timeline.FixtureStart.Add(900 * time.Millisecond), End: timeline.FixtureStart.Add(2 * time.Second)},
		{Node: "w2", Start: timeline.FixtureStart.Add(2500 * time.Millisecond), End: timeline.FixtureStart.Add(4 * time.Second)},
	}
	missed, gap := MissedDuring(samples, windows)
	if len(missed["w1"]) != 1 || missed["w1"][0].From != "b" || len(missed["w2"]) != 1 || len(missed) != 2 {
		t.Errorf("missed %v", missed)
	}
	// w2: 2.5s to 3s, then nothing until 4s
	if gap != time.Second {
		t.Errorf("gap %s, want 1s", gap)
	}
}

func TestParseProbeLog(t *testing.T) {
	t.Parallel()
	const log = `# canary prober-x probes http://10.96.0.20/ every 250ms, timeout 2s
2026-11-30T12:00:00.25Z ok 1.234ms canary-7d9f-abcde
2026-11-30T12:00:00Z error 2s Get "http://10.96.0.20/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)

`
	samples, err := ParseProbeLog("prober-x", log)
	if err != nil {
		t.Fatal(err)
	}
	want := []Sample{
		{Time: timeline.FixtureStart.Add(250 * time.Millisecond), OK: true, Latency: 1234 * time.Microsecond, From: "prober-x", By: "canary-7d9f-abcde"},
		{Time: timeline.FixtureStart, Latency: 2 * time.Second, From: "prober-x", Err: `Get "http://10.96.0.20/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`},
	}
	if fmt.Sprint(samples) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", samples, want)
	}
	if got := FormatSamples(samples); !strings.HasPrefix(got, "2026-11-30T12:00:00Z prober-x error 2s Get") {
		t.Errorf("formatSamples does not put them in time order:\n%s", got)
	}
	for _, bad := range []string{"canary serving on :8080", "2026-11-30T12:00:00Z maybe 1ms x", "yesterday ok 1ms x", "2026-11-30T12:00:00Z ok fast x"} {
		if _, err := ParseProbeLog("p", bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
