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
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/fakenode"
)

// newEnvAt is newEnv for another version pair.
func newEnvAt(t *testing.T, fromVersion, toVersion string, controlPlanes, workers int) *env {
	t.Helper()
	dir, err := fakenode.WriteRelease(t.TempDir(), toVersion, "amd64", fakenode.Flat)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, cluster: fakenode.NewCluster("kind", fromVersion, controlPlanes, workers), imageDir: dir}
}

// TestFakeKubeletRefusesCgroupV1 shows the fake nodes fail as real ones do
// when nothing stops the upgrade: kubelet v1.35 on a cgroup v1 node exits
// at start; the restart itself succeeds and the node goes NotReady.
func TestFakeKubeletRefusesCgroupV1(t *testing.T) {
	t.Parallel()
	c := fakenode.NewCluster("kind", "v1.34.4", 1, 0)
	n := c.Nodes[0]
	n.CgroupV1 = true
	n.Files["/usr/bin/kubelet"] = &fakenode.File{Content: fakenode.Binary("kubelet", "v1.35.4", "amd64"), Mode: 0o755}
	if err := n.Command("systemctl", "restart", "kubelet").Run(); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if n.Ready || n.KubeletVersion != "" {
		t.Errorf("kubelet v1.35.4 on cgroup v1 runs: ready=%v version=%q", n.Ready, n.KubeletVersion)
	}
	n.Files["/var/lib/kubelet/config.yaml"].Content = []byte(fakenode.KindKubeletConfig + "failCgroupV1: false\n")
	if err := n.Command("systemctl", "restart", "kubelet").Run(); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if !n.Ready || n.KubeletVersion != "v1.35.4" {
		t.Errorf("kubelet v1.35.4 with failCgroupV1: false does not run: ready=%v version=%q", n.Ready, n.KubeletVersion)
	}
}

// TestHostRefusals: a target kubelet that would refuse the nodes' host is
// refused in preflight with the fix, and nothing changes.
func TestHostRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		from, to string
		setup    func(c *fakenode.Cluster)
		errHas   []string
	}{
		{
			name: "kubelet v1.35 on a cgroup v1 worker",
			from: "v1.34.4", to: "v1.35.4",
			setup: func(c *fakenode.Cluster) { c.Nodes[1].CgroupV1 = true },
			errHas: []string{
				"kubelet v1.35.4 would not start",
				"node(s) kind-worker run on cgroup v1",
				"`failCgroupV1: false`",
				"kubectl --context kind-kind --namespace kube-system edit configmap kubelet-config",
			},
		},
		{
			name: "kubelet v1.37 on cgroup v1 with failCgroupV1: true",
			from: "v1.36.3", to: "v1.37.2",
			setup: func(c *fakenode.Cluster) {
				c.KubeletConfig = fakenode.KindKubeletConfig + "failCgroupV1: true\n"
				for _, n := range c.Nodes {
					n.CgroupV1 = true
				}
			},
			errHas: []string{"node(s) kind-control-plane, kind-worker run on cgroup v1"},
		},
		{
			name: "swap on with failSwapOn unset",
			from: "v1.33.13", to: "v1.34.4",
			setup: func(c *fakenode.Cluster) {
				c.KubeletConfig = "kind: KubeletConfiguration\n"
				c.Nodes[0].Swap = true
			},
			errHas: []string{"node(s) kind-control-plane see active swap", "`failSwapOn: false`", "swapoff -a"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnvAt(t, tc.from, tc.to, 1, 1)
			tc.setup(e.cluster)
			snapshotUnchanged(t, e, func() {
				_, err := e.run(nil)
				if err == nil {
					t.Fatal("the upgrade was not refused")
				}
				for _, want := range tc.errHas {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					}
				}
			})
		})
	}
}

// TestHostAccepted: hosts the target's kubelet accepts are upgraded.
func TestHostAccepted(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		from, to string
		setup    func(c *fakenode.Cluster)
	}{
		{
			name: "kubelet v1.34 on cgroup v1",
			from: "v1.33.13", to: "v1.34.4",
			setup: func(c *fakenode.Cluster) { c.Nodes[0].CgroupV1, c.Nodes[1].CgroupV1 = true, true },
		},
		{
			name: "kubelet v1.37 on cgroup v1 with failCgroupV1: false, as kind documents",
			from: "v1.36.3", to: "v1.37.2",
			setup: func(c *fakenode.Cluster) {
				c.KubeletConfig = fakenode.KindKubeletConfig + "failCgroupV1: false\n"
				for _, n := range c.Nodes {
					n.CgroupV1 = true
					n.Files["/var/lib/kubelet/config.yaml"].Content = []byte(c.KubeletConfig)
				}
			},
		},
		{
			name: "swap on with kind's failSwapOn: false",
			from: "v1.36.3", to: "v1.37.2",
			setup: func(c *fakenode.Cluster) { c.Nodes[1].Swap = true },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnvAt(t, tc.from, tc.to, 1, 1)
			tc.setup(e.cluster)
			if _, err := e.run(nil); err != nil {
				t.Fatalf("upgrade failed: %v\ncalls:\n%s", err, dump(e.cluster.Calls))
			}
			for _, n := range e.cluster.Nodes {
				if n.KubeletVersion != tc.to || !n.Ready {
					t.Errorf("node %s kubelet %q ready %v, want %s and Ready", n.Name, n.KubeletVersion, n.Ready, tc.to)
				}
			}
		})
	}
}
