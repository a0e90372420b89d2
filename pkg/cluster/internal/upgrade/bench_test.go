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

package upgrade_test

import (
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/fakenode"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/options"
)

// BenchmarkUpgradeFakeCluster measures the workflow's own cost on fake nodes
// and reports how many node commands an upgrade runs: on real nodes each is
// a `docker exec` of tens of milliseconds, so commands/op is what to keep
// low. A rerun on an upgraded cluster (nothing to do) is reported too.
func BenchmarkUpgradeFakeCluster(b *testing.B) {
	for _, bc := range []struct {
		name                   string
		controlPlanes, workers int
	}{
		{"1cp-1w", 1, 1},
		{"3cp-2w", 3, 2},
	} {
		b.Run(bc.name, func(b *testing.B) {
			dir, err := fakenode.WriteRelease(b.TempDir(), target, "amd64", fakenode.ReleaseTree)
			if err != nil {
				b.Fatal(err)
			}
			opts := upgrade.Options{Upgrade: options.Upgrade{ImageDir: dir, Wait: time.Second, PollInterval: time.Millisecond, ParallelWorkers: 1}, Logger: log.NoopLogger{}}
			var upgradeCalls, rerunCalls int
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c := fakenode.NewCluster("kind", from, bc.controlPlanes, bc.workers)
				if err := upgrade.Run(withNodes(opts, c.KindNodes())); err != nil {
					b.Fatal(err)
				}
				upgradeCalls += len(c.Calls)
				if err := upgrade.Run(withNodes(opts, c.KindNodes())); err != nil {
					b.Fatal(err)
				}
				rerunCalls += len(c.Calls)
			}
			b.ReportMetric(float64(upgradeCalls)/float64(b.N), "commands/upgrade")
			b.ReportMetric(float64(rerunCalls-upgradeCalls)/float64(b.N), "commands/rerun")
		})
	}
}

// withNodes returns opts upgrading the cluster of ns.
func withNodes(opts upgrade.Options, ns []nodes.Node) upgrade.Options {
	opts.Cluster = upgrade.KnownNodes{Cluster: ns}
	return opts
}
