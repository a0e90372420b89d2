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
	"context"
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts/artifactstest"
)

// benchRelease is a release's server/bin with each binary padded to size
// bytes of real machine code (this test binary, repeated), which gzip
// compresses as it does Kubernetes' binaries: what Open and Walk read per
// byte is what these benchmarks measure.
func benchRelease(b *testing.B, size int) ([]artifactstest.File, int64) {
	b.Helper()
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	code, err := os.ReadFile(self)
	if err != nil {
		b.Fatal(err)
	}
	files := artifactstest.Release(b, elf.EM_X86_64, "amd64")
	var total int64
	for i, f := range files {
		if f.Mode == 0o755 {
			body := append([]byte{}, f.Body...)
			for len(body) < size {
				body = append(body, code[:min(len(code), size-len(body))]...)
			}
			files[i].Body = body
		}
		total += int64(len(files[i].Body))
	}
	return files, total
}

// BenchmarkOpen measures reading an --image-dir: the release tarball (one
// decompression: gzip is the cost) and the same files unpacked in a folder
// (only headers and image manifests are read).
func BenchmarkOpen(b *testing.B) {
	files, total := benchRelease(b, 16<<20)
	tarball := artifactstest.WriteTarball(b, filepath.Join(b.TempDir(), "kubernetes-server-linux-amd64.tar.gz"), "kubernetes/server/bin", files)
	tree := b.TempDir()
	artifactstest.WriteFiles(b, filepath.Join(tree, "kubernetes", "server", "bin"), files)
	for _, bc := range []struct{ name, path string }{{"tarball", tarball}, {"tree", tree}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(total)
			for i := 0; i < b.N; i++ {
				if _, err := Open(context.Background(), bc.path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWalkTarball measures streaming the three binaries out of a
// release tarball, as staging does once per node.
func BenchmarkWalkTarball(b *testing.B) {
	files, total := benchRelease(b, 16<<20)
	p := artifactstest.WriteTarball(b, filepath.Join(b.TempDir(), "kubernetes-server-linux-amd64.tar.gz"), "kubernetes/server/bin", files)
	s, err := Open(context.Background(), p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(total)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		err := s.Walk(context.Background(), func(a *Artifact) bool { return a.Kind == KindBinary }, func(_ *Artifact, r io.Reader) error {
			_, err := io.Copy(io.Discard, r)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
