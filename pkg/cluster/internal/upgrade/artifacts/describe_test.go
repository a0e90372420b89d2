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
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts/artifactstest"
)

func TestDescribe(t *testing.T) {
	t.Parallel()
	const buildImagesLine = "image archives from <dir>/_output/release-images/amd64: kube-apiserver.tar, kube-controller-manager.tar, kube-proxy.tar, kube-scheduler.tar, kubectl.tar"
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) string
		// want are the lines of Describe and wantPicked the line of
		// Picked; "<dir>" stands for the temp dir
		want       []string
		wantPicked string
	}{
		{
			name: "flat folder",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, dir, artifactstest.Release(t, elf.EM_X86_64, "amd64"))
				return dir
			},
			want: []string{
				"--image-dir <dir>: flat layout",
				"kubeadm, kubelet, kubectl from <dir>",
				"image archives from <dir>: kube-apiserver.tar, kube-proxy.tar",
			},
		},
		{
			name: "flat folder without archives",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, dir, artifactstest.BuildBinaries(elf.EM_X86_64))
				return dir
			},
			want: []string{
				"--image-dir <dir>: flat layout",
				"kubeadm, kubelet, kubectl from <dir>",
				"no image archives",
			},
		},
		{
			name: "release tree with archives beside it",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteFiles(t, filepath.Join(dir, "kubernetes", "server", "bin"), artifactstest.Release(t, elf.EM_X86_64, "amd64"))
				artifactstest.WriteFiles(t, dir, artifactstest.Extras(t))
				return dir
			},
			want: []string{
				"--image-dir <dir>: release-tree layout",
				"kubeadm, kubelet, kubectl from <dir>/kubernetes/server/bin",
				"image archives from <dir>/kubernetes/server/bin: kube-apiserver.tar, kube-proxy.tar",
				"image archives from <dir>: etcd.tar, pause.tar",
			},
		},
		{
			name: "release tarball in a folder with archives beside it",
			setup: func(t *testing.T, dir string) string {
				artifactstest.WriteTarball(t, filepath.Join(dir, "kubernetes-server-linux-amd64.tar.gz"), "kubernetes/server/bin", artifactstest.Release(t, elf.EM_X86_64, "amd64"))
				artifactstest.WriteFiles(t, dir, artifactstest.Extras(t))
				return dir
			},
			want: []string{
				"--image-dir <dir>: release-tarball layout",
				"kubeadm, kubelet, kubectl from <dir>/kubernetes-server-linux-amd64.tar.gz:kubernetes/server/bin",
				"image archives from <dir>/kubernetes-server-linux-amd64.tar.gz:kubernetes/server/bin: kube-apiserver.tar, kube-proxy.tar",
				"image archives from <dir>: etcd.tar, pause.tar",
			},
		},
		{
			name: "build tree after make quick-release",
			setup: func(t *testing.T, dir string) string {
				writeQuickRelease(t, dir)
				return dir
			},
			want: []string{
				"--image-dir <dir>: build-tree layout",
				"kubeadm, kubelet, kubectl from <dir>/_output/dockerized/bin/linux/amd64",
				buildImagesLine,
			},
			wantPicked: "Using the Kubernetes build in <dir>: binaries from <dir>/_output/dockerized/bin/linux/amd64, image archives from <dir>/_output/release-images/amd64",
		},
		{
			name: "build tree whose local kubeadm is newer",
			setup: func(t *testing.T, dir string) string {
				writeMakeAll(t, dir)
				writeBuild(t, dir, dockerized, "amd64", elf.EM_X86_64)
				writeReleaseImages(t, dir, "amd64")
				setAge(t, dir, local, "amd64", time.Second)
				setAge(t, dir, dockerized, "amd64", 2*time.Second)
				return dir
			},
			want: []string{
				"--image-dir <dir>: build-tree layout",
				"kubeadm, kubelet, kubectl from <dir>/_output/local/bin/linux/amd64 (its kubeadm is newer than <dir>/_output/dockerized/bin/linux/amd64/kubeadm)",
				buildImagesLine,
			},
			wantPicked: "Using the Kubernetes build in <dir>: binaries from <dir>/_output/local/bin/linux/amd64 (its kubeadm is newer than <dir>/_output/dockerized/bin/linux/amd64/kubeadm), image archives from <dir>/_output/release-images/amd64",
		},
		{
			name: "build tree whose dockerized kubeadm is newer",
			setup: func(t *testing.T, dir string) string {
				writeMakeAll(t, dir)
				writeBuild(t, dir, dockerized, "amd64", elf.EM_X86_64)
				writeReleaseImages(t, dir, "amd64")
				setAge(t, dir, local, "amd64", 2*time.Second)
				setAge(t, dir, dockerized, "amd64", time.Second)
				return dir
			},
			want: []string{
				"--image-dir <dir>: build-tree layout",
				"kubeadm, kubelet, kubectl from <dir>/_output/dockerized/bin/linux/amd64 (its kubeadm is newer than <dir>/_output/local/bin/linux/amd64/kubeadm)",
				buildImagesLine,
			},
			wantPicked: "Using the Kubernetes build in <dir>: binaries from <dir>/_output/dockerized/bin/linux/amd64 (its kubeadm is newer than <dir>/_output/local/bin/linux/amd64/kubeadm), image archives from <dir>/_output/release-images/amd64",
		},
		{
			name: "build tree with equally new kubeadms: the one the images were made from",
			setup: func(t *testing.T, dir string) string {
				writeMakeAll(t, dir)
				writeBuild(t, dir, dockerized, "amd64", elf.EM_X86_64)
				setAge(t, dir, local, "amd64", time.Second)
				setAge(t, dir, dockerized, "amd64", time.Second)
				return dir
			},
			want: []string{
				"--image-dir <dir>: build-tree layout",
				"kubeadm, kubelet, kubectl from <dir>/_output/dockerized/bin/linux/amd64 (its kubeadm is as new as <dir>/_output/local/bin/linux/amd64/kubeadm)",
				"no image archives (<dir>/_output/release-images/amd64 does not exist)",
			},
			wantPicked: "Using the Kubernetes build in <dir>: binaries from <dir>/_output/dockerized/bin/linux/amd64 (its kubeadm is as new as <dir>/_output/local/bin/linux/amd64/kubeadm), no image archives (<dir>/_output/release-images/amd64 does not exist)",
		},
		{
			name: "build tree with an empty release-images folder",
			setup: func(t *testing.T, dir string) string {
				writeBuild(t, dir, local, "amd64", elf.EM_X86_64)
				artifactstest.WriteFiles(t, filepath.Join(dir, "_output", "release-images", "amd64"), []artifactstest.File{{Name: "README", Body: []byte("not an archive")}})
				return filepath.Join(dir, "_output")
			},
			want: []string{
				"--image-dir <dir>/_output: build-tree layout",
				"kubeadm, kubelet, kubectl from <dir>/_output/local/bin/linux/amd64",
				"no image archives (none in <dir>/_output/release-images/amd64)",
			},
			wantPicked: "Using the Kubernetes build in <dir>/_output: binaries from <dir>/_output/local/bin/linux/amd64, no image archives (none in <dir>/_output/release-images/amd64)",
		},
		{
			name: "build tree with builds for several architectures",
			setup: func(t *testing.T, dir string) string {
				writeBuild(t, dir, dockerized, runtime.GOARCH, elf.EM_X86_64)
				writeBuild(t, dir, dockerized, notThisArch(1)[0], elf.EM_X86_64)
				return dir
			},
			want: []string{
				"--image-dir <dir>: build-tree layout",
				"kubeadm, kubelet, kubectl from <dir>/_output/dockerized/bin/linux/" + runtime.GOARCH + " (" + runtime.GOARCH + " is this machine's architecture; the builds for " + notThisArch(1)[0] + " are left out)",
				"no image archives (<dir>/_output/release-images/" + runtime.GOARCH + " does not exist)",
			},
			wantPicked: "Using the Kubernetes build in <dir>: binaries from <dir>/_output/dockerized/bin/linux/" + runtime.GOARCH + " (" + runtime.GOARCH + " is this machine's architecture; the builds for " + notThisArch(1)[0] + " are left out), no image archives (<dir>/_output/release-images/" + runtime.GOARCH + " does not exist)",
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
			want := strings.ReplaceAll(strings.Join(tc.want, "\n"), "<dir>", dir)
			if got := strings.Join(s.details(), "\n"); got != want {
				t.Errorf("Describe:\n%s\nwant:\n%s", got, want)
			}
			wantPicked := strings.ReplaceAll(tc.wantPicked, "<dir>", dir)
			if got := s.Picked(); got != wantPicked {
				t.Errorf("Picked:\n%s\nwant:\n%s", got, wantPicked)
			}
		})
	}
}
