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

package upgrade_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/fakenode"
)

// etcdManifestImage returns the image of node n's etcd static pod manifest.
func etcdManifestImage(t *testing.T, n *fakenode.Node) string {
	t.Helper()
	f := n.Files["/etc/kubernetes/manifests/etcd.yaml"]
	if f == nil {
		t.Fatalf("node %s has no etcd manifest", n.Name)
	}
	for _, line := range strings.Split(string(f.Content), "\n") {
		if image, ok := strings.CutPrefix(strings.TrimSpace(line), "image: "); ok {
			return image
		}
	}
	t.Fatalf("node %s's etcd manifest names no image:\n%s", n.Name, f.Content)
	return ""
}

// TestPinnedEtcdAndCoreDNSAreFollowed: a cluster whose kubeadmConfigPatches
// pinned etcd's and CoreDNS's tags keeps them through `kubeadm upgrade
// apply`, so the upgrade needs neither of the target's default etcd and
// CoreDNS images, and its done checks accept the pinned ones.
func TestPinnedEtcdAndCoreDNSAreFollowed(t *testing.T) {
	t.Parallel()
	old := fakenode.KubeadmImages(from, fakenode.ImageConfig{})
	oldCoreDNS, oldEtcd := old[4], old[6]
	pins := fakenode.ImageConfig{
		Repository: "registry.k8s.io",
		EtcdTag:    oldEtcd[strings.LastIndex(oldEtcd, ":")+1:],
		DNSTag:     oldCoreDNS[strings.LastIndex(oldCoreDNS, ":")+1:],
	}
	e := newEnv(t, 1, 2, fakenode.ReleaseTree)
	e.cluster = fakenode.NewClusterWithImages("kind", from, 1, 2, pins)
	// the target's default etcd and CoreDNS are not brought
	removeFile(t, e, "etcd.tar")
	removeFile(t, e, "coredns.tar")

	mustUpgrade(t, e)
	assertUpgraded(t, e.cluster)
	if got := etcdManifestImage(t, e.cluster.Nodes[0]); got != oldEtcd {
		t.Errorf("etcd runs %s, want the pinned %s", got, oldEtcd)
	}
	if e.cluster.CoreDNS != oldCoreDNS {
		t.Errorf("CoreDNS runs %s, want the pinned %s", e.cluster.CoreDNS, oldCoreDNS)
	}
	snapshotUnchanged(t, e, func() {
		if _, err := e.run(nil); err != nil {
			t.Errorf("a second run failed: %v", err)
		}
	})
}

// TestEtcdAndCoreDNSRepositoriesAreFollowed: etcd and CoreDNS moved to
// repositories of their own. The target's images are needed under those
// names: archives under kubeadm's default names are refused before anything
// changes, naming the image the cluster will ask for, and the upgrade works
// once the archives carry those names.
func TestEtcdAndCoreDNSRepositoriesAreFollowed(t *testing.T) {
	t.Parallel()
	repos := fakenode.ImageConfig{
		Repository:     "registry.k8s.io",
		EtcdRepository: "registry.example/etcd-mirror",
		DNSRepository:  "registry.example/dns",
	}
	e := newEnv(t, 1, 1, fakenode.ReleaseTree)
	e.cluster = fakenode.NewClusterWithImages("kind", from, 1, 1, repos)
	want := fakenode.KubeadmImages(target, repos)
	newCoreDNS, newEtcd := want[4], want[6]
	if !strings.HasPrefix(newEtcd, "registry.example/etcd-mirror/etcd:") || !strings.HasPrefix(newCoreDNS, "registry.example/dns/coredns:") {
		t.Fatalf("the fake kubeadm lists %s and %s", newEtcd, newCoreDNS)
	}
	snapshotUnchanged(t, e, func() {
		_, err := e.run(nil)
		if err == nil || !strings.Contains(err.Error(), newEtcd) || !strings.Contains(err.Error(), newCoreDNS) {
			t.Errorf("want a refusal naming %s and %s, got %v", newEtcd, newCoreDNS, err)
		}
	})

	for name, ref := range map[string]string{"etcd.tar": newEtcd, "coredns.tar": newCoreDNS} {
		if err := os.WriteFile(filepath.Join(e.imageDir, name), fakenode.ImageArchive(ref), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustUpgrade(t, e)
	assertUpgraded(t, e.cluster)
	if got := etcdManifestImage(t, e.cluster.Nodes[0]); got != newEtcd {
		t.Errorf("etcd runs %s, want %s", got, newEtcd)
	}
	if e.cluster.CoreDNS != newCoreDNS {
		t.Errorf("CoreDNS runs %s, want %s", e.cluster.CoreDNS, newCoreDNS)
	}
}

// TestClusterConfigurationKubeadmRefuses: when the new kubeadm does not
// take the cluster's stored configuration, the refusal says so instead of
// blaming the binary.
func TestClusterConfigurationKubeadmRefuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 1, fakenode.Flat)
	e.cluster.ConfigAPIVersion = "kubeadm.k8s.io/v1beta2"
	snapshotUnchanged(t, e, func() {
		_, err := e.run(nil)
		if err == nil || !strings.Contains(err.Error(), "kubeadm "+target+" from --image-dir "+e.imageDir+" failed to list its images for this cluster's kubeadm configuration") {
			t.Errorf("want a refusal about the cluster's kubeadm configuration, got %v", err)
		}
	})
}
