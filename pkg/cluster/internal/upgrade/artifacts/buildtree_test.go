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
	"debug/elf"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts/artifactstest"
)

// buildTag is how a Kubernetes build tags its images: the git version, with
// "+" replaced by "_".
const buildTag = "v1.36.0-alpha.0.1234_0123456789abcd"

// Where a build writes its binaries, below _output.
const (
	dockerized = "dockerized"
	local      = "local"
)

// writeBuild writes binaries for machine to _output/<where>/bin/linux/<arch>
// of the source tree root, and returns that folder.
func writeBuild(t *testing.T, root, where, arch string, machine elf.Machine) string {
	t.Helper()
	dir := filepath.Join(root, "_output", where, "bin", "linux", arch)
	artifactstest.WriteFiles(t, dir, artifactstest.BuildBinaries(machine))
	return dir
}

// writeReleaseImages writes the image archives of a build for arch to
// _output/release-images/<arch> of the source tree root.
func writeReleaseImages(t *testing.T, root, arch string) {
	t.Helper()
	artifactstest.WriteFiles(t, filepath.Join(root, "_output", "release-images", arch), artifactstest.ReleaseImages(t, arch, buildTag))
}

// writeQuickRelease writes what make quick-release leaves in the source
// tree root for amd64, the release tarball and its staging folder included.
func writeQuickRelease(t *testing.T, root string) {
	t.Helper()
	writeBuild(t, root, dockerized, "amd64", elf.EM_X86_64)
	writeReleaseImages(t, root, "amd64")
	// a release of another version and arch: none of it may be used
	release := artifactstest.Release(t, elf.EM_AARCH64, "arm64")
	artifactstest.WriteTarball(t, filepath.Join(root, "_output", "release-tars", "kubernetes-server-linux-arm64.tar.gz"), "kubernetes/server/bin", release)
	artifactstest.WriteFiles(t, filepath.Join(root, "_output", "release-stage", "server", "linux-arm64", "kubernetes", "server", "bin"), release)
}

// writeMakeAll writes what make all leaves for amd64: the binaries in
// _output/local and the _output/bin link to them.
func writeMakeAll(t *testing.T, root string) {
	t.Helper()
	writeBuild(t, root, local, "amd64", elf.EM_X86_64)
	if err := os.Symlink(filepath.Join("local", "bin", "linux", "amd64"), filepath.Join(root, "_output", "bin")); err != nil {
		t.Fatal(err)
	}
}

// setAge sets the modification time of the kubeadm in
// _output/<where>/bin/linux/<arch> of root to age before a fixed time.
func setAge(t *testing.T, root, where, arch string, age time.Duration) {
	t.Helper()
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(-age)
	if err := os.Chtimes(filepath.Join(root, "_output", where, "bin", "linux", arch, "kubeadm"), when, when); err != nil {
		t.Fatal(err)
	}
}

// buildImages returns the images of writeReleaseImages for arch, sorted.
func buildImages(arch string) []string {
	var refs []string
	for _, name := range []string{"kube-apiserver", "kube-controller-manager", "kube-proxy", "kube-scheduler", "kubectl"} {
		refs = append(refs, "registry.k8s.io/"+name+"-"+arch+":"+buildTag)
	}
	sort.Strings(refs)
	return refs
}

// buildArchives are the archive names of writeReleaseImages, in the order
// Open finds them.
var buildArchives = []string{"kube-apiserver.tar", "kube-controller-manager.tar", "kube-proxy.tar", "kube-scheduler.tar", "kubectl.tar"}

// notThisArch returns n architectures other than this machine's.
func notThisArch(n int) []string {
	var arches []string
	for _, arch := range []string{"arm64", "s390x", "ppc64le"} {
		if arch != runtime.GOARCH && len(arches) < n {
			arches = append(arches, arch)
		}
	}
	return arches
}
