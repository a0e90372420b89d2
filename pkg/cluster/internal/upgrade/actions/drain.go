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
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
)

// What the kubelets phase's drains decide, which preflight checks
// beforehand.

// DrainedAnnotation marks a node this command cordoned, so that only those
// are uncordoned (a node the user cordoned stays cordoned). Its value is
// "cordoned" while the drain runs and "drained" once it succeeded.
const DrainedAnnotation = "kind-upgrade.x-k8s.io/cordoned-by-upgrade"

const (
	// Cordoned is DrainedAnnotation's value while the drain runs.
	Cordoned = "cordoned"
	// Drained is DrainedAnnotation's value once the drain succeeded.
	Drained = "drained"
)

// NoOtherNode is why a node no other node can take the pods of is not
// drained.
const NoOtherNode = "no other node can take its pods"

// DrainNeeded reports whether the kubelets phase drains self, one of the
// cluster's nodes list, to upgrade it to target, and if not, why: its
// kubelet already runs target, an earlier run drained it, or no other node
// could take its pods.
func DrainNeeded(list []kube.Node, self kube.Node, target string) (bool, string) {
	switch {
	case self.KubeletVersion == target:
		return false, "the kubelet already runs " + target
	case self.Annotations[DrainedAnnotation] == Drained:
		return false, "already drained"
	case !OthersCanTakePods(list, self.Name):
		return false, NoOtherNode
	}
	return true, ""
}

// OthersCanTakePods reports whether a node other than name is Ready,
// schedulable and without a NoSchedule taint: whether draining name moves
// its pods somewhere.
func OthersCanTakePods(list []kube.Node, name string) bool {
	for _, kn := range list {
		if kn.Name != name && kn.Ready && !kn.Unschedulable && !kn.NoSchedule {
			return true
		}
	}
	return false
}
