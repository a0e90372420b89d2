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
	"reflect"
	"slices"
	"strings"
	"testing"
)

func r(dst, via string) route {
	return route{dst: netip.MustParsePrefix(dst), via: netip.MustParseAddr(via)}
}

func TestDesiredRoutes(t *testing.T) {
	t.Parallel()
	dualStack := []node{
		{Name: "cp", InternalIPs: addrs("172.18.0.3", "fc00::3"), PodCIDRs: prefixes("10.244.0.0/24", "fd00:10:244::/64")},
		{Name: "w1", InternalIPs: addrs("172.18.0.2", "fc00::2"), PodCIDRs: prefixes("10.244.1.0/24", "fd00:10:244:1::/64")},
		// an IPv6 podCIDR but only an IPv4 InternalIP: no route via another family
		{Name: "w2", InternalIPs: addrs("172.18.0.4"), PodCIDRs: prefixes("10.244.2.0/24", "fd00:10:244:2::/64")},
		{Name: "no-ip", PodCIDRs: prefixes("10.244.3.0/24")},
	}
	tests := []struct {
		name   string
		nodes  []node
		hostIP string
		want   []route
	}{
		{
			name: "control plane, worker without podCIDR", nodes: kindNodes(), hostIP: "172.18.0.3",
			want: []route{r("10.244.1.0/24", "172.18.0.2")},
		},
		{
			name: "worker", nodes: kindNodes(), hostIP: "172.18.0.2",
			want: []route{r("10.244.0.0/24", "172.18.0.3")},
		},
		{
			name: "self unknown routes to every node", nodes: kindNodes(), hostIP: "172.18.0.9",
			want: []route{r("10.244.0.0/24", "172.18.0.3"), r("10.244.1.0/24", "172.18.0.2")},
		},
		{
			name: "dual stack, other family skipped", nodes: dualStack, hostIP: "172.18.0.3",
			want: []route{
				r("10.244.1.0/24", "172.18.0.2"), r("fd00:10:244:1::/64", "fc00::2"),
				r("10.244.2.0/24", "172.18.0.4"),
			},
		},
		{name: "no nodes", hostIP: "172.18.0.3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := desiredRoutes(tc.nodes, netip.MustParseAddr(tc.hostIP))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("desiredRoutes() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseRoutes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		out  string
		want []route
	}{
		{
			name: "IPv4 kind node",
			out: "default via 172.18.0.1 dev eth0\n" +
				"10.244.1.0/24 via 172.18.0.2 dev eth0\n" +
				"10.244.0.5 dev veth1a2b3c4d scope host\n" +
				"172.18.0.0/16 dev eth0 proto kernel scope link src 172.18.0.3\n" +
				"unreachable 10.9.0.0/16\n",
			want: []route{
				r("10.244.1.0/24", "172.18.0.2"),
				{dst: netip.MustParsePrefix("10.244.0.5/32")},
				{dst: netip.MustParsePrefix("172.18.0.0/16")},
			},
		},
		{
			name: "IPv6",
			out: "fd00:10:244:1::/64 via fc00:f853:ccd:e793::2 dev eth0 metric 1024 pref medium\n" +
				"fe80::/64 dev eth0 proto kernel metric 256 pref medium\n",
			want: []route{
				r("fd00:10:244:1::/64", "fc00:f853:ccd:e793::2"),
				{dst: netip.MustParsePrefix("fe80::/64")},
			},
		},
		{
			name: "gateway of another family",
			out:  "10.244.7.0/24 via inet6 fc00::7 dev eth0\n",
			want: []route{{dst: netip.MustParsePrefix("10.244.7.0/24")}},
		},
		{name: "empty", out: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := parseRoutes(tc.out); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("parseRoutes() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPlanRoutes(t *testing.T) {
	t.Parallel()
	inPodSubnet := func(p netip.Prefix) bool { return netip.MustParsePrefix("10.244.0.0/16").Overlaps(p) }
	tests := []struct {
		name        string
		desired     []route
		current     []route
		wantReplace []route
		wantRemove  []route
	}{
		{
			name:        "add missing",
			desired:     []route{r("10.244.1.0/24", "172.18.0.2")},
			current:     []route{{dst: netip.MustParsePrefix("172.18.0.0/16")}},
			wantReplace: []route{r("10.244.1.0/24", "172.18.0.2")},
		},
		{
			name:    "unchanged route left alone",
			desired: []route{r("10.244.1.0/24", "172.18.0.2")},
			current: []route{r("10.244.1.0/24", "172.18.0.2")},
		},
		{
			name:        "gateway changed",
			desired:     []route{r("10.244.1.0/24", "172.18.0.5")},
			current:     []route{r("10.244.1.0/24", "172.18.0.2")},
			wantReplace: []route{r("10.244.1.0/24", "172.18.0.5")},
		},
		{
			name:       "vanished node removed",
			desired:    []route{r("10.244.1.0/24", "172.18.0.2")},
			current:    []route{r("10.244.1.0/24", "172.18.0.2"), r("10.244.2.0/24", "172.18.0.4")},
			wantRemove: []route{r("10.244.2.0/24", "172.18.0.4")},
		},
		{
			name: "routes not owned or without gateway kept",
			current: []route{
				r("192.168.0.0/16", "172.18.0.1"),
				{dst: netip.MustParsePrefix("10.244.0.7/32")},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			replace, remove := planRoutes(tc.desired, tc.current, inPodSubnet)
			if !reflect.DeepEqual(replace, tc.wantReplace) || !reflect.DeepEqual(remove, tc.wantRemove) {
				t.Errorf("planRoutes() = replace %v, remove %v; want replace %v, remove %v",
					replace, remove, tc.wantReplace, tc.wantRemove)
			}
		})
	}
}

func routeCommands(calls []string) []string {
	var out []string
	for _, c := range calls {
		if strings.HasPrefix(c, "ip route ") {
			out = append(out, c)
		}
	}
	return out
}

func TestSyncRoutes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := newFakeNode()
	// a route a previous run left for a node that is gone, one that is
	// not the daemon's, and a local pod's route
	fake.routes[netip.MustParsePrefix("10.244.9.0/24")] = netip.MustParseAddr("172.18.0.9")
	fake.routes[netip.MustParsePrefix("192.168.0.0/16")] = netip.MustParseAddr("172.18.0.1")
	fake.other = []string{"10.244.0.5 dev veth1 scope host"}
	d := newTestDaemon(t, nil, fake, "172.18.0.3", "10.244.0.0/16")
	nodes := append(kindNodes(),
		node{Name: "e2e-worker3", InternalIPs: addrs("172.18.0.5"), PodCIDRs: prefixes("10.244.3.0/24")})

	steps := []struct {
		name      string
		nodes     []node
		selfFound bool
		want      []string
	}{
		{
			name: "start", nodes: nodes, selfFound: true,
			want: []string{
				"ip route replace 10.244.1.0/24 via 172.18.0.2",
				"ip route replace 10.244.3.0/24 via 172.18.0.5",
				"ip route del 10.244.9.0/24 via 172.18.0.9",
			},
		},
		{name: "unchanged", nodes: nodes, selfFound: true},
		{name: "list without this node removes nothing", nodes: nodes[1:2]},
		{
			name: "node deleted", nodes: nodes[:3], selfFound: true,
			want: []string{"ip route del 10.244.3.0/24 via 172.18.0.5"},
		},
	}
	for _, s := range steps {
		if _, err := d.syncRoutes(ctx, s.nodes, s.selfFound); err != nil {
			t.Fatalf("%s: syncRoutes() error = %v", s.name, err)
		}
		if got := routeCommands(fake.takeCalls()); !slices.Equal(got, s.want) {
			t.Errorf("%s: commands = %q, want %q", s.name, got, s.want)
		}
	}
	want := map[netip.Prefix]netip.Addr{
		netip.MustParsePrefix("10.244.1.0/24"):  netip.MustParseAddr("172.18.0.2"),
		netip.MustParsePrefix("192.168.0.0/16"): netip.MustParseAddr("172.18.0.1"),
	}
	if !reflect.DeepEqual(fake.routes, want) {
		t.Errorf("routes = %v, want %v", fake.routes, want)
	}
}

// A podCIDR outside POD_SUBNET (a misconfigured cluster) is still routed,
// and its route is removed with its node because this process added it.
func TestSyncRoutesOutsidePodSubnet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := newFakeNode()
	d := newTestDaemon(t, nil, fake, "172.18.0.3", "10.244.0.0/16")
	nodes := append(kindNodes(),
		node{Name: "odd", InternalIPs: addrs("172.18.0.6"), PodCIDRs: prefixes("10.250.0.0/24")})
	for _, nodes := range [][]node{nodes, kindNodes()} {
		if _, err := d.syncRoutes(ctx, nodes, true); err != nil {
			t.Fatalf("syncRoutes() error = %v", err)
		}
	}
	want := []string{
		"ip route replace 10.244.1.0/24 via 172.18.0.2",
		"ip route replace 10.250.0.0/24 via 172.18.0.6",
		"ip route del 10.250.0.0/24 via 172.18.0.6",
	}
	if got := routeCommands(fake.takeCalls()); !slices.Equal(got, want) {
		t.Errorf("commands = %q, want %q", got, want)
	}
}

func TestSyncRoutesListError(t *testing.T) {
	t.Parallel()
	d := newTestDaemon(t, nil, failingRunner{}, "172.18.0.3", "10.244.0.0/16")
	if _, err := d.syncRoutes(context.Background(), kindNodes(), true); err == nil {
		t.Errorf("syncRoutes() with a failing `ip` = nil, want an error")
	}
}

type failingRunner struct{}

func (failingRunner) Run(context.Context, string, ...string) ([]byte, error) {
	return nil, errors.New("exec: not found")
}
