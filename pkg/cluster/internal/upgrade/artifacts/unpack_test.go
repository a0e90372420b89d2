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

package artifacts

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts/artifactstest"
)

// TestUnpackTarball: with UnpackTarballIn the tarball is decompressed once,
// by Open; every later Walk, however many, reads the unpacked files, which
// hold what the tarball holds; Describe still names the tarball; Close
// removes the folder.
func TestUnpackTarball(t *testing.T) {
	t.Parallel()
	release := artifactstest.Release(t, elf.EM_X86_64, "amd64")
	tmp := t.TempDir()
	for _, layout := range []string{"tarball", "folder with a tarball"} {
		t.Run(layout, func(t *testing.T) {
			dir := t.TempDir()
			given := artifactstest.WriteTarball(t, filepath.Join(dir, "kubernetes-server-linux-amd64.tar.gz"), "kubernetes/server/bin", release)
			extras := artifactstest.Extras(t)
			if layout != "tarball" {
				artifactstest.WriteFiles(t, dir, extras)
				given = dir
			}
			parent := filepath.Join(tmp, strings.ReplaceAll(layout, " ", "-"))
			if err := os.Mkdir(parent, 0o755); err != nil {
				t.Fatal(err)
			}
			s, err := Open(context.Background(), given, UnpackTarballIn(parent))
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 3; i++ {
				var w walked
				if err := s.Walk(context.Background(), nil, w.fn); err != nil {
					t.Fatalf("Walk %d: %v", i, err)
				}
				want := contents(release)
				if layout != "tarball" {
					want = contents(release, extras)
				}
				if len(w.names) != len(s.Binaries)+len(s.Archives) {
					t.Errorf("Walk %d handed %v, want every artifact of %d", i, w.names, len(s.Binaries)+len(s.Archives))
				}
				for name, got := range w.content {
					if !bytes.Equal(got, want[name]) {
						t.Errorf("Walk %d handed %d bytes for %s, want its %d bytes", i, len(got), name, len(want[name]))
					}
				}
			}
			if got := s.passes.Load(); got != 1 {
				t.Errorf("the tarball was decompressed %d times, want once (by Open)", got)
			}
			if got := strings.Join(s.details(), "\n"); !strings.Contains(got, "kubernetes-server-linux-amd64.tar.gz:kubernetes/server/bin") {
				t.Errorf("Describe says\n%s\nwant the tarball's folder named", got)
			}
			unpacked, _ := filepath.Glob(filepath.Join(parent, unpackPrefix+"*"))
			if len(unpacked) != 1 {
				t.Fatalf("unpack folders %v, want one", unpacked)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(unpacked[0]); !os.IsNotExist(err) {
				t.Errorf("%s is still there after Close: %v", unpacked[0], err)
			}
		})
	}
}

// TestUnpackRemovesLeftovers: the folder of a run that was killed (its pid
// runs no more) goes, one whose run still runs stays; a damaged tarball
// leaves no folder of its own.
func TestUnpackRemovesLeftovers(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	// a process that has ended: its pid runs no more
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(parent, fmt.Sprintf("%s%d-1", unpackPrefix, done.Process.Pid))
	alive := filepath.Join(parent, fmt.Sprintf("%s%d-2", unpackPrefix, os.Getppid()))
	for _, d := range []string{dead, alive} {
		artifactstest.WriteFile(t, filepath.Join(d, "kubelet"), []byte("left over"), 0o600)
	}
	damaged := artifactstest.WriteTarball(t, filepath.Join(t.TempDir(), "k.tar.gz"), "kubernetes/server/bin",
		artifactstest.Without(artifactstest.Release(t, elf.EM_X86_64, "amd64"), "kubelet"))
	if _, err := Open(context.Background(), damaged, UnpackTarballIn(parent)); err == nil {
		t.Fatal("a tarball without kubelet opened")
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the folder of a run that no longer runs is still there: %v", err)
	}
	if _, err := os.Stat(alive); err != nil {
		t.Errorf("the folder of a running run was removed: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(parent, fmt.Sprintf("%s%d-*", unpackPrefix, os.Getpid()))); len(left) != 0 {
		t.Errorf("a failed Open left %v", left)
	}
}
