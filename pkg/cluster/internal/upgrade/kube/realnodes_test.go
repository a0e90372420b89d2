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
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/nodecapture"
)

func TestParsersOnRealNodes(t *testing.T) {
	t.Parallel()
	for _, version := range nodecapture.Versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			nodes, err := ParseNodeList(nodecapture.Read(t, version, "nodes.json"))
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

			pods, err := ParsePodList(nodecapture.Read(t, version, "control-plane-pods.json"))
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

			workloads, err := ParseWorkloads(nodecapture.Read(t, version, "kube-system-workloads.json"))
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

			cfg, err := ParseClusterConfiguration(nodecapture.Read(t, version, "cluster-configuration.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.KubernetesVersion != version || cfg.ImageRepository != "registry.k8s.io" {
				t.Errorf("ClusterConfiguration %+v, want kubernetesVersion %s, imageRepository registry.k8s.io", cfg, version)
			}
			if v, ok := cfg.APIServer.ExtraArgs.Get("runtime-config"); !ok || v != "" {
				t.Errorf("apiServer extraArgs %v, want kind's runtime-config=\"\"", cfg.APIServer.ExtraArgs)
			}
			if v, _ := cfg.ControllerManager.ExtraArgs.Get("enable-hostpath-provisioner"); v != "true" {
				t.Errorf("controllerManager extraArgs %v, want kind's enable-hostpath-provisioner=true", cfg.ControllerManager.ExtraArgs)
			}
			if got := KubeProxyImage(workloads); got != "registry.k8s.io/kube-proxy:"+version {
				t.Errorf("kube-proxy runs %q, want %s", got, version)
			}

			pod, err := ParsePod(nodecapture.Read(t, version, "kube-apiserver.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if want := "registry.k8s.io/kube-apiserver:" + version; len(pod.Images) != 1 || pod.Images[0] != want {
				t.Errorf("kube-apiserver manifest runs %v, want %s", pod.Images, want)
			}
			if len(pod.Command) < 2 || pod.Command[0] != "kube-apiserver" || pod.Command[len(pod.Command)-1] != "--runtime-config=" {
				t.Errorf("kube-apiserver manifest's command %v, want kube-apiserver's flags, kind's --runtime-config= last", pod.Command)
			}
			for _, p := range pods {
				if len(p.Command) == 0 || p.Command[0] != p.Component {
					t.Errorf("%s's mirror pod has the command %v", p.Component, p.Command)
				}
			}

			info, err := ParseVersionInfo(nodecapture.Read(t, version, "version.json"))
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.TrimPrefix(version[:strings.LastIndex(version, ".")], "v"); info.GitVersion != version || info.Emulation() != want {
				t.Errorf("/version %+v, want %s emulating %s", info, version, want)
			}
		})
	}
}
