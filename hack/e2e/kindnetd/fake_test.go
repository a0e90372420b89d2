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
	"fmt"
	"io"
	"log"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeNode stands in for a node's `ip` and `iptables`: it records every
// command and keeps a main route table and a nat table in memory.
type fakeNode struct {
	mu     sync.Mutex
	calls  []string
	routes map[netip.Prefix]netip.Addr // gateway routes
	other  []string                    // `ip route show` lines without a gateway
	chains map[string][]string         // nat chain -> rule specs
}

func newFakeNode() *fakeNode {
	return &fakeNode{
		routes: map[netip.Prefix]netip.Addr{},
		chains: map[string][]string{"POSTROUTING": nil},
	}
}

func (f *fakeNode) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name+" "+strings.Join(args, " "))
	switch name {
	case "ip":
		return f.ip(args)
	case "iptables":
		return f.iptables(args)
	}
	return nil, fmt.Errorf("unexpected command %s", name)
}

// takeCalls returns the commands run since the last call.
func (f *fakeNode) takeCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	calls := f.calls
	f.calls = nil
	return calls
}

func (f *fakeNode) ip(args []string) ([]byte, error) {
	switch {
	case len(args) == 3 && args[1] == "route" && args[2] == "show":
		var out strings.Builder
		for dst, via := range f.routes {
			if dst.Addr().Is4() == (args[0] == "-4") {
				fmt.Fprintf(&out, "%s via %s dev eth0\n", dst, via)
			}
		}
		for _, l := range f.other {
			out.WriteString(l + "\n")
		}
		return []byte(out.String()), nil
	case len(args) == 5 && args[0] == "route" && args[3] == "via":
		dst, err := netip.ParsePrefix(args[2])
		if err != nil {
			return nil, err
		}
		via, err := netip.ParseAddr(args[4])
		if err != nil {
			return nil, err
		}
		if args[1] == "replace" {
			f.routes[dst] = via
			return nil, nil
		}
		if args[1] == "del" && f.routes[dst] == via {
			delete(f.routes, dst)
			return nil, nil
		}
	}
	return nil, fmt.Errorf("RTNETLINK answers: No such process (ip %s)", strings.Join(args, " "))
}

func (f *fakeNode) iptables(args []string) ([]byte, error) {
	if len(args) < 5 || !slices.Equal(args[:3], []string{"-w", "-t", "nat"}) {
		return nil, fmt.Errorf("unexpected iptables %v", args)
	}
	op, chain, rule := args[3], args[4], strings.Join(args[5:], " ")
	rules, exists := f.chains[chain]
	if !exists && op != "-N" {
		return nil, errors.New("iptables: No chain/target/match by that name")
	}
	switch op {
	case "-S":
		out := "-N " + chain + "\n"
		for _, r := range rules {
			out += "-A " + chain + " " + r + "\n"
		}
		return []byte(out), nil
	case "-N":
		if exists {
			return nil, errors.New("iptables: Chain already exists")
		}
		f.chains[chain] = nil
	case "-F":
		f.chains[chain] = nil
	case "-A":
		// a jump to a user chain needs the chain
		if target := args[len(args)-1]; strings.HasPrefix(target, "KINDNET") {
			if _, ok := f.chains[target]; !ok {
				return nil, fmt.Errorf("iptables: Couldn't load target `%s'", target)
			}
		}
		f.chains[chain] = append(rules, rule)
	case "-C":
		if !slices.Contains(rules, rule) {
			return nil, errors.New("iptables: Bad rule (does a matching rule exist in that chain?)")
		}
	default:
		return nil, fmt.Errorf("unexpected iptables %v", args)
	}
	return nil, nil
}

// fakeLister serves a fixed node list, or an error.
type fakeLister struct {
	mu    sync.Mutex
	nodes []node
	err   error
}

func (l *fakeLister) ListNodes(context.Context) ([]node, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.nodes, l.err
}

func (l *fakeLister) set(nodes []node, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nodes, l.err = nodes, err
}

func newTestDaemon(t *testing.T, lister nodeLister, cmd runner, hostIP string, podSubnets ...string) *daemon {
	t.Helper()
	cfg := config{hostIP: netip.MustParseAddr(hostIP)}
	for _, s := range podSubnets {
		cfg.podSubnets = append(cfg.podSubnets, netip.MustParsePrefix(s))
	}
	d := newDaemon(log.New(io.Discard, "", 0), lister, cmd, cfg)
	d.cniPath = t.TempDir() + "/10-kindnet.conflist"
	d.mtu = func() int { return 1450 }
	return d
}

func prefixes(s ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range s {
		out = append(out, netip.MustParsePrefix(p))
	}
	return out
}

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}
