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
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// masqChain holds the masquerade decision; POSTROUTING jumps to it.
const masqChain = "KINDNET-MASQ"

// jumpRule sends everything not addressed to this node through masqChain.
var jumpRule = []string{"-m", "addrtype", "!", "--dst-type", "LOCAL", "-j", masqChain}

// masqRules are masqChain's rules, in order: traffic to the pod subnet
// (pod to pod, across nodes too) keeps its source, the rest is masqueraded.
// iptables is IPv4 only, so IPv6 subnets are left out; without an IPv4
// subnet there are no rules at all.
func masqRules(podSubnets []netip.Prefix) []string {
	var rules []string
	for _, s := range podSubnets {
		if s.Addr().Is4() {
			rules = append(rules, "-d "+s.String()+" -j RETURN")
		}
	}
	if len(rules) == 0 {
		return nil
	}
	return append(rules, "-j MASQUERADE")
}

// parseChainRules reads the rules of chain from `iptables -S chain` output,
// each without its "-A chain " prefix.
func parseChainRules(out, chain string) []string {
	var rules []string
	for _, line := range strings.Split(out, "\n") {
		if rule, ok := strings.CutPrefix(strings.TrimSpace(line), "-A "+chain+" "); ok {
			rules = append(rules, rule)
		}
	}
	return rules
}

// chainCommands returns the iptables arguments (after -t nat) that make
// masqChain hold exactly desired: nothing when it already does; else create
// or flush it and append every rule, so the order is always right.
func chainCommands(exists bool, current, desired []string) [][]string {
	if exists && slices.Equal(current, desired) {
		return nil
	}
	var cmds [][]string
	switch {
	case !exists:
		cmds = append(cmds, []string{"-N", masqChain})
	case len(current) > 0:
		cmds = append(cmds, []string{"-F", masqChain})
	}
	for _, r := range desired {
		cmds = append(cmds, append([]string{"-A", masqChain}, strings.Fields(r)...))
	}
	return cmds
}

func (d *daemon) iptables(ctx context.Context, args ...string) error {
	_, err := d.cmd.Run(ctx, "iptables", append([]string{"-w", "-t", "nat"}, args...)...)
	return err
}

// syncMasquerade makes the nat table hold masqChain's rules and the jump to
// it. Once in place, a sync only lists the chain and checks the jump.
func (d *daemon) syncMasquerade(ctx context.Context) error {
	desired := masqRules(d.podSubnets)
	if desired == nil {
		return nil
	}
	out, err := d.cmd.Run(ctx, "iptables", "-w", "-t", "nat", "-S", masqChain)
	cmds := chainCommands(err == nil, parseChainRules(string(out), masqChain), desired)
	for _, args := range cmds {
		if err := d.iptables(ctx, args...); err != nil {
			return fmt.Errorf("failed to set up the masquerade chain: %w", err)
		}
	}
	if len(cmds) > 0 {
		d.log.Printf("rules created: nat chain %s: %s", masqChain, strings.Join(desired, "; "))
	}
	if err := d.iptables(ctx, append([]string{"-C", "POSTROUTING"}, jumpRule...)...); err == nil {
		return nil
	}
	if err := d.iptables(ctx, append([]string{"-A", "POSTROUTING"}, jumpRule...)...); err != nil {
		return fmt.Errorf("failed to jump to the masquerade chain: %w", err)
	}
	d.log.Printf("rule created: nat POSTROUTING %s", strings.Join(jumpRule, " "))
	return nil
}
