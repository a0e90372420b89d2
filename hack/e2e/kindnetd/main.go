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

// Command kindnetd is the e2e stand-in for kind's default CNI daemon: the
// kindest/kindnetd image cannot be pulled offline, so ours runs this under
// that name from kind's own DaemonSet manifest. Every few seconds it lists
// the nodes from the API server and, on its own node:
//
//   - writes /etc/cni/net.d/10-kindnet.conflist (ptp + host-local on the
//     node's podCIDRs, then portmap);
//   - routes every other node's podCIDRs via that node's InternalIP;
//   - masquerades pod traffic that leaves the cluster's pod subnet (IPv4).
//
// API errors are logged and retried; what was applied stays in place. On
// SIGTERM or SIGINT it exits 0 and leaves routes and config behind, so a
// restart of the pod does not break pod networking.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

const (
	syncInterval      = 5 * time.Second
	heartbeatInterval = time.Minute
	commandTimeout    = 30 * time.Second
)

func main() {
	logger := log.New(os.Stderr, "kindnetd: ", log.LstdFlags)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	err := run(ctx, logger, os.Getenv)
	stop()
	if err != nil {
		logger.Printf("ERROR: %v", err)
		os.Exit(1)
	}
}

// run reads the configuration, then syncs until ctx is done.
func run(ctx context.Context, logger *log.Logger, getenv func(string) string) error {
	cfg, err := configFromEnv(getenv)
	if err != nil {
		return err
	}
	client, err := inClusterClient(getenv, serviceAccountDir)
	if err != nil {
		return err
	}
	logger.Printf("starting: HOST_IP %s, POD_SUBNET %v", cfg.hostIP, cfg.podSubnets)
	for _, s := range cfg.podSubnets {
		if s.Addr().Is6() {
			logger.Printf("IPv6 pod subnet %s: ignored for masquerade (iptables only, no ip6tables); routes and CNI ranges are set up", s)
		}
	}
	d := newDaemon(logger, client, execRunner{timeout: commandTimeout}, cfg)
	d.loop(ctx)
	logger.Printf("stopping: routes, masquerade rules and CNI config are left in place")
	return nil
}

// config is what kind's DaemonSet manifest passes in the environment.
type config struct {
	hostIP     netip.Addr
	podSubnets []netip.Prefix
}

func configFromEnv(getenv func(string) string) (config, error) {
	var cfg config
	hostIP, err := netip.ParseAddr(strings.TrimSpace(getenv("HOST_IP")))
	if err != nil {
		return cfg, fmt.Errorf("failed to parse HOST_IP: %w", err)
	}
	cfg.hostIP = hostIP.Unmap()
	for _, s := range strings.Split(getenv("POD_SUBNET"), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return cfg, fmt.Errorf("failed to parse POD_SUBNET: %w", err)
		}
		cfg.podSubnets = append(cfg.podSubnets, p.Masked())
	}
	if len(cfg.podSubnets) == 0 {
		return cfg, errors.New("POD_SUBNET is empty: the cluster's pod subnet is needed to tell pod traffic from the rest")
	}
	return cfg, nil
}

// nodeLister is the API seam: the in-cluster client, or a fake in tests.
type nodeLister interface {
	ListNodes(ctx context.Context) ([]node, error)
}

// daemon holds what one sync needs and what it remembers between syncs.
type daemon struct {
	log        *log.Logger
	nodes      nodeLister
	cmd        runner
	hostIP     netip.Addr
	podSubnets []netip.Prefix
	cniPath    string
	mtu        func() int

	added    map[netip.Prefix]bool // routes this process added
	failing  bool                  // the last sync failed
	summary  string                // the state, for the heartbeat
	lastBeat time.Time
}

func newDaemon(logger *log.Logger, nodes nodeLister, cmd runner, cfg config) *daemon {
	return &daemon{
		log:        logger,
		nodes:      nodes,
		cmd:        cmd,
		hostIP:     cfg.hostIP,
		podSubnets: cfg.podSubnets,
		cniPath:    cniConfigPath,
		mtu:        hostMTU,
		added:      map[netip.Prefix]bool{},
	}
}

// loop syncs right away, then every syncInterval until ctx is done.
func (d *daemon) loop(ctx context.Context) {
	ticker := time.NewTicker(syncInterval)
	defer ticker.Stop()
	for {
		switch err := d.sync(ctx); {
		case ctx.Err() != nil:
			// stopping: err is the cancellation
		case err != nil:
			d.log.Printf("sync failed, retrying in %s: %v", syncInterval, err)
			d.failing = true
		case d.failing:
			d.log.Printf("sync succeeded again")
			d.failing = false
		}
		if time.Since(d.lastBeat) >= heartbeatInterval {
			d.log.Printf("status: %s", d.summary)
			d.lastBeat = time.Now()
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// sync converges the node once. Masquerade does not need the API, so it is
// ensured even while the API server is away; the rest keeps its last state.
func (d *daemon) sync(ctx context.Context) error {
	masqErr := d.syncMasquerade(ctx)
	nodes, err := d.nodes.ListNodes(ctx)
	if err != nil {
		d.summary = "API server unreachable, last applied state kept"
		return errors.Join(masqErr, fmt.Errorf("failed to list nodes: %w", err))
	}
	errs := []error{masqErr}
	self, found := findSelf(nodes, d.hostIP)
	switch {
	case !found:
		errs = append(errs, fmt.Errorf("no node has InternalIP %s (HOST_IP)", d.hostIP))
	case len(self.PodCIDRs) > 0: // else wait for the controller-manager
		errs = append(errs, d.syncCNIConfig(self.PodCIDRs))
	}
	routes, err := d.syncRoutes(ctx, nodes, found)
	d.summary = fmt.Sprintf("node %q (HOST_IP %s), podCIDRs %v, %d nodes, %d routes to other nodes",
		self.Name, d.hostIP, self.PodCIDRs, len(nodes), routes)
	errs = append(errs, err)
	return errors.Join(errs...)
}
