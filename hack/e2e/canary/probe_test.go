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
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestProbe(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "canary-abc") })
	mux.HandleFunc("/broken", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusServiceUnavailable) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close) // after the parallel subtests
	closed := httptest.NewServer(mux)
	closed.Close()

	for _, tc := range []struct {
		name, url, result, detail string
	}{
		{"answer", srv.URL + "/", "ok", "canary-abc"},
		{"not 2xx", srv.URL + "/broken", "error", "503 Service Unavailable"},
		{"nobody listens", closed.URL + "/", "error", "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
			before := time.Now()
			probe(ctx, client, tc.url, 10*time.Millisecond, &out)
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			// one request at once, then one per tick: about 10 in 100ms
			if len(lines) < 3 {
				t.Fatalf("want a line per request, about 10, got %d:\n%s", len(lines), out.String())
			}
			for _, line := range lines {
				fields := strings.SplitN(line, " ", 4)
				if len(fields) != 4 {
					t.Fatalf("want 4 fields, got %q", line)
				}
				sent, err := time.Parse(time.RFC3339Nano, fields[0])
				if err != nil || sent.Before(before.Add(-time.Second)) || sent.After(time.Now()) {
					t.Errorf("bad time in %q: %v", line, err)
				}
				if fields[1] != tc.result {
					t.Errorf("want %s, got %q", tc.result, line)
				}
				if _, err := time.ParseDuration(fields[2]); err != nil {
					t.Errorf("bad latency in %q: %v", line, err)
				}
				if !strings.Contains(fields[3], tc.detail) || strings.Contains(fields[3], "\n") {
					t.Errorf("want %q in the detail, got %q", tc.detail, line)
				}
			}
		})
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", "-"},
		{"a\n", "a"},
		{"\ta\t\tb\nc\r\n", "a b c"},
	} {
		if got := oneLine(tc.in); got != tc.want {
			t.Errorf("oneLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
