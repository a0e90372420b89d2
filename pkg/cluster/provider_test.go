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

package cluster

import (
	"path/filepath"
	"strings"
	"testing"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeprovider"
)

// TestNodeProviderIsDetectedOnceOrNamed: a Go caller that names its
// provider makes Upgrade run no provider CLI to detect it; one that does
// not gets kind's detection, whose CLIs run once per process.
func TestNodeProviderIsDetectedOnceOrNamed(t *testing.T) {
	t.Setenv(nodeprovider.Env, "")
	asked := 0
	saved := host
	defer func() { host = saved }()
	host = nodeprovider.NewHost(func(command string) string {
		asked++
		if command == "podman" {
			return "podman version 4.3.1"
		}
		return ""
	})
	missing := filepath.Join(t.TempDir(), "nope")
	p := kindcluster.NewProvider(kindcluster.ProviderWithPodman())

	err := Upgrade(p, "dev", UpgradeWithNodeProvider("podman"), UpgradeWithImageDir(missing))
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("want the missing folder refused, got %v", err)
	}
	if asked != 0 {
		t.Errorf("with the provider named, %d provider CLIs were run", asked)
	}
	for i := 0; i < 2; i++ {
		_ = Upgrade(p, "dev", UpgradeWithImageDir(missing))
	}
	if asked != 4 {
		t.Errorf("without it, %d provider CLIs were run in two upgrades, want each of 4 once", asked)
	}
	if err := Upgrade(p, "dev", UpgradeWithNodeProvider("rkt")); err == nil || !strings.Contains(err.Error(), `unknown node provider "rkt"`) {
		t.Errorf("an unknown provider: got %v", err)
	}
}
