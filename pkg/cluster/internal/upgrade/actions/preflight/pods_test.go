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

package preflight

import (
	"reflect"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
)

func TestUnmanagedOnDrained(t *testing.T) {
	t.Parallel()
	const target = "v1.37.2"
	nodes := []kube.Node{
		{Name: "kind-control-plane", KubeletVersion: "v1.36.3", Ready: true, NoSchedule: true},
		{Name: "kind-worker", KubeletVersion: "v1.36.3", Ready: true},
		{Name: "kind-worker2", KubeletVersion: target, Ready: true},
	}
	bare := func(namespace, name, node string) kube.Pod {
		return kube.Pod{Namespace: namespace, Name: name, NodeName: node, Unmanaged: true}
	}
	deleting := bare("default", "leaving", "kind-worker")
	deleting.Deleting = true
	helper := bare("local-path-storage", "helper-pod-create-pvc-1", "kind-worker")
	helper.StorageHelper = true
	cases := []struct {
		name  string
		nodes []kube.Node
		pods  []kube.Pod
		want  []string
	}{
		{
			name: "a bare pod on a node that is drained",
			pods: []kube.Pod{bare("default", "bare", "kind-worker")},
			want: []string{"default/bare on kind-worker"},
		},
		{
			name: "pods a controller recreates",
			pods: []kube.Pod{{Namespace: "default", Name: "app", NodeName: "kind-worker"}},
		},
		{
			name: "a bare pod on a node already at the target",
			pods: []kube.Pod{bare("default", "bare", "kind-worker2")},
		},
		{
			name: "a bare pod on the only node, which is not drained",
			nodes: []kube.Node{
				{Name: "kind-control-plane", KubeletVersion: "v1.36.3", Ready: true},
			},
			pods: []kube.Pod{bare("default", "bare", "kind-control-plane")},
		},
		{
			name: "pods that go away by themselves",
			pods: []kube.Pod{deleting, helper},
		},
		{
			name: "each on its node, in the list's order",
			pods: []kube.Pod{bare("b", "two", "kind-worker"), bare("a", "one", "kind-control-plane"), bare("c", "three", "kind-worker2")},
			want: []string{"b/two on kind-worker", "a/one on kind-control-plane"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			list := tc.nodes
			if list == nil {
				list = nodes
			}
			if got := UnmanagedOnDrained(list, tc.pods, target, func(string) bool { return true }); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("UnmanagedOnDrained = %q, want %q", got, tc.want)
			}
		})
	}
}
