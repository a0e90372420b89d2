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
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/exec"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/fakenode"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/imageref"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/options"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/report"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/stepid"
)

const (
	from   = "v1.33.13"
	target = "v1.34.4"
)

// event is a JSON event and how many fake commands had run when it was
// written.
type event struct {
	report.Event
	seq int
}

// recorder collects JSON events from the upgrade's stdout.
type recorder struct {
	cluster *fakenode.Cluster
	mu      sync.Mutex
	buf     bytes.Buffer
	events  []event
	lines   []string
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf.Write(p)
	for {
		line, err := r.buf.ReadString('\n')
		if err != nil {
			r.buf.WriteString(line)
			break
		}
		r.lines = append(r.lines, line)
		var ev report.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			return 0, err
		}
		r.events = append(r.events, event{Event: ev, seq: r.cluster.Seq()})
	}
	return len(p), nil
}

type env struct {
	t        *testing.T
	cluster  *fakenode.Cluster
	imageDir string
	// image is --image, read through the cluster's fake provider
	image string
	// patches is --patches
	patches string
}

func newEnv(t *testing.T, controlPlanes, workers int, layout fakenode.Layout) *env {
	t.Helper()
	dir, err := fakenode.WriteRelease(t.TempDir(), target, "amd64", layout)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, cluster: fakenode.NewCluster("kind", from, controlPlanes, workers), imageDir: dir}
}

func (e *env) options(out *recorder) upgrade.Options {
	return upgrade.Options{
		Upgrade: options.Upgrade{
			ClusterName:     "kind",
			ImageDir:        e.imageDir,
			Image:           e.image,
			Patches:         e.patches,
			Wait:            2 * time.Second,
			PollInterval:    time.Millisecond,
			ParallelWorkers: 1,
		},
		Cluster:   upgrade.KnownNodes{Cluster: e.cluster.KindNodes()},
		HostCmder: e.cluster.Provider(),
		Logger:    log.NoopLogger{},
		Out:       out,
		JSON:      true,
	}
}

// run upgrades the fake cluster; modify adjusts the options.
func (e *env) run(modify func(*upgrade.Options)) (*recorder, error) {
	rec := &recorder{cluster: e.cluster}
	opts := e.options(rec)
	if modify != nil {
		modify(&opts)
	}
	err := upgrade.Run(opts)
	return rec, err
}

// calls returns the recorded commands from index start on.
func (e *env) calls(start int) []fakenode.Call {
	return append([]fakenode.Call{}, e.cluster.Calls[start:]...)
}

// mutating reports whether a command changes a node or the cluster.
func mutating(c fakenode.Call) bool {
	if c.Node == "host" {
		// the provider's commands on the host (reading --image): what they
		// leave is checked on its own (noHelperLeft)
		return false
	}
	argv := strings.Join(c.Argv, " ")
	switch c.Argv[0] {
	case "cat", "uname", "test", "sha256sum", "df", "containerd", "stat":
		return false
	case "sh":
		// the registry says; a script it does not know counts as a change
		s, ok := nodeutils.ScriptNamed(scriptName(c))
		return !ok || s.Mutates
	case "crictl":
		// a pull that failed left nothing
		return !c.Err
	case "systemctl":
		return c.Argv[1] != "show"
	case "ctr":
		return !strings.Contains(argv, "images ls")
	case "kubectl":
		return !strings.Contains(argv, " get ")
	}
	if strings.HasSuffix(c.Argv[0], "/kubelet") || strings.HasSuffix(c.Argv[0], "/kubectl") {
		return false // version checks of staged binaries
	}
	return true
}

func mustUpgrade(t *testing.T, e *env) *recorder {
	t.Helper()
	rec, err := e.run(nil)
	if err != nil {
		t.Fatalf("upgrade failed: %v\ncalls:\n%s", err, dump(e.cluster.Calls))
	}
	return rec
}

func dump(calls []fakenode.Call) string {
	var b strings.Builder
	for _, c := range calls {
		fmt.Fprintf(&b, "%4d %s err=%v\n", c.Seq, c, c.Err)
	}
	return b.String()
}

// assertUpgraded checks the whole cluster runs the target.
func assertUpgraded(t *testing.T, c *fakenode.Cluster) {
	t.Helper()
	if c.KubernetesVersion != target {
		t.Errorf("cluster version %s, want %s", c.KubernetesVersion, target)
	}
	for _, u := range c.Unsettled {
		t.Errorf("ran %s", u)
	}
	for _, n := range c.Nodes {
		if n.KubeletVersion != target || !n.Ready {
			t.Errorf("node %s kubelet %s ready %v, want %s and Ready", n.Name, n.KubeletVersion, n.Ready, target)
		}
		if got := strings.TrimSpace(string(n.Files["/kind/version"].Content)); got != target {
			t.Errorf("node %s /kind/version %q, want %s", n.Name, got, target)
		}
		if n.Unschedulable || len(n.Annotations) > 0 {
			t.Errorf("node %s left cordoned=%v annotations=%v", n.Name, n.Unschedulable, n.Annotations)
		}
		for _, b := range []string{"kubeadm", "kubelet", "kubectl"} {
			if want := fakenode.Binary(b, target, "amd64"); !bytes.Equal(n.Files["/usr/bin/"+b].Content, want) {
				t.Errorf("node %s /usr/bin/%s is not the target's", n.Name, b)
			}
			if old := fakenode.Binary(b, from, "amd64"); !bytes.Equal(n.Files["/usr/bin/"+b+".old"].Content, old) {
				t.Errorf("node %s did not keep the old %s as /usr/bin/%s.old", n.Name, b, b)
			}
		}
	}
}

func TestUpgradeOrderAndRoles(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3, 2, fakenode.ReleaseTree)
	mustUpgrade(t, e)
	c := e.cluster
	assertUpgraded(t, c)

	var kubeadmCalls, restarts, drains []string
	for _, call := range c.Calls {
		argv := strings.Join(call.Argv, " ")
		switch {
		case strings.Contains(argv, "kubeadm upgrade"):
			if call.Argv[0] != "flock" || call.Argv[1] != "/kind/upgrade/.kubeadm.lock" {
				t.Errorf("kubeadm ran without the node's kubeadm lock: %s", call)
			}
			kubeadmCalls = append(kubeadmCalls, call.Node+" "+strings.Join(call.Argv[3:5], " "))
		case argv == "systemctl restart kubelet":
			restarts = append(restarts, call.Node)
		case call.Argv[0] == "kubectl" && strings.Contains(argv, " drain ") && (len(drains) == 0 || drains[len(drains)-1] != call.About):
			// the bootstrap node is drained beside its loading, then
			// once more in the kubelets phase
			drains = append(drains, call.About)
		}
		if strings.Contains(argv, "/kind/kubeadm.conf") {
			t.Errorf("the upgrade touched kind's /kind/kubeadm.conf: %s", call)
		}
	}
	wantKubeadm := []string{
		"kind-control-plane upgrade apply",
		"kind-control-plane2 upgrade node",
		"kind-control-plane3 upgrade node",
		"kind-worker upgrade node",
		"kind-worker2 upgrade node",
	}
	if got := strings.Join(kubeadmCalls, "\n"); got != strings.Join(wantKubeadm, "\n") {
		t.Errorf("kubeadm calls:\n%s\nwant:\n%s", got, strings.Join(wantKubeadm, "\n"))
	}
	wantOrder := "kind-control-plane kind-control-plane2 kind-control-plane3 kind-worker kind-worker2"
	if got := strings.Join(restarts, " "); got != wantOrder {
		t.Errorf("kubelet restarts in order %q, want %q", got, wantOrder)
	}
	if got := strings.Join(drains, " "); got != wantOrder {
		t.Errorf("drains in order %q, want %q", got, wantOrder)
	}
	// each node's kubelet steps finish before the next node's begin
	last := map[string]int{}
	first := map[string]int{}
	for _, call := range c.Calls {
		if mutating(call) && (call.Argv[0] == "systemctl" || installs(call) || strings.Contains(strings.Join(call.Argv, " "), " patch node ")) {
			if _, ok := first[call.About]; !ok {
				first[call.About] = call.Seq
			}
			last[call.About] = call.Seq
		}
	}
	order := strings.Fields(wantOrder)
	for i := 1; i < len(order); i++ {
		if first[order[i]] < last[order[i-1]] {
			t.Errorf("kubelets phase touched %s before it finished %s", order[i], order[i-1])
		}
	}
	// control-plane images only on control-plane nodes; the rest everywhere
	for _, n := range c.Nodes {
		isCP := strings.Contains(n.Name, "control-plane")
		for _, image := range fakenode.KubeadmImages(target, fakenode.ImageConfig{}) {
			cpOnly := strings.Contains(image, "apiserver") || strings.Contains(image, "controller-manager") ||
				strings.Contains(image, "scheduler") || strings.Contains(image, "etcd")
			pinned, present := n.Images[image]
			switch {
			case cpOnly && !isCP && present:
				t.Errorf("worker %s got control-plane image %s", n.Name, image)
			case (isCP || !cpOnly) && !(present && pinned):
				t.Errorf("node %s lacks pinned image %s", n.Name, image)
			}
		}
	}
}

func TestRetagArchSuffixedArchives(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 1, fakenode.ReleaseTree)
	mustUpgrade(t, e)
	var tags []string
	for _, call := range e.cluster.Calls {
		if len(call.Argv) > 3 && call.Argv[0] == "ctr" && call.Argv[3] == "tag" {
			tags = append(tags, call.Node+": "+strings.Join(call.Argv[5:], " -> "))
		}
	}
	want := []string{
		"kind-control-plane: registry.k8s.io/kube-apiserver-amd64:v1.34.4 -> registry.k8s.io/kube-apiserver:v1.34.4",
		"kind-control-plane: registry.k8s.io/kube-controller-manager-amd64:v1.34.4 -> registry.k8s.io/kube-controller-manager:v1.34.4",
		"kind-control-plane: registry.k8s.io/kube-proxy-amd64:v1.34.4 -> registry.k8s.io/kube-proxy:v1.34.4",
		"kind-control-plane: registry.k8s.io/kube-scheduler-amd64:v1.34.4 -> registry.k8s.io/kube-scheduler:v1.34.4",
		"kind-worker: registry.k8s.io/kube-proxy-amd64:v1.34.4 -> registry.k8s.io/kube-proxy:v1.34.4",
	}
	sort.Strings(tags)
	if got := strings.Join(tags, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("retags:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	assertUpgraded(t, e.cluster)
}

func TestReleaseTarballGivenDirectly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 1, fakenode.Tarball)
	e.imageDir = filepath.Join(e.imageDir, "kubernetes-server-linux-amd64.tar.gz")
	// the tarball has no etcd, CoreDNS or pause: without them on the nodes
	// the upgrade is refused
	snapshotUnchanged(t, e, func() {
		if _, err := e.run(nil); err == nil || !strings.Contains(err.Error(), "registry.k8s.io/etcd:3.6.5-0") {
			t.Errorf("expected a refusal naming etcd, got %v", err)
		}
	})
	// with them preloaded it works from the tarball alone
	for _, n := range e.cluster.Nodes {
		for _, image := range fakenode.KubeadmImages(target, fakenode.ImageConfig{})[4:] {
			n.Images[image] = true
		}
	}
	mustUpgrade(t, e)
	assertUpgraded(t, e.cluster)
}

func TestImageDirLayouts(t *testing.T) {
	t.Parallel()
	var snapshots []string
	for _, layout := range []fakenode.Layout{fakenode.Flat, fakenode.ReleaseTree, fakenode.Tarball, fakenode.BuildTree} {
		e := newEnv(t, 1, 1, layout)
		t.Run(string(layout), func(t *testing.T) {
			mustUpgrade(t, e)
			assertUpgraded(t, e.cluster)
		})
		// the same cluster state whatever the layout (the arch-suffixed
		// names stay as extra tags)
		var b strings.Builder
		for _, n := range e.cluster.Nodes {
			fmt.Fprintf(&b, "%s %s %s\n", n.Name, n.KubeletVersion, n.Files["/kind/version"].Content)
			for _, image := range fakenode.KubeadmImages(target, fakenode.ImageConfig{}) {
				fmt.Fprintf(&b, "  %s %v\n", image, n.Images[image])
			}
		}
		snapshots = append(snapshots, b.String())
	}
	for i := 1; i < len(snapshots); i++ {
		if snapshots[i] != snapshots[0] {
			t.Errorf("layouts end in different states:\n%s\nvs\n%s", snapshots[0], snapshots[i])
		}
	}
}

// levelLogger records the lines logged, Info lines prefixed with their
// verbosity ("V0 ", "V1 "...).
type levelLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *levelLogger) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
}

func (l *levelLogger) Warn(message string) { l.add("W " + message) }
func (l *levelLogger) Warnf(format string, args ...interface{}) {
	l.add("W " + fmt.Sprintf(format, args...))
}
func (l *levelLogger) Error(message string) { l.add("E " + message) }
func (l *levelLogger) Errorf(format string, args ...interface{}) {
	l.add("E " + fmt.Sprintf(format, args...))
}
func (l *levelLogger) V(level log.Level) log.InfoLogger { return levelInfoLogger{l, level} }

type levelInfoLogger struct {
	l     *levelLogger
	level log.Level
}

func (i levelInfoLogger) Info(message string) { i.l.add(fmt.Sprintf("V%d %s", i.level, message)) }
func (i levelInfoLogger) Infof(format string, args ...interface{}) {
	i.Info(fmt.Sprintf(format, args...))
}
func (i levelInfoLogger) Enabled() bool { return true }

func TestImageDirFilesAreLogged(t *testing.T) {
	t.Parallel()
	cases := []struct {
		layout fakenode.Layout
		// want are the first lines logged; "<dir>" stands for --image-dir
		want []string
	}{
		{
			layout: fakenode.Flat,
			want: []string{
				"V1 --image-dir <dir>: flat layout",
				"V1 kubeadm, kubelet, kubectl from <dir>",
				"V1 image archives from <dir>: coredns.tar, etcd.tar, kube-apiserver.tar, kube-controller-manager.tar, kube-proxy.tar, kube-scheduler.tar, pause.tar",
			},
		},
		{
			// only a build tree says at the default verbosity which build
			layout: fakenode.BuildTree,
			want: []string{
				"V0 Using the Kubernetes build in <dir>: binaries from <dir>/_output/dockerized/bin/linux/amd64, image archives from <dir>/_output/release-images/amd64",
				"V1 --image-dir <dir>: build-tree layout",
				"V1 kubeadm, kubelet, kubectl from <dir>/_output/dockerized/bin/linux/amd64",
				"V1 image archives from <dir>/_output/release-images/amd64: coredns.tar, etcd.tar, kube-apiserver.tar, kube-controller-manager.tar, kube-proxy.tar, kube-scheduler.tar, pause.tar",
			},
		},
	}
	for _, tc := range cases {
		t.Run(string(tc.layout), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 1, 0, tc.layout)
			logger := &levelLogger{}
			if _, err := e.run(func(o *upgrade.Options) {
				o.Logger = logger
				o.DryRun = true
			}); err != nil {
				t.Fatal(err)
			}
			want := strings.ReplaceAll(strings.Join(tc.want, "\n"), "<dir>", e.imageDir)
			// the lines the source's step logs, right after its status line
			opening := "V0  • preflight: opening " + e.imageDir + " ..."
			i := slices.Index(logger.lines, opening)
			if i < 0 {
				t.Fatalf("no line %q in:\n%s", opening, strings.Join(logger.lines, "\n"))
			}
			got := logger.lines[i+1:]
			if len(got) > len(tc.want) {
				got = got[:len(tc.want)]
			}
			if strings.Join(got, "\n") != want {
				t.Errorf("lines logged after %q:\n%s\nwant:\n%s", opening, strings.Join(got, "\n"), want)
			}
		})
	}
}

// TestWaitsForKubeadmLeftRunning: a kubeadm an interrupted run left going
// on a node is waited for, with a message that says so, before anything
// looks at the cluster.
func TestWaitsForKubeadmLeftRunning(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 1, fakenode.Flat)
	e.cluster.Nodes[1].Kubeadm = fakenode.KubeadmRunning
	logger := &levelLogger{}
	if _, err := e.run(func(o *upgrade.Options) { o.Logger = logger }); err != nil {
		t.Fatalf("upgrade failed: %v", err)
	}
	assertUpgraded(t, e.cluster)
	want := "V0 A kubeadm started by an earlier run still runs on node kind-worker: waiting up to 2s for it to finish"
	if !slices.Contains(logger.lines, want) {
		t.Errorf("logged:\n%s\nwant the line %q", strings.Join(logger.lines, "\n"), want)
	}
}

// TestTransientAPIErrorsAreRetried: every kubectl request fails once the
// way an API server behind a switching load balancer, or an etcd leader
// election, fails one; the upgrade retries and finishes.
func TestTransientAPIErrorsAreRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, 1, fakenode.Flat)
	e.cluster.FlakyAPI = true
	mustUpgrade(t, e)
	assertUpgraded(t, e.cluster)
}

// TestAPIDownIsNotRetriedForever: an API server that stays away fails the
// run after a bounded number of tries, saying what it tried.
func TestAPIDownIsNotRetriedForever(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 1, fakenode.Flat)
	e.cluster.APIServerUp = false
	start := len(e.cluster.Calls)
	_, err := e.run(nil)
	if err == nil || !strings.Contains(err.Error(), "was refused") || !strings.Contains(err.Error(), "after 6 tries") {
		t.Fatalf("error %v, want the refusal after 6 tries", err)
	}
	tries := 0
	for _, c := range e.calls(start) {
		if c.Argv[0] == "kubectl" {
			tries++
		}
	}
	if tries != 6 {
		t.Errorf("%d kubectl requests, want 6", tries)
	}
}

// TestRBACDenialsRetriedOnlyAfterAPIRestarts: an API server that has just
// restarted denies requests for a moment (every restart in the fake does:
// the other tests pass through that), and those are tried again; a real
// denial, on a worker's cordon where no API server restarted (a caller's
// hook keeps the workers from starting before the control-plane node's
// pods settle), fails at once, on the first try. Beside the last
// control-plane node's settle, the workers' requests may reach an API
// server that has just restarted, and are tried again.
func TestRBACDenialsRetriedOnlyAfterAPIRestarts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		hook  bool
		tries int
	}{
		{name: "workers after the settle", hook: true, tries: 1},
		{name: "workers beside the settle", tries: 1 + actions.APIRetries},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 1, 2, fakenode.Flat)
			e.cluster.Delays.APIDenials = 3
			e.cluster.RBACDenies = "patch node kind-worker "
			_, err := e.run(func(o *upgrade.Options) {
				if tc.hook {
					o.Hook = func(actions.HookPoint) error { return nil }
				}
			})
			if err == nil || !strings.Contains(err.Error(), "is forbidden: User") || strings.Contains(err.Error(), "tries") != (tc.tries > 1) {
				t.Fatalf("error %v, want the denial of the worker's cordon after %d tries", err, tc.tries)
			}
			tries := 0
			for _, c := range e.cluster.Calls {
				if c.Argv[0] == "kubectl" && strings.Contains(strings.Join(c.Argv, " "), "patch node kind-worker ") {
					tries++
				}
			}
			if tries != tc.tries {
				t.Errorf("the denied request was sent %d times, want %d", tries, tc.tries)
			}
			if cp := e.cluster.Node("kind-control-plane"); cp.KubeletVersion != target {
				t.Errorf("the control plane's kubelet runs %s: the denials after its restarts were not retried", cp.KubeletVersion)
			}
			e.cluster.RBACDenies = ""
			mustUpgrade(t, e)
			assertUpgraded(t, e.cluster)
		})
	}
}

// TestKubeadmOutputLoggedOnFailure: -v 3 shows kubeadm's output when it
// fails, as it does when it succeeds.
func TestKubeadmOutputLoggedOnFailure(t *testing.T) {
	t.Parallel()
	clean := newEnv(t, 1, 0, fakenode.Flat)
	mustUpgrade(t, clean)
	var apply fakenode.Call
	for _, c := range clean.cluster.Calls {
		if slices.Contains(c.Argv, "apply") {
			apply = c
		}
	}
	e := newEnv(t, 1, 0, fakenode.Flat)
	e.cluster.FailOn(apply, 1)
	logger := &levelLogger{}
	if _, err := e.run(func(o *upgrade.Options) { o.Logger = logger }); err == nil {
		t.Fatal("the upgrade did not fail")
	}
	want := "V3 control-plane: kind-control-plane: kubeadm failed, its output:\ninjected failure"
	if !slices.Contains(logger.lines, want) {
		t.Errorf("logged:\n%s\nwant the line %q", strings.Join(logger.lines, "\n"), want)
	}
}

// TestFixesNameTheProvidersCommand: a refusal's fix is the node
// provider's own command.
func TestFixesNameTheProvidersCommand(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"", "podman", "nerdctl"} {
		e := newEnv(t, 1, 1, fakenode.Flat)
		e.cluster.Nodes[1].Running = false
		_, err := e.run(func(o *upgrade.Options) { o.ProviderCommand = provider })
		want := provider
		if want == "" {
			want = "docker"
		}
		if err == nil || !strings.Contains(err.Error(), "`"+want+" start kind-worker`") {
			t.Errorf("provider %q: error %v, want the fix `%s start kind-worker`", provider, err, want)
		}
	}
}

// TestDiskSharedByNodesAddsUp: kind's nodes keep their files on the host's
// disk, so what each needs adds up on a file system they share.
func TestDiskSharedByNodesAddsUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2, fakenode.Flat)
	for _, n := range e.cluster.Nodes {
		n.DiskFreeKB = 0
	}
	_, err := e.run(nil)
	want := "which holds kind-control-plane:/kind/upgrade, kind-control-plane:/var/lib/containerd, kind-worker:/kind/upgrade, kind-worker:/var/lib/containerd, kind-worker2:/kind/upgrade, kind-worker2:/var/lib/containerd"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want it to name every node's use of the shared file system", err)
	}
}

// snapshotUnchanged runs fn and checks that it changed nothing at all.
func snapshotUnchanged(t *testing.T, e *env, fn func()) {
	t.Helper()
	before := e.cluster.Snapshot()
	start := len(e.cluster.Calls)
	fn()
	if after := e.cluster.Snapshot(); after != before {
		t.Errorf("the cluster changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	for _, call := range e.calls(start) {
		if mutating(call) {
			t.Errorf("ran a mutating command: %s", call)
		}
	}
}

func TestRefusalsChangeNothing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(t *testing.T, e *env)
		// modify adjusts the run's options
		modify func(*upgrade.Options)
		errHas string
	}{
		{
			name:   "node container not running",
			setup:  func(t *testing.T, e *env) { e.cluster.Nodes[1].Running = false },
			errHas: `node "kind-worker" does not answer: is its container running?`,
		},
		{
			name:   "kubeadm left running on a worker",
			setup:  func(t *testing.T, e *env) { e.cluster.Nodes[1].Kubeadm = fakenode.KubeadmStuck },
			errHas: `a kubeadm started by an earlier run still runs on node "kind-worker" after --wait (2s): wait for it to finish, then run the same command again`,
		},
		{
			name:   "node not Ready",
			setup:  func(t *testing.T, e *env) { e.cluster.Nodes[1].Ready = false },
			errHas: `node "kind-worker" is not Ready`,
		},
		{
			name: "downgrade",
			setup: func(t *testing.T, e *env) {
				dir, err := fakenode.WriteRelease(t.TempDir(), "v1.33.2", "amd64", fakenode.Flat)
				if err != nil {
					t.Fatal(err)
				}
				e.imageDir = dir
			},
			errHas: "that is a downgrade",
		},
		{
			name: "skipping a minor version",
			setup: func(t *testing.T, e *env) {
				dir, err := fakenode.WriteRelease(t.TempDir(), "v1.35.0", "amd64", fakenode.Flat)
				if err != nil {
					t.Fatal(err)
				}
				e.imageDir = dir
			},
			errHas: "that skips a minor version; upgrade to v1.34.x first",
		},
		{
			name:   "kubeadm missing",
			setup:  func(t *testing.T, e *env) { removeFile(t, e, "kubeadm") },
			errHas: "kubeadm not found",
		},
		{
			name: "kubeadm not executable",
			setup: func(t *testing.T, e *env) {
				if err := os.Chmod(filepath.Join(e.imageDir, "kubeadm"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			errHas: "chmod +x",
		},
		{
			name: "binaries for another architecture",
			setup: func(t *testing.T, e *env) {
				dir, err := fakenode.WriteRelease(t.TempDir(), target, "arm64", fakenode.Flat)
				if err != nil {
					t.Fatal(err)
				}
				e.imageDir = dir
			},
			errHas: `is built for arm64 but node "kind-control-plane" is amd64: use the linux/amd64 release`,
		},
		{
			name: "corrupt image archive",
			setup: func(t *testing.T, e *env) {
				if err := os.WriteFile(filepath.Join(e.imageDir, "etcd.tar"), []byte("not a tar archive at all"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			errHas: "etcd.tar",
		},
		{
			name: "an image archive for another architecture",
			setup: func(t *testing.T, e *env) {
				archive := fakenode.ImageArchiveFor("arm64", "registry.k8s.io/etcd:3.6.5-0")
				if err := os.WriteFile(filepath.Join(e.imageDir, "etcd.tar"), archive, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			errHas: "etcd.tar is built for arm64 but node kind-control-plane is amd64",
		},
		{
			name: "an archive holding only another platform of a multi-platform image (Docker 29)",
			setup: func(t *testing.T, e *env) {
				archive := fakenode.OnePlatformArchive("arm64", []string{"amd64"}, "registry.k8s.io/etcd:3.6.5-0")
				if err := os.WriteFile(filepath.Join(e.imageDir, "etcd.tar"), archive, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			errHas: "etcd.tar holds only linux/arm64 of its multi-platform image (the other platforms' content is not in it) but node kind-control-plane is linux/amd64: save it for that platform (`docker image save --platform linux/amd64 -o <dir>/<name>.tar <image>`)",
		},
		{
			name:   "image neither on the nodes nor in --image-dir",
			setup:  func(t *testing.T, e *env) { removeFile(t, e, "etcd.tar") },
			errHas: "node kind-control-plane cannot pull registry.k8s.io/etcd:3.6.5-0: ",
		},
		{
			name:   "not enough disk",
			setup:  func(t *testing.T, e *env) { e.cluster.Nodes[1].DiskFreeKB = 10 },
			errHas: `node "kind-worker" has 0 MiB free in /kind/upgrade (file system /)`,
		},
		{
			name:   "a cluster without nodes",
			setup:  func(t *testing.T, e *env) { e.cluster.Nodes = nil },
			errHas: "the cluster has no nodes",
		},
		{
			name:   "an emulated version below the target's range",
			modify: emulating("1.30", false),
			errHas: "--emulated-version 1.30: kube-apiserver v1.34.4 refuses --emulated-version=1.30: the allowed range is 1.31..1.34 (the target's minor version and the 3 before it, never below 1.31)",
		},
		{
			name:   "an emulated version above the target",
			modify: emulating("1.35", false),
			errHas: "the allowed range is 1.31..1.34",
		},
		{
			name:   "forward compatibility without an older emulation",
			modify: emulating("1.34", true),
			errHas: "--emulation-forward-compatible=true: kube-apiserver v1.34.4 refuses --emulation-forward-compatible=true unless it emulates an older version",
		},
		{
			name: "an emulation with the control-plane phase skipped",
			modify: func(o *upgrade.Options) {
				o.EmulatedVersion = "1.33"
				o.SkipPhases = []string{"control-plane", "kubelets"}
			},
			errHas: "--emulated-version changes the kubeadm configuration of the control plane, which the control-plane phase applies: do not skip it",
		},
		{
			name: "a patches folder kubeadm reads nothing from",
			setup: func(t *testing.T, e *env) {
				e.patches = writePatches(t, map[string]string{"README.md": "x", "kube-apiserver.yml": apiServerPatch})
			},
			errHas: "holds no patch kubeadm v1.34.4 would read",
		},
		{
			name: "a patch kubeadm would refuse",
			setup: func(t *testing.T, e *env) {
				e.patches = writePatches(t, map[string]string{"kube-apiserver+jsonpatch.yaml": apiServerPatch, "etcd+yml.yaml": "{}"})
			},
			errHas: "kubeadm v1.34.4 would refuse etcd+yml.yaml: unknown or missing patch type after '+'",
		},
		{
			name:   "kube-proxy left too far behind",
			setup:  func(t *testing.T, e *env) { e.cluster.KubeProxy = "registry.k8s.io/kube-proxy:v1.30.5" },
			modify: func(o *upgrade.Options) { o.SkipPhases = []string{"control-plane/kube-proxy"} },
			errHas: "--skip-phases control-plane/kube-proxy: kube-proxy would stay at v1.30.5 while the API server goes to v1.34.4: kube-proxy may be at most 3 minor versions older than the API server",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 1, 1, fakenode.Flat)
			if tc.setup != nil {
				tc.setup(t, e)
			}
			snapshotUnchanged(t, e, func() {
				_, err := e.run(tc.modify)
				if err == nil {
					t.Fatal("the upgrade was not refused")
				}
				if !strings.Contains(err.Error(), tc.errHas) {
					t.Errorf("error %q does not contain %q", err, tc.errHas)
				}
			})
		})
	}
}

func removeFile(t *testing.T, e *env, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(e.imageDir, name)); err != nil {
		t.Fatal(err)
	}
}

func TestSameVersionIsNothingToDo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 1, fakenode.Flat)
	mustUpgrade(t, e)
	snapshotUnchanged(t, e, func() {
		rec, err := e.run(nil)
		if err != nil {
			t.Fatalf("a second upgrade failed: %v", err)
		}
		found := false
		for _, ev := range rec.events {
			found = found || strings.Contains(ev.Message, "nothing to do")
		}
		if !found {
			t.Error("the second upgrade did not say there is nothing to do")
		}
	})
}

// TestVerifyWaitsForKindsAddons: kind's storage provisioner is not upgraded,
// but verify fails while it is not available, and passes once it is again.
func TestVerifyWaitsForKindsAddons(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 1, fakenode.Flat)
	e.cluster.StorageDown = true
	// the tests' usual --wait: a shorter one also bounds the waits before
	// verify, which a loaded machine (-race on 2 cores) can exceed
	_, err := e.run(nil)
	if err == nil || !strings.Contains(err.Error(), "Deployment local-path-storage/local-path-provisioner") {
		t.Fatalf("upgrade with kind's storage down: %v, want verify to name local-path-provisioner", err)
	}
	e.cluster.StorageDown = false
	mustUpgrade(t, e)
	assertUpgraded(t, e.cluster)
}

func TestDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, 1, fakenode.ReleaseTree)
	var out bytes.Buffer
	snapshotUnchanged(t, e, func() {
		_, err := e.run(func(o *upgrade.Options) {
			o.DryRun = true
			o.JSON = false
			o.Out = &out
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	plan := out.String()
	for _, want := range []string{
		"Upgrade plan: v1.33.13 -> v1.34.4",
		"Node kind-control-plane (control-plane, bootstrap): v1.33.13 -> v1.34.4",
		"Node kind-control-plane2 (control-plane): v1.33.13 -> v1.34.4",
		"Node kind-worker (worker): v1.33.13 -> v1.34.4",
		"control-plane: kubeadm upgrade apply v1.34.4",
		"control-plane: kubeadm upgrade node",
		"kubelets: restarting the kubelet",
		"kube-apiserver.tar, kube-controller-manager.tar",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q:\n%s", want, plan)
		}
	}
	if strings.Contains(strings.SplitN(plan, "Node kind-worker", 2)[1], "kube-apiserver.tar") {
		t.Errorf("plan loads control-plane images on the worker:\n%s", plan)
	}
}

func TestSkipPhases(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 1, fakenode.Flat)
	closing := func(rec *recorder) string {
		var last string
		for _, ev := range rec.events {
			if ev.Kind == report.KindUpgrade && ev.Event.Event == report.EventInfo {
				last = ev.Message
			}
		}
		return last
	}
	finish := "To finish, run without --skip-phases: kind alpha upgrade --name kind --image-dir " + e.imageDir
	rec, err := e.run(func(o *upgrade.Options) { o.SkipPhases = []string{"control-plane", "kubelets", "verify"} })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := closing(rec), "Partly upgraded to v1.34.4: loaded the v1.34.4 binaries and images into the nodes. "+
		"Still older: the control plane (v1.33.13); the kubelets and /kind/version of kind-control-plane (v1.33.13), kind-worker (v1.33.13). "+finish; got != want {
		t.Errorf("after loading only, the closing line is\n%s\nwant\n%s", got, want)
	}
	// a Go caller is told in the API's words
	rec, err = e.run(func(o *upgrade.Options) {
		o.SkipPhases = []string{"control-plane", "kubelets", "verify"}
		o.GoNames = true
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := closing(rec), "To finish, run the upgrade again without UpgradeWithSkipPhases."; !strings.HasSuffix(got, want) {
		t.Errorf("for a Go caller, the closing line is\n%s\nwant it to end with\n%s", got, want)
	}
	rec, err = e.run(func(o *upgrade.Options) { o.SkipPhases = []string{"kubelets"} })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := closing(rec), "Partly upgraded to v1.34.4: loaded the v1.34.4 binaries and images into the nodes, upgraded the control plane to v1.34.4, verified the control plane. "+
		"Still older: the kubelets and /kind/version of kind-control-plane (v1.33.13), kind-worker (v1.33.13). "+finish; got != want {
		t.Errorf("after the control plane, the closing line is\n%s\nwant\n%s", got, want)
	}
	c := e.cluster
	if c.KubernetesVersion != target {
		t.Errorf("control plane at %s, want %s", c.KubernetesVersion, target)
	}
	for _, n := range c.Nodes {
		if n.KubeletVersion != from {
			t.Errorf("node %s kubelet %s, want it left at %s", n.Name, n.KubeletVersion, from)
		}
	}
	// running again without skipping finishes the job
	rec = mustUpgrade(t, e)
	assertUpgraded(t, c)
	if got := closing(rec); got != "Upgraded the cluster to v1.34.4 (its control plane already ran it)." {
		t.Errorf("the finishing run's closing line is %q", got)
	}
}

func TestSkipPhasesThatBreakTheOrderAreRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		skip   []string
		errHas string
	}{
		{[]string{"control-plane"}, "a kubelet must never be newer than the API server"},
		{[]string{"load-artifacts"}, "still lacks the images of"},
		{[]string{"load-artifacts", "kubelets", "verify"}, "still lacks the images of"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.skip, ","), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 1, 1, fakenode.Flat)
			snapshotUnchanged(t, e, func() {
				_, err := e.run(func(o *upgrade.Options) { o.SkipPhases = tc.skip })
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Errorf("error %v, want one containing %q", err, tc.errHas)
				}
			})
		})
	}
	// once loaded, later runs may skip load-artifacts
	e := newEnv(t, 1, 1, fakenode.Flat)
	if _, err := e.run(func(o *upgrade.Options) { o.SkipPhases = []string{"control-plane", "kubelets", "verify"} }); err != nil {
		t.Fatal(err)
	}
	if _, err := e.run(func(o *upgrade.Options) { o.SkipPhases = []string{"load-artifacts"} }); err != nil {
		t.Fatal(err)
	}
	assertUpgraded(t, e.cluster)
}

func TestValidateSkipPhases(t *testing.T) {
	t.Parallel()
	cases := []struct {
		phases []string
		errHas string
	}{
		{nil, ""},
		{[]string{"load-artifacts", "control-plane", "kubelets", "verify"}, ""},
		{[]string{"preflight"}, `phase "preflight" cannot be skipped`},
		{[]string{"kubelet"}, `unknown phase "kubelet"`},
		{[]string{"verify", ""}, `unknown phase ""`},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.phases, ","), func(t *testing.T) {
			t.Parallel()
			err := upgrade.ValidateSkipPhases(tc.phases, "--skip-phases")
			switch {
			case tc.errHas == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)):
				t.Errorf("error %v, want one containing %q", err, tc.errHas)
			}
		})
	}
}

func TestJSONEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 1, fakenode.Flat)
	rec := mustUpgrade(t, e)
	open := map[string]int{}
	var phases []string
	for _, line := range rec.lines {
		var raw map[string]interface{}
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			t.Fatalf("not one JSON object per line: %q", line)
		}
	}
	for _, ev := range rec.events {
		key := ev.Kind + "/" + ev.Phase + "/" + ev.Node + "/" + ev.Step
		switch ev.Event.Event {
		case report.EventStarted:
			open[key]++
			if ev.Kind == report.KindPhase {
				phases = append(phases, ev.Phase)
			}
		case report.EventFinished:
			open[key]--
			if ev.Outcome != report.OutcomeSuccess && ev.Outcome != report.OutcomeSkipped {
				t.Errorf("%s finished with %q", key, ev.Outcome)
			}
			if ev.DurationSeconds < 0 {
				t.Errorf("%s has a negative duration", key)
			}
		}
		if ev.Time.IsZero() {
			t.Errorf("%s has no time", key)
		}
	}
	for key, n := range open {
		if n != 0 {
			t.Errorf("%s started and finished %d times apart", key, n)
		}
	}
	if got, want := strings.Join(phases, ","), "preflight,load-artifacts,control-plane,kubelets,verify"; got != want {
		t.Errorf("phases %s, want %s", got, want)
	}
	kinds := map[string]bool{}
	for _, ev := range rec.events {
		kinds[ev.Kind] = true
	}
	for _, k := range []string{report.KindUpgrade, report.KindPhase, report.KindNode, report.KindStep} {
		if !kinds[k] {
			t.Errorf("no %s events", k)
		}
	}
}

// TestEveryStepHasAStableID: every step event carries one of stepid.All's
// identifiers, of its own phase, and an upgrade of a cluster with every
// kind of node (three control planes, whose settles run beside the next
// node's drain, and a worker), with an emulation and patches, goes through
// every one of them.
func TestEveryStepHasAStableID(t *testing.T) {
	t.Parallel()
	known := map[stepid.ID]bool{}
	for _, id := range stepid.All() {
		known[id] = true
	}
	e := newEnv(t, 3, 1, fakenode.ReleaseTree)
	e.patches = writePatches(t, map[string]string{"kube-apiserver+json.yaml": apiServerPatch})
	// with kubeadm's pause everywhere, the other control-plane node is
	// loaded beside the control-plane phase, which waits for it
	for _, n := range e.cluster.Nodes {
		n.Images[imageref.Normalize(kubeadmPause())] = true
	}
	rec := mustRun(t, e, emulating("1.33", false))
	// a chain's earlier targets and a Go caller's hooks have steps of
	// their own
	chain := newChainEnv(t, "v1.33.13", 1, 1, "v1.34.4", "v1.35.4")
	chained, err := chain.run(func(o *upgrade.Options) { o.Hook = func(actions.HookPoint) error { return nil } })
	if err != nil {
		t.Fatal(err)
	}
	seen := map[stepid.ID]bool{}
	for _, ev := range append(rec.events, chained.events...) {
		if ev.Kind != report.KindStep {
			if ev.StepID != "" {
				t.Errorf("a %s event has the step ID %q", ev.Kind, ev.StepID)
			}
			continue
		}
		if ev.StepID == stepid.CallerHook {
			// after a phase, a node or the whole upgrade
			seen[ev.StepID] = true
			continue
		}
		if !known[ev.StepID] || !strings.HasPrefix(string(ev.StepID), ev.Phase+"/") {
			t.Errorf("step %q of phase %s has the ID %q", ev.Step, ev.Phase, ev.StepID)
		}
		seen[ev.StepID] = true
	}
	for _, id := range stepid.All() {
		if !seen[id] {
			t.Errorf("no event of step %s", id)
		}
	}
}

// scriptName is the name of the registered script c runs ($0 of
// `sh -c BODY NAME ...`), "" when c runs none.
func scriptName(c fakenode.Call) string {
	if c.Argv[0] != "sh" || len(c.Argv) < 4 || c.Argv[1] != "-c" {
		return ""
	}
	return c.Argv[3]
}

// installs reports whether c installs binaries in /usr/bin.
func installs(c fakenode.Call) bool {
	return scriptName(c) == nodeutils.InstallScript.Name && strings.Contains(strings.Join(c.Argv, " "), "/usr/bin/kubelet")
}

// significant are the commands whose repetition would be repeated work:
// kubeadm upgrades, imports, kubelet restarts, drains and node patches,
// and the scripts that rename a file into place.
func significant(c fakenode.Call) bool {
	argv := strings.Join(c.Argv, " ")
	switch scriptName(c) {
	case nodeutils.FinishScript.Name, nodeutils.WriteStringScript.Name, nodeutils.InstallScript.Name:
		return true
	}
	return strings.Contains(argv, "kubeadm upgrade") || strings.Contains(argv, "images import") ||
		(c.Argv[0] == "kubectl" && strings.Contains(argv, " patch configmap ")) ||
		argv == "systemctl restart kubelet" ||
		(c.Argv[0] == "kubectl" && (strings.Contains(argv, " drain ") || strings.Contains(argv, " patch node ")))
}

// TestResumeAfterAFailureAnywhere injects a failure into every command of a
// clean upgrade in turn, once before the command takes effect and once
// after (the connection to the node dropping as the command finishes);
// running the upgrade again must finish it, reach the same state, and not
// repeat work that had finished.
func TestResumeAfterAFailureAnywhere(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		// still fast: the fake runs a few hundred upgrades in a second or two
		t.Log("running in -short mode too")
	}
	clean := newEnv(t, 2, 1, fakenode.ReleaseTree)
	mustUpgrade(t, clean)
	want := clean.cluster.Snapshot()
	total := len(clean.cluster.Calls)
	for i := 1; i <= 2*total; i++ {
		afterEffect := i > total
		failed := clean.cluster.Calls[(i-1)%total]
		occurrence := clean.cluster.Occurrence((i - 1) % total)
		if afterEffect && !mutating(failed) {
			continue // a read that took effect changed nothing: as before
		}
		when := "before"
		if afterEffect {
			when = "after"
		}
		t.Run(fmt.Sprintf("%03d %s #%d fails %s taking effect", (i-1)%total+1, failed, occurrence, when), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 2, 1, fakenode.ReleaseTree)
			if afterEffect {
				e.cluster.FailAfterEffect(failed, occurrence)
			} else {
				e.cluster.FailOn(failed, occurrence)
			}
			rec1, err := e.run(nil)
			n1 := len(e.cluster.Calls)
			if err == nil {
				// a failed read inside a wait is retried: the run finishes
				if got := e.cluster.Snapshot(); got != want {
					t.Fatalf("the run survived the failure but ended elsewhere:\n%s\nwant:\n%s", got, want)
				}
				return
			}
			if _, err := e.run(nil); err != nil {
				t.Fatalf("the rerun failed: %v\ncalls:\n%s", err, dump(e.calls(n1)))
			}
			if got := e.cluster.Snapshot(); got != want {
				t.Fatalf("the rerun ended elsewhere:\n%s\nwant:\n%s", got, want)
			}
			noRepeatedWork(t, e, rec1, 0, n1)
		})
	}
}

// noRepeatedWork checks that the rerun (the calls from n1 on) repeated no
// work the failed run (the calls from start to n1, its events rec1)
// finished.
func noRepeatedWork(t *testing.T, e *env, rec1 *recorder, start, n1 int) {
	t.Helper()
	// where the first run failed: the failed step's node, and the
	// command count when the step started
	failedNode, failedFrom := "", n1
	started := map[string]int{}
	for _, ev := range rec1.events {
		key := ev.Phase + "/" + ev.Node + "/" + ev.Step
		if ev.Kind != report.KindStep {
			continue
		}
		if ev.Event.Event == report.EventStarted {
			started[key] = ev.seq
		}
		if ev.Outcome == report.OutcomeFailure && ev.Node != "" && failedNode == "" {
			failedNode, failedFrom = ev.Node, started[key]
		}
	}
	done := map[string]bool{}
	for _, c := range e.cluster.Calls[start:n1] {
		if significant(c) && !c.Err && !(c.About == failedNode && c.Seq > failedFrom) {
			done[c.About+" "+c.Key()] = true
		}
	}
	for _, c := range e.cluster.Calls[n1:] {
		if significant(c) && done[c.About+" "+c.Key()] {
			t.Errorf("the rerun repeated finished work: %s", c)
		}
	}
}

// scanLines is a helper for tests reading text output.
var _ = bufio.ScanLines

// TestLocalImportWhereCtrOffersIt: images are imported with ctr's --local
// where the node's ctr has it, and without it on a node whose ctr (before
// containerd 2) refuses the flag.
func TestLocalImportWhereCtrOffersIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 1, fakenode.ReleaseTree)
	old := e.cluster.Node("kind-worker")
	old.OldCtr = true
	mustUpgrade(t, e)
	assertUpgraded(t, e.cluster)
	imports := map[string]int{}
	for _, c := range e.cluster.Calls {
		argv := strings.Join(c.Argv, " ")
		if !strings.Contains(argv, "images import") || strings.Contains(argv, "--help") {
			continue
		}
		imports[c.Node]++
		if local := strings.Contains(argv, "--local"); local == (c.Node == old.Name) {
			t.Errorf("node %s imported with --local %v: %s", c.Node, local, argv)
		}
	}
	if imports["kind-control-plane"] == 0 || imports[old.Name] == 0 {
		t.Errorf("imports by node: %v", imports)
	}
}

// TestOnePlatformArchivesAreImportedForTheNodesPlatform upgrades from an
// --image-dir whose etcd archive is what Docker 29 writes for an image
// pulled for one platform: a multi-platform index holding linux/amd64's
// content only. The fake's ctr, like containerd's, cannot import it for all
// platforms; the upgrade imports it for the node's platform and every
// complete archive for all platforms, as kind load does.
func TestOnePlatformArchivesAreImportedForTheNodesPlatform(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 1, fakenode.Flat)
	archive := fakenode.OnePlatformArchive("amd64", []string{"arm64", "s390x"}, "registry.k8s.io/etcd:3.6.5-0")
	if err := os.WriteFile(filepath.Join(e.imageDir, "etcd.tar"), archive, 0o644); err != nil {
		t.Fatal(err)
	}
	mustUpgrade(t, e)
	assertUpgraded(t, e.cluster)
	etcd := 0
	for _, c := range e.cluster.Calls {
		argv := strings.Join(c.Argv, " ")
		if !strings.Contains(argv, "images import") || strings.Contains(argv, "--help") {
			continue
		}
		onePlatform := strings.Contains(argv, "--platform linux/amd64") && !strings.Contains(argv, "--all-platforms")
		if sum := sha256.Sum256(archive); c.Stdin == hex.EncodeToString(sum[:]) {
			etcd++
			if !onePlatform {
				t.Errorf("the one-platform archive was imported with %s", argv)
			}
		} else if onePlatform || !strings.Contains(argv, "--all-platforms") {
			t.Errorf("a complete archive was imported with %s", argv)
		}
	}
	if etcd == 0 {
		t.Errorf("the one-platform etcd archive was never imported")
	}
	// the same archive under --all-platforms fails as containerd fails
	var out bytes.Buffer
	err := e.cluster.Node("kind-worker").Command("ctr", "--namespace=k8s.io", "images", "import", "--all-platforms", "-").
		SetStdin(bytes.NewReader(archive)).SetStdout(&out).SetStderr(&out).Run()
	if err == nil || !strings.Contains(out.String(), "not found") {
		t.Errorf("the fake's ctr imported a one-platform archive for all platforms: %v %s", err, out.String())
	}
}

// TestControlPlaneWaitAfterKubeadm checks where the upgrade waits for a
// control-plane node's pods after its kubeadm upgrade: with one
// control-plane node the kubelets phase, which restarts that node's
// kubelet (and so its pods) next, is the only wait; with --skip-phases
// kubelets, or several control-plane nodes, each node is waited for before
// the next is touched.
func TestControlPlaneWaitAfterKubeadm(t *testing.T) {
	t.Parallel()
	const (
		all     = "waiting for the control-plane pods to run " + target + " and be Ready"
		serving = "waiting for etcd and the API server to run " + target + " and be Ready"
		every   = "waiting for the control-plane pods of every control-plane node to run " + target + " and be Ready"
	)
	waitedOn := func(rec *recorder) []string {
		var waits []string
		for _, ev := range rec.events {
			if ev.Kind == report.KindStep && ev.Event.Event == report.EventStarted && ev.StepID == stepid.ControlPlaneWait {
				waits = append(waits, ev.Node+": "+ev.Step)
			}
		}
		return waits
	}
	cases := []struct {
		name          string
		controlPlanes int
		skip          []string
		want          []string
	}{
		{"one control plane", 1, nil, nil},
		{"one control plane, kubelets skipped", 1, []string{"kubelets"}, []string{"kind-control-plane: " + all}},
		// the next node's upgrade waits for etcd and the API server; every
		// node's pods are waited for until Ready after the last one
		{"three control planes", 3, nil, []string{"kind-control-plane: " + serving, "kind-control-plane2: " + serving, "kind-control-plane3: " + every}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.controlPlanes, 1, fakenode.Flat)
			rec, err := e.run(func(o *upgrade.Options) { o.SkipPhases = tc.skip })
			if err != nil {
				t.Fatalf("upgrade failed: %v\ncalls:\n%s", err, dump(e.cluster.Calls))
			}
			if got, want := strings.Join(waitedOn(rec), "\n"), strings.Join(tc.want, "\n"); got != want {
				t.Errorf("waited after kubeadm:\n%s\nwant:\n%s", got, want)
			}
			for _, u := range e.cluster.Unsettled {
				t.Errorf("ran %s", u)
			}
		})
	}
}

// TestImportCutShortIsImportedAgain: an import whose stream into the node
// lost its end (ctr reads less than was sent: seen in CI on Docker 20.10,
// cut inside index.json and, once, just before it) is streamed once more
// and the upgrade goes on, saying so; an archive cut short again is
// refused as corrupt.
func TestImportCutShortIsImportedAgain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		atAnEntry  bool
		ctrPrinted string
	}{
		{"inside an entry", false, "short read"},
		{"between two entries", true, "unrecognized image format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 1, 1, fakenode.ReleaseTree)
			e.cluster.CutImports, e.cluster.CutAtAnEntry = 1, tc.atAnEntry
			logger := &levelLogger{}
			if _, err := e.run(func(o *upgrade.Options) { o.Logger = logger }); err != nil {
				t.Fatalf("the upgrade failed: %v", err)
			}
			assertUpgraded(t, e.cluster)
			if e.cluster.CutImports != 0 {
				t.Fatal("no import was cut short")
			}
			logged := strings.Join(logger.lines, "\n")
			// the first import is the control plane's or, loaded at the
			// same time, the worker's
			if !regexp.MustCompile(`W load-artifacts: kind-(control-plane|worker): the import of `).MatchString(logged) || !strings.Contains(logged, "was cut short after") {
				t.Errorf("the second import was not said:\n%s", logged)
			}

			e = newEnv(t, 1, 1, fakenode.ReleaseTree)
			e.cluster.CutImports, e.cluster.CutAtAnEntry = 2, tc.atAnEntry
			_, err := e.run(nil)
			if err == nil || !strings.Contains(err.Error(), "is the archive corrupt?") || e.cluster.CutImports != 0 {
				t.Errorf("an archive cut short twice = %v, want it refused as corrupt after the second import", err)
			}
			if runErr := exec.RunErrorForError(err); runErr == nil || !strings.Contains(string(runErr.Output), tc.ctrPrinted) {
				t.Errorf("the refusal lost ctr's output: %v", err)
			}
		})
	}
}

// missingCluster is a ClusterFinder of a cluster that does not exist.
type missingCluster struct{}

func (missingCluster) Nodes() ([]nodes.Node, error) {
	return nil, errors.New(`cluster "nope" not found`)
}

func (missingCluster) Neighbours() []nodes.Node { return nil }

// TestEveryFailureEndsWithAFinishedEvent: whatever fails once the options
// are given, the JSON events end with the upgrade's finished event, and a
// failure to find the cluster or open the source is its step's.
func TestEveryFailureEndsWithAFinishedEvent(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		modify func(*upgrade.Options)
		errHas string
		// stepID is the step that fails, "" for a failure before any
		stepID stepid.ID
	}{
		{
			name:   "a wait that is not positive",
			modify: func(o *upgrade.Options) { o.Wait = 0 },
			errHas: "must be positive",
		},
		{
			name:   "an unknown cluster",
			modify: func(o *upgrade.Options) { o.Cluster = missingCluster{} },
			errHas: `cluster "nope" not found`,
			stepID: stepid.PreflightNodes,
		},
		{
			name:   "a folder that does not exist",
			modify: func(o *upgrade.Options) { o.ImageDir = filepath.Join(o.ImageDir, "nope") },
			errHas: "does not exist",
		},
		{
			name:   "a folder without kubeadm",
			modify: func(o *upgrade.Options) { o.ImageDir = t.TempDir() },
			errHas: "invalid --image-dir",
			stepID: stepid.PreflightSource,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 1, 0, fakenode.Flat)
			var rec *recorder
			snapshotUnchanged(t, e, func() {
				var err error
				rec, err = e.run(tc.modify)
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("want an error saying %q, got %v", tc.errHas, err)
				}
			})
			if len(rec.events) == 0 {
				t.Fatal("no events")
			}
			last := rec.events[len(rec.events)-1]
			if last.Kind != report.KindUpgrade || last.Event.Event != report.EventFinished || last.Outcome != report.OutcomeFailure || !strings.Contains(last.Error, tc.errHas) {
				t.Errorf("the last event is %+v, want the upgrade's failure saying %q", last.Event, tc.errHas)
			}
			if first := rec.events[0]; first.Kind != report.KindUpgrade || first.Event.Event != report.EventStarted {
				t.Errorf("the first event is %+v, want the upgrade's start", first.Event)
			}
			var failed stepid.ID
			for _, ev := range rec.events {
				if ev.Kind == report.KindStep && ev.Outcome == report.OutcomeFailure {
					failed = ev.StepID
				}
			}
			if failed != tc.stepID {
				t.Errorf("the failed step is %q, want %q", failed, tc.stepID)
			}
		})
	}
}

// TestWaitsSayHowTheyWent: the steps that wait for a condition say, in
// their finished event, how many polls it took and within how long it was
// noticed; the steps that do not wait say nothing of it.
func TestWaitsSayHowTheyWent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, 1, fakenode.Flat)
	rec := mustUpgrade(t, e)
	waits := map[stepid.ID]bool{stepid.ControlPlaneWait: true, stepid.KubeletsWaitReady: true, stepid.KubeletsWaitSettled: true, stepid.KubeletsWaitServing: true,
		stepid.VerifyServerVersion: true, stepid.VerifyControlPlanePods: true, stepid.VerifyWorkloads: true}
	seen := map[stepid.ID]bool{}
	for _, ev := range rec.events {
		if ev.Kind != report.KindStep || ev.Event.Event != report.EventFinished || ev.Outcome != report.OutcomeSuccess {
			continue
		}
		switch {
		case waits[ev.StepID] && (ev.Wait == nil || ev.Wait.Polls < 1 || ev.Wait.NoticedWithinSeconds < 0):
			t.Errorf("%s on %s: wait %+v, want its polls", ev.StepID, ev.Node, ev.Wait)
		case !waits[ev.StepID] && ev.Wait != nil:
			t.Errorf("%s on %s did not wait but says %+v", ev.StepID, ev.Node, ev.Wait)
		}
		seen[ev.StepID] = true
	}
	for id := range waits {
		if !seen[id] {
			t.Errorf("no %s step finished", id)
		}
	}
}
