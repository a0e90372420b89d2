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
	"io"
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/exec"

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
			onReal := decide(replay{out: nodecapture.Read(t, "v1.36.3", tc.file)})
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

// replay is a node whose every command fails with a real node's captured
// output, as kind's exec reports it.
type replay struct{ out []byte }

func (replay) String() string               { return "replay" }
func (replay) Role() (string, error)        { return "control-plane", nil }
func (replay) IP() (string, string, error)  { return "172.18.0.2", "", nil }
func (replay) SerialLogs(w io.Writer) error { return nil }
func (r replay) Command(c string, a ...string) exec.Cmd {
	return r.CommandContext(context.Background(), c, a...)
}
func (r replay) CommandContext(_ context.Context, c string, a ...string) exec.Cmd {
	return &replayCmd{out: r.out, argv: append([]string{c}, a...)}
}

type replayCmd struct {
	out    []byte
	argv   []string
	stderr io.Writer
}

func (c *replayCmd) SetEnv(...string) exec.Cmd      { return c }
func (c *replayCmd) SetStdin(io.Reader) exec.Cmd    { return c }
func (c *replayCmd) SetStdout(io.Writer) exec.Cmd   { return c }
func (c *replayCmd) SetStderr(w io.Writer) exec.Cmd { c.stderr = w; return c }
func (c *replayCmd) Run() error {
	if c.stderr != nil {
		_, _ = c.stderr.Write(c.out)
	}
	return &exec.RunError{Command: c.argv, Output: c.out, Inner: fmt.Errorf("exit status 1")}
}
