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

package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
)

// runner is what kindtest.Cluster reports to when the benchmark, a program
// rather than a test, drives it: logs go to stderr with the time, an error
// marks the run failed, FailNow stops the benchmark's goroutine, and the
// cleanups run at the end, last first (as testing.T does them).
type runner struct {
	mu       sync.Mutex
	failed   bool
	cleanups []func()
	out      *os.File
}

func newRunner() *runner { return &runner{out: os.Stderr} }

func (r *runner) Helper() {}

func (r *runner) Log(args ...any) { r.print(fmt.Sprint(args...)) }

func (r *runner) Logf(format string, args ...any) { r.print(fmt.Sprintf(format, args...)) }

func (r *runner) Errorf(format string, args ...any) {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	r.print("ERROR: " + fmt.Sprintf(format, args...))
}

func (r *runner) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.FailNow()
}

// FailNow ends the goroutine run started; only that goroutine may call it.
func (r *runner) FailNow() {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *runner) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (r *runner) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

func (r *runner) print(s string) {
	fmt.Fprintf(r.out, "[%s] %s\n", time.Now().Format("15:04:05"), strings.TrimSuffix(s, "\n"))
}

// run runs fn in a goroutine of its own (so that FailNow can end it), then
// the cleanups, and reports whether nothing failed.
func (r *runner) run(fn func()) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	<-done
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	return !r.Failed()
}

// firstLine is the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
