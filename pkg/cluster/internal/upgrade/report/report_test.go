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
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/exec"
	"sigs.k8s.io/kind/pkg/log"
)

// terminal is a terminal both the spinner and a termLogger write to.
type terminal struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (t *terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.Write(p)
}

func (t *terminal) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

// termLogger writes lines to a terminal, like kind's CLI logger, and
// counts the calls to SetWriter, which kind's CLI logger has too.
type termLogger struct {
	w          io.Writer
	setWriters int
}

func (l *termLogger) SetWriter(w io.Writer)                     { l.setWriters++; l.w = w }
func (l *termLogger) Warn(message string)                       { l.line(message) }
func (l *termLogger) Warnf(format string, args ...interface{})  { l.line(fmt.Sprintf(format, args...)) }
func (l *termLogger) Error(message string)                      { l.line(message) }
func (l *termLogger) Errorf(format string, args ...interface{}) { l.line(fmt.Sprintf(format, args...)) }
func (l *termLogger) V(level log.Level) log.InfoLogger {
	if level > 0 {
		return log.NoopInfoLogger{}
	}
	return termInfoLogger{l}
}
func (l *termLogger) line(s string) { fmt.Fprintln(l.w, s) }

type termInfoLogger struct{ l *termLogger }

func (i termInfoLogger) Info(message string) { i.l.line(message) }
func (i termInfoLogger) Infof(format string, args ...interface{}) {
	i.l.line(fmt.Sprintf(format, args...))
}
func (i termInfoLogger) Enabled() bool { return true }

func TestStatusLinesAndEvents(t *testing.T) {
	t.Parallel()
	term := &terminal{}
	logger := &termLogger{w: term}
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
	if got := strings.TrimSuffix(term.String(), "\n"); got != strings.Join(want, "\n") {
		t.Errorf("status lines:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	var events []Event
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var ev Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("bad JSON line %q: %v", line, err)
		}
		if !strings.HasPrefix(line, `{"schema":"v1",`) {
			t.Errorf("the event does not start with its schema version: %s", line)
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

func TestFailedStepEventCarriesTheCommandAndItsOutput(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	r := New(log.NoopLogger{}, WithJSON(&out))
	output := strings.Repeat("x", MaxEventOutput) + "[ERROR SystemVerification]: the last line"
	failure := errors.Wrap(&exec.RunError{
		Command: []string{"flock", "/kind/upgrade/.kubeadm.lock", "kubeadm", "upgrade", "apply"},
		Output:  []byte(output),
		Inner:   errors.New("exit status 1"),
	}, `kubeadm failed on node "kind-control-plane"`)
	_ = r.Run(Scope{Phase: "control-plane"}, func() (bool, string, error) {
		return false, "", r.Run(Scope{Phase: "control-plane", Node: "kind-control-plane", Step: "kubeadm upgrade apply"}, func() (bool, string, error) {
			return false, "", failure
		})
	})
	var step, phase Event
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var ev Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Event == EventFinished && ev.Kind == KindStep {
			step = ev
		}
		if ev.Event == EventFinished && ev.Kind == KindPhase {
			phase = ev
		}
	}
	if step.Command != "flock /kind/upgrade/.kubeadm.lock kubeadm upgrade apply" {
		t.Errorf("failed step's command %q", step.Command)
	}
	if !strings.HasSuffix(step.Output, "the last line") || !strings.HasPrefix(step.Output, "[...]") || len(step.Output) != MaxEventOutput+len("[...]") {
		t.Errorf("failed step's output is not the bounded end of the command's output: %d bytes, %.40q...", len(step.Output), step.Output)
	}
	if phase.Outcome != OutcomeFailure || phase.Command != "" || phase.Output != "" {
		t.Errorf("the phase's event repeats the output or lost the failure: %+v", phase)
	}
}

// beatLogger hands each line logged to a channel.
type beatLogger struct {
	log.NoopLogger
	lines chan string
}

func (l beatLogger) V(level log.Level) log.InfoLogger {
	if level > 0 {
		return log.NoopInfoLogger{}
	}
	return beatInfoLogger(l)
}

type beatInfoLogger beatLogger

func (i beatInfoLogger) Info(message string) { i.lines <- message }
func (i beatInfoLogger) Infof(format string, args ...interface{}) {
	i.lines <- fmt.Sprintf(format, args...)
}
func (i beatInfoLogger) Enabled() bool { return true }

// TestHeartbeat checks that without a terminal a long step says, while it
// runs, that it still runs, and that the heartbeat stops when it ends.
func TestHeartbeat(t *testing.T) {
	t.Parallel()
	logger := beatLogger{lines: make(chan string, 100)}
	r := New(logger, WithHeartbeat(time.Millisecond))
	err := r.Run(Scope{Phase: "control-plane", Node: "kind-control-plane", Step: "kubeadm upgrade apply v1.37.2"}, func() (bool, string, error) {
		// runs until it has seen two heartbeats
		for beats := 0; beats < 2; {
			line := <-logger.lines
			if strings.HasPrefix(line, " • control-plane: kind-control-plane: kubeadm upgrade apply v1.37.2 ... (") && strings.HasSuffix(line, " so far)") {
				beats++
			}
		}
		return false, "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// the finished line comes after the last heartbeat, and none follows it
	var rest []string
	for len(logger.lines) > 0 {
		rest = append(rest, <-logger.lines)
	}
	for len(rest) > 0 && strings.HasSuffix(rest[0], " so far)") {
		rest = rest[1:]
	}
	if len(rest) != 1 || !strings.HasPrefix(rest[0], " ✓ control-plane: kind-control-plane: kubeadm upgrade apply v1.37.2 (") {
		t.Errorf("after the step: %q, want its finished line alone", rest)
	}
}

// TestWaitStatsGoToTheirStep: a wait's polls and window go to the finished
// event of the latest step running on its node, summed when a step waits
// twice; a step that did not wait has none, and a wait outside any step
// is dropped.
func TestWaitStatsGoToTheirStep(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	r := New(log.NoopLogger{}, WithJSON(&out))
	r.Waited("kind-worker", 4, time.Second) // no step runs there, nor on no node
	step := func(node, name string, fn func()) {
		_ = r.Run(Scope{Phase: "kubelets", Node: node, Step: name}, func() (bool, string, error) {
			fn()
			return false, "", nil
		})
	}
	step("kind-control-plane", "waiting twice", func() {
		// a step on another node runs meanwhile and waits too
		step("kind-worker", "waiting once", func() { r.Waited("kind-worker", 1, 0) })
		r.Waited("kind-control-plane", 3, 700*time.Millisecond)
		r.Waited("kind-control-plane", 2, 300*time.Millisecond)
	})
	step("kind-control-plane", "not waiting", func() {})
	// a step on no node gets the waits on nodes without a step of their own
	step("", "waiting on every node", func() {
		r.Waited("kind-control-plane", 2, 0)
		r.Waited("kind-control-plane2", 1, 0)
	})
	got := map[string]*WaitStats{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var ev Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Event == EventFinished && ev.Kind == KindStep {
			got[ev.Step] = ev.Wait
		}
	}
	if w := got["waiting twice"]; w == nil || w.Polls != 5 || w.NoticedWithinSeconds != 1 {
		t.Errorf("waiting twice: %+v, want 5 polls within 1 s", w)
	}
	if w := got["waiting once"]; w == nil || w.Polls != 1 || w.NoticedWithinSeconds != 0 {
		t.Errorf("waiting once: %+v, want 1 poll within 0 s", w)
	}
	if w := got["waiting on every node"]; w == nil || w.Polls != 3 {
		t.Errorf("waiting on every node: %+v, want 3 polls", w)
	}
	if w, ok := got["not waiting"]; !ok || w != nil {
		t.Errorf("not waiting: %+v (reported %v), want no wait", w, ok)
	}
}
