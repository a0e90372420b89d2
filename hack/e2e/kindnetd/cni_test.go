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
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestCNIConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		podCIDRs   []netip.Prefix
		mtu        int
		wantRanges []any
		wantRoutes []any
	}{
		{
			name:       "IPv4",
			podCIDRs:   prefixes("10.244.1.0/24"),
			mtu:        1500,
			wantRanges: []any{[]any{map[string]any{"subnet": "10.244.1.0/24"}}},
			wantRoutes: []any{map[string]any{"dst": "0.0.0.0/0"}},
		},
		{
			name:     "dual stack",
			podCIDRs: prefixes("10.244.1.0/24", "fd00:10:244:1::/64"),
			mtu:      1450,
			wantRanges: []any{
				[]any{map[string]any{"subnet": "10.244.1.0/24"}},
				[]any{map[string]any{"subnet": "fd00:10:244:1::/64"}},
			},
			wantRoutes: []any{map[string]any{"dst": "0.0.0.0/0"}, map[string]any{"dst": "::/0"}},
		},
		{
			name:       "IPv6",
			podCIDRs:   prefixes("fd00:10:244:1::/64"),
			mtu:        9000,
			wantRanges: []any{[]any{map[string]any{"subnet": "fd00:10:244:1::/64"}}},
			wantRoutes: []any{map[string]any{"dst": "::/0"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := cniConfig(tc.podCIDRs, tc.mtu)
			if err != nil {
				t.Fatalf("cniConfig() error = %v", err)
			}
			var got struct {
				CNIVersion string           `json:"cniVersion"`
				Name       string           `json:"name"`
				Plugins    []map[string]any `json:"plugins"`
			}
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("cniConfig() is not JSON: %v\n%s", err, b)
			}
			if got.CNIVersion != "0.4.0" || got.Name != "kindnet" || len(got.Plugins) != 2 {
				t.Fatalf("cniConfig() = version %q, name %q, %d plugins; want 0.4.0, kindnet, 2\n%s",
					got.CNIVersion, got.Name, len(got.Plugins), b)
			}
			wantPTP := map[string]any{
				"type":   "ptp",
				"ipMasq": false,
				"mtu":    float64(tc.mtu),
				"ipam": map[string]any{
					"type":    "host-local",
					"dataDir": "/run/cni-ipam-state",
					"ranges":  tc.wantRanges,
					"routes":  tc.wantRoutes,
				},
			}
			if !reflect.DeepEqual(got.Plugins[0], wantPTP) {
				t.Errorf("ptp plugin = %#v\nwant %#v", got.Plugins[0], wantPTP)
			}
			wantPortmap := map[string]any{"type": "portmap", "capabilities": map[string]any{"portMappings": true}}
			if !reflect.DeepEqual(got.Plugins[1], wantPortmap) {
				t.Errorf("portmap plugin = %#v\nwant %#v", got.Plugins[1], wantPortmap)
			}
			if again, _ := cniConfig(tc.podCIDRs, tc.mtu); string(again) != string(b) {
				t.Errorf("cniConfig() is not stable:\n%s\n%s", b, again)
			}
		})
	}
}

func TestWriteIfChanged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "10-kindnet.conflist")
	steps := []struct {
		content     string
		wantChanged bool
	}{
		{content: "a\n", wantChanged: true},
		{content: "a\n", wantChanged: false},
		{content: "b\n", wantChanged: true},
	}
	for i, s := range steps {
		changed, err := writeIfChanged(path, []byte(s.content))
		if err != nil || changed != s.wantChanged {
			t.Fatalf("step %d: writeIfChanged(%q) = %v, %v; want %v, nil", i, s.content, changed, err, s.wantChanged)
		}
		if got, _ := os.ReadFile(path); string(got) != s.content {
			t.Errorf("step %d: file holds %q, want %q", i, got, s.content)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the conflist (no temporary files left)", len(entries))
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("conflist mode = %v, %v; want 0644", fi.Mode(), err)
	}
	if _, err := writeIfChanged(filepath.Join(dir, "missing", "x.conflist"), []byte("a")); err == nil {
		t.Errorf("writeIfChanged() into a missing directory succeeded, want an error")
	}
}

func TestDefaultRouteInterface(t *testing.T) {
	t.Parallel()
	const header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
	tests := []struct {
		name   string
		table  string
		want   string
		wantOK bool
	}{
		{
			name: "kind node",
			table: header +
				"eth0\t00000000\t010012AC\t0003\t0\t0\t0\t00000000\t0\t0\t0\n" +
				"eth0\t000012AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n",
			want: "eth0", wantOK: true,
		},
		{
			name: "default route not first",
			table: header +
				"eth1\t000012AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n" +
				"eth1\t00000000\t010012AC\t0003\t0\t0\t0\t00000000\t0\t0\t0\n",
			want: "eth1", wantOK: true,
		},
		{
			name:  "no default route",
			table: header + "eth0\t000012AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n",
		},
		{name: "empty", table: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := defaultRouteInterface(tc.table)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("defaultRouteInterface() = %q, %v; want %q, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
