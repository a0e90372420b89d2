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
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// probeTimeout bounds one probe request: a request sent to a backend that
// is gone (a Service rule still pointing at a deleted pod) would otherwise
// hang for the kernel's connect timeout.
const probeTimeout = 2 * time.Second

// runProbe is `canary probe URL INTERVAL`: it probes URL every INTERVAL
// until SIGTERM or SIGINT, writing the lines probe describes on stdout
// after a first line, starting with "#", that says what it probes.
func runProbe(url, every string) error {
	interval, err := time.ParseDuration(every)
	if err != nil || interval <= 0 {
		return fmt.Errorf("invalid INTERVAL %q: want a positive duration such as 250ms", every)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	host, _ := os.Hostname()
	fmt.Printf("# canary %s probes %s every %s, timeout %s\n", host, url, interval, probeTimeout)
	// a new connection per request: each one goes through the Service's
	// load balancing again instead of sticking to one pod
	client := &http.Client{Timeout: probeTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
	probe(ctx, client, url, interval, os.Stdout)
	return nil
}

// probe sends GET url every interval until ctx ends, then waits for the
// requests in flight. Each request runs on its own, so a slow one does not
// delay the next. It writes one line per request, when the request ends:
//
//	<sent at, RFC 3339 UTC with nanoseconds> ok <latency> <first line of the body>
//	<sent at> error <latency> <what went wrong>
func probe(ctx context.Context, client *http.Client, url string, interval time.Duration, out io.Writer) {
	var (
		mu sync.Mutex // one line at a time
		wg sync.WaitGroup
	)
	send := func() {
		defer wg.Done()
		start := time.Now()
		detail, err := probeOnce(client, url)
		result := "ok"
		if err != nil {
			result, detail = "error", err.Error()
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, "%s %s %s %s\n", start.UTC().Format(time.RFC3339Nano), result, time.Since(start).Round(time.Microsecond), oneLine(detail))
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		wg.Add(1)
		go send()
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-ticker.C:
		}
	}
}

// probeOnce sends one GET and returns the first line of the body; an
// answer other than 2xx is an error.
func probeOnce(client *http.Client, url string) (string, error) {
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(io.LimitReader(resp.Body, 256)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("reading the answer: %v", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return line, nil
}

// oneLine makes s fit on one line of the probe's output, never empty.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "-"
	}
	return s
}
