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
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts/artifactstest"
)

func TestOpenLayouts(t *testing.T) {
	t.Parallel()
	releaseImages := []string{
		"registry.k8s.io/kube-apiserver-amd64:v1.34.4",
		"registry.k8s.io/kube-proxy-amd64:v1.34.4",
	}
	withExtras := []string{
		"registry.k8s.io/etcd:3.6.4-0",
		"registry.k8s.io/kube-apiserver-amd64:v1.34.4",
		"registry.k8s.io/kube-proxy-amd64:v1.34.4",
		"registry.k8s.io/pause:3.10.1",
	}
	cases := []struct {
		name string
		// setup builds the fixture in dir and returns what the user gives
		setup        func(t *testing.T, dir string) string
		wantLayout   Layout
		wantArchives []string
		wantImages   []string
		wantArch     string
		// wantKubeadm is the Path of kubeadm relative to dir
		wantKubeadm string
	}{
		{
			name: "flat folder with extra archives",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, dir, artifactstest.Release(t, elf.EM_X86_64, "amd64"))
				artifactstest.WriteFiles(t, dir, artifactstest.Extras(t))
				artifactstest.WriteFiles(t, dir, []artifactstest.File{
					{Name: "README.md", Body: []byte("notes")},
					{Name: "kube-proxy.tar.md5", Body: []byte("0")},
					{Name: "._etcd.tar", Body: []byte("macOS metadata")},
					{Name: "nested/other.tar", Body: []byte("not indexed")},
				})
				return dir
			},
			wantLayout:   LayoutFlat,
			wantArchives: []string{"etcd.tar", "kube-apiserver.tar", "kube-proxy.tar", "pause.tar"},
			wantImages:   withExtras,
			wantArch:     "amd64",
			wantKubeadm:  "kubeadm",
		},
		{
			name: "a release's kubernetes/server/bin itself",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, filepath.Join(dir, "kubernetes", "server", "bin"), artifactstest.Release(t, elf.EM_X86_64, "amd64"))
				return filepath.Join(dir, "kubernetes", "server", "bin")
			},
			wantLayout:   LayoutFlat,
			wantArchives: []string{"kube-apiserver.tar", "kube-proxy.tar"},
			wantImages:   releaseImages,
			wantArch:     "amd64",
			wantKubeadm:  "kubernetes/server/bin/kubeadm",
		},
		{
			name: "release tree: parent of kubernetes/",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, filepath.Join(dir, "kubernetes", "server", "bin"), artifactstest.Release(t, elf.EM_X86_64, "amd64"))
				return dir
			},
			wantLayout:   LayoutReleaseTree,
			wantArchives: []string{"kube-apiserver.tar", "kube-proxy.tar"},
			wantImages:   releaseImages,
			wantArch:     "amd64",
			wantKubeadm:  "kubernetes/server/bin/kubeadm",
		},
		{
			name: "release tree: kubernetes/ itself",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, filepath.Join(dir, "kubernetes", "server", "bin"), artifactstest.Release(t, elf.EM_X86_64, "amd64"))
				return filepath.Join(dir, "kubernetes")
			},
			wantLayout:   LayoutReleaseTree,
			wantArchives: []string{"kube-apiserver.tar", "kube-proxy.tar"},
			wantImages:   releaseImages,
			wantArch:     "amd64",
			wantKubeadm:  "kubernetes/server/bin/kubeadm",
		},
		{
			name: "release tree with archives beside it",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, filepath.Join(dir, "kubernetes", "server", "bin"), artifactstest.Release(t, elf.EM_X86_64, "amd64"))
				artifactstest.WriteFiles(t, dir, artifactstest.Extras(t))
				return dir
			},
			wantLayout:   LayoutReleaseTree,
			wantArchives: []string{"kube-apiserver.tar", "kube-proxy.tar", "etcd.tar", "pause.tar"},
			wantImages:   withExtras,
			wantArch:     "amd64",
			wantKubeadm:  "kubernetes/server/bin/kubeadm",
		},
		{
			name: "release tree for arm64",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, filepath.Join(dir, "kubernetes", "server", "bin"), artifactstest.Release(t, elf.EM_AARCH64, "arm64"))
				return dir
			},
			wantLayout:   LayoutReleaseTree,
			wantArchives: []string{"kube-apiserver.tar", "kube-proxy.tar"},
			wantImages: []string{
				"registry.k8s.io/kube-apiserver-arm64:v1.34.4",
				"registry.k8s.io/kube-proxy-arm64:v1.34.4",
			},
			wantArch:    "arm64",
			wantKubeadm: "kubernetes/server/bin/kubeadm",
		},
		{
			name: "release tarball given directly",
			setup: func(t *testing.T, dir string) string {
				return artifactstest.WriteTarball(t, filepath.Join(dir, "kubernetes-server-linux-amd64.tar.gz"), "kubernetes/server/bin", artifactstest.Release(t, elf.EM_X86_64, "amd64"))
			},
			wantLayout:   LayoutReleaseTarball,
			wantArchives: []string{"kube-apiserver.tar", "kube-proxy.tar"},
			wantImages:   releaseImages,
			wantArch:     "amd64",
			wantKubeadm:  "kubernetes-server-linux-amd64.tar.gz:kubernetes/server/bin/kubeadm",
		},
		{
			name: "release tarball named .tgz without the kubernetes/ prefix",
			setup: func(t *testing.T, dir string) string {
				return artifactstest.WriteTarball(t, filepath.Join(dir, "server.tgz"), "server/bin", artifactstest.Release(t, elf.EM_S390, "s390x"))
			},
			wantLayout:   LayoutReleaseTarball,
			wantArchives: []string{"kube-apiserver.tar", "kube-proxy.tar"},
			wantImages: []string{
				"registry.k8s.io/kube-apiserver-s390x:v1.34.4",
				"registry.k8s.io/kube-proxy-s390x:v1.34.4",
			},
			wantArch:    "s390x",
			wantKubeadm: "server.tgz:server/bin/kubeadm",
		},
		{
			name: "release tarball in a folder with archives beside it",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteTarball(t, filepath.Join(dir, "kubernetes-server-linux-amd64.tar.gz"), "kubernetes/server/bin", artifactstest.Release(t, elf.EM_X86_64, "amd64"))
				artifactstest.WriteFiles(t, dir, artifactstest.Extras(t))
				artifactstest.WriteFiles(t, dir, []artifactstest.File{{Name: "kubernetes-client-linux-amd64.tar.gz", Body: []byte("ignored")}})
				return dir
			},
			wantLayout:   LayoutReleaseTarball,
			wantArchives: []string{"kube-apiserver.tar", "kube-proxy.tar", "etcd.tar", "pause.tar"},
			wantImages:   withExtras,
			wantArch:     "amd64",
			wantKubeadm:  "kubernetes-server-linux-amd64.tar.gz:kubernetes/server/bin/kubeadm",
		},
		{
			name: "build tree after make quick-release",
			setup: func(t *testing.T, dir string) string {
				writeQuickRelease(t, dir)
				return dir
			},
			wantLayout:   LayoutBuildTree,
			wantArchives: buildArchives,
			wantImages:   buildImages("amd64"),
			wantArch:     "amd64",
			wantKubeadm:  "_output/dockerized/bin/linux/amd64/kubeadm",
		},
		{
			name: "build tree: _output itself",
			setup: func(t *testing.T, dir string) string {
				writeQuickRelease(t, dir)
				return filepath.Join(dir, "_output")
			},
			wantLayout:   LayoutBuildTree,
			wantArchives: buildArchives,
			wantImages:   buildImages("amd64"),
			wantArch:     "amd64",
			wantKubeadm:  "_output/dockerized/bin/linux/amd64/kubeadm",
		},
		{
			name: "build output of another name (OUT_DIR) given directly",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, filepath.Join(dir, "out", "dockerized", "bin", "linux", "amd64"), artifactstest.BuildBinaries(elf.EM_X86_64))
				artifactstest.WriteFiles(t, filepath.Join(dir, "out", "release-images", "amd64"), artifactstest.ReleaseImages(t, "amd64", buildTag))
				return filepath.Join(dir, "out")
			},
			wantLayout:   LayoutBuildTree,
			wantArchives: buildArchives,
			wantImages:   buildImages("amd64"),
			wantArch:     "amd64",
			wantKubeadm:  "out/dockerized/bin/linux/amd64/kubeadm",
		},
		{
			name: "build tree after make all, then make quick-release-images: the dockerized kubeadm is newer",
			setup: func(t *testing.T, dir string) string {
				writeMakeAll(t, dir)
				writeBuild(t, dir, dockerized, "amd64", elf.EM_X86_64)
				writeReleaseImages(t, dir, "amd64")
				setAge(t, dir, local, "amd64", time.Hour)
				setAge(t, dir, dockerized, "amd64", time.Minute)
				return dir
			},
			wantLayout:   LayoutBuildTree,
			wantArchives: buildArchives,
			wantImages:   buildImages("amd64"),
			wantArch:     "amd64",
			wantKubeadm:  "_output/dockerized/bin/linux/amd64/kubeadm",
		},
		{
			name: "build tree after make quick-release-images, then make all: the local kubeadm is newer",
			setup: func(t *testing.T, dir string) string {
				writeMakeAll(t, dir)
				writeBuild(t, dir, dockerized, "amd64", elf.EM_X86_64)
				writeReleaseImages(t, dir, "amd64")
				setAge(t, dir, local, "amd64", time.Minute)
				setAge(t, dir, dockerized, "amd64", time.Hour)
				return dir
			},
			wantLayout:   LayoutBuildTree,
			wantArchives: buildArchives,
			wantImages:   buildImages("amd64"),
			wantArch:     "amd64",
			wantKubeadm:  "_output/local/bin/linux/amd64/kubeadm",
		},
		{
			name: "build tree after make all only: no image archives",
			setup: func(t *testing.T, dir string) string {
				writeMakeAll(t, dir)
				return dir
			},
			wantLayout:  LayoutBuildTree,
			wantArch:    "amd64",
			wantKubeadm: "_output/local/bin/linux/amd64/kubeadm",
		},
		{
			name: "build tree with builds for several architectures: this machine's",
			setup: func(t *testing.T, dir string) string {
				other := notThisArch(1)[0]
				// this machine's folder holds amd64 binaries, so that Arch
				// tells which folder was used
				writeBuild(t, dir, dockerized, runtime.GOARCH, elf.EM_X86_64)
				writeReleaseImages(t, dir, runtime.GOARCH)
				writeBuild(t, dir, dockerized, other, elf.EM_S390)
				writeBuild(t, dir, local, other, elf.EM_S390)
				writeReleaseImages(t, dir, other)
				return dir
			},
			wantLayout:   LayoutBuildTree,
			wantArchives: buildArchives,
			wantImages:   buildImages(runtime.GOARCH),
			wantArch:     "amd64",
			wantKubeadm:  "_output/dockerized/bin/linux/" + runtime.GOARCH + "/kubeadm",
		},
		{
			name: "build tree with only one architecture holding kubeadm",
			setup: func(t *testing.T, dir string) string {
				other := notThisArch(1)[0]
				writeBuild(t, dir, local, other, elf.EM_X86_64)
				// a cross-built kubectl alone is not a build to use
				artifactstest.WriteFiles(t, filepath.Join(dir, "_output", local, "bin", "linux", runtime.GOARCH), artifactstest.Without(artifactstest.BuildBinaries(elf.EM_S390), "kubeadm"))
				return dir
			},
			wantLayout:  LayoutBuildTree,
			wantArch:    "amd64",
			wantKubeadm: "_output/local/bin/linux/" + notThisArch(1)[0] + "/kubeadm",
		},
		{
			name: "a release tree in a source tree wins over its build",
			setup: func(t *testing.T, dir string) string {
				writeQuickRelease(t, dir)
				artifactstest.WriteFiles(t, filepath.Join(dir, "kubernetes", "server", "bin"), artifactstest.Release(t, elf.EM_X86_64, "amd64"))
				return dir
			},
			wantLayout:   LayoutReleaseTree,
			wantArchives: []string{"kube-apiserver.tar", "kube-proxy.tar"},
			wantImages:   releaseImages,
			wantArch:     "amd64",
			wantKubeadm:  "kubernetes/server/bin/kubeadm",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			given := tc.setup(t, dir)
			s, err := Open(context.Background(), given)
			if err != nil {
				t.Fatalf("Open(%s): %v", given, err)
			}
			if s.Path != given {
				t.Errorf("Path = %q, want %q", s.Path, given)
			}
			if s.Layout != tc.wantLayout {
				t.Errorf("Layout = %q, want %q", s.Layout, tc.wantLayout)
			}
			var archives, images []string
			for _, a := range s.Archives {
				archives = append(archives, a.Name)
				for _, im := range a.Images {
					images = append(images, im.Ref)
				}
				if a.Kind != KindImageArchive {
					t.Errorf("%s: Kind = %q", a.Name, a.Kind)
				}
				if a.Size <= 0 || a.Mode != 0o644 {
					t.Errorf("%s: Size = %d, Mode = %v", a.Name, a.Size, a.Mode)
				}
			}
			if !reflect.DeepEqual(archives, tc.wantArchives) {
				t.Errorf("Archives = %v, want %v", archives, tc.wantArchives)
			}
			sort.Strings(images)
			if !reflect.DeepEqual(images, tc.wantImages) {
				t.Errorf("images = %v, want %v", images, tc.wantImages)
			}
			if len(s.Binaries) != 3 {
				t.Errorf("Binaries has %d entries, want 3", len(s.Binaries))
			}
			for _, name := range []string{"kubeadm", "kubelet", "kubectl"} {
				a := s.Binaries[name]
				if a == nil {
					t.Fatalf("no %s", name)
				}
				if a.Name != name || a.Kind != KindBinary || a.Arch != tc.wantArch || a.Mode != 0o755 {
					t.Errorf("%s: %+v", name, *a)
				}
				if want := int64(len(artifactstest.Binary(elf.EM_X86_64, name))); a.Size != want {
					t.Errorf("%s: Size = %d, want %d", name, a.Size, want)
				}
			}
			if want := filepath.Join(dir, tc.wantKubeadm); s.Binaries["kubeadm"].Path != want {
				t.Errorf("kubeadm Path = %q, want %q", s.Binaries["kubeadm"].Path, want)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	amd64 := func(t *testing.T) []artifactstest.File { return artifactstest.Release(t, elf.EM_X86_64, "amd64") }
	// withArchive returns a flat folder whose kube-proxy.tar holds files
	withArchive := func(files func(t *testing.T) []artifactstest.File) func(t *testing.T, dir string) string {
		return func(t *testing.T, dir string) string {
			artifactstest.WriteFiles(t, dir, artifactstest.WithBody(amd64(t), "kube-proxy.tar", artifactstest.Tar(t, files(t))))
			return dir
		}
	}
	proxy := func(t *testing.T) []artifactstest.File {
		return artifactstest.DockerArchive(t, artifactstest.NewImage("amd64", "registry.k8s.io/kube-proxy-amd64:v1.34.4"))
	}
	pause := func(t *testing.T) []artifactstest.File {
		return artifactstest.OCIArchive(t, artifactstest.ContainerdName, artifactstest.NewImage("amd64", "registry.k8s.io/pause:3.10.1"))
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) string
		// want are substrings of the error; "<dir>" stands for the temp dir
		want []string
	}{
		{
			name:  "path missing",
			setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "nope") },
			want:  []string{"--image-dir <dir>/nope does not exist", "must contain kubeadm, kubelet and kubectl"},
		},
		{
			name:  "empty path",
			setup: func(t *testing.T, dir string) string { return "" },
			want:  []string{"--image-dir is empty"},
		},
		{
			name:  "empty folder",
			setup: func(t *testing.T, dir string) string { return dir },
			want:  []string{"--image-dir <dir> has no known layout", "kubernetes-server-linux-<arch>.tar.gz, a Kubernetes source tree after make quick-release, or a flat folder"},
		},
		{
			name: "a file that is not a tarball",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, dir, amd64(t))
				return filepath.Join(dir, "kube-proxy.tar")
			},
			want: []string{"<dir>/kube-proxy.tar is a file but not a release tarball"},
		},
		{
			name: "flat folder without kubelet",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, dir, artifactstest.Without(amd64(t), "kubelet"))
				return dir
			},
			want: []string{"kubelet not found in <dir>: the folder must contain kubeadm, kubelet and kubectl (a release's kubernetes/server/bin, its parent, the kubernetes-server-linux-<arch>.tar.gz, a Kubernetes source tree after make quick-release, or a flat folder)"},
		},
		{
			name: "flat folder without kubeadm",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, dir, artifactstest.Without(amd64(t), "kubeadm"))
				return dir
			},
			want: []string{"kubeadm not found in <dir>: the folder must contain"},
		},
		{
			name: "release tree without kubectl",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, filepath.Join(dir, "kubernetes", "server", "bin"), artifactstest.Without(amd64(t), "kubectl"))
				return dir
			},
			want: []string{"kubectl not found in <dir>/kubernetes/server/bin: the folder must contain"},
		},
		{
			name: "release tree without kubeadm",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, filepath.Join(dir, "server", "bin"), artifactstest.Without(amd64(t), "kubeadm"))
				return dir
			},
			want: []string{"kubeadm not found in <dir>/server/bin: the folder must contain"},
		},
		{
			name: "release tarball without kubelet",
			setup: func(t *testing.T, dir string) string {
				return artifactstest.WriteTarball(t, filepath.Join(dir, "k.tar.gz"), "kubernetes/server/bin", artifactstest.Without(amd64(t), "kubelet"))
			},
			want: []string{"kubelet not found in <dir>/k.tar.gz:kubernetes/server/bin/: the folder must contain"},
		},
		{
			name: "release tarball that is not a release",
			setup: func(t *testing.T, dir string) string {
				return artifactstest.WriteTarball(t, filepath.Join(dir, "k.tar.gz"), "other", amd64(t))
			},
			want: []string{"kubeadm not found in <dir>/k.tar.gz (looked in kubernetes/server/bin/ and server/bin/)"},
		},
		{
			name: "two release tarballs in a folder",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteTarball(t, filepath.Join(dir, "kubernetes-server-linux-amd64.tar.gz"), "kubernetes/server/bin", amd64(t))
				artifactstest.WriteTarball(t, filepath.Join(dir, "kubernetes-server-linux-arm64.tar.gz"), "kubernetes/server/bin", amd64(t))
				return dir
			},
			want: []string{"--image-dir <dir> holds 2 release tarballs", "give the one to use as --image-dir"},
		},
		{
			name: "binary not executable",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, dir, amd64(t))
				artifactstest.WriteFile(t, filepath.Join(dir, "kubelet"), artifactstest.Binary(elf.EM_X86_64, "kubelet"), 0o644)
				return dir
			},
			want: []string{"<dir>/kubelet is not executable: run chmod +x <dir>/kubelet"},
		},
		{
			name: "binary is a folder",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, dir, artifactstest.Without(amd64(t), "kubectl"))
				artifactstest.WriteFile(t, filepath.Join(dir, "kubectl", "x"), nil, 0o644)
				return dir
			},
			want: []string{"<dir>/kubectl is not a file: it must be the kubectl binary"},
		},
		{
			name: "binary not executable in a release tarball",
			setup: func(t *testing.T, dir string) string {
				files := amd64(t)
				for i := range files {
					if files[i].Name == "kubectl" {
						files[i].Mode = 0o644
					}
				}
				return artifactstest.WriteTarball(t, filepath.Join(dir, "k.tar.gz"), "kubernetes/server/bin", files)
			},
			want: []string{"<dir>/k.tar.gz:kubernetes/server/bin/kubectl is not executable (mode -rw-r--r--)"},
		},
		{
			name: "truncated image archive",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, dir, amd64(t))
				files := proxy(t)
				data := artifactstest.Tar(t, files)
				// cut the file in the middle of the layer
				layer := artifactstest.Entry(t, files, "layer0/layer.tar").Body
				cut := bytes.Index(data, layer) + len(layer)/2
				artifactstest.WriteFile(t, filepath.Join(dir, "kube-proxy.tar"), data[:cut], 0o644)
				return dir
			},
			want: []string{"failed to read image archive <dir>/kube-proxy.tar (the file is truncated or not a tar archive", "unexpected EOF"},
		},
		{
			name: "image archive that is not a tar",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, dir, amd64(t))
				artifactstest.WriteFile(t, filepath.Join(dir, "kube-proxy.tar"), []byte(strings.Repeat("not a tar ", 100)), 0o644)
				return dir
			},
			want: []string{"failed to read image archive <dir>/kube-proxy.tar"},
		},
		{
			name: "empty image archive",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, dir, amd64(t))
				artifactstest.WriteFile(t, filepath.Join(dir, "kube-proxy.tar"), nil, 0o644)
				return dir
			},
			want: []string{"<dir>/kube-proxy.tar is not an image archive or is truncated: it has neither manifest.json (docker-archive) nor index.json (OCI layout)"},
		},
		{
			name: "tar without manifest.json or index.json",
			setup: withArchive(func(t *testing.T) []artifactstest.File {
				return artifactstest.Without(proxy(t), "manifest.json")
			}),
			want: []string{"<dir>/kube-proxy.tar is not an image archive or is truncated: it has neither manifest.json"},
		},
		{
			name: "docker-archive missing a layer",
			setup: withArchive(func(t *testing.T) []artifactstest.File {
				return artifactstest.Without(proxy(t), "layer0/layer.tar")
			}),
			want: []string{"image archive <dir>/kube-proxy.tar is incomplete: manifest.json lists layer0/layer.tar, which is not in the archive"},
		},
		{
			name: "docker-archive missing its config",
			setup: withArchive(func(t *testing.T) []artifactstest.File {
				files := proxy(t)
				return artifactstest.Without(files, files[0].Name)
			}),
			want: []string{"image archive <dir>/kube-proxy.tar is incomplete: manifest.json lists", ".json, which is not in the archive"},
		},
		{
			name: "docker-archive with bad JSON",
			setup: withArchive(func(t *testing.T) []artifactstest.File {
				return artifactstest.WithBody(proxy(t), "manifest.json", []byte(`[{"Config": `))
			}),
			want: []string{"failed to parse manifest.json in image archive <dir>/kube-proxy.tar"},
		},
		{
			name: "docker-archive without tags",
			setup: withArchive(func(t *testing.T) []artifactstest.File {
				return artifactstest.DockerArchive(t, artifactstest.NewImage("amd64"))
			}),
			want: []string{"<dir>/kube-proxy.tar has no image references", "tag each image and save it by name"},
		},
		{
			name: "OCI layout missing a layer blob",
			setup: withArchive(func(t *testing.T) []artifactstest.File {
				files := pause(t)
				// blobs are config, layer, manifest after three layout entries
				return artifactstest.Without(files, files[4].Name)
			}),
			want: []string{"image archive <dir>/kube-proxy.tar is incomplete: blobs/sha256/", "lists blobs/sha256/", "which is not in the archive"},
		},
		{
			name: "OCI layout missing a manifest blob",
			setup: withArchive(func(t *testing.T) []artifactstest.File {
				files := pause(t)
				return artifactstest.Without(files, files[5].Name)
			}),
			want: []string{"image archive <dir>/kube-proxy.tar is incomplete: index.json lists blobs/sha256/"},
		},
		{
			name: "OCI layout with a blob of the wrong size",
			setup: withArchive(func(t *testing.T) []artifactstest.File {
				files := pause(t)
				return artifactstest.WithBody(files, files[4].Name, []byte("short"))
			}),
			want: []string{"image archive <dir>/kube-proxy.tar is corrupt: blobs/sha256/", "is 5 bytes but blobs/sha256/"},
		},
		{
			name: "OCI layout with bad JSON",
			setup: withArchive(func(t *testing.T) []artifactstest.File {
				return artifactstest.WithBody(pause(t), "index.json", []byte(`{"manifests": [`))
			}),
			want: []string{"failed to parse index.json in image archive <dir>/kube-proxy.tar"},
		},
		{
			name: "OCI layout naming images by tag only",
			setup: withArchive(func(t *testing.T) []artifactstest.File {
				return artifactstest.OCIArchive(t, artifactstest.TagOnly, artifactstest.NewImage("amd64", "registry.k8s.io/pause:3.10.1"))
			}),
			want: []string{"<dir>/kube-proxy.tar has no image references"},
		},
		{
			name: "corrupt archive beside a release tree",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, filepath.Join(dir, "kubernetes", "server", "bin"), amd64(t))
				artifactstest.WriteFile(t, filepath.Join(dir, "etcd.tar"), artifactstest.Tar(t, artifactstest.Without(proxy(t), "layer0/layer.tar")), 0o644)
				return dir
			},
			want: []string{"image archive <dir>/etcd.tar is incomplete"},
		},
		{
			name: "corrupt archive inside a release tarball",
			setup: func(t *testing.T, dir string) string {
				files := artifactstest.WithBody(amd64(t), "kube-proxy.tar", artifactstest.Tar(t, artifactstest.Without(proxy(t), "layer0/layer.tar")))
				return artifactstest.WriteTarball(t, filepath.Join(dir, "k.tgz"), "kubernetes/server/bin", files)
			},
			want: []string{"image archive <dir>/k.tgz:kubernetes/server/bin/kube-proxy.tar is incomplete: manifest.json lists layer0/layer.tar"},
		},
		{
			name: "release tarball that is not gzip",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "kubernetes-server-linux-amd64.tar.gz")
				artifactstest.WriteFile(t, p, artifactstest.Tar(t, amd64(t)), 0o644)
				return p
			},
			want: []string{"failed to read release tarball <dir>/kubernetes-server-linux-amd64.tar.gz (it is not gzip-compressed"},
		},
		{
			name: "truncated release tarball",
			setup: func(t *testing.T, dir string) string {
				p := artifactstest.WriteTarball(t, filepath.Join(dir, "k.tar.gz"), "kubernetes/server/bin", amd64(t))
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				artifactstest.WriteFile(t, p, data[:len(data)/2], 0o644)
				return p
			},
			want: []string{"<dir>/k.tar.gz", "download kubernetes-server-linux-<arch>.tar.gz again"},
		},
		{
			name: "release tarball with a bad checksum",
			setup: func(t *testing.T, dir string) string {
				p := artifactstest.WriteTarball(t, filepath.Join(dir, "k.tar.gz"), "kubernetes/server/bin", amd64(t))
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				// the CRC-32 is the 8th to 5th last bytes
				data[len(data)-8] ^= 0xff
				artifactstest.WriteFile(t, p, data, 0o644)
				return p
			},
			want: []string{"failed to read release tarball <dir>/k.tar.gz", "checksum"},
		},
		{
			name: "release tarball found in a folder, without kubeadm",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteTarball(t, filepath.Join(dir, "kubernetes-server-linux-amd64.tar.gz"), "kubernetes/server/bin", artifactstest.Without(amd64(t), "kubeadm"))
				return dir
			},
			want: []string{"kubeadm not found in <dir>/kubernetes-server-linux-amd64.tar.gz:kubernetes/server/bin/"},
		},
		{
			name: "build tree without a built kubeadm",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, filepath.Join(dir, "_output", "local", "bin", "linux", "amd64"), artifactstest.Without(artifactstest.BuildBinaries(elf.EM_X86_64), "kubeadm"))
				writeReleaseImages(t, dir, "amd64")
				return dir
			},
			want: []string{
				"--image-dir <dir> is a Kubernetes build tree without a built kubeadm (looked in <dir>/_output/dockerized/bin/linux/<arch> and <dir>/_output/local/bin/linux/<arch>)",
				`build them with make quick-release, or with make all WHAT="cmd/kubeadm cmd/kubelet cmd/kubectl" and then make quick-release-images for the image archives`,
			},
		},
		{
			name: "empty _output given directly",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "_output")
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
				return p
			},
			want: []string{"--image-dir <dir>/_output is a Kubernetes build tree without a built kubeadm (looked in <dir>/_output/dockerized/bin/linux/<arch> and", "make quick-release"},
		},
		{
			name: "build output of another name (OUT_DIR) with image archives only",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, filepath.Join(dir, "out", "release-images", "amd64"), artifactstest.ReleaseImages(t, "amd64", buildTag))
				return filepath.Join(dir, "out")
			},
			want: []string{"--image-dir <dir>/out is a Kubernetes build tree without a built kubeadm (looked in <dir>/out/dockerized/bin/linux/<arch> and <dir>/out/local/bin/linux/<arch>)", "make quick-release"},
		},
		{
			name: "build tree with builds for several architectures, none this machine's",
			setup: func(t *testing.T, dir string) string {
				arches := notThisArch(2)
				writeBuild(t, dir, dockerized, arches[0], elf.EM_X86_64)
				writeBuild(t, dir, local, arches[1], elf.EM_X86_64)
				return dir
			},
			want: []string{
				"--image-dir <dir> holds kubeadm builds for several architectures and none for this machine's (" + runtime.GOARCH + "): ",
				"<dir>/_output/dockerized/bin/linux/" + notThisArch(2)[0],
				"<dir>/_output/local/bin/linux/" + notThisArch(2)[1],
				"; remove the others, or give the folder of the one to use as --image-dir",
			},
		},
		{
			name: "build tree without kubelet",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, filepath.Join(dir, "_output", "dockerized", "bin", "linux", "amd64"), artifactstest.Without(artifactstest.BuildBinaries(elf.EM_X86_64), "kubelet"))
				return dir
			},
			want: []string{"kubelet not found in <dir>/_output/dockerized/bin/linux/amd64: build them with make quick-release"},
		},
		{
			name: "build tree with a kubeadm that is a folder",
			setup: func(t *testing.T, dir string) string {
				bin := filepath.Join(dir, "_output", "dockerized", "bin", "linux", "amd64")
				artifactstest.WriteFiles(t, bin, artifactstest.Without(artifactstest.BuildBinaries(elf.EM_X86_64), "kubeadm"))
				artifactstest.WriteFile(t, filepath.Join(bin, "kubeadm", "x"), nil, 0o644)
				return dir
			},
			want: []string{"<dir>/_output/dockerized/bin/linux/amd64/kubeadm is not a file: it must be the kubeadm binary"},
		},
		{
			name: "corrupt archive in a build's release-images",
			setup: func(t *testing.T, dir string) string {
				writeBuild(t, dir, dockerized, "amd64", elf.EM_X86_64)
				artifactstest.WriteFile(t, filepath.Join(dir, "_output", "release-images", "amd64", "kube-proxy.tar"), artifactstest.Tar(t, artifactstest.Without(proxy(t), "layer0/layer.tar")), 0o644)
				return dir
			},
			want: []string{"image archive <dir>/_output/release-images/amd64/kube-proxy.tar is incomplete"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			given := tc.setup(t, dir)
			s, err := Open(context.Background(), given)
			if err == nil {
				t.Fatalf("Open(%s) = %+v, want an error", given, s)
			}
			t.Log(err)
			for _, want := range tc.want {
				want = strings.ReplaceAll(want, "<dir>", dir)
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestOpenUnreadable(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		// root reads everything, whatever the mode: CI runs as root
		runAsNobody(t, "TestOpenUnreadable")
		return
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) (given, locked string)
		want  string
	}{
		{
			name: "folder",
			setup: func(t *testing.T, dir string) (string, string) {
				artifactstest.WriteFiles(t, dir, artifactstest.Release(t, elf.EM_X86_64, "amd64"))
				return dir, dir
			},
			want: "failed to read --image-dir <dir>",
		},
		{
			name: "image archive",
			setup: func(t *testing.T, dir string) (string, string) {
				artifactstest.WriteFiles(t, dir, artifactstest.Release(t, elf.EM_X86_64, "amd64"))
				return dir, filepath.Join(dir, "kube-proxy.tar")
			},
			want: "failed to open image archive <dir>/kube-proxy.tar",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			given, locked := tc.setup(t, dir)
			info, err := os.Stat(locked)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(locked, 0); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.Chmod(locked, info.Mode().Perm()) })
			_, err = Open(context.Background(), given)
			if want := strings.ReplaceAll(tc.want, "<dir>", dir); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Open error = %v, want it to contain %q", err, want)
			}
		})
	}
}

// runAsNobody runs the test named test of this test binary again as the
// user nobody (65534), for whom a file with mode 0 really is unreadable,
// and fails unless it passed there.
func runAsNobody(t *testing.T, test string) {
	t.Helper()
	// a folder nobody can use: the test binary and its temporary folders
	dir, err := os.MkdirTemp("", "as-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o1777); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "test.bin")
	if err := copyExecutable(self, bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+test) || strings.Contains(string(out), "--- SKIP") {
		t.Fatalf("%s as nobody: %v\n%s", test, err, out)
	}
}

func copyExecutable(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// TestNamedChoice: messages name the folder as Named says (the Go API's
// option for a Go caller), --image-dir by default.
func TestNamedChoice(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "nope")
	for _, tc := range []struct {
		name string
		open func() error
		want string
	}{
		{"default", func() error { _, err := Open(context.Background(), missing); return err }, "--image-dir " + missing + " does not exist"},
		{"named", func() error {
			_, err := Open(context.Background(), missing, Named("UpgradeWithImageDir"))
			return err
		}, "UpgradeWithImageDir " + missing + " does not exist"},
		{"named, empty", func() error { _, err := Open(context.Background(), "", Named("UpgradeWithImageDir")); return err }, "UpgradeWithImageDir is empty"},
		{"archives, named", func() error { _, err := OpenArchives(missing, Named("UpgradeWithImageDir")); return err }, "UpgradeWithImageDir " + missing + " does not exist"},
	} {
		if err := tc.open(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}
