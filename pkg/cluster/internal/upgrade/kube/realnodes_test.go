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

package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// captures are outputs captured from the nodes of a real kind cluster (see
// ../testdata/nodes/README.md): before and after its upgrade.
var captures = []string{"v1.33.13", "v1.34.4"}

func readCapture(t *testing.T, version, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "nodes", version, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParsersOnRealNodes(t *testing.T) {
	t.Parallel()
	for _, version := range captures {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			nodes, err := ParseNodeList(readCapture(t, version, "nodes.json"))
			if err != nil {
				t.Fatal(err)
			}
			if len(nodes) != 2 {
				t.Fatalf("%d nodes, want 2", len(nodes))
			}
			for _, n := range nodes {
				if !n.Ready || n.KubeletVersion != version || n.Unschedulable {
					t.Errorf("node %+v, want Ready, schedulable, kubelet %s", n, version)
				}
			}

			pods, err := ParsePodList(readCapture(t, version, "control-plane-pods.json"))
			if err != nil {
				t.Fatal(err)
			}
			components := map[string]bool{}
			for _, p := range pods {
				components[p.Component] = true
				if !p.Ready || p.NodeName != "capture-control-plane" || len(p.Images) != 1 {
					t.Errorf("pod %+v, want one Ready container on capture-control-plane", p)
				}
				if p.Component != "etcd" && p.Images[0] != "registry.k8s.io/"+p.Component+":"+version {
					t.Errorf("%s runs %v, want %s", p.Component, p.Images, version)
				}
			}
			for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"} {
				if !components[c] {
					t.Errorf("no %s pod among %+v", c, pods)
				}
			}

			workloads, err := ParseWorkloads(readCapture(t, version, "kube-system-workloads.json"))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, w := range workloads {
				names = append(names, w.Kind+"/"+w.Name)
				if !w.Available {
					t.Errorf("%s %s is not available: %s", w.Kind, w.Name, w.Detail)
				}
			}
			if got := strings.Join(names, " "); !strings.Contains(got, "DaemonSet/kindnet") ||
				!strings.Contains(got, "DaemonSet/kube-proxy") || !strings.Contains(got, "Deployment/coredns") {
				t.Errorf("kube-system workloads %s, want kindnet, kube-proxy and coredns among them", got)
			}

			cfg, err := ParseClusterConfiguration(readCapture(t, version, "cluster-configuration.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.KubernetesVersion != version || cfg.ImageRepository != "registry.k8s.io" {
				t.Errorf("ClusterConfiguration %+v, want kubernetesVersion %s, imageRepository registry.k8s.io", cfg, version)
			}

			pod, err := ParsePod(readCapture(t, version, "kube-apiserver.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if want := "registry.k8s.io/kube-apiserver:" + version; len(pod.Images) != 1 || pod.Images[0] != want {
				t.Errorf("kube-apiserver manifest runs %v, want %s", pod.Images, want)
			}
		})
	}
}
