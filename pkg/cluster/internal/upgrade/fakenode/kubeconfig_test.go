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

package fakenode_test

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/exec"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/fakenode"
)

// TestKubectlOnAWorker: a worker has no admin kubeconfig, as on kind's
// nodes; its kubectl answers when handed the control-plane nodes' on stdin
// and fails, as kubectl does, when handed nothing or something else.
func TestKubectlOnAWorker(t *testing.T) {
	t.Parallel()
	c := fakenode.NewCluster("kind", "v1.36.3", 1, 1)
	worker := c.Node("kind-worker")
	admin, ok, err := nodeutils.ReadFile(context.Background(), c.Node("kind-control-plane"), nodeutils.AdminKubeconfig)
	if err != nil || !ok {
		t.Fatalf("the control-plane node's admin kubeconfig: %v (found %v)", err, ok)
	}
	for _, tc := range []struct {
		name       string
		kubeconfig []byte
		want       string
	}{
		{name: "its own, which it lacks", want: "no such file or directory"},
		{name: "an empty one on stdin", kubeconfig: []byte{}, want: "localhost:8080 was refused"},
		{name: "another one on stdin", kubeconfig: []byte(admin + "x"), want: "error loading config file"},
		{name: "the admin kubeconfig on stdin", kubeconfig: []byte(admin), want: `"items"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.CombinedOutputLines(nodeutils.KubectlWith(context.Background(), worker, tc.kubeconfig, "get", "nodes", "-o", "json"))
			if got := strings.Join(out, "\n"); !strings.Contains(got, tc.want) {
				t.Errorf("kubectl said %q (err %v), want %q", got, err, tc.want)
			}
			if (err == nil) != (tc.want == `"items"`) {
				t.Errorf("kubectl's error: %v", err)
			}
		})
	}
}
