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
	"time"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade"
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
	// what kubeadm v1.35's upgrade removes
	flags := n.Files[fakenode.KubeadmFlagsPath]
	flags.Content = []byte(strings.Replace(string(flags.Content), fakenode.PodInfraFlag+"=registry.k8s.io/pause:3.10.1 ", "", 1))
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

// TestFakeKubeletDiesAtTheInotifyLimit shows the fake host fails as a real
// one does: a kubelet restarted on a host whose inotify instances are all
// taken exits at start (the restart itself succeeds), logs the lines a
// real kubelet logs, and systemd keeps restarting it; once the host has
// room it stays up.
func TestFakeKubeletDiesAtTheInotifyLimit(t *testing.T) {
	t.Parallel()
	c := fakenode.NewCluster("kind", "v1.37.2", 1, 1)
	n := c.Nodes[1]
	c.Host.SetLimit(fakenode.InotifyCount{Instances: c.Host.Used().Instances, Watches: 524288})
	// something else takes what the kubelet gives back as it stops
	c.Host.SetOutside(fakenode.InotifyCount{Instances: c.Host.Used().Instances, Watches: 200})
	c.Host.SetHeld("other", fakenode.InotifyCount{})
	if err := n.Command("systemctl", "restart", "kubelet").Run(); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if n.Ready || n.KubeletVersion != "" {
		t.Fatalf("the kubelet runs on a host without a free inotify instance: ready=%v version=%q", n.Ready, n.KubeletVersion)
	}
	log := strings.Join(n.KubeletLog(), "\n")
	if !strings.Contains(log, `"Failed to start cAdvisor" err="inotify_init: too many open files"`) {
		t.Errorf("the kubelet's log does not say why it exited:\n%s", log)
	}
	show := func() string {
		var b strings.Builder
		if err := n.Command("systemctl", "show", "kubelet", "--property=ActiveState,SubState,NRestarts").SetStdout(&b).Run(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if got := show(); !strings.Contains(got, "SubState=auto-restart") || !strings.Contains(got, "NRestarts=1") {
		t.Errorf("systemd does not restart the exited kubelet: %q", got)
	}
	c.Host.SetLimit(fakenode.InotifyCount{Instances: 512, Watches: 524288})
	if got := show(); !strings.Contains(got, "SubState=running") || !n.Ready || n.KubeletVersion != "v1.37.2" {
		t.Errorf("the kubelet does not come back once the host has room: %q ready=%v version=%q", got, n.Ready, n.KubeletVersion)
	}
}

// TestInotifyLimitRefused: on a host whose inotify limit the kind nodes
// (this cluster's and another cluster's beside it) nearly exhaust, the
// upgrade is refused in preflight with the numbers and kind's fix, and
// nothing changes; once the limit is raised the same command upgrades.
func TestInotifyLimitRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 1, fakenode.Flat)
	// a bigger cluster beside it on a host with Debian's default limit
	other := fakenode.NewCluster("other", from, 2, 1)
	e.cluster.ShareHost(other)
	host := other.Host
	host.SetLimit(fakenode.InotifyCount{Instances: 128, Watches: 192530})
	if used := host.Used().Instances; used != 119 {
		t.Fatalf("the scenario needs the host near its limit: %d of 128 used", used)
	}
	snapshotUnchanged(t, e, func() {
		_, err := e.run(func(o *upgrade.Options) {
			o.Cluster = upgrade.KnownNodes{Cluster: e.cluster.KindNodes(), Others: other.KindNodes()}
		})
		if err == nil {
			t.Fatal("the upgrade was not refused")
		}
		for _, want := range []string{
			"the host's inotify limits leave too little room for the kubelets this upgrade restarts",
			"inotify_init: too many open files",
			"fs.inotify.max_user_instances is 128, of which the root processes of kind's nodes on this host hold 109",
			"this cluster's 2 node(s) 41, 3 other node(s) the rest), which leaves at most 19 free",
			"needs up to 27 at once (what kind-control-plane holds now, its kubelet 7)",
			"sysctl -w fs.inotify.max_user_instances=512",
			"kind's advice is `sysctl -w fs.inotify.max_user_watches=524288 fs.inotify.max_user_instances=512`",
			"then run this command again",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
		}
	})
	host.SetLimit(fakenode.InotifyCount{Instances: 512, Watches: 524288})
	if _, err := e.run(func(o *upgrade.Options) {
		o.Cluster = upgrade.KnownNodes{Cluster: e.cluster.KindNodes(), Others: other.KindNodes()}
	}); err != nil {
		t.Fatalf("the upgrade failed once the limit was raised: %v", err)
	}
	for _, n := range e.cluster.Nodes {
		if n.KubeletVersion != target || !n.Ready {
			t.Errorf("node %s kubelet %q ready %v, want %s and Ready", n.Name, n.KubeletVersion, n.Ready, target)
		}
	}
}

// TestKubeletThatDoesNotComeBack: when a restarted kubelet exits at every
// start (here the host's inotify instances were taken after preflight),
// the wait for its node ends at once, long before --wait, with the
// kubelet's own error line quoted; once the host has room again, running
// the command again finishes the upgrade.
func TestKubeletThatDoesNotComeBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 1, fakenode.Flat)
	host := e.cluster.Host
	restart := fakenode.Call{Node: "kind-worker", Argv: []string{"systemctl", "restart", "kubelet"}}
	e.cluster.Before(restart, 1, func() {
		// other programs on the host (another cluster being created)
		// take every free instance, and those the old kubelet gives
		// back as soon as it has stopped
		used := host.Used()
		host.SetOutside(fakenode.InotifyCount{Instances: 10 + host.Limit.Instances - used.Instances + fakenode.KubeletInotify.Instances, Watches: 200})
	})
	start := time.Now()
	_, err := e.run(func(o *upgrade.Options) { o.Wait = time.Minute })
	if err == nil {
		t.Fatal("the upgrade succeeded with a kubelet that exits at start")
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the run took %s: it waited for a kubelet that keeps exiting", took)
	}
	for _, want := range []string{
		"the kubelet on node kind-worker does not stay up: it exited ",
		" times since the wait began (systemd: activating/auto-restart)",
		"the host's inotify limits are exhausted: raise them as kind's known-issues page advises (as root on the host: `sysctl -w fs.inotify.max_user_watches=524288 fs.inotify.max_user_instances=512`), then run this command again",
		`the kubelet on kind-worker says: E1201 21:00:00.600000     123 kubelet.go:1833] "Failed to start cAdvisor" err="inotify_init: too many open files"`,
		"`docker exec kind-worker journalctl -u kubelet` has all of it",
		`"Unable to read config path" err="unable to create inotify: too many open files"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "timed out") {
		t.Errorf("the error says the wait timed out: %v", err)
	}
	host.SetOutside(fakenode.InotifyCount{Instances: 10, Watches: 200})
	mustUpgrade(t, e)
	assertUpgraded(t, e.cluster)
}
