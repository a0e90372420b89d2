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
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"reflect"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// The YAML types below hold the part of Envoy's v3 API that kind's
// bootstrap, LDS and CDS files use, and a few fields next to it. Decoding is
// strict, as Envoy's is: a field not declared here makes the file invalid,
// so a setting the stand-in does not know is an error in its log instead of
// being silently ignored. Fields marked "accepted" are parsed and then not
// acted upon.

const (
	typeListener    = "type.googleapis.com/envoy.config.listener.v3.Listener"
	typeTCPProxy    = "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy"
	typeCluster     = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	typeUpstreamTLS = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext"

	// Envoy's defaults for fields kind leaves out
	defaultConnectTimeout    = 5 * time.Second
	defaultNoTrafficInterval = 60 * time.Second
	defaultPanicThreshold    = 50.0
)

type bootstrapFile struct {
	Node struct {
		Cluster string `json:"cluster"`
		ID      string `json:"id"`
	} `json:"node"`
	DynamicResources struct {
		CDSConfig *configSource `json:"cds_config"`
		LDSConfig *configSource `json:"lds_config"`
	} `json:"dynamic_resources"`
	// accepted: the stand-in serves no admin interface
	Admin struct {
		AccessLogPath string  `json:"access_log_path"`
		Address       address `json:"address"`
	} `json:"admin"`
}

type configSource struct {
	ResourceAPIVersion string `json:"resource_api_version"`
	PathConfigSource   *struct {
		Path string `json:"path"`
	} `json:"path_config_source"`
}

type address struct {
	SocketAddress struct {
		Address   string `json:"address"`
		PortValue uint32 `json:"port_value"`
	} `json:"socket_address"`
}

// discoveryFile is what a path config source holds: a DiscoveryResponse.
type discoveryFile[T any] struct {
	VersionInfo string `json:"version_info"`
	Resources   []T    `json:"resources"`
}

type listenerResource struct {
	Type         string  `json:"@type"`
	Name         string  `json:"name"`
	Address      address `json:"address"`
	FilterChains []struct {
		Filters []struct {
			Name        string `json:"name"`
			TypedConfig struct {
				Type       string `json:"@type"`
				StatPrefix string `json:"stat_prefix"` // accepted
				Cluster    string `json:"cluster"`
			} `json:"typed_config"`
		} `json:"filters"`
	} `json:"filter_chains"`
}

type clusterResource struct {
	Type            string    `json:"@type"`
	Name            string    `json:"name"`
	ConnectTimeout  *duration `json:"connect_timeout"`
	DiscoveryType   string    `json:"type"`
	LBPolicy        string    `json:"lb_policy"`
	DNSLookupFamily string    `json:"dns_lookup_family"`
	CommonLBConfig  struct {
		HealthyPanicThreshold *struct {
			Value float64 `json:"value"`
		} `json:"healthy_panic_threshold"`
	} `json:"common_lb_config"`
	HealthChecks           []healthCheckResource `json:"health_checks"`
	TransportSocketMatches []struct {
		Name            string         `json:"name"`
		Match           map[string]any `json:"match"`
		TransportSocket struct {
			Name        string `json:"name"`
			TypedConfig struct {
				Type             string `json:"@type"`
				CommonTLSContext struct {
					ValidationContext struct {
						TrustChainVerification string `json:"trust_chain_verification"`
					} `json:"validation_context"`
				} `json:"common_tls_context"`
			} `json:"typed_config"`
		} `json:"transport_socket"`
	} `json:"transport_socket_matches"`
	LoadAssignment struct {
		ClusterName string `json:"cluster_name"` // accepted
		Endpoints   []struct {
			LBEndpoints []struct {
				Endpoint struct {
					Address address `json:"address"`
				} `json:"endpoint"`
			} `json:"lb_endpoints"`
		} `json:"endpoints"`
	} `json:"load_assignment"`
}

type healthCheckResource struct {
	Timeout            *duration `json:"timeout"`
	Interval           *duration `json:"interval"`
	UnhealthyThreshold *uint32   `json:"unhealthy_threshold"`
	HealthyThreshold   *uint32   `json:"healthy_threshold"`
	InitialJitter      *duration `json:"initial_jitter"`
	NoTrafficInterval  *duration `json:"no_traffic_interval"`
	// accepted: transitions and the first failure are logged to stderr,
	// not every check as events
	AlwaysLogHealthCheckFailures bool   `json:"always_log_health_check_failures"`
	AlwaysLogHealthCheckSuccess  bool   `json:"always_log_health_check_success"`
	EventLogPath                 string `json:"event_log_path"`
	HTTPHealthCheck              *struct {
		Host string `json:"host"`
		Path string `json:"path"`
	} `json:"http_health_check"`
	TransportSocketMatchCriteria map[string]any `json:"transport_socket_match_criteria"`
}

// duration is a google.protobuf.Duration in its JSON form: decimal seconds
// with an "s" suffix ("0.25s", "3s").
type duration struct{ time.Duration }

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration %s: want a string like \"0.25s\"", b)
	}
	secs, err := strconv.ParseFloat(strings.TrimSuffix(s, "s"), 64)
	if err != nil || !strings.HasSuffix(s, "s") || secs < 0 {
		return fmt.Errorf("duration %q: want seconds like \"0.25s\"", s)
	}
	d.Duration = time.Duration(secs * float64(time.Second))
	return nil
}

// or returns d, or def when d was not set.
func (d *duration) or(def time.Duration) time.Duration {
	if d == nil {
		return def
	}
	return d.Duration
}

// bootstrap is what the stand-in takes from the -c file.
type bootstrap struct {
	NodeCluster, NodeID string
	LDSPath, CDSPath    string // empty: no such discovery
}

// listenerConfig is one LDS listener: a TCP port proxied to a cluster.
type listenerConfig struct {
	Name    string
	Address string // host:port
	Cluster string
}

// clusterConfig is one CDS cluster.
type clusterConfig struct {
	Name           string
	ConnectTimeout time.Duration
	Discovery      string // STATIC or STRICT_DNS
	LookupFamily   string // dns_lookup_family
	Endpoints      []string
	PanicThreshold float64 // percent; 0 turns panic mode off
	Health         *healthConfig
}

// healthConfig is an active HTTP health check.
type healthConfig struct {
	Timeout            time.Duration
	Interval           time.Duration
	NoTrafficInterval  time.Duration
	InitialJitter      time.Duration
	UnhealthyThreshold int
	HealthyThreshold   int
	Host               string // Host header: the cluster name by default
	Path               string
	TLS                bool // no certificate is verified: see healthTLS
}

func parseBootstrap(data []byte) (bootstrap, error) {
	var f bootstrapFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return bootstrap{}, err
	}
	b := bootstrap{NodeCluster: f.Node.Cluster, NodeID: f.Node.ID}
	var err error
	if b.LDSPath, err = sourcePath("lds_config", f.DynamicResources.LDSConfig); err != nil {
		return b, err
	}
	if b.CDSPath, err = sourcePath("cds_config", f.DynamicResources.CDSConfig); err != nil {
		return b, err
	}
	if b.LDSPath == "" && b.CDSPath == "" {
		return b, errors.New("dynamic_resources has neither lds_config nor cds_config: nothing to serve")
	}
	return b, nil
}

func sourcePath(name string, s *configSource) (string, error) {
	switch {
	case s == nil:
		return "", nil
	case s.ResourceAPIVersion != "" && s.ResourceAPIVersion != "V3":
		return "", fmt.Errorf("%s: resource_api_version %q is not supported (V3 only)", name, s.ResourceAPIVersion)
	case s.PathConfigSource == nil || s.PathConfigSource.Path == "":
		return "", fmt.Errorf("%s: only path_config_source with a path is supported", name)
	}
	return s.PathConfigSource.Path, nil
}

// parseListeners reads an LDS file. Empty files and "resources: []" hold no
// listener.
func parseListeners(data []byte) ([]listenerConfig, error) {
	var f discoveryFile[listenerResource]
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, err
	}
	var out []listenerConfig
	seen := map[string]bool{}
	for i, r := range f.Resources {
		l, err := listenerFrom(r)
		if err != nil {
			return nil, fmt.Errorf("listener %d (%q): %w", i, r.Name, err)
		}
		if seen[l.Name] {
			return nil, fmt.Errorf("listener %q is defined twice", l.Name)
		}
		seen[l.Name] = true
		out = append(out, l)
	}
	return out, nil
}

func listenerFrom(r listenerResource) (listenerConfig, error) {
	l := listenerConfig{Name: r.Name}
	if r.Type != typeListener {
		return l, fmt.Errorf("@type %q, want %s", r.Type, typeListener)
	}
	if r.Name == "" {
		return l, errors.New("no name")
	}
	addr, err := ipPort(r.Address)
	if err != nil {
		return l, err
	}
	l.Address = addr
	if len(r.FilterChains) != 1 || len(r.FilterChains[0].Filters) != 1 {
		return l, errors.New("want exactly one filter chain with one filter (tcp_proxy)")
	}
	tcp := r.FilterChains[0].Filters[0].TypedConfig
	if tcp.Type != typeTCPProxy {
		return l, fmt.Errorf("filter @type %q: only %s is supported", tcp.Type, typeTCPProxy)
	}
	if tcp.Cluster == "" {
		return l, errors.New("tcp_proxy names no cluster")
	}
	l.Cluster = tcp.Cluster
	return l, nil
}

// ipPort is a listener's socket address, which Envoy wants as an IP.
func ipPort(a address) (string, error) {
	ip, err := netip.ParseAddr(a.SocketAddress.Address)
	if err != nil {
		return "", fmt.Errorf("socket_address.address %q is not an IP address", a.SocketAddress.Address)
	}
	if a.SocketAddress.PortValue > 65535 {
		return "", fmt.Errorf("port_value %d is out of range", a.SocketAddress.PortValue)
	}
	return netip.AddrPortFrom(ip, uint16(a.SocketAddress.PortValue)).String(), nil
}

// parseClusters reads a CDS file. Empty files and "resources: []" hold no
// cluster.
func parseClusters(data []byte) ([]clusterConfig, error) {
	var f discoveryFile[clusterResource]
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, err
	}
	var out []clusterConfig
	seen := map[string]bool{}
	for i, r := range f.Resources {
		c, err := clusterFrom(r)
		if err != nil {
			return nil, fmt.Errorf("cluster %d (%q): %w", i, r.Name, err)
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("cluster %q is defined twice", c.Name)
		}
		seen[c.Name] = true
		out = append(out, c)
	}
	return out, nil
}

func clusterFrom(r clusterResource) (clusterConfig, error) {
	c := clusterConfig{
		Name:           r.Name,
		ConnectTimeout: r.ConnectTimeout.or(defaultConnectTimeout),
		Discovery:      valueOr(r.DiscoveryType, "STATIC"),
		LookupFamily:   valueOr(r.DNSLookupFamily, "AUTO"),
		PanicThreshold: defaultPanicThreshold,
	}
	switch {
	case r.Type != typeCluster:
		return c, fmt.Errorf("@type %q, want %s", r.Type, typeCluster)
	case r.Name == "":
		return c, errors.New("no name")
	case c.ConnectTimeout <= 0:
		return c, errors.New("connect_timeout must be positive")
	case c.Discovery != "STATIC" && c.Discovery != "STRICT_DNS":
		return c, fmt.Errorf("type %s is not supported (STATIC, STRICT_DNS)", c.Discovery)
	case valueOr(r.LBPolicy, "ROUND_ROBIN") != "ROUND_ROBIN":
		return c, fmt.Errorf("lb_policy %s is not supported (ROUND_ROBIN)", r.LBPolicy)
	}
	switch c.LookupFamily {
	case "AUTO", "V4_ONLY", "V6_ONLY", "V4_PREFERRED", "ALL":
	default:
		return c, fmt.Errorf("dns_lookup_family %s is not supported", c.LookupFamily)
	}
	if p := r.CommonLBConfig.HealthyPanicThreshold; p != nil {
		if p.Value < 0 || p.Value > 100 {
			return c, fmt.Errorf("healthy_panic_threshold %v is not a percentage", p.Value)
		}
		c.PanicThreshold = p.Value
	}
	for _, group := range r.LoadAssignment.Endpoints {
		for _, e := range group.LBEndpoints {
			sa := e.Endpoint.Address.SocketAddress
			if sa.Address == "" || sa.PortValue == 0 || sa.PortValue > 65535 {
				return c, fmt.Errorf("endpoint %q port %d: want an address and a port", sa.Address, sa.PortValue)
			}
			if _, err := netip.ParseAddr(sa.Address); err != nil && c.Discovery == "STATIC" {
				return c, fmt.Errorf("endpoint %q: a STATIC cluster wants IP addresses", sa.Address)
			}
			c.Endpoints = append(c.Endpoints, net.JoinHostPort(sa.Address, strconv.Itoa(int(sa.PortValue))))
		}
	}
	for _, m := range r.TransportSocketMatches {
		// endpoints carry no metadata here: an empty match would pick
		// this socket for the proxied traffic itself
		if len(m.Match) == 0 {
			return c, fmt.Errorf("transport socket %q matches every endpoint: only pass-through traffic is supported", m.Name)
		}
	}
	switch len(r.HealthChecks) {
	case 0:
	case 1:
		h, err := healthFrom(r, r.HealthChecks[0])
		if err != nil {
			return c, fmt.Errorf("health_checks: %w", err)
		}
		c.Health = h
	default:
		return c, errors.New("only one health check per cluster is supported")
	}
	return c, nil
}

func healthFrom(r clusterResource, hc healthCheckResource) (*healthConfig, error) {
	switch {
	case hc.Timeout == nil || hc.Timeout.Duration <= 0:
		return nil, errors.New("timeout must be set and positive")
	case hc.Interval == nil || hc.Interval.Duration <= 0:
		return nil, errors.New("interval must be set and positive")
	case hc.NoTrafficInterval != nil && hc.NoTrafficInterval.Duration <= 0:
		return nil, errors.New("no_traffic_interval must be positive")
	case hc.UnhealthyThreshold == nil || hc.HealthyThreshold == nil:
		return nil, errors.New("unhealthy_threshold and healthy_threshold must be set")
	case hc.HTTPHealthCheck == nil:
		return nil, errors.New("only http_health_check is supported")
	case !strings.HasPrefix(hc.HTTPHealthCheck.Path, "/"):
		return nil, fmt.Errorf("http_health_check.path %q must start with /", hc.HTTPHealthCheck.Path)
	}
	h := &healthConfig{
		Timeout:            hc.Timeout.Duration,
		Interval:           hc.Interval.Duration,
		NoTrafficInterval:  hc.NoTrafficInterval.or(defaultNoTrafficInterval),
		InitialJitter:      hc.InitialJitter.or(0),
		UnhealthyThreshold: max(1, int(*hc.UnhealthyThreshold)),
		HealthyThreshold:   max(1, int(*hc.HealthyThreshold)),
		Host:               valueOr(hc.HTTPHealthCheck.Host, r.Name),
		Path:               hc.HTTPHealthCheck.Path,
	}
	tls, err := healthTLS(r, hc.TransportSocketMatchCriteria)
	h.TLS = tls
	return h, err
}

// healthTLS tells whether the health check runs over TLS: Envoy uses the
// first transport_socket_matches entry whose match is contained in the
// check's transport_socket_match_criteria, and the cluster's (plain) socket
// when none is. kind's entry is an UpstreamTlsContext without trusted_ca, in
// which case Envoy verifies no certificate (kind also says
// ACCEPT_UNTRUSTED), so neither does the stand-in: the load balancer does
// not have the cluster's CA.
func healthTLS(r clusterResource, criteria map[string]any) (bool, error) {
	if len(criteria) == 0 {
		return false, nil
	}
	for _, m := range r.TransportSocketMatches {
		if !contains(criteria, m.Match) {
			continue
		}
		tc := m.TransportSocket.TypedConfig
		if tc.Type != typeUpstreamTLS {
			return false, fmt.Errorf("transport socket %q: @type %q is not supported (%s)", m.Name, tc.Type, typeUpstreamTLS)
		}
		switch v := tc.CommonTLSContext.ValidationContext.TrustChainVerification; v {
		case "", "VERIFY_TRUST_CHAIN", "ACCEPT_UNTRUSTED":
		default:
			return false, fmt.Errorf("transport socket %q: trust_chain_verification %s is not supported", m.Name, v)
		}
		return true, nil
	}
	return false, nil
}

// contains reports whether every key of match has the same value in set.
func contains(set, match map[string]any) bool {
	for k, v := range match {
		if w, ok := set[k]; !ok || !reflect.DeepEqual(w, v) {
			return false
		}
	}
	return true
}

func valueOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
