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
	"fmt"
	"io"
	"sync"
	"time"

	"sigs.k8s.io/kind/pkg/log"
)

var frames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// spinner animates the most recently started step on a terminal, with how
// long it has been running. Lines logged through a spinnerLogger clear the
// spinner line first, and the spinner is redrawn after them.
type spinner struct {
	mu      sync.Mutex
	w       io.Writer
	active  []activeStep
	frame   int
	ticker  *time.Ticker
	stopped chan struct{}
	now     func() time.Time
}

// activeStep is a step the spinner shows, and when it started.
type activeStep struct {
	text  string
	since time.Time
}

func newSpinner(w io.Writer) *spinner {
	s := &spinner{w: w, ticker: time.NewTicker(100 * time.Millisecond), stopped: make(chan struct{}), now: time.Now}
	go s.loop()
	return s
}

func (s *spinner) loop() {
	for {
		select {
		case <-s.stopped:
			return
		case <-s.ticker.C:
			s.mu.Lock()
			s.frame = (s.frame + 1) % len(frames)
			s.draw()
			s.mu.Unlock()
		}
	}
}

// draw writes the spinner line; s.mu must be held.
func (s *spinner) draw() {
	if len(s.active) == 0 {
		return
	}
	step := s.active[len(s.active)-1]
	line := step.text
	if elapsed := s.now().Sub(step.since); elapsed >= time.Second {
		line += fmt.Sprintf(" (%s)", elapsed.Truncate(time.Second))
	}
	fmt.Fprintf(s.w, "\r\x1b[2K %s %s", frames[s.frame], line)
}

func (s *spinner) clear() {
	if len(s.active) > 0 {
		fmt.Fprint(s.w, "\r\x1b[2K")
	}
}

// around runs logLine, which writes a line to the terminal, with the
// spinner line cleared.
func (s *spinner) around(logLine func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clear()
	logLine()
	s.draw()
}

func (s *spinner) start(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active = append(s.active, activeStep{text: text, since: s.now()})
	s.draw()
}

func (s *spinner) done(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clear()
	for i, a := range s.active {
		if a.text == text {
			s.active = append(s.active[:i], s.active[i+1:]...)
			break
		}
	}
}

func (s *spinner) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clear()
	s.active = nil
	s.ticker.Stop()
	close(s.stopped)
}

// spinnerLogger logs through Logger with the spinner line cleared.
type spinnerLogger struct {
	log.Logger
	spinner *spinner
}

func (l spinnerLogger) Warn(message string) {
	l.spinner.around(func() { l.Logger.Warn(message) })
}

func (l spinnerLogger) Warnf(format string, args ...interface{}) {
	l.spinner.around(func() { l.Logger.Warnf(format, args...) })
}

func (l spinnerLogger) Error(message string) {
	l.spinner.around(func() { l.Logger.Error(message) })
}

func (l spinnerLogger) Errorf(format string, args ...interface{}) {
	l.spinner.around(func() { l.Logger.Errorf(format, args...) })
}

func (l spinnerLogger) V(level log.Level) log.InfoLogger {
	info := l.Logger.V(level)
	if !info.Enabled() {
		return info
	}
	return spinnerInfoLogger{InfoLogger: info, spinner: l.spinner}
}

// spinnerInfoLogger logs through InfoLogger with the spinner line cleared.
type spinnerInfoLogger struct {
	log.InfoLogger
	spinner *spinner
}

func (l spinnerInfoLogger) Info(message string) {
	l.spinner.around(func() { l.InfoLogger.Info(message) })
}

func (l spinnerInfoLogger) Infof(format string, args ...interface{}) {
	l.spinner.around(func() { l.InfoLogger.Infof(format, args...) })
}
