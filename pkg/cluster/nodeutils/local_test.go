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
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/exec"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/nodeutils"
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

func TestScriptsOnARealShell(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n := localNode{}
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

// TestUnitLogOnARealShell runs UnitLog's script on /bin/sh with systemctl
// and journalctl stand-ins that print what systemd's do: the lines of the
// unit's current invocation when the journal has them, else the unit's
// last lines.
func TestUnitLogOnARealShell(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	write := func(name, script string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("journalctl", `echo "$*" >> "$(dirname "$0")/calls"
case "$*" in
*_SYSTEMD_INVOCATION_ID=abc*) printf 'old line\nE1201 "Failed to start cAdvisor" err="inotify_init: too many open files"\nlast line\n' ;;
*_SYSTEMD_INVOCATION_ID=*) ;;
*"-u kubelet -n 2"*) printf 'unit line 1\nunit line 2\n' ;;
esac`)
	for _, tc := range []struct {
		name, invocation string
		lines            int
		want             []string
	}{
		{"the current invocation's lines, the last 2", "abc", 2, []string{`E1201 "Failed to start cAdvisor" err="inotify_init: too many open files"`, "last line"}},
		{"an invocation the journal has nothing of", "def", 2, []string{"unit line 1", "unit line 2"}},
		{"no invocation", "", 2, []string{"unit line 1", "unit line 2"}},
	} {
		write("systemctl", `[ "$*" = "show kubelet --property=InvocationID --value" ] && echo "`+tc.invocation+`"`)
		n := pathNode{path: bin + ":" + os.Getenv("PATH")}
		got, err := nodeutils.UnitLog(context.Background(), n, "kubelet", tc.lines)
		if err != nil || strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: UnitLog = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

// pathNode is localNode with its own PATH.
type pathNode struct {
	localNode
	path string
}

func (p pathNode) CommandContext(ctx context.Context, c string, a ...string) exec.Cmd {
	return exec.CommandContext(ctx, c, a...).SetEnv("PATH=" + p.path)
}
