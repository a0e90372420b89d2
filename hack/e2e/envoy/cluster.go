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
	"log"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// dnsTimeout bounds a name lookup; the connect timeout starts after it, as
// Envoy's connect_timeout covers the TCP connect only.
const dnsTimeout = 5 * time.Second

// host is one endpoint of a cluster.
type host struct {
	addr string // host:port as configured

	mu    sync.Mutex
	state hostState
}

func (h *host) healthy() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state.healthy
}

// cluster is a running CDS cluster: its hosts, their health checks and the
// round-robin position.
type cluster struct {
	cfg   clusterConfig
	log   *log.Logger
	hosts []*host
	check checker // nil without health checks

	next       atomic.Uint64 // round robin
	sawTraffic atomic.Bool   // for no_traffic_interval

	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex // orders verdicts and their log lines
	panicking bool
}

// newCluster makes cfg's cluster. Hosts that prev (the cluster's previous
// version, or nil) already checked keep their health, so a config update
// does not throw the cluster into panic mode.
func newCluster(cfg clusterConfig, logger *log.Logger, prev *cluster) *cluster {
	c := &cluster{cfg: cfg, log: logger}
	for _, addr := range cfg.Endpoints {
		h := &host{addr: addr, state: hostState{healthy: cfg.Health == nil}}
		if cfg.Health != nil && prev != nil && prev.cfg.Health != nil {
			if old := prev.host(addr); old != nil {
				old.mu.Lock()
				h.state = old.state
				old.mu.Unlock()
			}
		}
		c.hosts = append(c.hosts, h)
	}
	if cfg.Health != nil {
		c.check = httpCheck(cfg.Health, c.dial)
	}
	c.panicking = inPanic(c.healthyCount(), len(c.hosts), cfg.PanicThreshold)
	return c
}

func (c *cluster) host(addr string) *host {
	for _, h := range c.hosts {
		if h.addr == addr {
			return h
		}
	}
	return nil
}

func (c *cluster) healthyCount() int {
	n := 0
	for _, h := range c.hosts {
		if h.healthy() {
			n++
		}
	}
	return n
}

// start runs one health-check loop per host until stop or ctx's end.
func (c *cluster) start(ctx context.Context) {
	ctx, c.cancel = context.WithCancel(ctx)
	if c.check == nil {
		return
	}
	for _, h := range c.hosts {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.watch(ctx, h)
		}()
	}
}

// stop ends the health checks and waits for them.
func (c *cluster) stop() {
	c.cancel()
	c.wg.Wait()
}

// watch checks h after initial_jitter, then again one interval after each
// check ends (no_traffic_interval until the cluster carries traffic).
func (c *cluster) watch(ctx context.Context, h *host) {
	hc := c.cfg.Health
	var wait time.Duration
	if hc.InitialJitter > 0 {
		wait = rand.N(hc.InitialJitter)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		checkCtx, cancel := context.WithTimeout(ctx, hc.Timeout)
		r, err := c.check(checkCtx, h.addr)
		cancel()
		if ctx.Err() != nil {
			return
		}
		c.record(h, r, err)
		timer.Reset(c.interval())
	}
}

func (c *cluster) interval() time.Duration {
	if c.sawTraffic.Load() {
		return c.cfg.Health.Interval
	}
	return c.cfg.Health.NoTrafficInterval
}

// record applies a check result to h and logs what changed: h's verdict,
// and whether the cluster entered or left panic mode.
func (c *cluster) record(h *host, r checkResult, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h.mu.Lock()
	changed := h.state.record(r, c.cfg.Health)
	healthy := h.state.healthy
	h.mu.Unlock()
	if !changed {
		return
	}
	if healthy {
		c.log.Printf("cluster %s: host %s is healthy", c.cfg.Name, h.addr)
	} else {
		c.log.Printf("cluster %s: host %s is unhealthy: %v", c.cfg.Name, h.addr, err)
	}
	n := c.healthyCount()
	p := inPanic(n, len(c.hosts), c.cfg.PanicThreshold)
	switch {
	case p == c.panicking:
	case p:
		c.log.Printf("cluster %s: %d of %d hosts healthy, under the %g%% panic threshold: balancing across all hosts",
			c.cfg.Name, n, len(c.hosts), c.cfg.PanicThreshold)
	default:
		c.log.Printf("cluster %s: %d of %d hosts healthy: balancing across the healthy ones", c.cfg.Name, n, len(c.hosts))
	}
	c.panicking = p
}

// pick is the round-robin choice among the healthy hosts, or among all
// hosts in panic mode; nil when there is none to choose.
func (c *cluster) pick() *host {
	healthy := make([]*host, 0, len(c.hosts))
	for _, h := range c.hosts {
		if h.healthy() {
			healthy = append(healthy, h)
		}
	}
	set := healthy
	if inPanic(len(healthy), len(c.hosts), c.cfg.PanicThreshold) {
		set = c.hosts
	}
	if len(set) == 0 {
		return nil
	}
	return set[(c.next.Add(1)-1)%uint64(len(set))]
}

// dial connects to addr within the connect timeout. A name (STRICT_DNS)
// is resolved at each connection and each check, to one address of the
// family dns_lookup_family prefers.
func (c *cluster) dial(ctx context.Context, addr string) (net.Conn, error) {
	name, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ip, err := resolve(ctx, name, c.cfg.LookupFamily)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.ConnectTimeout)
	defer cancel()
	var d net.Dialer
	return d.DialContext(ctx, "tcp", net.JoinHostPort(ip.String(), port))
}

func resolve(ctx context.Context, name, family string) (netip.Addr, error) {
	if ip, err := netip.ParseAddr(name); err == nil {
		return ip, nil
	}
	ctx, cancel := context.WithTimeout(ctx, dnsTimeout)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", name)
	if err != nil {
		return netip.Addr{}, err
	}
	ip, ok := pickAddr(ips, family)
	if !ok {
		return ip, fmt.Errorf("%s has no address for dns_lookup_family %s: %v", name, family, ips)
	}
	return ip, nil
}

// pickAddr is Envoy's dns_lookup_family: AUTO prefers IPv6, V4_PREFERRED
// IPv4, the _ONLY ones take nothing else, ALL the first address.
func pickAddr(ips []netip.Addr, family string) (netip.Addr, bool) {
	var v4, v6 []netip.Addr
	for _, ip := range ips {
		if ip = ip.Unmap(); ip.Is4() {
			v4 = append(v4, ip)
		} else {
			v6 = append(v6, ip)
		}
	}
	var order [][]netip.Addr
	switch family {
	case "V4_ONLY":
		order = [][]netip.Addr{v4}
	case "V6_ONLY":
		order = [][]netip.Addr{v6}
	case "V4_PREFERRED":
		order = [][]netip.Addr{v4, v6}
	case "ALL":
		order = [][]netip.Addr{ips}
	default: // AUTO
		order = [][]netip.Addr{v6, v4}
	}
	for _, l := range order {
		if len(l) > 0 {
			return l[0].Unmap(), true
		}
	}
	return netip.Addr{}, false
}

// describe is the one-line summary of a cluster for the log.
func describe(cfg clusterConfig) string {
	s := cfg.Discovery
	if cfg.Discovery == "STRICT_DNS" {
		s += " (" + cfg.LookupFamily + ")"
	}
	s += fmt.Sprintf(", round robin over %v, connect timeout %s", cfg.Endpoints, cfg.ConnectTimeout)
	if hc := cfg.Health; hc != nil {
		scheme := "HTTP"
		if hc.TLS {
			scheme = "HTTPS"
		}
		s += fmt.Sprintf(", %s GET %s every %s (%s before traffic), timeout %s, unhealthy_threshold %d, healthy_threshold %d",
			scheme, hc.Path, hc.Interval, hc.NoTrafficInterval, hc.Timeout, hc.UnhealthyThreshold, hc.HealthyThreshold)
	}
	if cfg.PanicThreshold > 0 {
		s += fmt.Sprintf(", panic under %g%% healthy", cfg.PanicThreshold)
	}
	return s
}
