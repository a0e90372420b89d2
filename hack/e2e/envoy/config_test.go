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
	"fmt"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The inputs below have the shape of what kind writes (see kind_test.go for
// kind's own templates), in a YAML style of their own.

func bootstrapYAML(lds, cds string) string {
	return fmt.Sprintf(`node: {cluster: test, id: lb}
admin:
  access_log_path: /dev/null
  address: {socket_address: {address: 127.0.0.1, port_value: 0}}
dynamic_resources:
  lds_config: {resource_api_version: V3, path_config_source: {path: %q}}
  cds_config: {resource_api_version: V3, path_config_source: {path: %q}}
`, lds, cds)
}

func ldsYAML(name, addr, cluster string) string {
	host, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf(`resources:
  - "@type": %s
    name: %s
    address: {socket_address: {address: %q, port_value: %s}}
    filter_chains:
      - filters:
          - name: proxy
            typed_config:
              "@type": %s
              stat_prefix: test
              cluster: %s
`, typeListener, name, host, port, typeTCPProxy, cluster)
}

// cdsYAML is one cluster with an HTTPS health check chosen through a
// transport socket match; extra is added to the cluster's fields.
func cdsYAML(name, interval, extra string, endpoints ...string) string {
	var eps strings.Builder
	for _, e := range endpoints {
		host, port, _ := net.SplitHostPort(e)
		fmt.Fprintf(&eps, "          - endpoint: {address: {socket_address: {address: %q, port_value: %s}}}\n", host, port)
	}
	return fmt.Sprintf(`resources:
  - "@type": %s
    name: %s
    type: STRICT_DNS
    lb_policy: ROUND_ROBIN
    connect_timeout: 0.5s
    dns_lookup_family: V4_PREFERRED
    health_checks:
      - http_health_check: {path: /healthz}
        interval: %s
        no_traffic_interval: %s
        timeout: 1s
        unhealthy_threshold: 2
        healthy_threshold: 1
        initial_jitter: 0s
        transport_socket_match_criteria: {secure: "yes"}
    transport_socket_matches:
      - name: for-checks
        match: {secure: "yes"}
        transport_socket:
          name: tls
          typed_config:
            "@type": %s
            common_tls_context: {validation_context: {trust_chain_verification: ACCEPT_UNTRUSTED}}
%s
    load_assignment:
      cluster_name: %s
      endpoints:
        - lb_endpoints:
%s`, typeCluster, name, interval, interval, typeUpstreamTLS, extra, name, eps.String())
}

func TestParseBootstrap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    bootstrap
		wantErr string
	}{
		{
			name: "both files",
			in:   bootstrapYAML("/x/lds.yaml", "/x/cds.yaml"),
			want: bootstrap{NodeCluster: "test", NodeID: "lb", LDSPath: "/x/lds.yaml", CDSPath: "/x/cds.yaml"},
		},
		{
			name: "listeners only",
			in:   "dynamic_resources: {lds_config: {path_config_source: {path: /l}}}",
			want: bootstrap{LDSPath: "/l"},
		},
		{name: "nothing to serve", in: "node: {id: x}", wantErr: "neither lds_config nor cds_config"},
		{name: "empty", in: "", wantErr: "neither"},
		{name: "API version", in: "dynamic_resources: {lds_config: {resource_api_version: V2, path_config_source: {path: /l}}}", wantErr: "V3 only"},
		{name: "gRPC source", in: "dynamic_resources: {cds_config: {api_config_source: {api_type: GRPC}}}", wantErr: "unknown field"},
		{name: "no path", in: "dynamic_resources: {cds_config: {path_config_source: {}}}", wantErr: "only path_config_source"},
		{name: "static resources", in: "static_resources: {}\ndynamic_resources: {lds_config: {path_config_source: {path: /l}}}", wantErr: "unknown field"},
		{name: "not YAML", in: "node: [", wantErr: "yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseBootstrap([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseBootstrap() error = %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("parseBootstrap() = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestParseListeners(t *testing.T) {
	t.Parallel()
	halfLDS := ldsYAML("a", "127.0.0.1:1", "c")
	tests := []struct {
		name    string
		in      string
		want    []listenerConfig
		wantErr string
	}{
		{name: "empty file", in: ""},
		{name: "no resources", in: "resources: []"},
		{
			name: "IPv4",
			in:   ldsYAML("api", "0.0.0.0:6443", "apiservers"),
			want: []listenerConfig{{Name: "api", Address: "0.0.0.0:6443", Cluster: "apiservers"}},
		},
		{
			name: "IPv6",
			in:   ldsYAML("api", "[::]:6443", "apiservers"),
			want: []listenerConfig{{Name: "api", Address: "[::]:6443", Cluster: "apiservers"}},
		},
		{
			name: "with version_info",
			in:   "version_info: v7\n" + ldsYAML("a", "127.0.0.1:1", "c"),
			want: []listenerConfig{{Name: "a", Address: "127.0.0.1:1", Cluster: "c"}},
		},
		{name: "two of a name", in: ldsYAML("a", "127.0.0.1:1", "c") + strings.TrimPrefix(ldsYAML("a", "127.0.0.1:2", "c"), "resources:\n"), wantErr: "defined twice"},
		{name: "host name", in: ldsYAML("a", "localhost:1", "c"), wantErr: "not an IP address"},
		{name: "port out of range", in: ldsYAML("a", "127.0.0.1:70000", "c"), wantErr: "out of range"},
		{name: "wrong type", in: strings.Replace(ldsYAML("a", "127.0.0.1:1", "c"), "listener.v3.Listener", "cluster.v3.Cluster", 1), wantErr: "@type"},
		{
			name:    "HTTP filter",
			in:      strings.Replace(ldsYAML("a", "127.0.0.1:1", "c"), "tcp_proxy.v3.TcpProxy", "http_connection_manager.v3.HttpConnectionManager", 1),
			wantErr: "only type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
		},
		{name: "no cluster", in: strings.Replace(ldsYAML("a", "127.0.0.1:1", "c"), "cluster: c", "cluster: ''", 1), wantErr: "names no cluster"},
		{name: "unknown field", in: strings.Replace(ldsYAML("a", "127.0.0.1:1", "c"), "stat_prefix: test", "idle_timeout: 1s", 1), wantErr: "unknown field"},
		{name: "no filter", in: "resources: [{\"@type\": " + typeListener + ", name: a, address: {socket_address: {address: 127.0.0.1, port_value: 1}}}]", wantErr: "one filter chain"},
		{name: "half written", in: halfLDS[:strings.Index(halfLDS, "port_value")+5], wantErr: "yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseListeners([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseListeners() error = %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("parseListeners() = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestParseClusters(t *testing.T) {
	t.Parallel()
	checked := clusterConfig{
		Name:           "apiservers",
		ConnectTimeout: 500 * time.Millisecond,
		Discovery:      "STRICT_DNS",
		LookupFamily:   "V4_PREFERRED",
		Endpoints:      []string{"cp1:6443", "10.0.0.2:6443", "[fd00::3]:6443"},
		PanicThreshold: 50,
		Health: &healthConfig{
			Timeout: time.Second, Interval: 2 * time.Second, NoTrafficInterval: 2 * time.Second,
			UnhealthyThreshold: 2, HealthyThreshold: 1,
			Host: "apiservers", Path: "/healthz", TLS: true,
		},
	}
	with := func(f func(c *clusterConfig)) []clusterConfig {
		c := checked
		h := *checked.Health
		c.Health = &h
		f(&c)
		return []clusterConfig{c}
	}
	full := cdsYAML("apiservers", "2s", "", "cp1:6443", "10.0.0.2:6443", "[fd00::3]:6443")
	// the smallest cluster: Envoy's defaults for the rest
	minimal := `resources: [{"@type": ` + typeCluster + `, name: m, load_assignment: {endpoints: [{lb_endpoints: [{endpoint: {address: {socket_address: {address: 10.0.0.1, port_value: 80}}}}]}]}}]`
	tests := []struct {
		name    string
		in      string
		want    []clusterConfig
		wantErr string
	}{
		{name: "empty file", in: ""},
		{name: "no resources", in: "resources: []"},
		{name: "health checked", in: full, want: with(func(*clusterConfig) {})},
		{
			name: "defaults",
			in:   minimal,
			want: []clusterConfig{{
				Name: "m", ConnectTimeout: 5 * time.Second, Discovery: "STATIC", LookupFamily: "AUTO",
				Endpoints: []string{"10.0.0.1:80"}, PanicThreshold: 50,
			}},
		},
		{
			name: "panic threshold off",
			in:   cdsYAML("apiservers", "2s", "    common_lb_config: {healthy_panic_threshold: {value: 0}}", "cp1:6443", "10.0.0.2:6443", "[fd00::3]:6443"),
			want: with(func(c *clusterConfig) { c.PanicThreshold = 0 }),
		},
		{
			name: "check over plain HTTP when no socket matches",
			in:   strings.Replace(full, `criteria: {secure: "yes"}`, `criteria: {secure: "no"}`, 1),
			want: with(func(c *clusterConfig) { c.Health.TLS = false }),
		},
		{
			name: "check host and default no-traffic interval",
			in:   strings.Replace(strings.Replace(full, "{path: /healthz}", "{path: /healthz, host: api}", 1), "        no_traffic_interval: 2s\n", "", 1),
			want: with(func(c *clusterConfig) { c.Health.Host = "api"; c.Health.NoTrafficInterval = time.Minute }),
		},
		{name: "random", in: strings.Replace(full, "ROUND_ROBIN", "RANDOM", 1), wantErr: "lb_policy RANDOM"},
		{name: "logical DNS", in: strings.Replace(full, "STRICT_DNS", "LOGICAL_DNS", 1), wantErr: "type LOGICAL_DNS"},
		{name: "static with names", in: strings.Replace(full, "STRICT_DNS", "STATIC", 1), wantErr: "STATIC cluster wants IP"},
		{name: "lookup family", in: strings.Replace(full, "V4_PREFERRED", "V5", 1), wantErr: "dns_lookup_family"},
		{name: "no port", in: cdsYAML("a", "1s", "", "cp1:0"), wantErr: "want an address and a port"},
		{name: "duration without unit", in: strings.Replace(full, "timeout: 1s", "timeout: 1", 1), wantErr: "want a string"},
		{name: "duration in minutes", in: strings.Replace(full, "interval: 2s", "interval: 2m", 1), wantErr: "want seconds"},
		{name: "no pause between checks", in: strings.Replace(full, "no_traffic_interval: 2s", "no_traffic_interval: 0s", 1), wantErr: "no_traffic_interval must be positive"},
		{name: "no timeout", in: strings.Replace(full, "timeout: 1s", "", 1), wantErr: "timeout must be set"},
		{name: "no threshold", in: strings.Replace(full, "healthy_threshold: 1", "", 1), wantErr: "healthy_threshold must be set"},
		{name: "TCP check", in: strings.Replace(full, "http_health_check: {path: /healthz}", "tcp_health_check: {}", 1), wantErr: "unknown field"},
		{name: "relative path", in: strings.Replace(full, "/healthz", "healthz", 1), wantErr: "must start with /"},
		{name: "outlier detection", in: cdsYAML("a", "1s", "    outlier_detection: {}", "cp1:1"), wantErr: "unknown field"},
		{name: "panic threshold over 100", in: cdsYAML("a", "1s", "    common_lb_config: {healthy_panic_threshold: {value: 120}}", "cp1:1"), wantErr: "not a percentage"},
		{name: "TLS to the endpoints", in: strings.Replace(full, `match: {secure: "yes"}`, "match: {}", 1), wantErr: "matches every endpoint"},
		{name: "raw buffer for checks", in: strings.Replace(full, "tls.v3.UpstreamTlsContext", "raw_buffer.v3.RawBuffer", 1), wantErr: "not supported"},
		{name: "two of a name", in: full + strings.TrimPrefix(full, "resources:\n"), wantErr: "defined twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseClusters([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseClusters() error = %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("parseClusters() = %+v, %v; want %+v", got, err, tc.want)
			}
			if len(got) == 1 && got[0].Health != nil && !reflect.DeepEqual(got[0].Health, tc.want[0].Health) {
				t.Fatalf("health check = %+v, want %+v", got[0].Health, tc.want[0].Health)
			}
		})
	}
}

func TestDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{`"0.25s"`, 250 * time.Millisecond, true},
		{`"3s"`, 3 * time.Second, true},
		{`"0s"`, 0, true},
		{`"1.5s"`, 1500 * time.Millisecond, true},
		{`"250ms"`, 0, false},
		{`"3"`, 0, false},
		{`"-1s"`, 0, false},
		{`3`, 0, false},
	}
	for _, tc := range tests {
		var d duration
		err := d.UnmarshalJSON([]byte(tc.in))
		if (err == nil) != tc.ok || (tc.ok && d.Duration != tc.want) {
			t.Errorf("duration %s = %v, %v; want %v (ok %v)", tc.in, d.Duration, err, tc.want, tc.ok)
		}
	}
}
