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
	"io"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/log"
)

const clearLine = "\r\x1b[2K"

func TestSpinnerLeavesTheLoggerAlone(t *testing.T) {
	t.Parallel()
	term := &terminal{}
	logger := &termLogger{w: term}
	r := New(logger, WithSpinner(term))
	if r.Logger() == log.Logger(logger) {
		t.Error("with a spinner, the workflow logs through the logger it was given")
	}
	step := Scope{Phase: "kubelets", Node: "kind-worker", Step: "draining"}
	_ = r.Run(step, func() (bool, string, error) {
		r.Logger().V(0).Info("a log line")
		r.Logger().V(1).Info("a debug line")
		r.Logger().Warn("a warning")
		return false, "", nil
	})
	r.Close()
	got := term.String()
	if logger.setWriters != 0 || logger.w != io.Writer(term) {
		t.Errorf("the spinner changed the logger's writer (%d SetWriter calls)", logger.setWriters)
	}
	// the spinner line is cleared before each log line and drawn again
	// after it
	for _, line := range []string{"a log line\n", "a warning\n"} {
		i := strings.Index(got, clearLine+line)
		if i < 0 {
			t.Fatalf("%q was not logged on a cleared line:\n%q", line, got)
		}
		if !strings.HasPrefix(got[i+len(clearLine+line):], clearLine+" ") {
			t.Errorf("the spinner was not drawn again after %q:\n%q", line, got)
		}
	}
	if strings.Contains(got, "a debug line") {
		t.Errorf("a V(1) line reached a V(0) logger:\n%q", got)
	}
	// what the terminal shows last: the step's status line, its mark
	// coloured as kind colours it, and the cursor at the start of the next
	// line
	lines := strings.Split(got, "\n")
	shown := lines[len(lines)-2]
	shown = shown[strings.LastIndex(shown, clearLine)+len(clearLine):]
	if lines[len(lines)-1] != "" || !strings.HasPrefix(shown, " \x1b[32m✓\x1b[0m kubelets: kind-worker: draining (") {
		t.Errorf("the terminal ends with %q, then %q; want the step's status line, then nothing", shown, lines[len(lines)-1])
	}
	time.Sleep(250 * time.Millisecond)
	if after := term.String(); after != got {
		t.Errorf("the spinner wrote after Close: %q", after[len(got):])
	}
}

func TestCloseClearsARunningStep(t *testing.T) {
	t.Parallel()
	term := &terminal{}
	r := New(&termLogger{w: term}, WithSpinner(term))
	var atClose string
	_ = r.Run(Scope{Phase: "control-plane", Node: "kind-control-plane", Step: "kubeadm upgrade apply"}, func() (bool, string, error) {
		// an interrupted run closes the reporter while a step runs
		r.Close()
		atClose = term.String()
		return false, "", nil
	})
	if !strings.HasSuffix(atClose, clearLine) {
		t.Errorf("Close left the spinner line on the terminal:\n%q", atClose)
	}
}

func TestNoSpinnerNoWrapping(t *testing.T) {
	t.Parallel()
	logger := &termLogger{w: &terminal{}}
	r := New(logger)
	defer r.Close()
	if r.Logger() != log.Logger(logger) {
		t.Error("without a spinner, Logger is not the logger New was given")
	}
}

func TestSpinnerShowsHowLongTheStepRuns(t *testing.T) {
	t.Parallel()
	term := &terminal{}
	s := newSpinner(term)
	defer s.stop()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.mu.Lock()
	s.now = func() time.Time { return now }
	s.mu.Unlock()
	s.start("kubeadm upgrade apply v1.34.4")
	s.mu.Lock()
	if got := term.String(); !strings.HasSuffix(got, " kubeadm upgrade apply v1.34.4") {
		t.Errorf("a step that just started shows %q, want no time", got)
	}
	now = now.Add(83*time.Second + 400*time.Millisecond)
	s.draw()
	s.mu.Unlock()
	if got := term.String(); !strings.HasSuffix(got, " kubeadm upgrade apply v1.34.4 (1m23s)") {
		t.Errorf("after 83.4s the spinner shows %q, want the elapsed time (1m23s)", got)
	}
}
