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

package cluster_test

import (
	"fmt"
	"os"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster"
)

// Upgrade a kind cluster to the release unpacked in ./kubernetes; here the
// folder does not exist, so Upgrade refuses before touching anything.
func ExampleUpgrade() {
	provider := kindcluster.NewProvider(kindcluster.ProviderWithDocker())
	err := cluster.Upgrade(provider, "dev",
		cluster.UpgradeWithImageDir("./kubernetes/server/bin"),
		cluster.UpgradeWithDryRun(true),
		cluster.UpgradeWithOutput(os.Stdout, false),
	)
	fmt.Println(err)
	// Output: UpgradeWithImageDir ./kubernetes/server/bin does not exist: give the folder (or release tarball) holding the target Kubernetes version's kubeadm, kubelet, kubectl and images
}

// The phases of an upgrade, in order, each followed by its parts
// UpgradeWithSkipPhases also names; all but preflight can be skipped.
func ExampleUpgradePhases() {
	for _, p := range cluster.UpgradePhases() {
		fmt.Println(p.Name, p.Skippable)
	}
	// Output:
	// preflight false
	// load-artifacts true
	// control-plane true
	// control-plane/kube-proxy true
	// kubelets true
	// verify true
}
