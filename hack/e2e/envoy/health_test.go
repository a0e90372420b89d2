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
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestHostStateRecord(t *testing.T) {
	t.Parallel()
	const (
		P = checkPassed
		F = checkFailed
		R = checkRejected
	)
	tests := []struct {
		name                 string
		healthy, unhealthy   int // thresholds
		results              []checkResult
		wantHealthy, changes string // one letter per result: h/u, c(hanged)/-
	}{
		{"first pass admits at once", 3, 2, []checkResult{P}, "h", "c"},
		{"first failure is a verdict too", 1, 2, []checkResult{F}, "u", "c"},
		{"after a failure, healthy_threshold passes", 2, 2, []checkResult{F, P, P, P}, "uuhh", "c-c-"},
		{"unhealthy_threshold failures eject", 1, 2, []checkResult{P, F, F, F}, "hhuu", "c-c-"},
		{"a pass resets the failures", 1, 2, []checkResult{P, F, P, F, P}, "hhhhh", "c----"},
		{"a failure resets the passes", 2, 1, []checkResult{F, P, F, P, P}, "uuuuh", "c---c"},
		{"a bad status ejects at once", 1, 3, []checkResult{P, R}, "hu", "cc"},
		{"kind's 1 and 2", 1, 2, []checkResult{F, P, F, P, F, F, P}, "uhhhhuh", "cc---cc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hc := &healthConfig{HealthyThreshold: tc.healthy, UnhealthyThreshold: tc.unhealthy}
			var s hostState
			var healthy, changes strings.Builder
			for _, r := range tc.results {
				changed := s.record(r, hc)
				healthy.WriteString(map[bool]string{true: "h", false: "u"}[s.healthy])
				changes.WriteString(map[bool]string{true: "c", false: "-"}[changed])
			}
			if healthy.String() != tc.wantHealthy || changes.String() != tc.changes {
				t.Errorf("after %v: healthy %s changes %s, want %s %s", tc.results, &healthy, &changes, tc.wantHealthy, tc.changes)
			}
		})
	}
}

func TestInPanic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		healthy, total int
		threshold      float64
		want           bool
	}{
		{0, 0, 50, false},
		{0, 1, 50, true},
		{1, 2, 50, false}, // 50% is not under 50%
		{1, 3, 50, true},
		{2, 3, 50, false},
		{0, 3, 0, false}, // turned off
		{3, 4, 80, true},
		{4, 4, 100, false},
	}
	for _, tc := range tests {
		if got := inPanic(tc.healthy, tc.total, tc.threshold); got != tc.want {
			t.Errorf("inPanic(%d, %d, %v) = %v, want %v", tc.healthy, tc.total, tc.threshold, got, tc.want)
		}
	}
}

func TestPick(t *testing.T) {
	t.Parallel()
	check := &healthConfig{HealthyThreshold: 1, UnhealthyThreshold: 1}
	tests := []struct {
		name      string
		health    *healthConfig
		healthy   []bool
		threshold float64
		want      string // hosts picked by 6 connections; "-" for none
	}{
		{"all healthy", check, []bool{true, true, true}, 50, "abcabc"},
		{"two of three", check, []bool{true, false, true}, 50, "acacac"},
		{"one of two is not panic", check, []bool{false, true}, 50, "bbbbbb"},
		{"one of three is panic", check, []bool{false, true, false}, 50, "abcabc"},
		{"none healthy is panic", check, []bool{false, false}, 50, "ababab"},
		{"none healthy without panic", check, []bool{false, false}, 0, "------"},
		{"no health checks", nil, []bool{false, false}, 50, "ababab"},
		{"no hosts", check, nil, 50, "------"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := clusterConfig{Name: "c", PanicThreshold: tc.threshold, Health: tc.health}
			for i := range tc.healthy {
				cfg.Endpoints = append(cfg.Endpoints, string(rune('a'+i)))
			}
			c := newCluster(cfg, discardLogger(), nil)
			for i, h := range tc.healthy {
				if tc.health != nil {
					c.hosts[i].state.healthy = h
				}
			}
			var got strings.Builder
			for range 6 {
				if h := c.pick(); h != nil {
					got.WriteString(h.addr)
				} else {
					got.WriteString("-")
				}
			}
			if got.String() != tc.want {
				t.Errorf("picks = %s, want %s", &got, tc.want)
			}
		})
	}
}

// scriptedChecks answers each host's checks from a script, repeating its
// last result once the script is done.
type scriptedChecks struct {
	mu     sync.Mutex
	script map[string][]checkResult
	calls  map[string]int
}

func (s *scriptedChecks) check(_ context.Context, addr string) (checkResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.script[addr]
	r := rs[min(s.calls[addr], len(rs)-1)]
	s.calls[addr]++
	if r != checkPassed {
		return r, errors.New("scripted failure")
	}
	return r, nil
}

// TestWatch runs the health-check loops with a 1 ms interval over scripted
// results and reads the transitions they log.
func TestWatch(t *testing.T) {
	t.Parallel()
	logs := &logBuffer{}
	cfg := clusterConfig{
		Name: "apis", PanicThreshold: 50, Endpoints: []string{"a:1", "b:1"},
		Health: &healthConfig{
			Timeout: time.Second, Interval: time.Millisecond, NoTrafficInterval: time.Millisecond,
			HealthyThreshold: 2, UnhealthyThreshold: 2,
		},
	}
	c := newCluster(cfg, logs.logger(), nil)
	fake := &scriptedChecks{calls: map[string]int{}, script: map[string][]checkResult{
		"a:1": {checkPassed},
		"b:1": {checkFailed, checkPassed, checkPassed, checkFailed, checkFailed},
	}}
	c.check = fake.check
	if !c.panicking {
		t.Error("a checked cluster does not start in panic mode")
	}
	c.start(t.Context())
	logs.waitFor(t, func(s string) bool { return strings.Count(s, "host b:1 is unhealthy") == 2 })
	c.stop()

	var bLines []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if _, msg, ok := strings.Cut(line, "cluster apis: "); ok && strings.Contains(msg, "b:1") {
			bLines = append(bLines, msg)
		}
	}
	want := []string{
		"host b:1 is unhealthy: scripted failure",
		"host b:1 is healthy",
		"host b:1 is unhealthy: scripted failure",
	}
	if !reflect.DeepEqual(bLines, want) {
		t.Errorf("b's transitions = %q, want %q", bLines, want)
	}
	if !strings.Contains(logs.String(), "cluster apis: 1 of 2 hosts healthy: balancing across the healthy ones") {
		t.Errorf("leaving panic mode is not logged:\n%s", logs)
	}
	if !c.hosts[0].healthy() || c.hosts[1].healthy() {
		t.Errorf("a healthy %v, b healthy %v; want a only", c.hosts[0].healthy(), c.hosts[1].healthy())
	}
}

func TestInterval(t *testing.T) {
	t.Parallel()
	c := newCluster(clusterConfig{Health: &healthConfig{Interval: 2 * time.Second, NoTrafficInterval: 3 * time.Second}}, discardLogger(), nil)
	if got := c.interval(); got != 3*time.Second {
		t.Errorf("interval() before traffic = %s, want no_traffic_interval", got)
	}
	c.sawTraffic.Store(true)
	if got := c.interval(); got != 2*time.Second {
		t.Errorf("interval() after traffic = %s, want interval", got)
	}
}

// TestHTTPCheck runs the check against real HTTP(S) servers on loopback.
func TestHTTPCheck(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen *http.Request
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r
		mu.Unlock()
		switch r.URL.Path {
		case "/healthz":
		case "/slow":
			time.Sleep(300 * time.Millisecond)
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	secure := httptest.NewTLSServer(handler)
	defer secure.Close()
	plain := httptest.NewServer(handler)
	defer plain.Close()
	closed := httptest.NewServer(handler)
	closedAddr := closed.Listener.Addr().String()
	closed.Close()

	var d net.Dialer
	tests := []struct {
		name    string
		addr    string
		path    string
		tls     bool
		want    checkResult
		wantErr string
	}{
		{"HTTPS 200 without a trusted certificate", secure.Listener.Addr().String(), "/healthz", true, checkPassed, ""},
		{"HTTP 200", plain.Listener.Addr().String(), "/healthz", false, checkPassed, ""},
		{"503 is rejected", secure.Listener.Addr().String(), "/down", true, checkRejected, "503 Service Unavailable"},
		{"slow answer fails", secure.Listener.Addr().String(), "/slow", true, checkFailed, "no answer within 100ms"},
		{"nobody listening fails", closedAddr, "/healthz", false, checkFailed, "refused"},
		{"HTTP to an HTTPS port fails", secure.Listener.Addr().String(), "/healthz", false, checkRejected, "400 Bad Request"},
	}
	for _, tc := range tests { // in turn: the servers close when the loop is done
		t.Run(tc.name, func(t *testing.T) {
			hc := &healthConfig{Timeout: 100 * time.Millisecond, Path: tc.path, Host: "apis", TLS: tc.tls}
			ctx, cancel := context.WithTimeout(t.Context(), hc.Timeout)
			defer cancel()
			got, err := httpCheck(hc, func(ctx context.Context, addr string) (net.Conn, error) {
				return d.DialContext(ctx, "tcp", addr)
			})(ctx, tc.addr)
			if got != tc.want || (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("check = %v, %v; want %v, %q", got, err, tc.want, tc.wantErr)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if seen == nil || seen.Host != "apis" || seen.UserAgent() != "Envoy/HC" || seen.Method != http.MethodGet {
		t.Errorf("the last check sent %+v, want GET with Host apis and User-Agent Envoy/HC", seen)
	}
}

func TestPickAddr(t *testing.T) {
	t.Parallel()
	both := []string{"10.0.0.1", "fd00::1", "10.0.0.2"}
	tests := []struct {
		ips    []string
		family string
		want   string
	}{
		{both, "V4_PREFERRED", "10.0.0.1"},
		{both, "AUTO", "fd00::1"},
		{both, "V4_ONLY", "10.0.0.1"},
		{both, "V6_ONLY", "fd00::1"},
		{both, "ALL", "10.0.0.1"},
		{[]string{"fd00::1"}, "V4_PREFERRED", "fd00::1"},
		{[]string{"10.0.0.1"}, "AUTO", "10.0.0.1"},
		{[]string{"::ffff:10.0.0.1"}, "V4_ONLY", "10.0.0.1"},
		{[]string{"fd00::1"}, "V4_ONLY", ""},
		{nil, "AUTO", ""},
	}
	for _, tc := range tests {
		got, ok := pickAddr(parseAddrs(tc.ips), tc.family)
		if (tc.want == "") == ok || (ok && got.String() != tc.want) {
			t.Errorf("pickAddr(%v, %s) = %v, %v; want %q", tc.ips, tc.family, got, ok, tc.want)
		}
	}
}

func parseAddrs(ss []string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func TestResolve(t *testing.T) {
	t.Parallel()
	if ip, err := resolve(t.Context(), "localhost", "V4_ONLY"); err != nil || ip.String() != "127.0.0.1" {
		t.Errorf("resolve(localhost, V4_ONLY) = %v, %v; want 127.0.0.1", ip, err)
	}
	if ip, err := resolve(t.Context(), "fd00::7", "V4_ONLY"); err != nil || ip.String() != "fd00::7" {
		t.Errorf("resolve(fd00::7) = %v, %v; want the literal", ip, err)
	}
	if _, err := resolve(t.Context(), "no-such-host.invalid", "AUTO"); err == nil {
		t.Error("resolve(no-such-host.invalid) did not fail")
	}
}
