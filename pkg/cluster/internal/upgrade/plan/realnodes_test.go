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
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/imageref"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/nodecapture"
)

// TestPlanningOnRealNodes plans with the image lists kind nodes printed
// (see testdata/nodes/README.md): kind's node image holds every image
// kubeadm needs at its own version, and after the upgrade both nodes hold
// what the target needs for their role; the listing's odd entries (digests,
// kind's unnamed "import-<date>@sha256:..." records) are harmless.
func TestPlanningOnRealNodes(t *testing.T) {
	t.Parallel()
	for _, version := range nodecapture.Versions {
		probe := nodecapture.Lines(t, version, "kubeadm-probe.txt")
		kubeadmImages := probe[1:]
		for _, role := range []string{"control-plane", "worker"} {
			present := ImageSet(nodecapture.Lines(t, version, "ctr-images-ls-quiet-"+role+".txt"))
			needed := NeededOn(kubeadmImages, role)
			if missing := Missing(needed, present); len(missing) > 0 {
				t.Errorf("%s %s: missing %v", version, role, missing)
			}
			if !present[imageref.Normalize("docker.io/kindest/kindnetd:v20260820-69b56db7")] {
				t.Errorf("%s %s: kindnetd image not in the set", version, role)
			}
		}
		for _, name := range []string{"kubelet-version.txt", "kubectl-version-client.txt"} {
			got, err := ParseBinaryVersion(string(nodecapture.Read(t, version, name)))
			if err != nil || got != version {
				t.Errorf("%s: ParseBinaryVersion(%s) = %q, %v", version, name, got, err)
			}
		}
	}
	// before the upgrade, the target's images are missing on both roles
	present := ImageSet(nodecapture.Lines(t, nodecapture.Before, "ctr-images-ls-quiet-worker.txt"))
	target := nodecapture.Lines(t, nodecapture.After, "kubeadm-probe.txt")[1:]
	if got := strings.Join(Missing(NeededOn(target, "worker"), present), " "); got != "registry.k8s.io/coredns/coredns:v1.12.1 registry.k8s.io/kube-proxy:v1.34.4 registry.k8s.io/pause:3.10.1" {
		t.Errorf("a v1.33.13 worker misses %s for v1.34.4", got)
	}
}
