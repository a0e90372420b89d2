//go:build e2e

/*
Copyright 2026 The kind-upgrade Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kindupgrade/kind-upgrade/internal/lab/kindtest"
)

// pullMirror is the registry stand-in (hack/e2e/mirror) as the HTTPS
// proxy of a cluster's nodes: it answers for registry.k8s.io and docker.io
// from the manifest's pullArchives, with the CA the node images trust.
type pullMirror struct {
	h             *harness
	network, name string
	proxy         string
	started       bool
}

// pullThroughMirror sets the harness up so that the cluster it creates
// next pulls through the mirror: kind puts its nodes on a network of their
// own (KIND_EXPERIMENTAL_DOCKER_NETWORK) and passes them the proxy, by the
// mirror's name on that network (kind adds the cluster's own addresses to
// NO_PROXY). Call start once the cluster exists (kind makes the network);
// nothing pulls before the upgrade, the node image holds every image. The
// cleanup deletes the cluster, the mirror and the network, in that order.
func (h *harness) pullThroughMirror() *pullMirror {
	m := &pullMirror{h: h, network: h.Name + "-net", name: h.Name + "-registry"}
	m.proxy = fmt.Sprintf("http://%s:3128", m.name)
	h.CreateEnv = []string{
		"KIND_EXPERIMENTAL_DOCKER_NETWORK=" + m.network,
		"HTTPS_PROXY=" + m.proxy, "HTTP_PROXY=" + m.proxy, "NO_PROXY=",
	}
	h.t.Cleanup(m.cleanup)
	return m
}

// start runs the mirror on the cluster's network and waits until it
// listens.
func (m *pullMirror) start() {
	h := m.h
	h.Must("start the registry stand-in "+m.name+" on "+m.network+" (the nodes' HTTPS_PROXY: "+m.proxy+")", func() error {
		_, _ = h.Run(nil, h.Provider, "rm", "-f", m.name)
		if _, err := h.Run(nil, h.Provider, "run", "-d", "--name", m.name, "--network", m.network,
			"-v", h.Manifest.PullArchives+":/archives:ro", "-v", h.Manifest.MirrorCA+":/ca:ro",
			h.Manifest.MirrorImage, "serve", "--listen", ":3128", "--ca-dir", "/ca", "--archives", "/archives"); err != nil {
			return err
		}
		m.started = true
		return kindtest.Eventually(time.Minute, func() error {
			out, err := h.Run(nil, h.Provider, "logs", m.name)
			if err == nil && !strings.Contains(out, "proxy listening") {
				err = fmt.Errorf("the registry stand-in does not listen yet:\n%s", out)
			}
			return err
		})
	})
}

// served checks that the mirror answered a request for a path containing
// part with 200.
func (m *pullMirror) served(part string) error {
	out, err := m.h.Run(nil, m.h.Provider, "logs", m.name)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, part) && strings.Contains(line, " 200 ") {
			return nil
		}
	}
	return fmt.Errorf("the registry stand-in served no request for %s:\n%s", part, lastLines(out, 20))
}

// cleanup keeps the mirror's log, then deletes the cluster (whose nodes
// hold the network) unless it is kept, the mirror and the network.
func (m *pullMirror) cleanup() {
	h := m.h
	if m.started {
		if out, err := h.Run(nil, h.Provider, "logs", m.name); err == nil {
			_ = os.WriteFile(filepath.Join(h.Artifacts, "registry-stand-in.log"), []byte(out), 0o644)
		}
	}
	if *keepFlag {
		return
	}
	_, _ = h.Run(nil, h.Kind, "delete", "cluster", "--name", h.Name)
	_, _ = h.Run(nil, h.Provider, "rm", "-f", m.name)
	_, _ = h.Run(nil, h.Provider, "network", "rm", m.network)
}

// imageOnNodes checks that image is (want) or is not on each node's
// containerd.
func (h *harness) imageOnNodes(image string, want bool, nodes ...string) error {
	for _, n := range nodes {
		// stdout only: ctr warns on stderr (cgroup v1)
		out, err := h.RunStdout(h.Provider, "exec", n, "ctr", "--namespace=k8s.io", "images", "list", "--quiet", "name=="+image)
		if err != nil {
			return err
		}
		if has := strings.TrimSpace(out) == image; has != want {
			return fmt.Errorf("%s on %s: %v, want %v (%q)", image, n, has, want, out)
		}
	}
	return nil
}
