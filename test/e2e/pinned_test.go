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
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kindupgrade/kind-upgrade/internal/lab/etcdcheck"
	"github.com/kindupgrade/kind-upgrade/internal/lab/kindtest"
	"github.com/kindupgrade/kind-upgrade/internal/lab/timeline"
)

// pinnedClusterConfig is one control-plane node and two workers;
// pinnedPatch pins etcd's and CoreDNS's tags (ETCD_TAG, COREDNS_TAG) the
// way a kind user does.
const pinnedClusterConfig = `kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
- role: control-plane
- role: worker
- role: worker
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
// kubeadmConfigPatches pinned etcd and CoreDNS to the old version's tags,
// and whose nodes pull from a registry: the stand-in (hack/e2e/mirror),
// their HTTPS proxy, as a proxy of a company network would be. `kubeadm
// upgrade apply` keeps pinned images, so the upgrade must plan, check and
// finish with them: from the target's release tarball and nothing else
// (no etcd or CoreDNS archive, which the pinned cluster does not need, and
// no kubeadm pause, which the nodes pull), control plane only; then from
// the target's kind node image and nothing else, the kubelets. Each half
// is the upgrade of Kubernetes' own upgrade tests (test/upgrades), in
// kubeadm's x-on-y shape: a master upgrade, then a node upgrade, with
// two workers so that the tests' workloads are really drained.
func TestIntegrationUpgradePinnedImages(t *testing.T) {
	m := integration(t)
	from, to := m.From, m.To
	fromEtcd, fromCoreDNS := m.FromEtcdImage, m.FromCoreDNSImage
	toEtcd, toCoreDNS := m.ToEtcdImage, m.ToCoreDNSImage
	if fromEtcd == toEtcd || fromCoreDNS == toCoreDNS {
		t.Logf("note: %s -> %s keeps etcd %s or CoreDNS %s, so pinning them changes less", from, to, fromEtcd, fromCoreDNS)
	}
	h := newHarness(t, m, "kind-upgrade-e2e-pinned", 3, "pinned")
	worker := h.Name + "-worker"
	mirror := h.pullThroughMirror()

	patch := strings.NewReplacer("ETCD_TAG", tagOf(fromEtcd), "COREDNS_TAG", tagOf(fromCoreDNS)).Replace(pinnedPatch)
	h.CreateCluster(from, kindtest.WithPatch(pinnedClusterConfig, patch))
	mirror.start()
	h.Must("the nodes are Ready at "+from, func() error { return h.NodesReadyAt(from, 3*time.Minute) })
	h.Must("the cluster's kubeadm configuration pins etcd and CoreDNS", func() error { return h.pinned(fromEtcd, fromCoreDNS) })
	token := fmt.Sprintf("written-before-the-upgrade-%d", time.Now().UnixNano())
	h.Must(fmt.Sprintf("write %d ConfigMaps to etcd (namespace e2e-etcd)", etcdcheck.Keys), func() error { return h.WriteEtcdKeys(token) })
	// kind's nodes hold containerd's sandbox image, not kubeadm's pause
	pause := m.ToPauseImage
	workers := []string{worker, h.Name + "-worker2"}
	h.Must("no node has kubeadm's "+pause+" yet", func() error { return h.imageOnNodes(pause, false, append([]string{h.CP}, workers...)...) })
	h.Must("load the images Kubernetes' upgrade tests run (and the canary)", h.loadTestImages)

	// kubeadm's x-on-y shape, Kubernetes' own upgrade tests across each
	// half: the control plane first, then the kubelets
	var master, node suiteRun
	h.Must("Kubernetes' upgrade tests across kind alpha upgrade to "+to+" from the release tarball alone, pinned etcd and CoreDNS, nodes pulling what it lacks; control plane only (a master upgrade)", func() error {
		var err error
		master, err = h.runUpgradeSuite(suiteSpec{typ: "master", prefix: "pinned-master-"}, "--image-dir", m.TargetRelease, "-v", "1")
		return err
	})
	h.Check("every node pulled kubeadm's "+pause+" through the registry stand-in (the control-plane node in preflight, the workers in load-artifacts)", func() error {
		if err := h.imageOnNodes(pause, true, append([]string{h.CP}, workers...)...); err != nil {
			return err
		}
		return mirror.served("/v2/pause/manifests/" + tagOf(pause))
	})
	h.Must("Kubernetes' upgrade tests across kind alpha upgrade to "+to+" from "+m.TargetNodeImage+" alone, the kubelets (a node upgrade)", func() error {
		var err error
		node, err = h.runUpgradeSuite(suiteSpec{typ: "node", prefix: "pinned-node-"}, "--image", m.TargetNodeImage, "-v", "1")
		return err
	})
	cpEvents, kubeletEvents := master.Events, node.Events
	kindtest.WriteFile(t, h.Artifacts, "pinned-control-plane-events.jsonl", cpEvents)
	kindtest.WriteFile(t, h.Artifacts, "pinned-upgrade-events.jsonl", kubeletEvents)
	order, times, total, err := timeline.PhaseTimes(cpEvents + kubeletEvents)
	if err != nil {
		t.Errorf("failed to read the upgrade's events: %v", err)
	}
	var report strings.Builder
	fmt.Fprintf(&report, "Upgrade %s -> %s of 1 control-plane node and 2 workers with etcd pinned to %s and CoreDNS to %s (the target's defaults: %s, %s), nodes pulling through the registry stand-in; from the release tarball (control plane), then from %s (kubelets):\n", from, to, tagOf(fromEtcd), tagOf(fromCoreDNS), tagOf(toEtcd), tagOf(toCoreDNS), m.TargetNodeImage)
	for _, p := range order {
		fmt.Fprintf(&report, "  %-15s %7.1fs\n", p, times[p])
	}
	fmt.Fprintf(&report, "  %-15s %7.1fs\n", "total", total)
	for _, r := range []struct {
		name string
		run  suiteRun
	}{{"master", master}, {"node", node}} {
		fmt.Fprintf(&report, "\nKubernetes' upgrade tests across the %s upgrade: %s\n", r.name, describeCases(r.run.Cases))
		for _, f := range r.run.Figures {
			fmt.Fprintf(&report, "  %s\n", f)
		}
	}
	report.WriteString("\n" + h.Versions("After the upgrade"))
	kindtest.WriteFile(t, h.Artifacts, "pinned-report.txt", report.String())
	t.Log("\n" + report.String())

	h.checkAfterUpgrade(afterUpgrade{to: to, kubeProxy: true, configMapsToken: token})
	h.Check("etcd still runs the pinned "+fromEtcd, func() error { return h.podImage("component=etcd", fromEtcd) })
	h.Check("CoreDNS still runs the pinned "+fromCoreDNS, func() error { return h.podImage("k8s-app=kube-dns", fromCoreDNS) })
	h.Check("the kubeadm configuration still pins them", func() error { return h.pinned(fromEtcd, fromCoreDNS) })
	h.Check("the registry stand-in was asked for no target etcd or CoreDNS (pinned: not needed)", func() error {
		for _, image := range []string{toEtcd, toCoreDNS} {
			if image == fromEtcd || image == fromCoreDNS {
				continue
			}
			if err := mirror.served("/manifests/" + tagOf(image)); err == nil {
				return fmt.Errorf("the nodes pulled %s", image)
			}
		}
		return nil
	})
	h.checkNoOpRerun(m.TargetRelease, to)
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
