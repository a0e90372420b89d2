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
	"archive/tar"
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/imageref"
)

func TestIndexArchive(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		files    func(t *testing.T) []file
		wantRefs []string
		wantArch string
	}{
		{
			name: "docker-archive, manifest.json last",
			files: func(t *testing.T) []file {
				return dockerArchive(t, img("amd64", "registry.k8s.io/kube-apiserver-amd64:v1.34.4"))
			},
			wantRefs: []string{"registry.k8s.io/kube-apiserver-amd64:v1.34.4"},
			wantArch: "amd64",
		},
		{
			name: "docker-archive, manifest.json first, ./ names",
			files: func(t *testing.T) []file {
				files := dockerArchive(t, img("arm64", "registry.k8s.io/etcd:3.6.4-0"))
				last := len(files) - 1
				files = append([]file{files[last]}, files[:last]...)
				for i := range files {
					files[i].name = "./" + files[i].name
				}
				return files
			},
			wantRefs: []string{"registry.k8s.io/etcd:3.6.4-0"},
			wantArch: "arm64",
		},
		{
			name: "docker-archive, several images and tags",
			files: func(t *testing.T) []file {
				return dockerArchive(t,
					img("amd64", "registry.k8s.io/coredns/coredns:v1.12.1", "registry.k8s.io/coredns/coredns:latest"),
					img("amd64", "busybox:1.36"),
					img("amd64"),
				)
			},
			wantRefs: []string{"registry.k8s.io/coredns/coredns:v1.12.1", "registry.k8s.io/coredns/coredns:latest", "busybox:1.36"},
			wantArch: "amd64",
		},
		{
			name: "docker-archive, images of different architectures",
			files: func(t *testing.T) []file {
				return dockerArchive(t, img("amd64", "a:1"), img("arm64", "b:1"))
			},
			wantRefs: []string{"a:1", "b:1"},
			wantArch: "",
		},
		{
			name: "docker-archive, a layer linked to another",
			files: func(t *testing.T) []file {
				files := dockerArchive(t, img("amd64", "a:1"))
				last := len(files) - 1
				manifest := []map[string]interface{}{{
					"Config":   files[0].name,
					"RepoTags": []string{"a:1"},
					"Layers":   []string{"layer0/layer.tar", "layer1/layer.tar"},
				}}
				return append(files[:last],
					file{name: "layer1/layer.tar", typeflag: tar.TypeSymlink, linkname: "../layer0/layer.tar"},
					file{name: "manifest.json", body: mustJSON(t, manifest)},
				)
			},
			wantRefs: []string{"a:1"},
			wantArch: "amd64",
		},
		{
			name: "OCI layout from ctr images export",
			files: func(t *testing.T) []file {
				return ociArchive(t, containerdName, img("ppc64le", "registry.k8s.io/pause:3.10.1"))
			},
			wantRefs: []string{"registry.k8s.io/pause:3.10.1"},
			wantArch: "ppc64le",
		},
		{
			name: "OCI layout with a full reference in ref.name",
			files: func(t *testing.T) []file {
				return ociArchive(t, ociRefName, img("amd64", "localhost:5000/etcd:3.6.4-0", "localhost:5000/etcd:latest"))
			},
			wantRefs: []string{"localhost:5000/etcd:3.6.4-0", "localhost:5000/etcd:latest"},
			wantArch: "amd64",
		},
		{
			name: "OCI layout with one platform of a multi-platform index",
			files: func(t *testing.T) []file {
				config, layer := imageBlobs(t, img("arm64"), 0)
				manifest := ociManifestOf(t, config, layer)
				index := mustJSON(t, map[string]interface{}{
					"schemaVersion": 2,
					"mediaType":     "application/vnd.oci.image.index.v1+json",
					"manifests": []map[string]interface{}{
						{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": digestOf([]byte("amd64")), "size": 5},
						{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": digestOf(manifest), "size": len(manifest)},
					},
				})
				top := mustJSON(t, map[string]interface{}{
					"schemaVersion": 2,
					"manifests": []map[string]interface{}{{
						"mediaType":   "application/vnd.oci.image.index.v1+json",
						"digest":      digestOf(index),
						"size":        len(index),
						"annotations": containerdName("registry.k8s.io/coredns/coredns:v1.12.1"),
					}},
				})
				return []file{
					blobFile(config), blobFile(layer), blobFile(manifest), blobFile(index),
					{name: "index.json", body: top},
				}
			},
			wantRefs: []string{"registry.k8s.io/coredns/coredns:v1.12.1"},
			wantArch: "arm64",
		},
		{
			name: "docker save of the containerd image store: both formats",
			files: func(t *testing.T) []file {
				files := ociArchive(t, containerdName, img("amd64", "docker.io/library/busybox:latest"))
				config := files[3]
				layer := files[4]
				manifest := []map[string]interface{}{{
					"Config":   config.name,
					"RepoTags": []string{"busybox:latest"},
					"Layers":   []string{layer.name},
				}}
				return append(files, file{name: "manifest.json", body: mustJSON(t, manifest)})
			},
			wantRefs: []string{"busybox:latest", "docker.io/library/busybox:latest"},
			wantArch: "amd64",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			images, arch, err := indexArchive(bytes.NewReader(tarOf(t, tc.files(t))), "test.tar")
			if err != nil {
				t.Fatalf("indexArchive: %v", err)
			}
			var refs []string
			for _, im := range images {
				refs = append(refs, im.Ref)
				if im.Target != imageref.StripArchSuffix(im.Ref) {
					t.Errorf("%s: Target = %q", im.Ref, im.Target)
				}
			}
			if !reflect.DeepEqual(refs, tc.wantRefs) {
				t.Errorf("refs = %v, want %v", refs, tc.wantRefs)
			}
			if arch != tc.wantArch {
				t.Errorf("arch = %q, want %q", arch, tc.wantArch)
			}
		})
	}
}

func TestIndexArchiveErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		files func(t *testing.T) []file
		want  string
	}{
		{
			name: "multi-platform index with none of its platforms",
			files: func(t *testing.T) []file {
				index := mustJSON(t, map[string]interface{}{
					"manifests": []map[string]interface{}{
						{"digest": digestOf([]byte("amd64")), "size": 5},
					},
				})
				top := mustJSON(t, map[string]interface{}{
					"manifests": []map[string]interface{}{{
						"digest":      digestOf(index),
						"annotations": containerdName("a:1"),
					}},
				})
				return []file{blobFile(index), {name: "index.json", body: top}}
			},
			want: "is incomplete: none of the 1 manifests blobs/sha256/",
		},
		{
			name: "malformed digest",
			files: func(t *testing.T) []file {
				top := mustJSON(t, map[string]interface{}{
					"manifests": []map[string]interface{}{{"digest": "sha256/../x", "annotations": containerdName("a:1")}},
				})
				return []file{{name: "index.json", body: top}}
			},
			want: `is corrupt: index.json lists a malformed digest "sha256/../x"`,
		},
		{
			name: "docker-archive image without a config",
			files: func(t *testing.T) []file {
				return []file{{name: "manifest.json", body: []byte(`[{"RepoTags":["a:1"]}]`)}}
			},
			want: "is corrupt: image 0 in manifest.json has no Config",
		},
		{
			name: "bad image config",
			files: func(t *testing.T) []file {
				files := dockerArchive(t, img("amd64", "a:1"))
				return withEntry(files, files[0].name, []byte("{"))
			},
			want: "failed to parse ",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := indexArchive(bytes.NewReader(tarOf(t, tc.files(t))), "test.tar")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "test.tar") {
				t.Errorf("indexArchive error = %v, want it to name test.tar and contain %q", err, tc.want)
			}
		})
	}
}

// countingFile counts the bytes read from a file.
type countingFile struct {
	*os.File
	read int64
}

// Read implements io.Reader.
func (f *countingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.read += int64(n)
	return n, err
}

func TestIndexArchiveSeeksOverLayers(t *testing.T) {
	t.Parallel()
	files := dockerArchive(t, img("amd64", "a:1"))
	big := bytes.Repeat([]byte("layer data "), 1<<20)
	files = withEntry(files, "layer0/layer.tar", big)
	p := filepath.Join(t.TempDir(), "a.tar")
	writeFile(t, p, tarOf(t, files), 0o644)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counter := &countingFile{File: f}
	if _, _, err := indexArchive(counter, p); err != nil {
		t.Fatal(err)
	}
	if counter.read >= int64(len(big)) {
		t.Errorf("read %d bytes of a %d byte layer: want it skipped by seeking", counter.read, len(big))
	}
}

func TestElfArch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		header []byte
		want   string
	}{
		{"amd64", fakeELF(elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_X86_64, ""), "amd64"},
		{"arm64", fakeELF(elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_AARCH64, ""), "arm64"},
		{"arm", fakeELF(elf.ELFCLASS32, elf.ELFDATA2LSB, elf.EM_ARM, ""), "arm"},
		{"ppc64le", fakeELF(elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_PPC64, ""), "ppc64le"},
		{"ppc64", fakeELF(elf.ELFCLASS64, elf.ELFDATA2MSB, elf.EM_PPC64, ""), "ppc64"},
		{"s390x", fakeELF(elf.ELFCLASS64, elf.ELFDATA2MSB, elf.EM_S390, ""), "s390x"},
		{"386", fakeELF(elf.ELFCLASS32, elf.ELFDATA2LSB, elf.EM_386, ""), "386"},
		{"riscv64", fakeELF(elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_RISCV, ""), "riscv64"},
		{"loong64", fakeELF(elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_LOONGARCH, ""), "loong64"},
		{"mips64le", fakeELF(elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_MIPS, ""), "mips64le"},
		{"a machine Go does not know", fakeELF(elf.ELFCLASS64, elf.ELFDATA2MSB, elf.EM_SPARCV9, ""), "EM_SPARCV9"},
		{"a shell script", []byte("#!/bin/sh\nexec /usr/bin/kubeadm \"$@\"\n"), ""},
		{"too short", []byte("\x7fELF\x02\x01"), ""},
		{"empty", nil, ""},
		{"bad byte order", fakeELF(elf.ELFCLASS64, elf.ELFDATANONE, elf.EM_X86_64, ""), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := elfArch(tc.header); got != tc.want {
				t.Errorf("elfArch = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestImagesAndArchiveFor(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, release(t, elf.EM_X86_64, "amd64"))
	writeFiles(t, dir, []file{
		{name: "busybox.tar", body: tarOf(t, dockerArchive(t, img("amd64", "busybox:1.36")))},
		// the same image again, in another archive
		{name: "proxy-again.tar", body: tarOf(t, dockerArchive(t, img("amd64", "registry.k8s.io/kube-proxy-amd64:v1.34.4")))},
	})
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Image{
		{Ref: "busybox:1.36", Target: "busybox:1.36"},
		{Ref: "registry.k8s.io/kube-apiserver-amd64:v1.34.4", Target: "registry.k8s.io/kube-apiserver:v1.34.4"},
		{Ref: "registry.k8s.io/kube-proxy-amd64:v1.34.4", Target: "registry.k8s.io/kube-proxy:v1.34.4"},
	}
	if got := s.Images(); !reflect.DeepEqual(got, want) {
		t.Errorf("Images() = %v, want %v", got, want)
	}
	cases := []struct {
		target string
		want   string
	}{
		{"registry.k8s.io/kube-apiserver:v1.34.4", "kube-apiserver.tar"},
		{"registry.k8s.io/kube-apiserver-amd64:v1.34.4", "kube-apiserver.tar"},
		{"registry.k8s.io/kube-proxy:v1.34.4", "kube-proxy.tar"},
		{"docker.io/library/busybox:1.36", "busybox.tar"},
		{"busybox:1.36", "busybox.tar"},
		{"registry.k8s.io/kube-apiserver:v1.34.3", ""},
		{"registry.k8s.io/etcd:3.6.4-0", ""},
	}
	for _, tc := range cases {
		t.Run(tc.target, func(t *testing.T) {
			t.Parallel()
			a := s.ArchiveFor(tc.target)
			got := ""
			if a != nil {
				got = a.Name
			}
			if got != tc.want {
				t.Errorf("ArchiveFor(%q) = %q, want %q", tc.target, got, tc.want)
			}
		})
	}
}
