// Copyright 2026 The kind-upgrade Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package main

import (
	"bytes"
	"context"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// logBuffer collects log lines written from several goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *log.Logger {
	return log.New(l, "", 0)
}

// waitFor polls the log until ok accepts it, for at most 5 seconds.
func (l *logBuffer) waitFor(t *testing.T, ok func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok(l.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting in the log:\n%s", l)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitForLine waits for a log line containing s.
func (l *logBuffer) waitForLine(t *testing.T, s string) {
	t.Helper()
	l.waitFor(t, func(log string) bool { return strings.Contains(log, s) })
}

func discardLogger() *log.Logger {
	return log.New(io.Discard, "", 0)
}

// writeFile replaces path the way kind does: write a .tmp file, rename it.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path+".tmp", []byte(content), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

// TestRunRefuses covers what ends the program before it serves.
func TestRunRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lds, cds := filepath.Join(dir, "lds.yaml"), filepath.Join(dir, "cds.yaml")
	writeFile(t, lds, "resources: []")
	files := map[string]string{
		"good.yaml":          bootstrapYAML(lds, cds), // cds.yaml does not exist
		"broken.yaml":        "node: {id: [",
		"grpc.yaml":          "dynamic_resources: {lds_config: {ads: {}}}",
		"listenersonly.yaml": "dynamic_resources: {lds_config: {path_config_source: {path: " + lds + "}}}",
	}
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no -c", nil, "usage: envoy -c FILE"},
		{"no such file", []string{"-c", filepath.Join(dir, "none.yaml")}, "failed to read"},
		{"not YAML", []string{"-c", filepath.Join(dir, "broken.yaml")}, "failed to parse"},
		{"unknown field", []string{"--config-path", filepath.Join(dir, "grpc.yaml")}, "unknown field"},
		{"missing discovery file", []string{"-c", filepath.Join(dir, "good.yaml")}, "cds.yaml"},
		{"unknown flag", []string{"--base-id", "1"}, "flag provided but not defined"},
		{"extra argument", []string{"-c", filepath.Join(dir, "good.yaml"), "x"}, "unexpected arguments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), tc.args, &stdout, &stderr, time.Millisecond)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("run(%q) = %v, want an error with %q", tc.args, err, tc.wantErr)
			}
		})
	}

	// a signal (here: the context's end) is no success either
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	var stderr bytes.Buffer
	err := run(ctx, []string{"-c", filepath.Join(dir, "listenersonly.yaml")}, io.Discard, &stderr, time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("run() after the context's end = %v, want a stop error", err)
	}
	if !strings.Contains(stderr.String(), "LDS "+lds+": listeners []") {
		t.Errorf("the empty LDS file was not read:\n%s", &stderr)
	}
}

func TestRunVersion(t *testing.T) {
	t.Parallel()
	var stdout bytes.Buffer
	if err := run(t.Context(), []string{"--version"}, &stdout, io.Discard, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), kindImage) {
		t.Errorf("--version printed %q, want the image it stands in for", &stdout)
	}
}

// TestWatchedFile covers the ways a discovery file changes.
func TestWatchedFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cds.yaml")
	writeFile(t, path, "resources: []")
	logs := &logBuffer{}
	f := &watchedFile{kind: "CDS", path: path}
	poll := func(want string, wantChanged bool) {
		t.Helper()
		data, changed := f.poll(logs.logger())
		if changed != wantChanged || string(data) != want {
			t.Fatalf("poll() = %q, %v; want %q, %v", data, changed, want, wantChanged)
		}
	}
	poll("resources: []", true)
	poll("", false)
	writeFile(t, path, "resources: [] ") // renamed over: a new inode
	poll("resources: [] ", true)
	if err := os.WriteFile(path, []byte("resources: []\n\n"), 0o666); err != nil { // in place
		t.Fatal(err)
	}
	poll("resources: []\n\n", true)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	poll("", false)
	poll("", false)
	if n := strings.Count(logs.String(), "no such file"); n != 1 {
		t.Errorf("a missing file was logged %d times, want once:\n%s", n, logs)
	}
	writeFile(t, path, "resources: []")
	poll("resources: []", true)
	if !strings.Contains(logs.String(), "readable again") {
		t.Errorf("the file's return was not logged:\n%s", logs)
	}
	if data, changed := (&watchedFile{kind: "LDS"}).poll(logs.logger()); changed || data != nil {
		t.Errorf("a source without a path polled %q, %v", data, changed)
	}
}
