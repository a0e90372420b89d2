//go:build e2e

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

package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/kindupgrade/kind-upgrade/internal/lab/kindtest"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster"
)

// TestIntegrationUpgradePodman (make e2e-podman) is make e2e's upgrade, every
// check of it, on a cluster kind's podman provider created: 1 control
// plane and 1 worker from the same node images, which hack/e2e/run.sh
// loads into podman's store, and KIND_EXPERIMENTAL_PROVIDER=podman for
// every kind command. The refusals' fixes name podman's commands.
func TestIntegrationUpgradePodman(t *testing.T) {
	m := integration(t)
	if p := kindtest.ProviderFromEnv(); p != "podman" {
		t.Fatalf("KIND_EXPERIMENTAL_PROVIDER is %q: run it with podman (make e2e-podman)", p)
	}
	t.Run(m.Pair(), func(t *testing.T) {
		h := newHarness(t, m, "kind-upgrade-e2e-podman", 2, "podman")
		testUpgradeOf(t, h, m)

		// the Go API with kind's podman provider, named with
		// UpgradeWithNodeProvider, the environment not saying podman
		// (Docker runs here too): messages name podman's commands
		h.Check("the Go API with kindcluster.ProviderWithPodman(), UpgradeWithNodeProvider(\"podman\") and KIND_EXPERIMENTAL_PROVIDER unset names podman's commands", func() error {
			env := os.Getenv("KIND_EXPERIMENTAL_PROVIDER")
			os.Unsetenv("KIND_EXPERIMENTAL_PROVIDER")
			defer os.Setenv("KIND_EXPERIMENTAL_PROVIDER", env)
			missing := "kind-upgrade-e2e/not-built:" + m.To
			err := cluster.Upgrade(kindcluster.NewProvider(kindcluster.ProviderWithPodman()), h.Name, cluster.UpgradeWithNodeProvider("podman"), cluster.UpgradeWithImage(missing))
			want := "`podman pull " + providerName("podman", missing) + "`"
			if err == nil || !strings.Contains(err.Error(), want) {
				return fmt.Errorf("got %v, want the refusal naming %s", err, want)
			}
			return h.AllAt(m.To)
		})
	})
}
