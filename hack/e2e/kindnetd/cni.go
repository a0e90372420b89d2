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
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

const (
	cniConfigPath = "/etc/cni/net.d/10-kindnet.conflist"
	defaultMTU    = 1500
)

// cniConfig renders the node's conflist: ptp with host-local IPAM, one
// range per podCIDR and a default route per family, then portmap.
func cniConfig(podCIDRs []netip.Prefix, mtu int) ([]byte, error) {
	ranges := [][]map[string]string{}
	routes := []map[string]string{}
	var v4, v6 bool
	for _, c := range podCIDRs {
		ranges = append(ranges, []map[string]string{{"subnet": c.String()}})
		v4, v6 = v4 || c.Addr().Is4(), v6 || c.Addr().Is6()
	}
	if v4 {
		routes = append(routes, map[string]string{"dst": "0.0.0.0/0"})
	}
	if v6 {
		routes = append(routes, map[string]string{"dst": "::/0"})
	}
	// encoding/json sorts map keys: the output is stable
	cfg := map[string]any{
		"cniVersion": "0.4.0",
		"name":       "kindnet",
		"plugins": []any{
			map[string]any{
				"type":   "ptp",
				"ipMasq": false,
				"mtu":    mtu,
				"ipam": map[string]any{
					"type":    "host-local",
					"dataDir": "/run/cni-ipam-state",
					"ranges":  ranges,
					"routes":  routes,
				},
			},
			map[string]any{
				"type":         "portmap",
				"capabilities": map[string]bool{"portMappings": true},
			},
		},
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("failed to render the CNI config: %w", err)
	}
	return append(b, '\n'), nil
}

func (d *daemon) syncCNIConfig(podCIDRs []netip.Prefix) error {
	mtu := d.mtu()
	content, err := cniConfig(podCIDRs, mtu)
	if err != nil {
		return err
	}
	changed, err := writeIfChanged(d.cniPath, content)
	if err != nil {
		return err
	}
	if changed {
		d.log.Printf("wrote %s: podCIDRs %v, mtu %d", d.cniPath, podCIDRs, mtu)
	}
	return nil
}

// writeIfChanged replaces path with content unless it already holds it:
// a temporary file in the same directory, then a rename, so the container
// runtime never reads a half-written config.
func writeIfChanged(path string, content []byte) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, content) {
		return false, nil
	}
	// not *.conflist: the runtime must not pick the temporary file up
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kindnet-*.tmp")
	if err != nil {
		return false, fmt.Errorf("failed to create a temporary file for %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return false, fmt.Errorf("failed to write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return false, fmt.Errorf("failed to chmod %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("failed to close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return false, fmt.Errorf("failed to rename %s to %s: %w", tmp.Name(), path, err)
	}
	return true, nil
}

// hostMTU is the MTU of the interface holding the default route, or
// defaultMTU when that cannot be told.
func hostMTU() int {
	table, err := os.ReadFile("/proc/net/route")
	if err != nil {
		return defaultMTU
	}
	ifname, ok := defaultRouteInterface(string(table))
	if !ok {
		return defaultMTU
	}
	b, err := os.ReadFile("/sys/class/net/" + ifname + "/mtu")
	if err != nil {
		return defaultMTU
	}
	mtu, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || mtu <= 0 {
		return defaultMTU
	}
	return mtu
}

// defaultRouteInterface finds the interface of the first IPv4 default
// route (destination and mask 0) in the text of /proc/net/route.
func defaultRouteInterface(table string) (string, bool) {
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		// Iface Destination Gateway Flags RefCnt Use Metric Mask ...
		if len(f) >= 8 && f[1] == "00000000" && f[7] == "00000000" {
			return f[0], true
		}
	}
	return "", false
}
