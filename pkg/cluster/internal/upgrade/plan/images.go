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

package plan

import (
	"slices"
	"sort"

	"sigs.k8s.io/kind/pkg/cluster/constants"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/imageref"
)

// ControlPlaneComponents are kubeadm's static pods (etcd only with local
// etcd), named like their images: only control-plane nodes run them.
var ControlPlaneComponents = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"}

// ComponentImage returns the image in list whose component is name, or "".
func ComponentImage(list []string, name string) string {
	for _, image := range list {
		if imageref.Component(image) == name {
			return image
		}
	}
	return ""
}

// NeededOn returns the images of kubeadm's list that a node of the given role
// runs: control-plane nodes need all of them, workers kube-proxy, CoreDNS and
// pause.
func NeededOn(list []string, role string) []string {
	var needed []string
	for _, image := range list {
		if role != constants.ControlPlaneNodeRoleValue && slices.Contains(ControlPlaneComponents, imageref.Component(image)) {
			continue
		}
		needed = append(needed, image)
	}
	return needed
}

// Missing returns the images of needed that are not in present (both
// compared in normalized form), sorted.
func Missing(needed []string, present map[string]bool) []string {
	var missing []string
	for _, image := range needed {
		if !present[imageref.Normalize(image)] {
			missing = append(missing, image)
		}
	}
	sort.Strings(missing)
	return missing
}

// ImageSet builds a set of normalized references.
func ImageSet(refs []string) map[string]bool {
	set := make(map[string]bool, len(refs))
	for _, ref := range refs {
		set[imageref.Normalize(ref)] = true
	}
	return set
}
