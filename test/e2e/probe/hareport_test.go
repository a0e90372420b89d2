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
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/internal/lab/timeline"
)

// testReport is a report on timeline.FixtureUpgrade with requests every 250ms over
// the whole upgrade: the API answered by each control plane in turn, the
// canary from a prober on each worker; fail says which requests failed.
func testReport(t *testing.T, fail func(s Sample) bool) HAReport {
	t.Helper()
	events := timeline.FixtureUpgrade()
	spans, err := timeline.SpansOf(events)
	if err != nil {
		t.Fatal(err)
	}
	r := HAReport{From: "v1.36.3", To: "v1.37.2", Create: 90 * time.Second, Spans: spans, CanaryURL: "http://10.96.0.20/",
		Workers: timeline.FixtureWorkers, Probers: map[string]int{timeline.FixtureWorkers[0]: 0, timeline.FixtureWorkers[1]: 1}}
	// the events as the tool prints them, with durations on finished ones
	var lines []string
	for _, ev := range events {
		line := map[string]interface{}{"time": ev.Time, "kind": ev.Kind, "event": ev.Event, "phase": ev.Phase, "node": ev.Node, "stepID": ev.StepID, "step": ev.Step}
		if ev.Event == "finished" {
			for _, s := range spans {
				if s.Kind == ev.Kind && s.Phase == ev.Phase && s.Node == ev.Node && s.StepID == ev.StepID && s.End.Equal(ev.Time) {
					line["durationSeconds"] = s.End.Sub(s.Start).Seconds()
				}
			}
		}
		b, err := json.Marshal(line)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	r.Events = strings.Join(lines, "\n")
	from, to := r.Window()
	i := 0
	for at := from; !at.After(to); at = at.Add(Interval) {
		api := Sample{Time: at, OK: true, From: "host", By: timeline.FixtureControlPlanes[i%3]}
		if fail(api) {
			api.OK, api.By, api.Err = false, "", "EOF"
		}
		r.API = append(r.API, api)
		for _, w := range timeline.FixtureWorkers {
			c := Sample{Time: at.Add(10 * time.Millisecond), OK: true, From: w, By: "canary-a"}
			if fail(c) {
				c.OK, c.By, c.Err = false, "", "connection refused"
			}
			r.Canary = append(r.Canary, c)
		}
		i++
	}
	return r
}

func TestHAReport(t *testing.T) {
	t.Parallel()
	spans, err := timeline.SpansOf(timeline.FixtureUpgrade())
	if err != nil {
		t.Fatal(err)
	}
	drain := timeline.Find(spans, timeline.StepOn(timeline.FixtureWorkers[1], timeline.StepDrain))[0]
	cp2 := timeline.Find(spans, timeline.NodeIn(timeline.PhaseControlPlane, timeline.FixtureControlPlanes[1]))[0]

	t.Run("all good", func(t *testing.T) {
		t.Parallel()
		r := testReport(t, func(Sample) bool { return false })
		if err := r.CanaryDuringDrains(); err != nil {
			t.Error(err)
		}
		text := r.Text()
		for _, want := range []string{
			"kind create cluster: 90.0s",
			"100.00%), no outage",
			"answered by: ha-control-plane 170, ha-control-plane2 170, ha-control-plane3 169\n",
			"  control-plane      19.0s\n",
			"ha-worker2: +", "container restarts 1",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("the report lacks %q:\n%s", want, text)
			}
		}
	})
	t.Run("the API down for a second, the canary missing a request while a worker drains", func(t *testing.T) {
		t.Parallel()
		r := testReport(t, func(s Sample) bool {
			if s.From == "host" {
				return !s.Time.Before(cp2.Start) && s.Time.Before(cp2.Start.Add(time.Second))
			}
			return s.From == timeline.FixtureWorkers[0] && !s.Time.Before(drain.Start) && s.Time.Before(drain.Start.Add(Interval))
		})
		l := r.APIAvailability().Longest()
		if l.Missed != 4 || l.Duration() != time.Second {
			t.Errorf("longest API outage %s, %d requests; want 1s, 4", l.Duration(), l.Missed)
		}
		err := r.CanaryDuringDrains()
		if err == nil || !strings.Contains(err.Error(), "1 requests failed while ha-worker2 was out, the first from ha-worker at") {
			t.Errorf("want the failure while ha-worker2 was out, got %v", err)
		}
		// the other prober answered meanwhile: the canary was not down
		if a := r.CanaryAvailability(); a.Longest().Duration() > 250*time.Millisecond {
			t.Errorf("canary outage %s", a.Longest().Duration())
		}
		if text := r.APIText(); !strings.Contains(text, "longest outage 1s (4 requests) at +") || !strings.Contains(text, "control-plane: ha-control-plane2") {
			t.Errorf("the API section does not say where the outage was:\n%s", text)
		}
		s := r.Summary()
		if api := s["api"].(map[string]interface{}); api["longestOutageSeconds"] != 1.0 || api["outages"] != 1 {
			t.Errorf("summary %v", s)
		}
	})
	t.Run("probers silent during a drain", func(t *testing.T) {
		t.Parallel()
		r := testReport(t, func(Sample) bool { return false })
		var kept []Sample
		for _, s := range r.Canary {
			if s.Time.Before(drain.Start) || s.Time.After(drain.Start.Add(MaxGap+time.Second)) {
				kept = append(kept, s)
			}
		}
		r.Canary = kept
		if err := r.CanaryDuringDrains(); err == nil || !strings.Contains(err.Error(), "the probers sent nothing for") {
			t.Errorf("want the gap reported, got %v", err)
		}
	})
}
