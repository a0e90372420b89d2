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
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
)

// checkResult is the outcome of one active health check.
type checkResult int

const (
	checkPassed checkResult = iota
	// checkFailed: no answer (connect error, timeout); counts toward
	// unhealthy_threshold.
	checkFailed
	// checkRejected: an answer other than 200. Envoy marks an HTTP-checked
	// host unhealthy at once for it, whatever unhealthy_threshold says.
	checkRejected
)

// hostState is one host's health as Envoy keeps it for an actively checked
// cluster: a new host is unhealthy until its first check, and one passed
// check is enough then; afterwards healthy_threshold consecutive passes
// admit it and unhealthy_threshold consecutive failures eject it.
type hostState struct {
	healthy   bool
	checked   bool // a check has completed since the host was added
	successes int  // consecutive
	failures  int  // consecutive
}

// record applies one check result. It reports whether the verdict changed,
// counting a new host's first verdict as a change.
func (s *hostState) record(r checkResult, hc *healthConfig) bool {
	first, was := !s.checked, s.healthy
	s.checked = true
	switch r {
	case checkPassed:
		s.failures = 0
		s.successes++
		if first || s.successes >= hc.HealthyThreshold {
			s.healthy = true
		}
	case checkRejected:
		s.successes = 0
		s.failures++
		s.healthy = false
	default:
		s.successes = 0
		s.failures++
		if s.failures >= hc.UnhealthyThreshold {
			s.healthy = false
		}
	}
	return first || was != s.healthy
}

// inPanic is Envoy's panic mode: when fewer than threshold percent of the
// hosts are healthy, traffic goes to all hosts, healthy or not. A threshold
// of 0 turns it off.
func inPanic(healthy, total int, threshold float64) bool {
	return total > 0 && 100*float64(healthy) < threshold*float64(total)
}

// checker runs one health check against addr (host:port); ctx bounds it.
type checker func(ctx context.Context, addr string) (checkResult, error)

// dialFunc opens a TCP connection to addr (host:port).
type dialFunc func(ctx context.Context, addr string) (net.Conn, error)

// httpCheck is Envoy's HTTP/1.1 health check: on a new connection (over
// TLS when hc.TLS, verifying nothing), GET hc.Path with Host hc.Host and
// Envoy's User-Agent. 200 passes, another status is rejected, no answer
// within the context's deadline fails.
func httpCheck(hc *healthConfig, dial dialFunc) checker {
	return func(ctx context.Context, addr string) (checkResult, error) {
		r, err := httpGet(ctx, hc, dial, addr)
		if err != nil && ctx.Err() != nil {
			err = fmt.Errorf("no answer within %s", hc.Timeout)
		}
		return r, err
	}
}

func httpGet(ctx context.Context, hc *healthConfig, dial dialFunc, addr string) (checkResult, error) {
	raw, err := dial(ctx, addr)
	if err != nil {
		return checkFailed, err
	}
	defer raw.Close()
	// the context's end cuts the exchange short wherever it is
	stop := context.AfterFunc(ctx, func() { _ = raw.Close() })
	defer stop()
	conn := raw
	if hc.TLS {
		conn = tls.Client(conn, &tls.Config{InsecureSkipVerify: true}) // see healthTLS
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+hc.Path, nil)
	if err != nil {
		return checkFailed, err
	}
	req.Host = hc.Host
	req.Header.Set("User-Agent", "Envoy/HC")
	req.Close = true
	if err := req.Write(conn); err != nil {
		return checkFailed, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return checkFailed, err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return checkRejected, fmt.Errorf("GET %s: %s", hc.Path, resp.Status)
	}
	return checkPassed, nil
}
