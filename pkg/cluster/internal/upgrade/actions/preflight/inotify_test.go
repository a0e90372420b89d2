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

package preflight

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/nodecapture"
)

func TestParseInotify(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		out     string
		want    NodeInotify
		wantErr string
	}{
		{
			name: "rootful node: the host's limits twice, root's and another user's instances",
			out:  "limits 128 192530 128 192530\nfd 0 12 kubelet\nfd 0 3 kubelet\nfd 0 40 systemd\nfd 65532 2 coredns\nfd 0 0 containerd\n",
			want: NodeInotify{Limit: InotifyCount{128, 192530}, Root: InotifyCount{4, 55}, Kubelet: InotifyCount{2, 15}},
		},
		{
			name: "a user namespace with lower limits than the host's",
			out:  "limits 512 524288 100 8192\nfd 0 1 kubelet\n",
			want: NodeInotify{Limit: InotifyCount{100, 8192}, Root: InotifyCount{1, 1}, Kubelet: InotifyCount{1, 1}},
		},
		{
			name: "a kernel without per-namespace limits",
			out:  "limits 512 524288 - -\n",
			want: NodeInotify{Limit: InotifyCount{512, 524288}},
		},
		{
			name: "a command name with a space",
			out:  "limits 512 524288 - -\nfd 0 2 kube proxy\n",
			want: NodeInotify{Limit: InotifyCount{512, 524288}, Root: InotifyCount{1, 2}},
		},
		{name: "no limits line", out: "fd 0 1 kubelet\n", wantErr: "no inotify limits"},
		{name: "no host limit", out: "limits - - - -\n", wantErr: "reports no inotify limits"},
		{name: "garbage", out: "limits 512 524288 - -\nsh: find: not found\n", wantErr: "unexpected line"},
		{name: "a bad count", out: "limits 512 524288 - -\nfd 0 x kubelet\n", wantErr: "unexpected inotify instance line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseInotify(tc.out)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseInotify error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseInotify = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestInotifyHeadroom(t *testing.T) {
	t.Parallel()
	node := func(limit, root, kubelet int) NodeInotify {
		return NodeInotify{Limit: InotifyCount{limit, 524288}, Root: InotifyCount{root, root * 10}, Kubelet: InotifyCount{kubelet, kubelet * 10}}
	}
	demo := map[string]NodeInotify{"demo-control-plane": node(128, 25, 7), "demo-worker": node(128, 16, 7)}
	cases := []struct {
		name               string
		cluster, neighbors map[string]NodeInotify
		refuse, warn       []string
	}{
		{name: "one small cluster on Debian's default limit", cluster: demo},
		{
			name:      "an HA cluster beside the demo's on Debian's default limit",
			cluster:   map[string]NodeInotify{"ha-control-plane": node(128, 28, 7), "ha-control-plane2": node(128, 27, 7), "ha-control-plane3": node(128, 27, 7), "ha-worker": node(128, 17, 7), "ha-worker2": node(128, 17, 7)},
			neighbors: demo,
			refuse: []string{
				"fs.inotify.max_user_instances is 128, of which the root processes of kind's nodes on this host hold 157 (this cluster's 5 node(s) 116, 2 other node(s) the rest), 29 more than the limit, which leaves none free",
				"needs up to 28 at once (what ha-control-plane holds now, its kubelet 7)",
				"`sysctl -w fs.inotify.max_user_instances=512`",
			},
		},
		{
			name:      "free, but less than twice the busiest node: a warning",
			cluster:   map[string]NodeInotify{"a-control-plane": node(128, 25, 7), "a-worker": node(128, 16, 7)},
			neighbors: map[string]NodeInotify{"b-control-plane": node(128, 25, 7), "b-worker": node(128, 16, 7)},
			warn:      []string{"which leaves at most 46 free", "needs up to 25 at once", "cannot be counted from a node"},
		},
		{
			name:    "already at kind's advice and still full: a higher limit is suggested",
			cluster: map[string]NodeInotify{"big-control-plane": node(512, 30, 7)},
			neighbors: map[string]NodeInotify{
				"x1": node(512, 250, 7), "x2": node(512, 250, 7),
			},
			refuse: []string{"fs.inotify.max_user_instances is 512", "18 more than the limit, which leaves none free", "sysctl -w fs.inotify.max_user_instances=1120"},
		},
		{
			name:    "the node's user namespace has the lower limit",
			cluster: map[string]NodeInotify{"r-control-plane": node(30, 25, 7)},
			refuse:  []string{"fs.inotify.max_user_instances is 30"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := InotifyHeadroom(tc.cluster, tc.neighbors)
			check := func(what, got string, want []string) {
				if len(want) == 0 {
					if got != "" {
						t.Errorf("%s %q, want none", what, got)
					}
					return
				}
				for _, w := range want {
					if !strings.Contains(got, w) {
						t.Errorf("%s %q does not contain %q", what, got, w)
					}
				}
			}
			check("refusal", v.Refuse, tc.refuse)
			check("warning", v.Warn, tc.warn)
		})
	}
}

// TestInotifyScriptOnARealShell runs the script preflight runs on nodes on
// this machine's /bin/sh and /proc: the limits are the kernel's, and the
// test's own inotify instances are listed with its user and their watches.
func TestInotifyScriptOnARealShell(t *testing.T) {
	t.Parallel()
	fd1, err := syscall.InotifyInit()
	if err != nil {
		t.Skipf("no inotify here: %v", err)
	}
	defer syscall.Close(fd1)
	fd2, err := syscall.InotifyInit()
	if err != nil {
		t.Skipf("no inotify here: %v", err)
	}
	defer syscall.Close(fd2)
	dir := t.TempDir()
	for _, p := range []string{dir, os.TempDir()} {
		if _, err := syscall.InotifyAddWatch(fd1, p, syscall.IN_CREATE); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := syscall.InotifyAddWatch(fd2, dir, syscall.IN_DELETE); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("/bin/sh", nodeutils.InotifyScript.Argv()[1:]...).Output()
	if err != nil {
		t.Fatalf("the script failed: %v", err)
	}
	ni, err := ParseInotify(string(out))
	if err != nil {
		t.Fatalf("ParseInotify: %v\n%s", err, out)
	}
	limit, err := os.ReadFile("/proc/sys/fs/inotify/max_user_instances")
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := strconv.Atoi(strings.TrimSpace(string(limit))); ni.Limit.Instances > want || ni.Limit.Instances <= 0 {
		t.Errorf("instance limit %d, the kernel says %d", ni.Limit.Instances, want)
	}
	// this test binary's own lines: its user, 2 instances, 3 watches
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	mine := InotifyCount{}
	uid := strconv.Itoa(os.Geteuid())
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == "fd" && strings.Join(f[3:], " ") == strings.TrimSpace(string(comm)) {
			if f[1] != uid {
				t.Errorf("line %q: want user %s", line, uid)
			}
			w, _ := strconv.Atoi(f[2])
			mine.Instances++
			mine.Watches += w
		}
	}
	// other test binaries of the same name may run beside this one
	if mine.Instances < 2 || mine.Watches < 3 {
		t.Errorf("the script lists %+v for this process, want at least 2 instances and 3 watches:\n%s", mine, out)
	}
	if os.Geteuid() == 0 && (ni.Root.Instances < 2 || ni.Root.Watches < 3) {
		t.Errorf("root holds %+v, want at least this test's 2 instances and 3 watches", ni.Root)
	}
}

// TestInotifyOnRealNodes parses the listings of a real 1 + 1 cluster's
// nodes (testdata/nodes/kubelet-inotify): the host's limits, root's
// instances with the kubelet's among them.
func TestInotifyOnRealNodes(t *testing.T) {
	t.Parallel()
	for file, want := range map[string]NodeInotify{
		"inotify-control-plane.txt": {Limit: InotifyCount{512, 524288}, Root: InotifyCount{27, 236}, Kubelet: InotifyCount{7, 177}},
		"inotify-worker.txt":        {Limit: InotifyCount{512, 524288}, Root: InotifyCount{14, 238}, Kubelet: InotifyCount{7, 195}},
	} {
		got, err := ParseInotify(string(nodecapture.Read(t, nodecapture.KubeletInotify, file)))
		if err != nil || got != want {
			t.Errorf("%s: ParseInotify = %+v, %v; want %+v", file, got, err, want)
		}
	}
}
