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
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kindupgrade/kind-upgrade/test/e2e/etcdcheck"
	"github.com/kindupgrade/kind-upgrade/test/e2e/kindtest"
	"github.com/kindupgrade/kind-upgrade/test/e2e/timeline"
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
	m := integration(t)
	from, to := m.From, m.To
	fromEtcd, fromCoreDNS := m.FromEtcdImage, m.FromCoreDNSImage
	toEtcd, toCoreDNS := m.ToEtcdImage, m.ToCoreDNSImage
	if fromEtcd == toEtcd || fromCoreDNS == toCoreDNS {
		t.Logf("note: %s -> %s keeps etcd %s or CoreDNS %s, so pinning them changes less", from, to, fromEtcd, fromCoreDNS)
	}
	h := newHarness(t, m, "kind-upgrade-e2e-pinned", 1, "pinned")

	// --image-dir: the release without the target's etcd and CoreDNS
	goodDir := m.ImageDir
	imageDir := filepath.Join(t.TempDir(), "release without etcd and coredns")
	linkTree(t, goodDir, imageDir)
	h.Must("leave the target's etcd and CoreDNS archives out of --image-dir", func() error {
		for _, name := range []string{"etcd.tar", "coredns.tar"} {
			if err := os.Remove(filepath.Join(imageDir, name)); err != nil {
				return err
			}
		}
		return noArchiveOf(imageDir, []string{toEtcd, toCoreDNS})
	})

	patch := strings.NewReplacer("ETCD_TAG", tagOf(fromEtcd), "COREDNS_TAG", tagOf(fromCoreDNS)).Replace(pinnedPatch)
	h.CreateCluster(from, kindtest.WithPatch(pinnedClusterConfig, patch))
	h.Must("the node is Ready at "+from, func() error {
		return kindtest.Eventually(3*time.Minute, func() error { return h.AllAt(from) })
	})
	h.Must("the cluster's kubeadm configuration pins etcd and CoreDNS", func() error { return h.pinned(fromEtcd, fromCoreDNS) })
	token := fmt.Sprintf("written-before-the-upgrade-%d", time.Now().UnixNano())
	h.Must(fmt.Sprintf("write %d ConfigMaps to etcd (namespace e2e-etcd)", etcdcheck.Keys), func() error { return h.WriteEtcdKeys(token) })

	var events string
	h.Must("kind alpha upgrade to "+to+" with etcd and CoreDNS pinned", func() error {
		var err error
		events, err = h.RunStdout(h.Kind, "alpha", "upgrade", "--name", h.Name, "--image-dir", imageDir, "--output", "json", "-v", "1")
		kindtest.WriteFile(t, h.Artifacts, "pinned-upgrade-events.jsonl", events)
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
	report.WriteString("\n" + h.Versions("After the upgrade"))
	kindtest.WriteFile(t, h.Artifacts, "pinned-report.txt", report.String())
	t.Log("\n" + report.String())

	h.checkAfterUpgrade(afterUpgrade{to: to, kubeProxy: true, configMapsToken: token})
	h.Check("etcd still runs the pinned "+fromEtcd, func() error { return h.podImage("component=etcd", fromEtcd) })
	h.Check("CoreDNS still runs the pinned "+fromCoreDNS, func() error { return h.podImage("k8s-app=kube-dns", fromCoreDNS) })
	h.Check("the kubeadm configuration still pins them", func() error { return h.pinned(fromEtcd, fromCoreDNS) })
	h.checkNoOpRerun(imageDir, to)
}

// pinned checks the kubeadm-config ConfigMap's ClusterConfiguration sets
// etcd's and CoreDNS's image tags to those of etcd and coreDNS.
func (h *harness) pinned(etcd, coreDNS string) error {
	out, err := h.Kubectl("get", "configmap", "kubeadm-config", "--namespace=kube-system", "-o", "jsonpath={.data.ClusterConfiguration}")
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
