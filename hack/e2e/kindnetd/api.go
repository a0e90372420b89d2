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
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// apiClient is a minimal in-cluster Kubernetes API client.
type apiClient struct {
	base      string // https://host:port
	tokenPath string // re-read on every request: the kubelet rotates it
	http      *http.Client
}

// inClusterClient configures the client the way client-go's in-cluster
// config does: service host and port from the environment, token and CA
// from the service account volume (serviceAccountDir).
func inClusterClient(getenv func(string) string, saDir string) (*apiClient, error) {
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, errors.New("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set (not running in a pod?)")
	}
	return newAPIClient("https://"+net.JoinHostPort(host, port),
		filepath.Join(saDir, "token"), filepath.Join(saDir, "ca.crt"))
}

func newAPIClient(base, tokenPath, caPath string) (*apiClient, error) {
	caPEM, err := os.ReadFile(caPath)
	if err != nil {
		return nil, fmt.Errorf("failed to read the API server CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("failed to parse the API server CA %s: no PEM certificate", caPath)
	}
	transport := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
	}
	return &apiClient{
		base:      base,
		tokenPath: tokenPath,
		http:      &http.Client{Transport: transport, Timeout: 15 * time.Second},
	}, nil
}

// ListNodes returns every node of the cluster.
func (c *apiClient) ListNodes(ctx context.Context) ([]node, error) {
	body, err := c.get(ctx, "/api/v1/nodes")
	if err != nil {
		return nil, err
	}
	return parseNodes(body)
}

func (c *apiClient) get(ctx context.Context, path string) ([]byte, error) {
	token, err := os.ReadFile(c.tokenPath)
	if err != nil {
		return nil, fmt.Errorf("failed to read the service account token: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, http.NoBody)
	if err != nil {
		return nil, fmt.Errorf("failed to build GET %s: %w", path, err)
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("failed to GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("failed to read the answer to GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("failed to GET %s: %s: %.200s", path, resp.Status, strings.TrimSpace(string(body)))
	}
	return body, nil
}

// node is what the daemon needs of a Kubernetes Node.
type node struct {
	Name        string
	InternalIPs []netip.Addr
	PodCIDRs    []netip.Prefix
}

// nodeList is the part of a v1 NodeList that parseNodes reads.
type nodeList struct {
	Items []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			PodCIDR  string   `json:"podCIDR"`
			PodCIDRs []string `json:"podCIDRs"`
		} `json:"spec"`
		Status struct {
			Addresses []struct {
				Type    string `json:"type"`
				Address string `json:"address"`
			} `json:"addresses"`
		} `json:"status"`
	} `json:"items"`
}

// parseNodes reads a NodeList document. InternalIP addresses that are not
// IPs are ignored; a podCIDR that is not a CIDR is an error.
func parseNodes(data []byte) ([]node, error) {
	var list nodeList
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("failed to decode the node list: %w", err)
	}
	nodes := make([]node, 0, len(list.Items))
	for _, item := range list.Items {
		n := node{Name: item.Metadata.Name}
		for _, a := range item.Status.Addresses {
			if ip, err := netip.ParseAddr(a.Address); err == nil && a.Type == "InternalIP" {
				n.InternalIPs = append(n.InternalIPs, ip.Unmap())
			}
		}
		cidrs := item.Spec.PodCIDRs
		if len(cidrs) == 0 && item.Spec.PodCIDR != "" {
			cidrs = []string{item.Spec.PodCIDR}
		}
		for _, c := range cidrs {
			p, err := netip.ParsePrefix(c)
			if err != nil {
				return nil, fmt.Errorf("failed to parse podCIDR of node %s: %w", n.Name, err)
			}
			n.PodCIDRs = append(n.PodCIDRs, p.Masked())
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// isSelf tells whether n is the node whose InternalIP is hostIP.
func isSelf(n node, hostIP netip.Addr) bool {
	return slices.Contains(n.InternalIPs, hostIP)
}

// findSelf returns the node whose InternalIP is hostIP.
func findSelf(nodes []node, hostIP netip.Addr) (node, bool) {
	for _, n := range nodes {
		if isSelf(n, hostIP) {
			return n, true
		}
	}
	return node{}, false
}
