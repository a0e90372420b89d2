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
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"
)

// TestSync follows one node through an API server outage: the first sync
// sets everything up, failed lists change nothing, recovery changes nothing.
func TestSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := newFakeNode()
	lister := &fakeLister{}
	d := newTestDaemon(t, lister, fake, "172.18.0.2", "10.244.0.0/16")

	// the API server is not there yet: masquerade is set up all the same
	lister.set(nil, errors.New("connection refused"))
	if err := d.sync(ctx); err == nil || !strings.Contains(err.Error(), "failed to list nodes") {
		t.Errorf("sync() with the API server away = %v, want a list error", err)
	}
	if calls := strings.Join(fake.takeCalls(), "\n"); strings.Contains(calls, "ip ") || !strings.Contains(calls, "-A POSTROUTING") {
		t.Errorf("sync() with the API server away ran\n%s\nwant masquerade set up and no route commands", calls)
	}
	if _, err := os.Stat(d.cniPath); !os.IsNotExist(err) {
		t.Errorf("CNI config written without a node list: %v", err)
	}

	lister.set(kindNodes(), nil)
	if err := d.sync(ctx); err != nil {
		t.Fatalf("sync() error = %v", err)
	}
	conf, err := os.ReadFile(d.cniPath)
	if err != nil || !strings.Contains(string(conf), `"subnet": "10.244.1.0/24"`) {
		t.Fatalf("CNI config = %s, %v; want the worker's podCIDR", conf, err)
	}
	if got := fake.routes[netip.MustParsePrefix("10.244.0.0/24")]; got != netip.MustParseAddr("172.18.0.3") {
		t.Errorf("route to the control plane's pods via %v, want 172.18.0.3", got)
	}
	fake.takeCalls()
	stamp := time.Now().Add(-time.Hour)
	if err := os.Chtimes(d.cniPath, stamp, stamp); err != nil {
		t.Fatal(err)
	}

	// an upgrade restarts the API server: nothing is removed or rewritten
	steps := []struct {
		nodes   []node
		listErr error
	}{
		{listErr: errors.New("503 Service Unavailable")},
		{nodes: kindNodes()},
	}
	for _, s := range steps {
		lister.set(s.nodes, s.listErr)
		if err := d.sync(ctx); (err != nil) != (s.listErr != nil) {
			t.Errorf("sync() error = %v, want an error: %v", err, s.listErr != nil)
		}
		for _, c := range fake.takeCalls() {
			if !strings.Contains(c, " -S ") && !strings.Contains(c, " -C ") && !strings.Contains(c, " show") {
				t.Errorf("sync() with list error %v changed the node: %s", s.listErr, c)
			}
		}
	}
	if fi, err := os.Stat(d.cniPath); err != nil || !fi.ModTime().Equal(stamp) {
		t.Errorf("CNI config rewritten although unchanged")
	}
	if len(fake.routes) != 1 {
		t.Errorf("routes after the outage = %v, want the route to the control plane kept", fake.routes)
	}
}

func TestSyncWaitsForNode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		hostIP  string
		wantErr bool
	}{
		{name: "node not registered", hostIP: "172.18.0.9", wantErr: true},
		{name: "node without podCIDR", hostIP: "172.18.0.4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newTestDaemon(t, &fakeLister{nodes: kindNodes()}, newFakeNode(), tc.hostIP, "10.244.0.0/16")
			if err := d.sync(context.Background()); (err != nil) != tc.wantErr {
				t.Errorf("sync() error = %v, wantErr %v", err, tc.wantErr)
			}
			if _, err := os.Stat(d.cniPath); !os.IsNotExist(err) {
				t.Errorf("CNI config written without a podCIDR of this node: %v", err)
			}
		})
	}
}

func TestLoopStopsOnCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	fake := newFakeNode()
	d := newTestDaemon(t, &fakeLister{nodes: kindNodes()}, fake, "172.18.0.2", "10.244.0.0/16")
	done := make(chan struct{})
	go func() {
		d.loop(ctx)
		close(done)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(d.cniPath); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("loop() did not sync right at start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("loop() did not return after its context was cancelled")
	}
	if len(fake.routes) != 1 {
		t.Errorf("routes after stop = %v, want them left in place", fake.routes)
	}
}

func TestSyncDualStack(t *testing.T) {
	t.Parallel()
	nodes := []node{
		{Name: "cp", InternalIPs: addrs("172.18.0.3", "fc00::3"), PodCIDRs: prefixes("10.244.0.0/24", "fd00:10:244::/64")},
		{Name: "w", InternalIPs: addrs("172.18.0.2", "fc00::2"), PodCIDRs: prefixes("10.244.1.0/24", "fd00:10:244:1::/64")},
	}
	fake := newFakeNode()
	d := newTestDaemon(t, &fakeLister{nodes: nodes}, fake, "172.18.0.2", "10.244.0.0/16", "fd00:10:244::/56")
	if err := d.sync(context.Background()); err != nil {
		t.Fatalf("sync() error = %v", err)
	}
	calls := strings.Join(fake.takeCalls(), "\n")
	for _, want := range []string{
		"ip -6 route show",
		"ip route replace 10.244.0.0/24 via 172.18.0.3",
		"ip route replace fd00:10:244::/64 via fc00::3",
		"iptables -w -t nat -A KINDNET-MASQ -d 10.244.0.0/16 -j RETURN",
	} {
		if !strings.Contains(calls, want) {
			t.Errorf("sync() ran\n%s\nwant %q among them", calls, want)
		}
	}
	if strings.Contains(calls, "fd00:10:244::/56 -j") {
		t.Errorf("sync() gave iptables an IPv6 subnet:\n%s", calls)
	}
	conf, err := os.ReadFile(d.cniPath)
	if err != nil || !strings.Contains(string(conf), `"subnet": "fd00:10:244:1::/64"`) || !strings.Contains(string(conf), `"dst": "::/0"`) {
		t.Errorf("CNI config = %s, %v; want the IPv6 range and default route", conf, err)
	}
}
