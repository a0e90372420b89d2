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
	"net/netip"
	"slices"
	"strings"
)

// route is a route to a podCIDR via a node's InternalIP.
type route struct {
	dst netip.Prefix
	via netip.Addr
}

func (r route) String() string {
	return r.dst.String() + " via " + r.via.String()
}

// desiredRoutes routes every podCIDR of every other node via that node's
// InternalIP of the same family; a podCIDR whose node has no InternalIP of
// its family gets no route.
func desiredRoutes(nodes []node, hostIP netip.Addr) []route {
	var routes []route
	for _, n := range nodes {
		if isSelf(n, hostIP) {
			continue
		}
		for _, c := range n.PodCIDRs {
			for _, ip := range n.InternalIPs {
				if ip.Is4() == c.Addr().Is4() {
					routes = append(routes, route{dst: c, via: ip})
					break
				}
			}
		}
	}
	return routes
}

// parseRoutes reads `ip route show` output. Routes without a gateway have
// an invalid via; lines that do not start with a destination are skipped.
func parseRoutes(out string) []route {
	var routes []route
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		dst, err := netip.ParsePrefix(f[0])
		if err != nil {
			addr, err := netip.ParseAddr(f[0]) // a host route has no /len
			if err != nil {
				continue // default, unreachable, ...
			}
			dst = netip.PrefixFrom(addr, addr.BitLen())
		}
		r := route{dst: dst.Masked()}
		for i := 1; i+1 < len(f); i++ {
			if f[i] == "via" {
				r.via, _ = netip.ParseAddr(f[i+1]) // "via inet6 ..." stays invalid
				break
			}
		}
		routes = append(routes, r)
	}
	return routes
}

// planRoutes compares the desired routes with the node's current ones:
// desired routes that are missing or have another gateway are to be
// replaced; current gateway routes that owned accepts and that nothing
// desires any more are to be deleted.
func planRoutes(desired, current []route, owned func(netip.Prefix) bool) (replace, remove []route) {
	want := map[netip.Prefix]bool{}
	for _, r := range desired {
		want[r.dst] = true
		if !slices.Contains(current, r) {
			replace = append(replace, r)
		}
	}
	for _, r := range current {
		if r.via.IsValid() && !want[r.dst] && owned(r.dst) {
			remove = append(remove, r)
		}
	}
	return replace, remove
}

// owns tells whether a gateway route to dst is the daemon's to remove:
// one it added, or one into the cluster's pod subnet (left by an earlier
// run of the daemon for a node that is gone).
func (d *daemon) owns(dst netip.Prefix) bool {
	if d.added[dst] {
		return true
	}
	for _, s := range d.podSubnets {
		if s.Bits() <= dst.Bits() && s.Contains(dst.Addr()) {
			return true
		}
	}
	return false
}

// syncRoutes converges the routes to the other nodes' podCIDRs and returns
// how many there are. Nothing is removed unless the node list holds this
// node: a list without it is not trusted to tell which nodes are gone.
func (d *daemon) syncRoutes(ctx context.Context, nodes []node, selfFound bool) (int, error) {
	desired := desiredRoutes(nodes, d.hostIP)
	current, err := d.currentRoutes(ctx, desired)
	if err != nil {
		return len(desired), err
	}
	replace, remove := planRoutes(desired, current, d.owns)
	if !selfFound {
		remove = nil
	}
	var errs []error
	for _, r := range replace {
		if _, err := d.cmd.Run(ctx, "ip", "route", "replace", r.dst.String(), "via", r.via.String()); err != nil {
			errs = append(errs, err)
			continue
		}
		d.added[r.dst] = true
		d.log.Printf("route added: %s", r)
	}
	for _, r := range remove {
		if _, err := d.cmd.Run(ctx, "ip", "route", "del", r.dst.String(), "via", r.via.String()); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(d.added, r.dst)
		d.log.Printf("route removed: %s", r)
	}
	return len(desired), errors.Join(errs...)
}

// currentRoutes lists the main table's IPv4 routes, and the IPv6 ones too
// when the pod subnet or a desired route is IPv6.
func (d *daemon) currentRoutes(ctx context.Context, desired []route) ([]route, error) {
	ipv6 := false
	for _, s := range d.podSubnets {
		ipv6 = ipv6 || s.Addr().Is6()
	}
	for _, r := range desired {
		ipv6 = ipv6 || r.dst.Addr().Is6()
	}
	families := []string{"-4"}
	if ipv6 {
		families = append(families, "-6")
	}
	var routes []route
	for _, family := range families {
		out, err := d.cmd.Run(ctx, "ip", family, "route", "show")
		if err != nil {
			return nil, fmt.Errorf("failed to list routes: %w", err)
		}
		routes = append(routes, parseRoutes(string(out))...)
	}
	return routes, nil
}
