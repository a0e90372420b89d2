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
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

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
	// what the terminal shows last: the step's status line, and the cursor
	// at the start of the next line
	lines := strings.Split(got, "\n")
	shown := lines[len(lines)-2]
	shown = shown[strings.LastIndex(shown, clearLine)+len(clearLine):]
	if lines[len(lines)-1] != "" || !strings.HasPrefix(shown, " ✓ kubelets: kind-worker: draining (") {
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
