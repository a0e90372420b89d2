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
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// kindNodesJSON is shaped like `kubectl get nodes -o json` on a kind
// cluster: a control plane with podCIDRs, a worker with only the old
// singular podCIDR, and a worker that has no podCIDR yet.
const kindNodesJSON = `{
  "apiVersion": "v1",
  "kind": "List",
  "metadata": {"resourceVersion": ""},
  "items": [
    {
      "apiVersion": "v1",
      "kind": "Node",
      "metadata": {
        "name": "e2e-control-plane",
        "labels": {"kubernetes.io/hostname": "e2e-control-plane", "node-role.kubernetes.io/control-plane": ""},
        "uid": "0b4c1c51-7d4e-4a8e-9d39-1a0d6e8f7c21"
      },
      "spec": {
        "podCIDR": "10.244.0.0/24",
        "podCIDRs": ["10.244.0.0/24"],
        "providerID": "kind://docker/e2e/e2e-control-plane",
        "taints": [{"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"}]
      },
      "status": {
        "addresses": [
          {"address": "172.18.0.3", "type": "InternalIP"},
          {"address": "e2e-control-plane", "type": "Hostname"}
        ],
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        "images": [{"names": ["registry.k8s.io/pause:3.10"], "sizeBytes": 320368}],
        "nodeInfo": {"kubeletVersion": "v1.33.13", "containerRuntimeVersion": "containerd://1.6.20"}
      }
    },
    {
      "apiVersion": "v1",
      "kind": "Node",
      "metadata": {"name": "e2e-worker"},
      "spec": {"podCIDR": "10.244.1.0/24", "providerID": "kind://docker/e2e/e2e-worker"},
      "status": {
        "addresses": [
          {"address": "e2e-worker", "type": "Hostname"},
          {"address": "172.18.0.2", "type": "InternalIP"}
        ]
      }
    },
    {
      "apiVersion": "v1",
      "kind": "Node",
      "metadata": {"name": "e2e-worker2"},
      "spec": {"providerID": "kind://docker/e2e/e2e-worker2"},
      "status": {
        "addresses": [
          {"address": "172.18.0.4", "type": "InternalIP"},
          {"address": "e2e-worker2", "type": "Hostname"}
        ]
      }
    }
  ]
}`

func kindNodes() []node {
	return []node{
		{Name: "e2e-control-plane", InternalIPs: addrs("172.18.0.3"), PodCIDRs: prefixes("10.244.0.0/24")},
		{Name: "e2e-worker", InternalIPs: addrs("172.18.0.2"), PodCIDRs: prefixes("10.244.1.0/24")},
		{Name: "e2e-worker2", InternalIPs: addrs("172.18.0.4")},
	}
}

func TestParseNodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		json    string
		want    []node
		wantErr bool
	}{
		{name: "kind cluster", json: kindNodesJSON, want: kindNodes()},
		{
			name: "dual stack, ExternalIP and IPv4-mapped address",
			json: `{"items": [{"metadata": {"name": "n"},
				"spec": {"podCIDR": "10.244.2.0/24", "podCIDRs": ["10.244.2.0/24", "fd00:10:244:2::/64"]},
				"status": {"addresses": [
					{"type": "InternalIP", "address": "::ffff:172.18.0.5"},
					{"type": "InternalIP", "address": "fc00:f853:ccd:e793::5"},
					{"type": "ExternalIP", "address": "203.0.113.9"},
					{"type": "InternalIP", "address": "not-an-ip"}]}}]}`,
			want: []node{{
				Name:        "n",
				InternalIPs: addrs("172.18.0.5", "fc00:f853:ccd:e793::5"),
				PodCIDRs:    prefixes("10.244.2.0/24", "fd00:10:244:2::/64"),
			}},
		},
		{name: "empty list", json: `{"kind": "NodeList", "items": []}`, want: []node{}},
		{name: "not JSON", json: `<html>503</html>`, wantErr: true},
		{name: "bad podCIDR", json: `{"items": [{"metadata": {"name": "n"}, "spec": {"podCIDRs": ["10.244.0.0"]}}]}`, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseNodes([]byte(tc.json))
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseNodes() error = %v, wantErr %v", err, tc.wantErr)
			}
			if !tc.wantErr && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("parseNodes() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestFindSelf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		hostIP   string
		wantName string
		wantOK   bool
	}{
		{name: "control plane", hostIP: "172.18.0.3", wantName: "e2e-control-plane", wantOK: true},
		{name: "worker", hostIP: "172.18.0.2", wantName: "e2e-worker", wantOK: true},
		{name: "node without podCIDR", hostIP: "172.18.0.4", wantName: "e2e-worker2", wantOK: true},
		{name: "unknown", hostIP: "172.18.0.9"},
		{name: "IPv6 host IP on IPv4 nodes", hostIP: "fc00::3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := findSelf(kindNodes(), netip.MustParseAddr(tc.hostIP))
			if ok != tc.wantOK || got.Name != tc.wantName {
				t.Errorf("findSelf(%s) = %q, %v; want %q, %v", tc.hostIP, got.Name, ok, tc.wantName, tc.wantOK)
			}
		})
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		want    config
		wantErr bool
	}{
		{
			name: "IPv4",
			env:  map[string]string{"HOST_IP": "172.18.0.3", "POD_SUBNET": "10.244.0.0/16"},
			want: config{hostIP: netip.MustParseAddr("172.18.0.3"), podSubnets: prefixes("10.244.0.0/16")},
		},
		{
			name: "dual stack, spaces, host bits",
			env:  map[string]string{"HOST_IP": "172.18.0.3", "POD_SUBNET": "10.244.1.0/16, fd00:10:244::/56"},
			want: config{hostIP: netip.MustParseAddr("172.18.0.3"), podSubnets: prefixes("10.244.0.0/16", "fd00:10:244::/56")},
		},
		{name: "no HOST_IP", env: map[string]string{"POD_SUBNET": "10.244.0.0/16"}, wantErr: true},
		{name: "no POD_SUBNET", env: map[string]string{"HOST_IP": "172.18.0.3"}, wantErr: true},
		{name: "bad POD_SUBNET", env: map[string]string{"HOST_IP": "172.18.0.3", "POD_SUBNET": "10.244.0.0"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := configFromEnv(func(k string) string { return tc.env[k] })
			if (err != nil) != tc.wantErr {
				t.Fatalf("configFromEnv() error = %v, wantErr %v", err, tc.wantErr)
			}
			if !tc.wantErr && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("configFromEnv() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// writeServiceAccount writes token and the CA of srv as a service account
// volume would hold them, and returns the directory.
func writeServiceAccount(t *testing.T, srv *httptest.Server, token string) string {
	t.Helper()
	dir := t.TempDir()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestAPIClient(t *testing.T) {
	t.Parallel()
	var (
		mu     sync.Mutex
		status = http.StatusOK
		auth   []string
	)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		auth = append(auth, r.Header.Get("Authorization"))
		switch {
		case r.URL.Path != "/api/v1/nodes":
			http.NotFound(w, r)
		case status != http.StatusOK:
			http.Error(w, "etcdserver: leader changed", status)
		default:
			_, _ = w.Write([]byte(kindNodesJSON))
		}
	}))
	defer srv.Close()
	setStatus := func(s int) {
		mu.Lock()
		defer mu.Unlock()
		status = s
	}
	lastAuth := func() string {
		mu.Lock()
		defer mu.Unlock()
		return auth[len(auth)-1]
	}

	dir := writeServiceAccount(t, srv, "token-1\n")
	host, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "https://"), ":")
	env := map[string]string{"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port}
	c, err := inClusterClient(func(k string) string { return env[k] }, dir)
	if err != nil {
		t.Fatalf("inClusterClient() error = %v", err)
	}
	ctx := context.Background()

	nodes, err := c.ListNodes(ctx)
	if err != nil || !reflect.DeepEqual(nodes, kindNodes()) {
		t.Fatalf("ListNodes() = %+v, %v; want the kind nodes", nodes, err)
	}
	if got := lastAuth(); got != "Bearer token-1" {
		t.Errorf("Authorization = %q, want %q", got, "Bearer token-1")
	}

	// the API server goes away during an upgrade; the token is rotated
	setStatus(http.StatusServiceUnavailable)
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("token-2"), 0o600); err != nil {
		t.Fatal(err)
	}
	if nodes, err := c.ListNodes(ctx); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("ListNodes() on 503 = %v, %v; want an error naming the status", nodes, err)
	}
	if got := lastAuth(); got != "Bearer token-2" {
		t.Errorf("Authorization after rotation = %q, want %q", got, "Bearer token-2")
	}

	// and comes back: the same client works again
	setStatus(http.StatusOK)
	if nodes, err := c.ListNodes(ctx); err != nil || len(nodes) != 3 {
		t.Errorf("ListNodes() after recovery = %d nodes, %v; want 3, nil", len(nodes), err)
	}
}

func TestAPIClientErrors(t *testing.T) {
	t.Parallel()
	handler := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(kindNodesJSON))
	})
	srv := httptest.NewTLSServer(handler)
	defer srv.Close()
	other := httptest.NewTLSServer(handler)
	defer other.Close()
	stopped := httptest.NewTLSServer(handler)
	stopped.Close()

	tests := []struct {
		name  string
		url   string
		saDir string
	}{
		{name: "server certificate from another CA", url: srv.URL, saDir: writeServiceAccount(t, other, "t")},
		{name: "API server down", url: stopped.URL, saDir: writeServiceAccount(t, stopped, "t")},
		{name: "token missing", url: srv.URL, saDir: func() string {
			dir := writeServiceAccount(t, srv, "t")
			if err := os.Remove(filepath.Join(dir, "token")); err != nil {
				t.Fatal(err)
			}
			return dir
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := newAPIClient(tc.url, filepath.Join(tc.saDir, "token"), filepath.Join(tc.saDir, "ca.crt"))
			if err != nil {
				t.Fatalf("newAPIClient() error = %v", err)
			}
			if nodes, err := c.ListNodes(context.Background()); err == nil {
				t.Errorf("ListNodes() = %+v, nil; want an error", nodes)
			}
		})
	}
}

func TestInClusterClient(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	dir := writeServiceAccount(t, srv, "t")
	tests := []struct {
		name     string
		env      map[string]string
		wantBase string
		wantErr  bool
	}{
		{name: "IPv4", env: map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}, wantBase: "https://10.96.0.1:443"},
		{name: "IPv6", env: map[string]string{"KUBERNETES_SERVICE_HOST": "fd00:10:96::1", "KUBERNETES_SERVICE_PORT": "443"}, wantBase: "https://[fd00:10:96::1]:443"},
		{name: "not in a pod", env: map[string]string{}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := inClusterClient(func(k string) string { return tc.env[k] }, dir)
			if (err != nil) != tc.wantErr {
				t.Fatalf("inClusterClient() error = %v, wantErr %v", err, tc.wantErr)
			}
			if !tc.wantErr && c.base != tc.wantBase {
				t.Errorf("base = %q, want %q", c.base, tc.wantBase)
			}
		})
	}
}
