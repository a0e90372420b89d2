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

package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/log"
)

// lineLogger records V(0) lines.
type lineLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLogger) Warn(message string)                       { l.add(message) }
func (l *lineLogger) Warnf(format string, args ...interface{})  { l.add(fmt.Sprintf(format, args...)) }
func (l *lineLogger) Error(message string)                      { l.add(message) }
func (l *lineLogger) Errorf(format string, args ...interface{}) { l.add(fmt.Sprintf(format, args...)) }
func (l *lineLogger) V(level log.Level) log.InfoLogger {
	if level > 0 {
		return log.NoopInfoLogger{}
	}
	return infoLogger{l}
}
func (l *lineLogger) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, s)
}

type infoLogger struct{ l *lineLogger }

func (i infoLogger) Info(message string)                      { i.l.add(message) }
func (i infoLogger) Infof(format string, args ...interface{}) { i.l.add(fmt.Sprintf(format, args...)) }
func (i infoLogger) Enabled() bool                            { return true }

func TestStatusLinesAndEvents(t *testing.T) {
	t.Parallel()
	logger := &lineLogger{}
	var out bytes.Buffer
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := New(logger, WithJSON(&out), WithClock(func() time.Time {
		clock = clock.Add(1500 * time.Millisecond)
		return clock
	}))
	step := func(name string, skipped bool, message string, err error) error {
		return r.Run(Scope{Phase: "kubelets", Node: "kind-worker", Step: name}, func() (bool, string, error) {
			return skipped, message, err
		})
	}
	_ = r.Run(Scope{Phase: "kubelets"}, func() (bool, string, error) {
		_ = step("draining", true, "no other node can take its pods", nil)
		_ = step("installing", false, "", nil)
		return false, "", step("restarting the kubelet", false, "", errors.New("boom"))
	})
	want := []string{
		" • kubelets: kind-worker: draining ...",
		" ✓ kubelets: kind-worker: draining (skipped: no other node can take its pods)",
		" • kubelets: kind-worker: installing ...",
		" ✓ kubelets: kind-worker: installing (1.5s)",
		" • kubelets: kind-worker: restarting the kubelet ...",
		" ✗ kubelets: kind-worker: restarting the kubelet (1.5s)",
	}
	if got := strings.Join(logger.lines, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("status lines:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	var events []Event
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var ev Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("bad JSON line %q: %v", line, err)
		}
		events = append(events, ev)
	}
	if len(events) != 8 {
		t.Fatalf("got %d events, want 8", len(events))
	}
	first, last := events[0], events[7]
	if first.Kind != KindPhase || first.Event != EventStarted || first.Phase != "kubelets" {
		t.Errorf("first event %+v", first)
	}
	if last.Kind != KindPhase || last.Event != EventFinished || last.Outcome != OutcomeFailure || last.Error != "boom" {
		t.Errorf("last event %+v", last)
	}
	if ev := events[2]; ev.Kind != KindStep || ev.Outcome != OutcomeSkipped || ev.Message != "no other node can take its pods" || ev.Node != "kind-worker" {
		t.Errorf("skipped step event %+v", ev)
	}
	if ev := events[4]; ev.Outcome != OutcomeSuccess || ev.DurationSeconds != 1.5 {
		t.Errorf("finished step event %+v", ev)
	}
}
