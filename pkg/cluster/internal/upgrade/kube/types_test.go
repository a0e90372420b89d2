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
	"strings"
	"testing"
)

func TestParseNodeList(t *testing.T) {
	t.Parallel()
	out := `{"items":[
	{"metadata":{"name":"kind-control-plane","annotations":{"a":"b"}},
	 "spec":{"taints":[{"key":"node-role.kubernetes.io/control-plane","effect":"NoSchedule"}]},
	 "status":{"conditions":[{"type":"MemoryPressure","status":"False"},{"type":"Ready","status":"True"}],"nodeInfo":{"kubeletVersion":"v1.34.4"}}},
	{"metadata":{"name":"kind-worker"},"spec":{"unschedulable":true,"taints":[{"key":"x","effect":"PreferNoSchedule"}]},
	 "status":{"conditions":[{"type":"Ready","status":"Unknown"}],"nodeInfo":{"kubeletVersion":"v1.33.13"}}}]}`
	nodes, err := ParseNodeList([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 {
		t.Fatalf("got %d nodes", len(nodes))
	}
	cp, w := nodes[0], nodes[1]
	if cp.Name != "kind-control-plane" || !cp.Ready || !cp.NoSchedule || cp.Unschedulable || cp.KubeletVersion != "v1.34.4" || cp.Annotations["a"] != "b" {
		t.Errorf("control plane parsed as %+v", cp)
	}
	if w.Ready || w.NoSchedule || !w.Unschedulable || w.KubeletVersion != "v1.33.13" {
		t.Errorf("worker parsed as %+v", w)
	}
	if _, err := ParseNodeList([]byte("not json")); err == nil {
		t.Error("garbage parsed")
	}
}

func TestParsePodList(t *testing.T) {
	t.Parallel()
	out := `{"items":[{"metadata":{"name":"etcd-kind-control-plane","labels":{"component":"etcd","tier":"control-plane"}},
	"spec":{"nodeName":"kind-control-plane","containers":[{"image":"registry.k8s.io/etcd:3.6.5-0"}]},
	"status":{"conditions":[{"type":"Ready","status":"True"}]}}]}`
	pods, err := ParsePodList([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 1 || pods[0].Component != "etcd" || pods[0].NodeName != "kind-control-plane" || !pods[0].Ready ||
		strings.Join(pods[0].Images, ",") != "registry.k8s.io/etcd:3.6.5-0" {
		t.Errorf("parsed %+v", pods)
	}
}

func TestParsePod(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		manifest string
		want     string
	}{
		{
			name:     "a static pod manifest as kubeadm writes it",
			manifest: "apiVersion: v1\nkind: Pod\nmetadata:\n  labels:\n    component: kube-apiserver\n  name: kube-apiserver\nspec:\n  containers:\n  - command:\n    - kube-apiserver\n    image: registry.k8s.io/kube-apiserver:v1.34.4\n    imagePullPolicy: IfNotPresent\n",
			want:     "kube-apiserver registry.k8s.io/kube-apiserver:v1.34.4",
		},
		{
			name:     "a quoted image",
			manifest: "spec:\n  containers:\n  - image: \"registry.k8s.io/etcd:3.6.5-0\"\n",
			want:     " registry.k8s.io/etcd:3.6.5-0",
		},
		{
			name:     "JSON",
			manifest: `{"metadata":{"labels":{"component":"etcd"}},"spec":{"containers":[{"image":"registry.k8s.io/etcd:3.6.5-0"}]}}`,
			want:     "etcd registry.k8s.io/etcd:3.6.5-0",
		},
		{
			name:     "no containers",
			manifest: "kind: Pod\n",
			want:     "",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := ParsePod([]byte(tc.manifest))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(p.Component + " " + strings.Join(p.Images, ",")); got != strings.TrimSpace(tc.want) {
				t.Errorf("parsed %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := ParsePod([]byte("spec: [")); err == nil {
		t.Error("a manifest that is not YAML parsed")
	}
}

func TestParseWorkloads(t *testing.T) {
	t.Parallel()
	out := `{"items":[
	{"kind":"DaemonSet","metadata":{"name":"kube-proxy","generation":2},"status":{"observedGeneration":2,"desiredNumberScheduled":2,"updatedNumberScheduled":2,"numberAvailable":2}},
	{"kind":"DaemonSet","metadata":{"name":"rolling","generation":3},"status":{"observedGeneration":3,"desiredNumberScheduled":2,"updatedNumberScheduled":1,"numberAvailable":2}},
	{"kind":"Deployment","metadata":{"name":"coredns","generation":2},"spec":{"replicas":2},"status":{"observedGeneration":2,"updatedReplicas":2,"availableReplicas":2}},
	{"kind":"Deployment","metadata":{"name":"stale","generation":5},"spec":{"replicas":1},"status":{"observedGeneration":4,"updatedReplicas":1,"availableReplicas":1}},
	{"kind":"ConfigMap","metadata":{"name":"ignored"}}]}`
	got, err := ParseWorkloads([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"kube-proxy": true, "rolling": false, "coredns": true, "stale": false}
	if len(got) != len(want) {
		t.Fatalf("parsed %+v", got)
	}
	for _, w := range got {
		if w.Available != want[w.Name] {
			t.Errorf("%s available=%v (%s), want %v", w.Name, w.Available, w.Detail, want[w.Name])
		}
	}
}

func TestParseClusterConfiguration(t *testing.T) {
	t.Parallel()
	cfg, err := ParseClusterConfiguration([]byte("apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.33.13\nimageRepository: registry.k8s.io\nnetworking:\n  podSubnet: 10.244.0.0/16\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.KubernetesVersion != "v1.33.13" || cfg.ImageRepository != "registry.k8s.io" {
		t.Errorf("parsed %+v", cfg)
	}
	if _, err := ParseClusterConfiguration([]byte("kind: ClusterConfiguration\n")); err == nil {
		t.Error("a configuration without kubernetesVersion parsed")
	}
}

func TestImagesConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, stored, want string
	}{
		{
			name:   "kubeadm's defaults",
			stored: "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.36.3\nimageRepository: registry.k8s.io\netcd:\n  local:\n    dataDir: /var/lib/etcd\ndns: {}\nnetworking:\n  podSubnet: 10.244.0.0/16\n",
			want:   "apiVersion: kubeadm.k8s.io/v1beta4\nimageRepository: registry.k8s.io\nkind: ClusterConfiguration\n",
		},
		{
			name:   "etcd and CoreDNS pinned by kubeadmConfigPatches",
			stored: "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.36.3\nimageRepository: registry.k8s.io\netcd:\n  local:\n    dataDir: /var/lib/etcd\n    imageTag: 3.6.8-0\ndns:\n  imageRepository: registry.example/dns\n  imageTag: v1.14.2\n",
			want:   "apiVersion: kubeadm.k8s.io/v1beta4\ndns:\n  imageRepository: registry.example/dns\n  imageTag: v1.14.2\netcd:\n  local:\n    imageTag: 3.6.8-0\nimageRepository: registry.k8s.io\nkind: ClusterConfiguration\n",
		},
		{
			name:   "an older apiVersion is kept",
			stored: "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.30.4\nimageRepository: registry.example/k8s\netcd:\n  local:\n    imageRepository: registry.example/etcd\n",
			want:   "apiVersion: kubeadm.k8s.io/v1beta3\netcd:\n  local:\n    imageRepository: registry.example/etcd\nimageRepository: registry.example/k8s\nkind: ClusterConfiguration\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseClusterConfiguration([]byte(tc.stored))
			if err != nil {
				t.Fatal(err)
			}
			got, err := cfg.ImagesConfig()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	cfg, err := ParseClusterConfiguration([]byte("kind: ClusterConfiguration\nkubernetesVersion: v1.36.3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.ImagesConfig(); err == nil {
		t.Error("a configuration without apiVersion gave a document for kubeadm")
	}
}

func TestParseKubeletConfiguration(t *testing.T) {
	t.Parallel()
	cfg, err := ParseKubeletConfiguration([]byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfailSwapOn: false\nfailCgroupV1: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.FailSwapOn == nil || *cfg.FailSwapOn || cfg.FailCgroupV1 == nil || *cfg.FailCgroupV1 {
		t.Errorf("parsed %+v", cfg)
	}
	cfg, err = ParseKubeletConfiguration([]byte("kind: KubeletConfiguration\n"))
	if err != nil || cfg.FailSwapOn != nil || cfg.FailCgroupV1 != nil {
		t.Errorf("unset fields parsed as %+v, %v", cfg, err)
	}
	if _, err := ParseKubeletConfiguration([]byte("failSwapOn: [")); err == nil {
		t.Error("garbage parsed")
	}
}

func TestParsePodListUnmanaged(t *testing.T) {
	t.Parallel()
	pods, err := ParsePodList([]byte(`{"items":[
{"metadata":{"namespace":"default","name":"bare"},"spec":{"nodeName":"w"},"status":{"phase":"Running"}},
{"metadata":{"namespace":"default","name":"done"},"spec":{"nodeName":"w"},"status":{"phase":"Succeeded"}},
{"metadata":{"namespace":"default","name":"rs","ownerReferences":[{"kind":"ReplicaSet","controller":true}]},"spec":{"nodeName":"w"},"status":{"phase":"Running"}},
{"metadata":{"namespace":"default","name":"owned","ownerReferences":[{"kind":"ConfigMap"}]},"spec":{"nodeName":"w"},"status":{"phase":"Running"}},
{"metadata":{"namespace":"kube-system","name":"etcd-cp","annotations":{"kubernetes.io/config.mirror":"x"},"ownerReferences":[{"kind":"Node","controller":true}]},"spec":{"nodeName":"cp"},"status":{"phase":"Running"}}
]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"bare": true, "done": false, "rs": false, "owned": true, "etcd-cp": false}
	for _, p := range pods {
		if p.Unmanaged != want[p.Name] {
			t.Errorf("pod %s/%s Unmanaged=%v, want %v", p.Namespace, p.Name, p.Unmanaged, want[p.Name])
		}
	}
}

// TestParsePodListDeleting: in `kubectl get namespaces,pods -o json`, a pod
// with a deletion timestamp or in a namespace being deleted is Deleting,
// and the namespaces are not pods.
func TestParsePodListDeleting(t *testing.T) {
	t.Parallel()
	pods, err := ParsePodList([]byte(`{"kind":"List","items":[
{"kind":"Namespace","metadata":{"name":"default"},"status":{"phase":"Active"}},
{"kind":"Namespace","metadata":{"name":"gone","deletionTimestamp":"2026-12-02T10:53:22Z"},"status":{"phase":"Terminating"}},
{"kind":"Pod","metadata":{"namespace":"default","name":"bare"},"spec":{"nodeName":"w"},"status":{"phase":"Running"}},
{"kind":"Pod","metadata":{"namespace":"default","name":"stopping","deletionTimestamp":"2026-12-02T10:53:22Z"},"spec":{"nodeName":"w"},"status":{"phase":"Running"}},
{"kind":"Pod","metadata":{"namespace":"gone","name":"left"},"spec":{"nodeName":"w"},"status":{"phase":"Running"}}
]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"bare": false, "stopping": true, "left": true}
	if len(pods) != len(want) {
		t.Fatalf("parsed %d pods, want %d: %+v", len(pods), len(want), pods)
	}
	for _, p := range pods {
		if d, ok := want[p.Name]; !ok || p.Deleting != d || !p.Unmanaged {
			t.Errorf("pod %s/%s Deleting=%v Unmanaged=%v, want Deleting=%v, unmanaged", p.Namespace, p.Name, p.Deleting, p.Unmanaged, d)
		}
	}
}

// TestParsePodListStorageHelper: the helper pods kind's local-path
// provisioner runs in its namespace go away by themselves; a pod of the
// same name elsewhere, or another pod in that namespace, does not.
func TestParsePodListStorageHelper(t *testing.T) {
	t.Parallel()
	pods, err := ParsePodList([]byte(`{"kind":"List","items":[
{"kind":"Pod","metadata":{"namespace":"local-path-storage","name":"helper-pod-delete-pvc-ae2b2488-9d46-438b-9b74-6a8740ceca55"},"spec":{"nodeName":"w"},"status":{"phase":"Running"}},
{"kind":"Pod","metadata":{"namespace":"local-path-storage","name":"helper-pod-create-pvc-1790e837-ef65-4a0f-885c-13f502492525"},"spec":{"nodeName":"w"},"status":{"phase":"Pending"}},
{"kind":"Pod","metadata":{"namespace":"local-path-storage","name":"debug"},"spec":{"nodeName":"w"},"status":{"phase":"Running"}},
{"kind":"Pod","metadata":{"namespace":"default","name":"helper-pod-delete-pvc-x"},"spec":{"nodeName":"w"},"status":{"phase":"Running"}}
]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"local-path-storage/helper-pod-delete-pvc-ae2b2488-9d46-438b-9b74-6a8740ceca55": true,
		"local-path-storage/helper-pod-create-pvc-1790e837-ef65-4a0f-885c-13f502492525": true,
		"local-path-storage/debug":        false,
		"default/helper-pod-delete-pvc-x": false,
	}
	for _, p := range pods {
		name := p.Namespace + "/" + p.Name
		if p.GoesAway() != want[name] || p.Deleting || !p.Unmanaged {
			t.Errorf("pod %s GoesAway=%v Deleting=%v Unmanaged=%v, want GoesAway=%v, not deleting, unmanaged", name, p.GoesAway(), p.Deleting, p.Unmanaged, want[name])
		}
	}
}

func TestParsePodListRunning(t *testing.T) {
	t.Parallel()
	out := `{"items":[
	{"metadata":{"name":"started"},"status":{"containerStatuses":[{"containerID":"containerd://a","state":{"running":{"startedAt":"2026-12-07T07:00:00Z"}}}]}},
	{"metadata":{"name":"waiting"},"status":{"containerStatuses":[{"containerID":"","state":{"waiting":{"reason":"ContainerCreating"}}}]}},
	{"metadata":{"name":"exited"},"status":{"containerStatuses":[{"containerID":"containerd://b","state":{"terminated":{"exitCode":1}}}]}},
	{"metadata":{"name":"one-of-two"},"status":{"containerStatuses":[{"state":{"running":{}}},{"state":{"waiting":{}}}]}},
	{"metadata":{"name":"no-status"}}]}`
	pods, err := ParsePodList([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"started": true, "waiting": false, "exited": false, "one-of-two": false, "no-status": false}
	for _, p := range pods {
		if p.Running != want[p.Name] {
			t.Errorf("%s: Running %v, want %v", p.Name, p.Running, want[p.Name])
		}
	}
	// a real control plane's pods, settled after a kubelet restart
	b, err := os.ReadFile("../testdata/nodes/kubelet-restart/control-plane-pods-settled.json")
	if err != nil {
		t.Fatal(err)
	}
	if pods, err = ParsePodList(b); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if !p.Running {
			t.Errorf("%s of a settled control plane is not Running", p.Name)
		}
	}
	// 3 s after the restart, the new kubelet's own view: started, not Ready
	if b, err = os.ReadFile("../testdata/nodes/kubelet-restart/kubelet-pods-restarting.json"); err != nil {
		t.Fatal(err)
	}
	if pods, err = ParsePodList(b); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if p.Component != "" && (!p.Running || p.Ready) {
			t.Errorf("%s of a restarting control plane: Running %v, Ready %v; want running, not Ready", p.Name, p.Running, p.Ready)
		}
	}
}
