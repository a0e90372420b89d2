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

package kubelets

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/fakenode"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/nodecapture"
)

// TestDrainAnswersLikeARealNode holds the fake's refused drains against
// kubectl drain's on a real node (testdata/nodes/v1.36.3/drain-*.txt):
// through kube.Client, the drain's decisions (runDrain's: a pod no
// controller recreates; drainBlocked's: a PodDisruptionBudget) must be the
// same on both.
func TestDrainAnswersLikeARealNode(t *testing.T) {
	t.Parallel()
	const worker = "fake-capture-worker"
	cases := []struct {
		name, file string
		setup      func(c *fakenode.Cluster)
		// known is a divergence the product has yet to handle (see
		// fakenode's contract test)
		known string
	}{
		{
			name: "a pod no controller recreates", file: "drain-bare.txt",
			setup: func(c *fakenode.Cluster) {
				c.BarePods = map[string][]string{worker: {"default/kind-upgrade-capture-bare"}}
			},
		},
		{
			name: "a pod a PodDisruptionBudget protects", file: "drain-pdb.txt",
			setup: func(c *fakenode.Cluster) {
				c.PDBBlocked = map[string][]string{worker: {"default/kind-upgrade-capture-pdb-77f7b67465-j4c77"}}
			},
		},
	}
	decide := func(n nodes.Node) string {
		err := kube.Client{On: n}.Run(context.Background(), "drain", worker, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=10s")
		if err == nil {
			return "drained"
		}
		return fmt.Sprintf("no controller: %v, disruption budget: %v", strings.Contains(err.Error(), "declare no controller"), drainBlocked(n, err) != err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := fakenode.NewCluster("fake-capture", "v1.36.3", 1, 1)
			tc.setup(c)
			onReal := decide(nodecapture.Replay{Out: nodecapture.Read(t, "v1.36.3", tc.file), Failed: true})
			fake := decide(c.Nodes[0])
			switch {
			case tc.known != "" && onReal != fake:
				t.Skipf("known divergence: %s\nreal node: %s\nfake node: %s", tc.known, onReal, fake)
			case tc.known != "":
				t.Errorf("the fake and the real node now lead to the same decision: remove the known divergence %q", tc.known)
			case onReal != fake:
				t.Errorf("the drain decides differently on the fake's answer than on the real node's:\nreal node: %s\nfake node: %s", onReal, fake)
			}
		})
	}
}
