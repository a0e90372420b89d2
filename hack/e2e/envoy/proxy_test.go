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
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// apiServer is an HTTPS backend that answers / with its name, like a
// control plane behind kind's load balancer; /healthz answers status.
func apiServer(t *testing.T, name string, status int) string {
	t.Helper()
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			w.WriteHeader(status)
			return
		}
		fmt.Fprint(w, name)
	}))
	s.Config.ErrorLog = discardLogger() // checks cut short by an update
	s.StartTLS()
	t.Cleanup(s.Close)
	return s.Listener.Addr().String()
}

// freeAddr is a loopback address nobody listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// answers sends n requests through the load balancer, each on a new
// connection, and returns who answered ("-" for a failed request).
func answers(lb string, n int) string {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
	}}
	var out []string
	for range n {
		resp, err := client.Get("https://" + lb + "/")
		if err != nil {
			out = append(out, "-")
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		out = append(out, string(body))
	}
	return strings.Join(out, " ")
}

// TestFollowFiles runs the program on loopback the way kind drives it:
// empty discovery files first, then a listener and a cluster of two API
// servers of which one fails its health check, a cluster update, a broken
// update and the listener's removal.
func TestFollowFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	boot, lds, cds := filepath.Join(dir, "envoy.yaml"), filepath.Join(dir, "lds.yaml"), filepath.Join(dir, "cds.yaml")
	writeFile(t, boot, bootstrapYAML(lds, cds))
	writeFile(t, lds, "resources: []")
	writeFile(t, cds, "")

	logs := &logBuffer{}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-c", boot}, io.Discard, logs, 10*time.Millisecond) }()
	logs.waitForLine(t, "listeners []")
	logs.waitForLine(t, "clusters []")

	a, b, c := apiServer(t, "a", http.StatusOK), apiServer(t, "b", http.StatusInternalServerError), apiServer(t, "c", http.StatusOK)
	lb := freeAddr(t)
	writeFile(t, cds, cdsYAML("apis", "0.02s", "", a, b))
	writeFile(t, lds, ldsYAML("api", lb, "apis"))
	logs.waitForLine(t, "host "+a+" is healthy")
	logs.waitForLine(t, "host "+b+" is unhealthy: GET /healthz: 500 Internal Server Error")
	logs.waitForLine(t, "listener api on "+lb+": TCP proxy to cluster apis")
	if got := answers(lb, 6); got != "a a a a a a" {
		t.Errorf("with b unhealthy, answers = %q, want a only", got)
	}

	writeFile(t, cds, cdsYAML("apis", "0.02s", "", c))
	logs.waitForLine(t, "host "+c+" is healthy")
	if got := answers(lb, 4); got != "c c c c" {
		t.Errorf("after the update, answers = %q, want c only", got)
	}

	writeFile(t, cds, "resources:\n  - {name: [")
	logs.waitForLine(t, "keeping the last good clusters")
	if got := answers(lb, 4); got != "c c c c" {
		t.Errorf("after a broken update, answers = %q, want c still", got)
	}

	writeFile(t, lds, "resources: []")
	logs.waitForLine(t, "listener api on "+lb+": removed")
	if conn, err := net.Dial("tcp", lb); err == nil {
		_ = conn.Close()
		t.Errorf("the removed listener still accepts connections")
	}

	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("run() = %v, want a stop error", err)
	}
	if t.Failed() {
		t.Logf("log:\n%s", logs)
	}
}

// echoOnEOF answers each connection, once the client has finished
// writing, with the number of bytes it sent.
func echoOnEOF(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				n, _ := io.Copy(io.Discard, conn)
				fmt.Fprintf(conn, "got %d bytes", n)
			}()
		}
	}()
	return l.Addr().String()
}

// startProxy applies one listener on a free loopback port and clusters;
// it returns the listener's address.
func startProxy(t *testing.T, cluster string, clusters ...clusterConfig) string {
	t.Helper()
	p := newProxy(t.Context(), discardLogger())
	t.Cleanup(p.close)
	p.apply([]listenerConfig{{Name: "l", Address: "127.0.0.1:0", Cluster: cluster}}, clusters)
	return p.listeners["l"].ln.Addr().String()
}

// TestProxyHalfClose: a client that shuts down its writes still gets the
// answer the backend sends after that.
func TestProxyHalfClose(t *testing.T) {
	t.Parallel()
	lb := startProxy(t, "echo", clusterConfig{
		Name: "echo", ConnectTimeout: time.Second, Discovery: "STATIC", Endpoints: []string{echoOnEOF(t)},
	})
	conn, err := net.Dial("tcp", lb)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	_ = conn.(*net.TCPConn).CloseWrite()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	got, err := io.ReadAll(conn)
	if err != nil || string(got) != "got 5 bytes" {
		t.Errorf("answer = %q, %v; want \"got 5 bytes\"", got, err)
	}
}

// TestProxyCloses: with nowhere to send a connection, it is closed.
func TestProxyCloses(t *testing.T) {
	t.Parallel()
	down := clusterConfig{Name: "down", ConnectTimeout: time.Second, Discovery: "STATIC", Endpoints: []string{freeAddr(t)}}
	tests := []struct {
		name     string
		cluster  string
		clusters []clusterConfig
	}{
		{"no such cluster", "none", nil},
		{"endpoint refuses", "down", []clusterConfig{down}},
		{"no endpoints", "empty", []clusterConfig{{Name: "empty", ConnectTimeout: time.Second, Discovery: "STATIC"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", startProxy(t, tc.cluster, tc.clusters...))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
			if n, err := conn.Read(make([]byte, 1)); err != io.EOF {
				t.Errorf("read = %d, %v; want the connection closed", n, err)
			}
		})
	}
}
