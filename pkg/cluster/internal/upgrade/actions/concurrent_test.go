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
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/fakenode"
)

// TestOnNodes: every node's work runs at once and ends before OnNodes
// returns, and the errors come in the nodes' order, whichever node
// answered first.
func TestOnNodes(t *testing.T) {
	t.Parallel()
	var ns []nodes.Node
	for _, n := range fakenode.NewCluster("kind", "v1.34.4", 1, 3).Nodes {
		ns = append(ns, n)
	}
	for _, tc := range []struct {
		name   string
		failOn map[int]bool
		want   string
	}{
		{name: "none fails", want: ""},
		{name: "one fails", failOn: map[int]bool{2: true}, want: "kind-worker2 failed"},
		{name: "several fail", failOn: map[int]bool{1: true, 3: true}, want: "[kind-worker failed, kind-worker3 failed]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var running, ended atomic.Int32
			all := make(chan struct{})
			err := OnNodes(ns, func(i int, n nodes.Node) error {
				defer ended.Add(1)
				if running.Add(1) == int32(len(ns)) {
					close(all)
				}
				select {
				case <-all:
				case <-time.After(10 * time.Second):
					return errors.Errorf("%s did not run beside the others", n)
				}
				// the last nodes answer first
				time.Sleep(time.Duration(len(ns)-i) * 10 * time.Millisecond)
				if tc.failOn[i] {
					return errors.Errorf("%s failed", n)
				}
				return nil
			})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("error %q, want %q", got, tc.want)
			}
			if ended.Load() != int32(len(ns)) {
				t.Errorf("OnNodes returned with %d of %d nodes' work ended", ended.Load(), len(ns))
			}
		})
	}
}
