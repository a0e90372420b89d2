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

package actions

import (
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
)

func TestDrainNeeded(t *testing.T) {
	t.Parallel()
	const target = "v1.37.2"
	ready := func(name string) kube.Node {
		return kube.Node{Name: name, KubeletVersion: "v1.36.3", Ready: true, Annotations: map[string]string{}}
	}
	cp := ready("kind-control-plane")
	cp.NoSchedule = true
	upgraded := ready("kind-worker")
	upgraded.KubeletVersion = target
	drained := ready("kind-worker")
	drained.Unschedulable = true
	drained.Annotations = map[string]string{DrainedAnnotation: Drained}
	cordoning := ready("kind-worker")
	cordoning.Unschedulable = true
	cordoning.Annotations = map[string]string{DrainedAnnotation: Cordoned}
	notReady := ready("kind-worker2")
	notReady.Ready = false
	cordoned := ready("kind-worker2")
	cordoned.Unschedulable = true
	tainted := ready("kind-worker2")
	tainted.NoSchedule = true
	cases := []struct {
		name   string
		list   []kube.Node
		self   kube.Node
		want   bool
		reason string
	}{
		{name: "a worker beside another", list: []kube.Node{cp, ready("kind-worker"), ready("kind-worker2")}, self: ready("kind-worker"), want: true},
		{name: "a control-plane node beside a worker", list: []kube.Node{cp, ready("kind-worker")}, self: cp, want: true},
		{name: "the kubelet already runs the target", list: []kube.Node{cp, upgraded, ready("kind-worker2")}, self: upgraded, reason: "the kubelet already runs " + target},
		{name: "an earlier run drained it", list: []kube.Node{cp, drained, ready("kind-worker2")}, self: drained, reason: "already drained"},
		{name: "an earlier run only cordoned it: drain again", list: []kube.Node{cp, cordoning, ready("kind-worker2")}, self: cordoning, want: true},
		{name: "the only worker: the control plane is tainted", list: []kube.Node{cp, ready("kind-worker")}, self: ready("kind-worker"), reason: NoOtherNode},
		{name: "a single node cluster", list: []kube.Node{ready("kind-control-plane")}, self: ready("kind-control-plane"), reason: NoOtherNode},
		{name: "the other worker is not Ready", list: []kube.Node{cp, ready("kind-worker"), notReady}, self: ready("kind-worker"), reason: NoOtherNode},
		{name: "the other worker is cordoned", list: []kube.Node{cp, ready("kind-worker"), cordoned}, self: ready("kind-worker"), reason: NoOtherNode},
		{name: "the other worker is tainted", list: []kube.Node{cp, ready("kind-worker"), tainted}, self: ready("kind-worker"), reason: NoOtherNode},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, reason := DrainNeeded(tc.list, tc.self, target)
			if got != tc.want || reason != tc.reason {
				t.Errorf("DrainNeeded = %v, %q; want %v, %q", got, reason, tc.want, tc.reason)
			}
		})
	}
}
