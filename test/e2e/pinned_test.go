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
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/test/e2e/etcdcheck"
	"github.com/kindupgrade/kind-upgrade/test/e2e/timeline"
	"sigs.k8s.io/yaml"
)

// Environment of the pinned-images test (hack/e2e/run.sh pinned sets it).
const (
	envPinned      = "E2E_PINNED"             // set: run TestIntegrationUpgradePinnedImages
	envFromEtcd    = "E2E_FROM_ETCD_IMAGE"    // etcd image kubeadm lists for the old version
	envFromCoreDNS = "E2E_FROM_COREDNS_IMAGE" // CoreDNS image kubeadm lists for the old version
)

// pinnedClusterConfig is one control-plane node; pinnedPatch pins etcd's
// and CoreDNS's tags (ETCD_TAG, COREDNS_TAG) the way a kind user does.
const pinnedClusterConfig = `kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
- role: control-plane
`

const pinnedPatch = `kind: ClusterConfiguration
etcd:
  local:
    imageTag: ETCD_TAG
dns:
  imageTag: COREDNS_TAG
`

// tagOf returns "3.6.8-0" for "registry.k8s.io/etcd:3.6.8-0".
func tagOf(image string) string {
	return image[strings.LastIndex(image, ":")+1:]
}

// TestIntegrationUpgradePinnedImages upgrades a cluster whose
// kubeadmConfigPatches pinned etcd and CoreDNS to the old version's tags.
// `kubeadm upgrade apply` keeps pinned images, so the upgrade must plan,
// check and finish with them: given an --image-dir without the target's
// etcd and CoreDNS archives, it upgrades everything else, and etcd and
// CoreDNS still run the pinned images afterwards.
func TestIntegrationUpgradePinnedImages(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Docker and the offline artifacts (make e2e-pinned)")
	}
	if os.Getenv(envPinned) == "" {
		t.Skip(envPinned + " is not set: this test runs with make e2e-pinned")
	}
	from, to := getenv(t, envFrom), getenv(t, envTo)
	fromEtcd, fromCoreDNS := getenv(t, envFromEtcd), getenv(t, envFromCoreDNS)
	toEtcd, toCoreDNS := getenv(t, envEtcd), getenv(t, envCoreDNS)
	if fromEtcd == toEtcd || fromCoreDNS == toCoreDNS {
		t.Logf("note: %s -> %s keeps etcd %s or CoreDNS %s, so pinning them changes less", from, to, fromEtcd, fromCoreDNS)
	}
	h := newHarness(t, "kind-upgrade-e2e-pinned", 1, "kind-alpha-upgrade-e2e-pinned "+from+"-"+to)

	// --image-dir: the release without the target's etcd and CoreDNS
	goodDir := getenv(t, envImageDir)
	imageDir := filepath.Join(t.TempDir(), "release without etcd and coredns")
	linkTree(t, goodDir, imageDir)
	h.must("leave the target's etcd and CoreDNS archives out of --image-dir", func() error {
		for _, name := range []string{"etcd.tar", "coredns.tar"} {
			if err := os.Remove(filepath.Join(imageDir, name)); err != nil {
				return err
			}
		}
		return noArchiveOf(imageDir, []string{toEtcd, toCoreDNS})
	})

	patch := strings.NewReplacer("ETCD_TAG", tagOf(fromEtcd), "COREDNS_TAG", tagOf(fromCoreDNS)).Replace(pinnedPatch)
	h.createCluster(from, withPatch(pinnedClusterConfig, patch))
	h.must("the node is Ready at "+from, func() error {
		return eventually(3*time.Minute, func() error { return h.allAt(from) })
	})
	h.must("the cluster's kubeadm configuration pins etcd and CoreDNS", func() error { return h.pinned(fromEtcd, fromCoreDNS) })
	token := fmt.Sprintf("written-before-the-upgrade-%d", time.Now().UnixNano())
	h.must(fmt.Sprintf("write %d ConfigMaps to etcd (namespace e2e-etcd)", etcdcheck.Keys), func() error { return h.writeEtcdKeys(token) })

	var events string
	h.must("kind alpha upgrade to "+to+" with etcd and CoreDNS pinned", func() error {
		var err error
		events, err = h.runStdout(h.kind, "alpha", "upgrade", "--name", h.name, "--image-dir", imageDir, "--output", "json", "-v", "1")
		writeFile(t, h.artifacts, "pinned-upgrade-events.jsonl", events)
		return err
	})
	order, times, total, err := timeline.PhaseTimes(events)
	if err != nil {
		t.Errorf("failed to read the upgrade's events: %v", err)
	}
	var report strings.Builder
	fmt.Fprintf(&report, "Upgrade %s -> %s of 1 control-plane node with etcd pinned to %s and CoreDNS to %s (the target's defaults: %s, %s):\n", from, to, tagOf(fromEtcd), tagOf(fromCoreDNS), tagOf(toEtcd), tagOf(toCoreDNS))
	for _, p := range order {
		fmt.Fprintf(&report, "  %-15s %7.1fs\n", p, times[p])
	}
	fmt.Fprintf(&report, "  %-15s %7.1fs\n", "total", total)
	report.WriteString("\n" + h.versions("After the upgrade"))
	writeFile(t, h.artifacts, "pinned-report.txt", report.String())
	t.Log("\n" + report.String())

	h.check("the node is Ready at "+to+" (kubelet and /kind/version)", func() error { return h.allAt(to) })
	h.check("the API server runs "+to, func() error { return h.serverAt(to) })
	h.check("kube-proxy runs the target's image", func() error {
		return h.podImage("k8s-app=kube-proxy", "registry.k8s.io/kube-proxy:"+to)
	})
	h.check("etcd still runs the pinned "+fromEtcd, func() error { return h.podImage("component=etcd", fromEtcd) })
	h.check("CoreDNS still runs the pinned "+fromCoreDNS, func() error { return h.podImage("k8s-app=kube-dns", fromCoreDNS) })
	h.check("the kubeadm configuration still pins them", func() error { return h.pinned(fromEtcd, fromCoreDNS) })
	h.check("the ConfigMaps written before read back", func() error {
		out, err := h.kubectl("get", "configmaps", "--namespace=e2e-etcd", "-o", "json")
		if err != nil {
			return err
		}
		return etcdcheck.CheckKeys(out, token)
	})
	h.check("a second upgrade changes nothing and exits 0", func() error {
		out, err := h.runStdout(h.kind, "alpha", "upgrade", "--name", h.name, "--image-dir", imageDir, "--output", "json")
		if err != nil {
			return err
		}
		writeFile(t, h.artifacts, "pinned-second-upgrade-events.jsonl", out)
		if !strings.Contains(out, "nothing to do") {
			return fmt.Errorf("the second upgrade did not say there was nothing to do:\n%s", out)
		}
		return nil
	})
}

// pinned checks the kubeadm-config ConfigMap's ClusterConfiguration sets
// etcd's and CoreDNS's image tags to those of etcd and coreDNS.
func (h *harness) pinned(etcd, coreDNS string) error {
	out, err := h.kubectl("get", "configmap", "kubeadm-config", "--namespace=kube-system", "-o", "jsonpath={.data.ClusterConfiguration}")
	if err != nil {
		return err
	}
	var cfg struct {
		Etcd struct {
			Local struct{ ImageTag string } `json:"local"`
		} `json:"etcd"`
		DNS struct{ ImageTag string } `json:"dns"`
	}
	if err := yaml.Unmarshal([]byte(out), &cfg); err != nil {
		return err
	}
	if cfg.Etcd.Local.ImageTag != tagOf(etcd) || cfg.DNS.ImageTag != tagOf(coreDNS) {
		return fmt.Errorf("ClusterConfiguration pins etcd %q and CoreDNS %q, want %q and %q:\n%s", cfg.Etcd.Local.ImageTag, cfg.DNS.ImageTag, tagOf(etcd), tagOf(coreDNS), out)
	}
	return nil
}
