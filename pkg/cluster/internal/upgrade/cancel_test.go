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
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/fakenode"
)

// TestCancelAnywhere cancels the upgrade's context (a user's Ctrl-C) as each
// command of an upgrade starts, in turn: the run must stop there, issuing
// no further command on that node and at most the one in flight on each
// other node, and say it was cancelled, never that something timed out or
// that an input is broken;
// running it again must finish the upgrade.
func TestCancelAnywhere(t *testing.T) {
	t.Parallel()
	clean := newEnv(t, 2, 1, fakenode.ReleaseTree)
	mustUpgrade(t, clean)
	want := clean.cluster.Snapshot()
	// each command once per command before it: the same poll repeated
	// in the same wait adds nothing
	seen := map[string]bool{}
	for i, call := range clean.cluster.Calls {
		place := call.Key()
		if i > 0 {
			place += " after " + clean.cluster.Calls[i-1].Key()
		}
		if seen[place] {
			continue
		}
		seen[place] = true
		occurrence := clean.cluster.Occurrence(i)
		t.Run(fmt.Sprintf("%03d %s #%d", i+1, call, occurrence), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 2, 1, fakenode.ReleaseTree)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			e.cluster.CancelOn(call, occurrence, cancel)
			_, err := e.run(func(o *upgrade.Options) { o.Context = ctx })
			if ctx.Err() == nil {
				t.Fatalf("the run never reached the command (err %v)", err)
			}
			cancelledAt := -1
			for j, c := range e.cluster.Calls {
				if c.Key() == call.Key() {
					cancelledAt = j
				}
			}
			// nodes are worked on in parallel: the goroutine of another node
			// may issue one command as the context is cancelled (a real
			// one would not even start: os/exec checks the context first),
			// but none goes on
			perNode := map[string]int{}
			for _, c := range e.cluster.Calls[cancelledAt+1:] {
				if perNode[c.Node]++; perNode[c.Node] > 1 || c.Node == call.Node || !c.Err {
					t.Errorf("the run went on after it was cancelled:\n%s", dump(e.cluster.Calls[cancelledAt:]))
					break
				}
			}
			if err == nil {
				t.Fatal("the cancelled run reported success")
			}
			if msg := err.Error(); !strings.Contains(msg, "cancel") || strings.Contains(msg, "timed out") || strings.Contains(msg, "corrupt") || strings.Contains(msg, "is it a working kubeadm") {
				t.Errorf("the error does not say the run was cancelled: %v", err)
			}
			if _, err := e.run(nil); err != nil {
				t.Fatalf("the rerun failed: %v", err)
			}
			if got := e.cluster.Snapshot(); got != want {
				t.Fatalf("the rerun ended elsewhere:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}
