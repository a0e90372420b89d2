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
	"slices"
	"strings"
	"testing"
)

func TestMasqRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		subnets []string
		want    []string
	}{
		{name: "IPv4", subnets: []string{"10.244.0.0/16"}, want: []string{"-d 10.244.0.0/16 -j RETURN", "-j MASQUERADE"}},
		{
			name: "dual stack: IPv6 left out", subnets: []string{"10.244.0.0/16", "fd00:10:244::/56"},
			want: []string{"-d 10.244.0.0/16 -j RETURN", "-j MASQUERADE"},
		},
		{name: "IPv6 only: no rules", subnets: []string{"fd00:10:244::/56"}},
		{
			name: "two IPv4 subnets", subnets: []string{"10.244.0.0/16", "10.245.0.0/16"},
			want: []string{"-d 10.244.0.0/16 -j RETURN", "-d 10.245.0.0/16 -j RETURN", "-j MASQUERADE"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := masqRules(prefixes(tc.subnets...)); !slices.Equal(got, tc.want) {
				t.Errorf("masqRules() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseChainRules(t *testing.T) {
	t.Parallel()
	out := "-N KINDNET-MASQ\n-A KINDNET-MASQ -d 10.244.0.0/16 -j RETURN\n-A KINDNET-MASQ -j MASQUERADE\n" +
		"-A KINDNET-MASQ-OTHER -j ACCEPT\n"
	want := []string{"-d 10.244.0.0/16 -j RETURN", "-j MASQUERADE"}
	if got := parseChainRules(out, masqChain); !slices.Equal(got, want) {
		t.Errorf("parseChainRules() = %q, want %q", got, want)
	}
}

func TestSyncMasquerade(t *testing.T) {
	t.Parallel()
	desired := []string{"-d 10.244.0.0/16 -j RETURN", "-j MASQUERADE"}
	jump := "-m addrtype ! --dst-type LOCAL -j KINDNET-MASQ"
	tests := []struct {
		name      string
		chains    map[string][]string // nat table before the first sync
		wantFirst []string            // the first sync's commands
	}{
		{
			name:   "fresh node",
			chains: map[string][]string{"POSTROUTING": nil},
			wantFirst: []string{
				"iptables -w -t nat -S KINDNET-MASQ",
				"iptables -w -t nat -N KINDNET-MASQ",
				"iptables -w -t nat -A KINDNET-MASQ -d 10.244.0.0/16 -j RETURN",
				"iptables -w -t nat -A KINDNET-MASQ -j MASQUERADE",
				"iptables -w -t nat -C POSTROUTING " + jump,
				"iptables -w -t nat -A POSTROUTING " + jump,
			},
		},
		{
			name:   "daemon restarted",
			chains: map[string][]string{"POSTROUTING": {"-j KUBE-POSTROUTING", jump}, masqChain: desired},
			wantFirst: []string{
				"iptables -w -t nat -S KINDNET-MASQ",
				"iptables -w -t nat -C POSTROUTING " + jump,
			},
		},
		{
			name: "chain out of order is rebuilt",
			chains: map[string][]string{
				"POSTROUTING": {jump},
				masqChain:     {"-j MASQUERADE", "-d 10.244.0.0/16 -j RETURN", "-d 10.99.0.0/16 -j RETURN"},
			},
			wantFirst: []string{
				"iptables -w -t nat -S KINDNET-MASQ",
				"iptables -w -t nat -F KINDNET-MASQ",
				"iptables -w -t nat -A KINDNET-MASQ -d 10.244.0.0/16 -j RETURN",
				"iptables -w -t nat -A KINDNET-MASQ -j MASQUERADE",
				"iptables -w -t nat -C POSTROUTING " + jump,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := newFakeNode()
			fake.chains = tc.chains
			before := slices.Clone(tc.chains["POSTROUTING"])
			d := newTestDaemon(t, nil, fake, "172.18.0.3", "10.244.0.0/16", "fd00:10:244::/56")
			ctx := context.Background()
			if err := d.syncMasquerade(ctx); err != nil {
				t.Fatalf("first syncMasquerade() error = %v", err)
			}
			if got := fake.takeCalls(); !slices.Equal(got, tc.wantFirst) {
				t.Errorf("first sync ran\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.wantFirst, "\n"))
			}
			// later syncs only look
			for i := range 2 {
				if err := d.syncMasquerade(ctx); err != nil {
					t.Fatalf("sync %d: syncMasquerade() error = %v", i+2, err)
				}
				want := []string{"iptables -w -t nat -S KINDNET-MASQ", "iptables -w -t nat -C POSTROUTING " + jump}
				if got := fake.takeCalls(); !slices.Equal(got, want) {
					t.Errorf("sync %d ran %q, want only checks %q", i+2, got, want)
				}
			}
			if got := fake.chains[masqChain]; !slices.Equal(got, desired) {
				t.Errorf("%s = %q, want %q", masqChain, got, desired)
			}
			wantPost := before
			if !slices.Contains(before, jump) {
				wantPost = append(wantPost, jump)
			}
			if got := fake.chains["POSTROUTING"]; !slices.Equal(got, wantPost) {
				t.Errorf("POSTROUTING = %q, want %q", got, wantPost)
			}
		})
	}
}

func TestSyncMasqueradeError(t *testing.T) {
	t.Parallel()
	d := newTestDaemon(t, nil, failingRunner{}, "172.18.0.3", "10.244.0.0/16")
	if err := d.syncMasquerade(context.Background()); err == nil {
		t.Errorf("syncMasquerade() with a failing iptables = nil, want an error")
	}
}

func TestSyncMasqueradeIPv6Only(t *testing.T) {
	t.Parallel()
	fake := newFakeNode()
	d := newTestDaemon(t, nil, fake, "fc00::3", "fd00:10:244::/56")
	if err := d.syncMasquerade(context.Background()); err != nil {
		t.Fatalf("syncMasquerade() error = %v", err)
	}
	if calls := fake.takeCalls(); len(calls) != 0 {
		t.Errorf("syncMasquerade() on an IPv6-only cluster ran %q, want nothing", calls)
	}
}
