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
	"strings"
	"time"

	"github.com/kindupgrade/kind-upgrade/internal/lab/etcdcheck"
	"github.com/kindupgrade/kind-upgrade/internal/lab/kindtest"
	"github.com/kindupgrade/kind-upgrade/internal/lab/timeline"
)

// afterUpgrade is what a suite expects of its cluster once the upgrade finished:
// the checks every suite shares, written once here. A zero field skips its
// check; the suites add their own (the HA suite's etcd members and load
// balancer, the pinned suite's pinned images, ...).
type afterUpgrade struct {
	// to is the target version: every node Ready at it (kubelet and
	// /kind/version) and the API server reporting it are always checked
	to string
	// etcd and coreDNS are the images their pods must run
	etcd, coreDNS string
	// kubeProxy: kube-proxy runs the target's image
	kubeProxy bool
	// canaryHTTP checks the canary answers through its Service
	canaryHTTP func() error
	// volumeToken is what the PersistentVolume canary wrote before
	volumeToken string
	// configMapsToken is the token of the etcdcheck.Keys ConfigMaps written
	// before
	configMapsToken string
	// addonsBefore are kind's add-ons' images before the upgrade (addonImages)
	addonsBefore string
	// dns: cluster DNS resolves a Service name
	dns bool
	// noCordon: no node is left cordoned
	noCordon bool
}

// checkAfterUpgrade runs the shared checks a asks for.
func (h *harness) checkAfterUpgrade(a afterUpgrade) {
	h.Check("every node Ready at "+a.to+" (kubelet and /kind/version)", func() error { return h.AllAt(a.to) })
	h.Check("the API server runs "+a.to, func() error { return h.ServerAt(a.to) })
	if a.etcd != "" {
		h.Check("etcd runs "+a.etcd, func() error { return h.podImage("component=etcd", a.etcd) })
	}
	if a.coreDNS != "" {
		h.Check("CoreDNS runs "+a.coreDNS, func() error { return h.podImage("k8s-app=kube-dns", a.coreDNS) })
	}
	if a.kubeProxy {
		image := "registry.k8s.io/kube-proxy:" + a.to
		h.Check("kube-proxy runs "+image, func() error { return h.podImage("k8s-app=kube-proxy", image) })
	}
	h.Check("no control-plane pod keeps the upgrade's nudge annotation (only old mirror pods are nudged)", func() error {
		out, err := h.Kubectl("get", "pods", "--namespace=kube-system", "--selector=tier=control-plane", "-o", `jsonpath={range .items[*]}{.metadata.name}={.metadata.annotations.kind-upgrade\.x-k8s\.io/nudged} {end}`)
		if err != nil {
			return err
		}
		for _, f := range strings.Fields(out) {
			if name, value, _ := strings.Cut(f, "="); value != "" {
				return fmt.Errorf("pod %s has kind-upgrade.x-k8s.io/nudged=%s", name, value)
			}
		}
		return nil
	})
	if a.noCordon {
		h.Check("no node is left cordoned", func() error {
			out, err := h.Kubectl("get", "nodes", "-o", "jsonpath={range .items[*]}{.metadata.name}={.spec.unschedulable} {end}")
			if err == nil && strings.Contains(out, "=true") {
				err = fmt.Errorf("cordoned: %s", out)
			}
			return err
		})
	}
	if a.canaryHTTP != nil {
		h.Check("the canary answers HTTP through its Service after", a.canaryHTTP)
	}
	if a.volumeToken != "" {
		h.Check("the PersistentVolume data reads back", func() error {
			// its pod may have just been moved by a drain
			return kindtest.Eventually(time.Minute, func() error {
				out, err := h.Canary("read", "/data/canary.txt")
				if err == nil && strings.TrimSpace(out) != a.volumeToken {
					err = fmt.Errorf("read %q, want %q", out, a.volumeToken)
				}
				return err
			})
		})
	}
	if a.configMapsToken != "" {
		h.Check(fmt.Sprintf("the %d ConfigMaps written before read back", etcdcheck.Keys), func() error {
			out, err := h.Kubectl("get", "configmaps", "--namespace=e2e-etcd", "-o", "json")
			if err != nil {
				return err
			}
			return etcdcheck.CheckKeys(out, a.configMapsToken)
		})
	}
	if a.addonsBefore != "" {
		h.Check("kind's add-ons are still available and were not changed", func() error {
			now, err := h.addonImages()
			if err == nil && now != a.addonsBefore {
				err = fmt.Errorf("the add-ons' images changed: before %s, after %s", a.addonsBefore, now)
			}
			return err
		})
	}
	if a.dns {
		h.Check("cluster DNS resolves", func() error {
			return kindtest.Eventually(time.Minute, func() error {
				_, err := h.Canary("lookup", "kubernetes.default.svc.cluster.local")
				return err
			})
		})
	}
}

// checkNoOpRerun checks that running the upgrade again from imageDir
// changes nothing: it exits 0, says there is nothing to do, runs only
// preflight and leaves every node at to.
func (h *harness) checkNoOpRerun(imageDir, to string) {
	h.Check("a second upgrade changes nothing and exits 0", func() error {
		out, err := h.RunStdout(h.Kind, "alpha", "upgrade", "--name", h.Name, "--image-dir", imageDir, "--output", "json")
		if err != nil {
			return err
		}
		kindtest.WriteFile(h.t, h.Artifacts, "second-upgrade-events.jsonl", out)
		if !strings.Contains(out, "nothing to do") {
			return fmt.Errorf("the second upgrade did not say there was nothing to do:\n%s", out)
		}
		order, _, _, err := timeline.PhaseTimes(out)
		if err != nil {
			return err
		}
		if strings.Join(order, ",") != "preflight" {
			return fmt.Errorf("the second upgrade ran phases %v", order)
		}
		return h.AllAt(to)
	})
}
