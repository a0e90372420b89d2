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
	stderrors "errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/kind/pkg/errors"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts/artifactstest"
)

// walked records what a Walk handed its callback.
type walked struct {
	mu      sync.Mutex
	names   []string
	content map[string][]byte
}

// fn is a Walk callback that reads everything.
func (w *walked) fn(a *Artifact, r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.content == nil {
		w.content = map[string][]byte{}
	}
	w.names = append(w.names, a.Name)
	w.content[a.Name] = data
	return nil
}

// named returns a want func selecting artifacts by name.
func named(names ...string) func(*Artifact) bool {
	return func(a *Artifact) bool {
		for _, n := range names {
			if a.Name == n {
				return true
			}
		}
		return false
	}
}

// contents maps the names of files to their content.
func contents(files ...[]artifactstest.File) map[string][]byte {
	m := map[string][]byte{}
	for _, fs := range files {
		for _, f := range fs {
			m[f.Name] = f.Body
		}
	}
	return m
}

func TestWalk(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// setup builds the fixture in dir, returns what the user gives and
		// the content of every file by name
		setup func(t *testing.T, dir string) (string, map[string][]byte)
		want  func(*Artifact) bool
		// wantNames is the order the artifacts are handed in
		wantNames []string
		// wantPasses is how many times the Walk decompresses a tarball
		wantPasses int64
	}{
		{
			name: "tarball: everything in one pass",
			setup: func(t *testing.T, dir string) (string, map[string][]byte) {
				bin := artifactstest.Release(t, elf.EM_X86_64, "amd64")
				artifactstest.WriteTarball(t, filepath.Join(dir, "kubernetes-server-linux-amd64.tar.gz"), "kubernetes/server/bin", bin)
				more := artifactstest.Extras(t)
				artifactstest.WriteFiles(t, dir, more)
				return dir, contents(bin, more)
			},
			wantNames:  []string{"kube-apiserver.tar", "kube-proxy.tar", "kubeadm", "kubectl", "kubelet", "etcd.tar", "pause.tar"},
			wantPasses: 1,
		},
		{
			name: "tarball: only what is wanted",
			setup: func(t *testing.T, dir string) (string, map[string][]byte) {
				bin := artifactstest.Release(t, elf.EM_X86_64, "amd64")
				p := artifactstest.WriteTarball(t, filepath.Join(dir, "k.tgz"), "server/bin", bin)
				return p, contents(bin)
			},
			want:       named("kubelet", "kube-proxy.tar"),
			wantNames:  []string{"kube-proxy.tar", "kubelet"},
			wantPasses: 1,
		},
		{
			name: "tarball: binaries only",
			setup: func(t *testing.T, dir string) (string, map[string][]byte) {
				bin := artifactstest.Release(t, elf.EM_X86_64, "amd64")
				p := artifactstest.WriteTarball(t, filepath.Join(dir, "k.tgz"), "kubernetes/server/bin", bin)
				return p, contents(bin)
			},
			want:       func(a *Artifact) bool { return a.Kind == KindBinary },
			wantNames:  []string{"kubeadm", "kubectl", "kubelet"},
			wantPasses: 1,
		},
		{
			name: "tarball: nothing wanted from it",
			setup: func(t *testing.T, dir string) (string, map[string][]byte) {
				artifactstest.WriteTarball(t, filepath.Join(dir, "kubernetes-server-linux-amd64.tar.gz"), "kubernetes/server/bin", artifactstest.Release(t, elf.EM_X86_64, "amd64"))
				more := artifactstest.Extras(t)
				artifactstest.WriteFiles(t, dir, more)
				return dir, contents(more)
			},
			want:       named("pause.tar"),
			wantNames:  []string{"pause.tar"},
			wantPasses: 0,
		},
		{
			name: "release tree: everything",
			setup: func(t *testing.T, dir string) (string, map[string][]byte) {
				bin := artifactstest.Release(t, elf.EM_X86_64, "amd64")
				artifactstest.WriteFiles(t, filepath.Join(dir, "kubernetes", "server", "bin"), bin)
				more := artifactstest.Extras(t)
				artifactstest.WriteFiles(t, dir, more)
				return dir, contents(bin, more)
			},
			wantNames: []string{"kubeadm", "kubelet", "kubectl", "kube-apiserver.tar", "kube-proxy.tar", "etcd.tar", "pause.tar"},
		},
		{
			name: "flat folder: image archives only",
			setup: func(t *testing.T, dir string) (string, map[string][]byte) {
				bin := artifactstest.Release(t, elf.EM_ARM, "arm")
				artifactstest.WriteFiles(t, dir, bin)
				return dir, contents(bin)
			},
			want:      func(a *Artifact) bool { return a.Kind == KindImageArchive },
			wantNames: []string{"kube-apiserver.tar", "kube-proxy.tar"},
		},
		{
			name: "flat folder: nothing wanted",
			setup: func(t *testing.T, dir string) (string, map[string][]byte) {
				artifactstest.WriteFiles(t, dir, artifactstest.Release(t, elf.EM_X86_64, "amd64"))
				return dir, nil
			},
			want: named(),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			given, content := tc.setup(t, t.TempDir())
			s, err := Open(context.Background(), given)
			if err != nil {
				t.Fatal(err)
			}
			before := s.passes.Load()
			var w walked
			if err := s.Walk(context.Background(), tc.want, w.fn); err != nil {
				t.Fatalf("Walk: %v", err)
			}
			if got := s.passes.Load() - before; got != tc.wantPasses {
				t.Errorf("Walk decompressed the tarball %d times, want %d", got, tc.wantPasses)
			}
			if !reflect.DeepEqual(w.names, tc.wantNames) {
				t.Errorf("Walk handed %v, want %v", w.names, tc.wantNames)
			}
			for name, got := range w.content {
				if !bytes.Equal(got, content[name]) {
					t.Errorf("Walk handed %d bytes for %s, want its %d bytes", len(got), name, len(content[name]))
				}
			}
		})
	}
}

func TestOpenTarballOnePass(t *testing.T) {
	t.Parallel()
	p := artifactstest.WriteTarball(t, filepath.Join(t.TempDir(), "k.tar.gz"), "kubernetes/server/bin", artifactstest.Release(t, elf.EM_X86_64, "amd64"))
	s, err := Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.passes.Load(); got != 1 {
		t.Errorf("Open decompressed the tarball %d times, want 1", got)
	}
}

// TestCancelled: a cancelled context stops Open and Walk with an error that
// says so (not "corrupt"), and a Walk cancelled by its own callback hands
// nothing more.
func TestCancelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	artifactstest.WriteTarball(t, filepath.Join(dir, "kubernetes-server-linux-amd64.tar.gz"), "kubernetes/server/bin", artifactstest.Release(t, elf.EM_X86_64, "amd64"))
	artifactstest.WriteFiles(t, dir, artifactstest.Extras(t))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(cancelled, dir); !stderrors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "cancelled while reading release tarball") {
		t.Errorf("Open with a cancelled context: %v", err)
	}

	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, inTarball := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		handed := 0
		err := s.Walk(ctx, func(a *Artifact) bool { return (a.entry != "") == inTarball }, func(_ *Artifact, r io.Reader) error {
			handed++
			cancel()
			_, err := io.Copy(io.Discard, r)
			return err
		})
		cancel()
		if !stderrors.Is(err, context.Canceled) || strings.Contains(err.Error(), "corrupt") {
			t.Errorf("Walk (in the tarball: %v) cancelled by its callback: %v", inTarball, err)
		}
		if handed != 1 {
			t.Errorf("Walk (in the tarball: %v) handed %d artifacts after it was cancelled, want 1", inTarball, handed)
		}
	}
}

func TestWalkConcurrent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := artifactstest.Release(t, elf.EM_X86_64, "amd64")
	artifactstest.WriteTarball(t, filepath.Join(dir, "kubernetes-server-linux-amd64.tar.gz"), "kubernetes/server/bin", bin)
	more := artifactstest.Extras(t)
	artifactstest.WriteFiles(t, dir, more)
	want := contents(bin, more)
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	const walks = 4
	var wg sync.WaitGroup
	results := make([]walked, walks)
	errs := make([]error, walks)
	for i := range walks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Walk(context.Background(), nil, results[i].fn)
		}()
	}
	wg.Wait()
	for i := range walks {
		if errs[i] != nil {
			t.Errorf("Walk %d: %v", i, errs[i])
		}
		if len(results[i].names) != 7 {
			t.Errorf("Walk %d handed %v", i, results[i].names)
		}
		for name, got := range results[i].content {
			if !bytes.Equal(got, want[name]) {
				t.Errorf("Walk %d: wrong content for %s", i, name)
			}
		}
	}
	if got := s.passes.Load(); got != 1+walks {
		t.Errorf("tarball decompressed %d times, want %d", got, 1+walks)
	}
}

func TestWalkErrors(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	cases := []struct {
		name string
		// setup builds the fixture in dir and returns what the user gives
		setup func(t *testing.T, dir string) string
		// change alters the fixture after Open
		change func(t *testing.T, dir string)
		fn     func(a *Artifact, r io.Reader) error
		// wantNames is what fn was handed before the error
		wantNames []string
		want      string
		wantErr   error
	}{
		{
			name: "fn fails in a tarball",
			setup: func(t *testing.T, dir string) string {
				return artifactstest.WriteTarball(t, filepath.Join(dir, "k.tgz"), "kubernetes/server/bin", artifactstest.Release(t, elf.EM_X86_64, "amd64"))
			},
			fn:        func(a *Artifact, r io.Reader) error { return errBoom },
			wantNames: []string{"kube-apiserver.tar"},
			wantErr:   errBoom,
		},
		{
			name: "fn fails in a folder",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, dir, artifactstest.Release(t, elf.EM_X86_64, "amd64"))
				return dir
			},
			fn:        func(a *Artifact, r io.Reader) error { return errBoom },
			wantNames: []string{"kubeadm"},
			wantErr:   errBoom,
		},
		{
			name: "tarball replaced after Open",
			setup: func(t *testing.T, dir string) string {
				return artifactstest.WriteTarball(t, filepath.Join(dir, "k.tgz"), "kubernetes/server/bin", artifactstest.Release(t, elf.EM_X86_64, "amd64"))
			},
			change: func(t *testing.T, dir string) {
				artifactstest.WriteTarball(t, filepath.Join(dir, "k.tgz"), "kubernetes/server/bin", artifactstest.Without(artifactstest.Release(t, elf.EM_X86_64, "amd64"), "kubelet"))
			},
			wantNames: []string{"kube-apiserver.tar", "kube-proxy.tar", "kubeadm", "kubectl"},
			want:      "<dir>/k.tgz changed after it was checked: run the command again",
		},
		{
			name: "file changed after Open",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, dir, artifactstest.Release(t, elf.EM_X86_64, "amd64"))
				return dir
			},
			change: func(t *testing.T, dir string) {
				artifactstest.WriteFile(t, filepath.Join(dir, "kubelet"), []byte("shorter"), 0o755)
			},
			wantNames: []string{"kubeadm"},
			want:      "<dir>/kubelet changed after it was checked",
		},
		{
			name: "file removed after Open",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, dir, artifactstest.Release(t, elf.EM_X86_64, "amd64"))
				return dir
			},
			change: func(t *testing.T, dir string) {
				if err := os.Remove(filepath.Join(dir, "kube-proxy.tar")); err != nil {
					t.Fatal(err)
				}
			},
			wantNames: []string{"kubeadm", "kubelet", "kubectl", "kube-apiserver.tar"},
			want:      "failed to open <dir>/kube-proxy.tar",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s, err := Open(context.Background(), tc.setup(t, dir))
			if err != nil {
				t.Fatal(err)
			}
			if tc.change != nil {
				tc.change(t, dir)
			}
			var names []string
			err = s.Walk(context.Background(), nil, func(a *Artifact, r io.Reader) error {
				names = append(names, a.Name)
				if tc.fn != nil {
					return tc.fn(a, r)
				}
				_, err := io.Copy(io.Discard, r)
				return err
			})
			if tc.wantErr != nil && err != tc.wantErr {
				t.Errorf("Walk error = %v, want fn's error unchanged", err)
			}
			if want := strings.ReplaceAll(tc.want, "<dir>", dir); tc.want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
				t.Errorf("Walk error = %v, want it to contain %q", err, want)
			}
			if !reflect.DeepEqual(names, tc.wantNames) {
				t.Errorf("Walk handed %v before failing, want %v", names, tc.wantNames)
			}
		})
	}
}

func TestWalkArtifactsBuiltOutsideOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	artifactstest.WriteFiles(t, dir, []artifactstest.File{
		{Name: "kubeadm", Body: []byte("kubeadm"), Mode: 0o755},
		{Name: "a.tar", Body: []byte("archive")},
	})
	s := &ImageDir{
		Path:     dir,
		Layout:   LayoutFlat,
		Binaries: map[string]*Artifact{"kubeadm": {Name: "kubeadm", Path: filepath.Join(dir, "kubeadm"), Kind: KindBinary}},
		Archives: []*Artifact{{Name: "a.tar", Path: filepath.Join(dir, "a.tar"), Kind: KindImageArchive}},
	}
	var w walked
	if err := s.Walk(context.Background(), nil, w.fn); err != nil {
		t.Fatal(err)
	}
	if want := []string{"kubeadm", "a.tar"}; !reflect.DeepEqual(w.names, want) {
		t.Errorf("Walk handed %v, want %v", w.names, want)
	}
	if string(w.content["a.tar"]) != "archive" {
		t.Errorf("a.tar = %q", w.content["a.tar"])
	}
}
