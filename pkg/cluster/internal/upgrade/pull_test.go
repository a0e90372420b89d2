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
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/fakenode"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/imageref"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/options"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/plan"
)

// serveTargetImages makes the cluster's registry reachable from its nodes,
// serving every image kubeadm lists for the target.
func serveTargetImages(c *fakenode.Cluster) {
	c.Registry = map[string]bool{}
	for _, image := range fakenode.KubeadmImages(target, fakenode.ImageConfig{}) {
		c.Registry[imageref.Normalize(image)] = true
	}
}

// pulls returns the images each node pulled, in order.
func pulls(c *fakenode.Cluster) map[string][]string {
	out := map[string][]string{}
	for _, call := range c.Calls {
		if len(call.Argv) == 3 && call.Argv[0] == "crictl" && call.Argv[1] == "pull" && !call.Err {
			out[call.Node] = append(out[call.Node], call.Argv[2])
		}
	}
	return out
}

// TestNodesPullWhatNoSourceProvides: --image alone on nodes that reach
// their registry: kubeadm's pause, which the node image lacks, is pulled by
// every node at the start of load-artifacts, before anything else changes;
// a dry run plans the pulls and pulls nothing; nothing is pulled twice.
func TestNodesPullWhatNoSourceProvides(t *testing.T) {
	t.Parallel()
	e := newImageEnv(t, 1, 2)
	e.imageDir = ""
	serveTargetImages(e.cluster)
	var dry *recorder
	snapshotUnchanged(t, e, func() {
		var err error
		if dry, err = e.run(func(o *upgrade.Options) { o.DryRun = true }); err != nil {
			t.Fatal(err)
		}
	})
	if got := pulls(e.cluster); len(got) > 0 {
		t.Errorf("the dry run pulled %v", got)
	}
	var p struct {
		Kind string    `json:"kind"`
		Plan plan.Plan `json:"plan"`
	}
	for _, line := range dry.lines {
		if err := json.Unmarshal([]byte(line), &p); err == nil && p.Kind == "plan" {
			break
		}
	}
	for _, n := range p.Plan.Nodes {
		want := kubeadmPause()
		if strings.Join(n.Pull, " ") != want {
			t.Errorf("the plan says %s pulls %v, want %q", n.Name, n.Pull, want)
		}
	}
	mustUpgrade(t, e)
	assertUpgraded(t, e.cluster)
	got := pulls(e.cluster)
	for _, node := range []string{"kind-control-plane", "kind-worker", "kind-worker2"} {
		if strings.Join(got[node], " ") != kubeadmPause() {
			t.Errorf("%s pulled %v, want %s once", node, got[node], kubeadmPause())
		}
	}
	// the pulls come before anything else changes on any node
	lastPull, firstChange := -1, -1
	for i, call := range e.cluster.Calls {
		switch {
		case len(call.Argv) == 3 && call.Argv[0] == "crictl" && call.Argv[1] == "pull":
			lastPull = i
		case firstChange < 0 && mutating(call):
			firstChange = i
		}
	}
	if firstChange >= 0 && firstChange < lastPull {
		t.Errorf("%v changed a node before the last pull (%v)", e.cluster.Calls[firstChange], e.cluster.Calls[lastPull])
	}
	noHelperLeft(t, e)
}

// TestReleaseTarballAloneOnNodesThatPull: the release tarball and nothing
// else (no etcd, CoreDNS or pause archive) upgrades a cluster whose nodes
// pull those from their registry.
func TestReleaseTarballAloneOnNodesThatPull(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 1, fakenode.Tarball)
	e.imageDir = filepath.Join(e.imageDir, "kubernetes-server-linux-amd64.tar.gz")
	serveTargetImages(e.cluster)
	mustUpgrade(t, e)
	assertUpgraded(t, e.cluster)
	if len(pulls(e.cluster)["kind-control-plane"]) == 0 {
		t.Error("nothing was pulled")
	}
}

// TestPullRefusals: an image no source provides is refused, naming both
// fixes, before anything changes: by preflight when the nodes may not pull
// it, by the pulls that start load-artifacts when they cannot.
func TestPullRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		setup  func(*fakenode.Cluster)
		modify func(*upgrade.Options)
		errHas []string
	}{
		{
			name:  "the nodes cannot reach the registry",
			setup: func(*fakenode.Cluster) {},
			errHas: []string{
				"cannot pull " + kubeadmPause() + " (kind's node-image builder keeps containerd's sandbox image",
				"cannot pull " + kubeadmPause() + " (kind's node-image builder keeps containerd's sandbox image, registry.k8s.io/pause:3.10, in place of kubeadm's pause image): time=",
				"no such host",
				"Nothing but pulls has changed yet.",
				"add it as --image-dir",
				"or let the nodes reach the images' registry (kind passes HTTP_PROXY, HTTPS_PROXY and NO_PROXY",
			},
		},
		{
			name:   "--image-pull-policy Never",
			setup:  serveTargetImages,
			modify: func(o *upgrade.Options) { o.PullPolicy = options.PullNever },
			errHas: []string{
				kubeadmPause() + " (needed on kind-control-plane): kind's node-image builder keeps containerd's sandbox image",
				"--image-pull-policy Never: the nodes may not pull it",
				"or let the nodes pull them (--image-pull-policy IfNotPresent on nodes that reach their registry)",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newImageEnv(t, 1, 1)
			e.imageDir = ""
			e.cluster.Registry = nil
			tc.setup(e.cluster)
			snapshotUnchanged(t, e, func() {
				_, err := e.run(tc.modify)
				if err == nil {
					t.Fatal("the upgrade was not refused")
				}
				for _, want := range tc.errHas {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("the refusal does not say %q:\n%v", want, err)
					}
				}
			})
			if got := pulls(e.cluster); len(got) > 0 {
				t.Errorf("pulled %v", got)
			}
		})
	}
}

// TestPullInterruptedAndResumed: a run cancelled while a worker pulls is
// finished by the same command, which pulls only what is still missing.
func TestPullInterruptedAndResumed(t *testing.T) {
	t.Parallel()
	e := newImageEnv(t, 1, 1)
	e.imageDir = ""
	serveTargetImages(e.cluster)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.cluster.CancelOn(fakenode.Call{Node: "kind-worker", Argv: []string{"crictl", "pull", kubeadmPause()}}, 1, cancel)
	if _, err := e.run(func(o *upgrade.Options) { o.Context = ctx }); err == nil || !strings.Contains(err.Error(), "cancel") {
		t.Fatalf("want a cancelled run, got %v", err)
	}
	mustUpgrade(t, e)
	assertUpgraded(t, e.cluster)
	noHelperLeft(t, e)
}
