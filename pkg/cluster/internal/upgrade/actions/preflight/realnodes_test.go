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
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/nodecapture"
)

// TestParsersOnRealNodes reads what kind nodes printed (see
// testdata/nodes/README.md).
func TestParsersOnRealNodes(t *testing.T) {
	t.Parallel()
	for _, version := range nodecapture.Versions {
		target, images, err := ParseProbe(string(nodecapture.Read(t, version, "kubeadm-probe.txt")))
		if err != nil {
			t.Fatal(err)
		}
		if "v"+target.String() != version || len(images) != 7 {
			t.Errorf("%s: ParseProbe = %s, %v; want %s and kubeadm's 7 images", version, target, images, version)
		}
		fss, err := ParseDF(string(nodecapture.Read(t, version, "df-var-lib-containerd.txt")))
		if err != nil || len(fss) != 1 || fss[0].Available <= 0 || fss[0].Available%1024 != 0 || fss[0].Mount == "" {
			t.Errorf("%s: ParseDF = %+v, %v; want one file system with a positive number of KiB in bytes", version, fss, err)
		}
	}
}
