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

package nodeutils_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
)

// localNode runs a node's commands on this machine, with its own /bin/sh
// (dash on Debian, as in kind's node image), so the scripts nodeutils
// sends to nodes run for real here.
type localNode struct{}

func (localNode) String() string               { return "local" }
func (localNode) Role() (string, error)        { return "worker", nil }
func (localNode) IP() (string, string, error)  { return "127.0.0.1", "", nil }
func (localNode) SerialLogs(w io.Writer) error { return nil }
func (localNode) Command(c string, a ...string) exec.Cmd {
	return exec.Command(c, a...)
}
func (localNode) CommandContext(ctx context.Context, c string, a ...string) exec.Cmd {
	return exec.CommandContext(ctx, c, a...)
}

// recordingNode is localNode that records the names of the registered
// scripts it runs ($0 of `sh -c BODY NAME ...`).
type recordingNode struct {
	localNode
	path string // PATH, when set
	mu   *sync.Mutex
	ran  map[string]bool
}

func newRecordingNode() recordingNode {
	return recordingNode{mu: &sync.Mutex{}, ran: map[string]bool{}}
}

func (r recordingNode) withPath(path string) recordingNode {
	r.path = path
	return r
}

func (r recordingNode) Command(c string, a ...string) exec.Cmd {
	return r.CommandContext(context.Background(), c, a...)
}

func (r recordingNode) CommandContext(ctx context.Context, c string, a ...string) exec.Cmd {
	if c == "sh" && len(a) >= 3 && a[0] == "-c" {
		r.mu.Lock()
		r.ran[a[2]] = true
		r.mu.Unlock()
	}
	cmd := exec.CommandContext(ctx, c, a...)
	if r.path != "" {
		cmd.SetEnv("PATH=" + r.path)
	}
	return cmd
}

// TestEveryScriptOnARealShell runs every registered script on this
// machine's /bin/sh (dash on Debian, as in kind's node image), through the
// function that sends it to nodes, and fails when one was not run: a new
// script needs a case here.
func TestEveryScriptOnARealShell(t *testing.T) {
	t.Parallel()
	n := newRecordingNode()
	t.Run("files", func(t *testing.T) { fileScripts(t, n) })
	t.Run("unit log", func(t *testing.T) { unitLogScript(t, n) })
	t.Run("pin", func(t *testing.T) { pinScript(t, n) })
	t.Run("kubeadm lock", func(t *testing.T) { kubeadmLockScripts(t, n) })
	t.Run("kubeadm probe", func(t *testing.T) { kubeadmProbeScript(t, n) })
	t.Run("df", func(t *testing.T) { dfScript(t, n) })
	t.Run("kubectl all", func(t *testing.T) { kubectlAllScript(t, n) })
	t.Run("inotify", func(t *testing.T) { inotifyScript(t, n) })
	t.Run("node image", func(t *testing.T) { nodeImageScripts(t, n) })
	for _, s := range nodeutils.Scripts() {
		if !n.ran[s.Name] {
			t.Errorf("script %s never ran on a real shell here", s.Name)
		}
	}
}

func fileScripts(t *testing.T, n nodes.Node) {
	ctx := context.Background()
	dir := t.TempDir()
	at := func(p string) string { return filepath.Join(dir, p) }
	read := func(p string) string {
		b, err := os.ReadFile(at(p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	if err := nodeutils.WriteFile(ctx, n, at("stage/kubelet"), 0o755, strings.NewReader("new kubelet")); err != nil {
		t.Fatal(err)
	}
	if err := nodeutils.WriteFile(ctx, n, at("stage/kubeadm"), 0o755, strings.NewReader("new kubeadm")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(at("stage/kubelet")); err != nil || fi.Mode().Perm() != 0o755 || read("stage/kubelet") != "new kubelet" {
		t.Fatalf("WriteFile wrote %v, %v", fi, err)
	}
	if _, err := os.Stat(at("stage/kubelet.tmp")); !os.IsNotExist(err) {
		t.Error("WriteFile left its temporary file")
	}
	if err := nodeutils.WriteString(ctx, n, at("kind/version"), 0o644, "v1.34.4"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(at("kind/version")); err != nil || fi.Mode().Perm() != 0o644 || read("kind/version") != "v1.34.4" {
		t.Fatalf("WriteString wrote %v, %v", fi, err)
	}
	found, err := nodeutils.ExistAll(ctx, n, at("kind/version"), at("nope"), at("stage/kubelet"))
	if err != nil || fmt.Sprint(found) != "[true false true]" {
		t.Errorf("ExistAll = %v, %v", found, err)
	}
	if content, ok, err := nodeutils.ReadFile(ctx, n, at("kind/version")); err != nil || !ok || content != "v1.34.4" {
		t.Errorf("ReadFile = %q, %v, %v", content, ok, err)
	}
	if _, ok, err := nodeutils.ReadFile(ctx, n, at("nope")); ok || err != nil {
		t.Errorf("ReadFile of a missing file = %v, %v", ok, err)
	}

	// /usr/bin holds an old kubelet and no kubeadm yet
	if err := os.MkdirAll(at("bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(at("bin/kubelet"), []byte("old kubelet"), 0o755); err != nil {
		t.Fatal(err)
	}
	pairs := [][2]string{{at("stage/kubelet"), at("bin/kubelet")}, {at("stage/kubeadm"), at("bin/kubeadm")}}
	compare := func(pairs ...[2]string) string {
		t.Helper()
		got, err := nodeutils.Compare(ctx, n, pairs...)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(got)
	}
	if got := compare(append(pairs, [2]string{at("nope"), at("bin/kubelet")})...); got != "[differ differ missing]" {
		t.Errorf("Compare before installing = %s", got)
	}
	if err := nodeutils.InstallBinaries(ctx, n, pairs...); err != nil {
		t.Fatal(err)
	}
	if read("bin/kubelet") != "new kubelet" || read("bin/kubelet.old") != "old kubelet" || read("bin/kubeadm") != "new kubeadm" {
		t.Error("InstallBinaries did not replace the binaries and keep the old one")
	}
	if _, err := os.Stat(at("bin/kubeadm.old")); !os.IsNotExist(err) {
		t.Error("InstallBinaries kept a previous kubeadm that did not exist")
	}
	staged, _ := os.Stat(at("stage/kubelet"))
	installed, _ := os.Stat(at("bin/kubelet"))
	if !os.SameFile(staged, installed) || installed.Mode().Perm() != 0o755 {
		t.Error("the installed kubelet is not a hard link to the staged one with mode 0755")
	}
	if got := compare(pairs...); got != "[same same]" {
		t.Errorf("Compare after installing = %s", got)
	}
	// a copy (another file system) with the same content is the same; an
	// edited one differs
	if err := os.WriteFile(at("copy"), []byte("new kubelet"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(at("edited"), []byte("new kubelet, edited"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := compare([2]string{at("stage/kubelet"), at("copy")}, [2]string{at("stage/kubelet"), at("edited")}); got != "[same differ]" {
		t.Errorf("Compare of copies = %s", got)
	}
	// a source that is gone stops the install with an error
	if err := nodeutils.InstallBinaries(ctx, n, [2]string{at("nope"), at("bin/kubectl")}); err == nil || !strings.Contains(err.Error(), "failed to install") {
		t.Errorf("InstallBinaries of a missing file = %v", err)
	}
	if _, err := os.Stat(at("bin/kubectl")); !os.IsNotExist(err) {
		t.Error("a failed install left a kubectl behind")
	}
}

// unitLogScript runs UnitLog's script with a journalctl stand-in that
// answers the unit's last lines as journalctl -o cat does.
func unitLogScript(t *testing.T, rec recordingNode) {
	bin := t.TempDir()
	stub(t, bin, "journalctl", `[ "$*" = "--no-pager -o cat -u kubelet -n 2" ] || exit 64
printf 'E1201 "Failed to start cAdvisor" err="inotify_init: too many open files"\nkubelet.service: Main process exited, code=exited, status=1/FAILURE\n'`)
	n := rec.withPath(bin + ":" + os.Getenv("PATH"))
	got, err := nodeutils.UnitLog(context.Background(), n, "kubelet", 2)
	want := []string{`E1201 "Failed to start cAdvisor" err="inotify_init: too many open files"`, "kubelet.service: Main process exited, code=exited, status=1/FAILURE"}
	if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("UnitLog = %q, %v; want %q", got, err, want)
	}
	if _, err := nodeutils.UnitLog(context.Background(), n, "kubelet", 3); err == nil {
		t.Error("UnitLog hides journalctl's failure")
	}
}

// stub writes an executable shell script called name into bin.
func stub(t *testing.T, bin, name, script string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// pinScript labels each image with a ctr stand-in that logs its arguments
// and fails for one image: the script stops there with ctr's status.
func pinScript(t *testing.T, rec recordingNode) {
	bin := t.TempDir()
	stub(t, bin, "ctr", `echo "$*" >> "$(dirname "$0")/calls"; case "$*" in *broken*) exit 3 ;; esac`)
	n := rec.withPath(bin + ":" + os.Getenv("PATH"))
	ctx := context.Background()
	if err := nodeutils.PinScript.Command(ctx, n, "pinned=yes", "registry.k8s.io/etcd:3.7.0-0", "registry.k8s.io/pause:3.10.2").Run(); err != nil {
		t.Fatal(err)
	}
	calls, _ := os.ReadFile(filepath.Join(bin, "calls"))
	want := "--namespace=k8s.io images label registry.k8s.io/etcd:3.7.0-0 pinned=yes\n--namespace=k8s.io images label registry.k8s.io/pause:3.10.2 pinned=yes\n"
	if string(calls) != want {
		t.Errorf("ctr calls:\n%s\nwant:\n%s", calls, want)
	}
	err := nodeutils.PinScript.Command(ctx, n, "pinned=yes", "broken:1", "registry.k8s.io/pause:3.10.2").Run()
	if err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("a failed label: %v, want ctr's exit status 3", err)
	}
	calls, _ = os.ReadFile(filepath.Join(bin, "calls"))
	if strings.Count(string(calls), "pause") != 1 {
		t.Errorf("the script went on after a failed label:\n%s", calls)
	}
}

// kubeadmLockScripts holds the kubeadm lock with flock, as a kubeadm run
// does, and checks what the busy check and the wait see.
func kubeadmLockScripts(t *testing.T, n nodes.Node) {
	ctx := context.Background()
	lock := filepath.Join(t.TempDir(), ".kubeadm.lock")
	busy := func() string {
		t.Helper()
		out, err := exec.Output(nodeutils.KubeadmBusyScript.Command(ctx, n, lock))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	if got := busy(); got != "" {
		t.Errorf("no lock file: %q, want not busy", got)
	}
	// flock and the sleep it runs hold the lock: kill them together
	holder := osexec.Command("flock", lock, "sleep", "30")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	release := func() { _ = syscall.Kill(-holder.Process.Pid, syscall.SIGKILL); _ = holder.Wait() }
	t.Cleanup(release)
	// flock creates the file and takes the lock as it starts
	deadline := time.Now().Add(10 * time.Second)
	for busy() != "busy" {
		if time.Now().After(deadline) {
			t.Fatal("the busy check never saw the held lock")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := nodeutils.KubeadmWaitScript.Command(ctx, n, lock, "1").Run(); err == nil {
		t.Error("the wait returned while the lock was still held")
	}
	release()
	if err := nodeutils.KubeadmWaitScript.Command(ctx, n, lock, "5").Run(); err != nil {
		t.Errorf("the wait for a released lock: %v", err)
	}
	if got := busy(); got != "" {
		t.Errorf("a released lock: %q, want not busy", got)
	}
}

// kubeadmProbeScript feeds the probe a kubeadm stand-in on stdin, as the
// upgrade streams the new kubeadm: it runs it from a temporary folder
// under /var/tmp with the cluster's image settings and removes the folder.
func kubeadmProbeScript(t *testing.T, n nodes.Node) {
	kubeadm := `#!/bin/sh
case "$1 $2" in
"version -o") echo v1.37.2 ;;
"config images") cat "$5"; echo "folder $(dirname "$0")" ;;
*) exit 64 ;;
esac
`
	out, err := exec.Output(nodeutils.KubeadmProbeScript.Command(context.Background(), n, "imageRepository: registry.k8s.io\n").SetStdin(strings.NewReader(kubeadm)))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 4 || lines[0] != "v1.37.2" || lines[1] != "imageRepository: registry.k8s.io" || lines[2] != "kubernetesVersion: v1.37.2" || !strings.HasPrefix(lines[3], "folder /var/tmp/kind-upgrade-probe.") {
		t.Fatalf("the probe printed:\n%s", out)
	}
	if _, err := os.Stat(strings.TrimPrefix(lines[3], "folder ")); !os.IsNotExist(err) {
		t.Errorf("the probe left %s behind", strings.TrimPrefix(lines[3], "folder "))
	}
	// a kubeadm that does not run fails the probe, and the folder goes too
	if _, err := exec.Output(nodeutils.KubeadmProbeScript.Command(context.Background(), n, "").SetStdin(strings.NewReader("not a program"))); err == nil {
		t.Error("the probe of a broken kubeadm succeeded")
	}
}

// kubectlAllScript runs requests through a kubectl stand-in that prints
// each argument it got in brackets, a warning on stderr, and fails for
// "fail": each request's arguments arrive whole (spaces and glob
// characters too), an answer that succeeded has no stderr, the one that
// failed has both, and nothing runs after it.
func kubectlAllScript(t *testing.T, rec recordingNode) {
	bin := t.TempDir()
	stub(t, bin, "kubectl", `[ "$1" = "--kubeconfig=`+nodeutils.AdminKubeconfig+`" ] || exit 64
shift
echo "$*" >> "$(dirname "$0")/calls"
echo "Warning: a warning kubectl prints on stderr" >&2
case "$*" in
*/readyz) printf ok ;;
*fail*) echo partial; echo "Error from server: no" >&2; exit 3 ;;
*) for a; do printf '[%s]' "$a"; done; echo ;;
esac`)
	n := rec.withPath(bin + ":" + os.Getenv("PATH"))
	requests := [][]string{
		{"--request-timeout=5s", "get", "--raw=/readyz"},
		{"get", "pods", "--selector=a b", "-o", "jsonpath={.items[*]}"},
		{"get", "fail"},
		{"get", "never"},
	}
	cmd, err := nodeutils.KubectlAll(context.Background(), n, requests...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Output(cmd)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	answers, err := nodeutils.ParseKubectlAll(out, len(requests))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range answers {
		got = append(got, fmt.Sprintf("%d %q", a.ExitCode, a.Output))
	}
	want := []string{`0 "ok"`, `0 "[get][pods][--selector=a b][-o][jsonpath={.items[*]}]\n"`, `3 "partial\nWarning: a warning kubectl prints on stderr\nError from server: no"`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("answers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	calls, _ := os.ReadFile(filepath.Join(bin, "calls"))
	if strings.Contains(string(calls), "never") {
		t.Errorf("the script went on after a failed request:\n%s", calls)
	}
}

// dfScript checks that a path not made yet is measured on its nearest
// existing ancestor's file system, one line per path, in order.
func dfScript(t *testing.T, n nodes.Node) {
	dir := t.TempDir()
	out, err := exec.Output(nodeutils.DFScript.Command(context.Background(), n, dir, filepath.Join(dir, "not", "made", "yet"), "/proc"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "Filesystem") {
		t.Fatalf("df printed:\n%s", out)
	}
	// the same device and mount point (the free space moves as others write)
	fs := func(line string) string {
		f := strings.Fields(line)
		return f[0] + " " + f[len(f)-1]
	}
	if fs(lines[1]) != fs(lines[2]) {
		t.Errorf("a path not made yet is not on its ancestor's file system:\n%s", out)
	}
	if !strings.HasSuffix(lines[3], " /proc") {
		t.Errorf("the third path's line is %q, want /proc's", lines[3])
	}
}

// inotifyScript checks the shape of the listing (preflight's tests parse
// it and count this process's instances).
func inotifyScript(t *testing.T, n nodes.Node) {
	out, err := exec.Output(nodeutils.InotifyScript.Command(context.Background(), n))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "limits ") {
		t.Errorf("the listing does not start with the limits:\n%s", out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n")[1:] {
		if f := strings.Fields(line); len(f) < 4 || f[0] != "fd" {
			t.Errorf("unexpected line %q", line)
		}
	}
}

func nodeImageScripts(t *testing.T, n recordingNode) {
	ctx := context.Background()
	dir := t.TempDir()
	version := filepath.Join(dir, "version")
	binary := filepath.Join(dir, "kubeadm")
	header := append([]byte{0x7f, 'E', 'L', 'F', 2, 1, 1}, make([]byte, 100)...)
	// as kind's builder writes it: no newline
	if err := os.WriteFile(version, []byte("v1.37.2"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(binary, header, 0o750); err != nil {
		t.Fatal(err)
	}
	// the node image's ctr and containerd, as far as the script uses them
	tools := t.TempDir()
	for name, body := range map[string]string{
		"ctr":        "#!/bin/sh\n[ \"$*\" = \"--namespace=k8s.io images list\" ] && echo 'REF TYPE DIGEST SIZE PLATFORMS LABELS'\n",
		"containerd": "#!/bin/sh\n[ \"$*\" = \"config dump\" ] && echo 'version = 3'\n",
	} {
		if err := os.WriteFile(filepath.Join(tools, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	withTools := n.withPath(tools + ":/usr/bin:/bin")
	out := filepath.Join(dir, "out")
	if err := nodeutils.NodeImageScript.Command(ctx, withTools, out, version, binary).Run(); err != nil {
		t.Fatalf("NodeImageScript: %v", err)
	}
	for name, want := range map[string]string{
		"describe": fmt.Sprintf("v1.37.2\n107 750 %s\n", base64.StdEncoding.EncodeToString(header[:64])),
		"images":   "REF TYPE DIGEST SIZE PLATFORMS LABELS\n",
		"config":   "version = 3\n",
	} {
		if got, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(got) != want {
			t.Errorf("NodeImageScript wrote %s %q, %v; want %q", name, got, err, want)
		}
	}
	if err := nodeutils.NodeImageScript.Command(ctx, withTools, out, version, binary, filepath.Join(dir, "kubelet")).Run(); err == nil {
		t.Error("NodeImageScript did not fail on a missing file")
	}

	// a ctr that answers, on a socket that exists
	var printed strings.Builder
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "ctr"), []byte("#!/bin/sh\n[ \"$1 $2 $3\" = \"--address $SOCK version\" ]\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "containerd.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	m := n.withPath(bin + ":/usr/bin:/bin")
	if err := nodeutils.ContainerdReadyScript.Command(ctx, m, "5", sock).SetEnv("PATH="+bin+":/usr/bin:/bin", "SOCK="+sock).Run(); err != nil {
		t.Errorf("ContainerdReadyScript failed on an answering containerd: %v", err)
	}
	start := time.Now()
	err = nodeutils.ContainerdReadyScript.Command(ctx, m, "1", filepath.Join(dir, "absent.sock")).SetStdout(&printed).SetStderr(&printed).Run()
	if err == nil || !strings.Contains(printed.String(), "did not answer on "+filepath.Join(dir, "absent.sock")+" within 1s") || time.Since(start) > 5*time.Second {
		t.Errorf("ContainerdReadyScript without a socket: %q, %v after %s", printed.String(), err, time.Since(start))
	}
}
