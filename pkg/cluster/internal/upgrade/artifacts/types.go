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
	"cmp"
	"os"
	"slices"
	"sync/atomic"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts/imagearchive"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/imageref"
)

// Layout names what --image-dir pointed at.
type Layout string

const (
	// LayoutFlat is a folder holding kubeadm, kubelet, kubectl and any *.tar
	// image archives; a release's kubernetes/server/bin is one.
	LayoutFlat Layout = "flat"
	// LayoutReleaseTree is a parent of a release's server/bin:
	// <dir>/kubernetes/server/bin or <dir>/server/bin.
	LayoutReleaseTree Layout = "release-tree"
	// LayoutReleaseTarball is kubernetes-server-linux-<arch>.tar.gz, given
	// directly or as the only one in the given folder.
	LayoutReleaseTarball Layout = "release-tarball"
	// LayoutBuildTree is a Kubernetes source tree, or its _output folder,
	// after make quick-release (or make all and make quick-release-images):
	// the binaries of _output/dockerized/bin/linux/<arch> or
	// _output/local/bin/linux/<arch>, and the image archives of
	// _output/release-images/<arch>.
	LayoutBuildTree Layout = "build-tree"
	// LayoutArchives is a folder whose *.tar image archives are added to
	// another source's images (OpenArchives); its binaries, if any, are
	// not used.
	LayoutArchives Layout = "archives"
)

// Binaries are the binaries every --image-dir must hold, in the order they
// are reported and walked.
var Binaries = []string{"kubeadm", "kubelet", "kubectl"}

// Kind tells binaries from image archives.
type Kind string

const (
	// KindBinary is an executable: kubeadm, kubelet or kubectl.
	KindBinary Kind = "binary"
	// KindImageArchive is a docker-archive or OCI layout tar of images.
	KindImageArchive Kind = "image-archive"
)

// Artifact is one binary or image archive found in --image-dir.
type Artifact struct {
	// Name is the base name: "kubeadm", "kube-apiserver.tar", "etcd.tar".
	Name string
	// Path is for messages: the host path, or "<tarball>:<entry path>".
	Path string
	// Size is the size in bytes of the file or tarball entry.
	Size int64
	// Kind is KindBinary or KindImageArchive.
	Kind Kind
	// Mode holds the permission bits as stored.
	Mode os.FileMode
	// Arch is, for binaries, the GOARCH of the ELF header (amd64, arm64, arm,
	// ppc64le, s390x, 386, riscv64, ...), the ELF machine name (EM_...) for a
	// machine Go does not know, or "" if the file is not ELF. For image
	// archives it is the architecture in the images' configs when the archive
	// says and all its images agree, else "".
	Arch string
	// Images lists, for image archives, every image reference in the archive.
	Images []Image
	// Arches are, for image archives, the architectures of the images whose
	// content the archive holds, sorted ("" for an image whose config names
	// none).
	Arches []string
	// Partial is set for an image archive whose multi-platform index lists
	// platforms whose content it does not hold (written for one platform:
	// docker image save --platform, Docker 29's containerd image store,
	// podman save): it is imported for the node's platform, which must be
	// among Arches, rather than for all platforms.
	Partial bool

	// file is the host file holding the artifact; "" inside a tarball.
	file string
	// entry is the tar entry name, as stored, inside ImageDir.tarball.
	entry string
	// seq is the position in storage order.
	seq int
}

// Image is one image reference inside an archive.
type Image struct {
	// Ref is the reference as stored in the archive, for example
	// registry.k8s.io/kube-apiserver-amd64:v1.34.4 or busybox:latest.
	// imageref.Normalize gives the fully qualified form containerd uses.
	Ref string
	// Target is the name kubeadm expects: Ref with a trailing -<arch> removed
	// from the last element of the repository
	// (registry.k8s.io/kube-apiserver:v1.34.4); equal to Ref when there is no
	// such suffix.
	Target string
}

// setArchive records what imagearchive.Index read of the archive a.
func (a *Artifact) setArchive(info imagearchive.Info) {
	a.Arch = info.Arch
	a.Arches = info.Arches
	a.Partial = info.Partial
	a.Images = imagesOf(info.Refs)
}

// imagesOf returns the images of an archive that names refs.
func imagesOf(refs []string) []Image {
	images := make([]Image, 0, len(refs))
	for _, ref := range refs {
		images = append(images, Image{Ref: ref, Target: imageref.StripArchSuffix(ref)})
	}
	return images
}

// ImageDir is the indexed content of --image-dir. Its methods are safe for
// concurrent use; do not change its fields after Open.
type ImageDir struct {
	// Path is what the user gave.
	Path string
	// Layout is the layout Open detected.
	Layout Layout
	// choice is how messages name the folder's choice (name()).
	choice string
	// Binaries holds "kubeadm", "kubelet" and "kubectl".
	Binaries map[string]*Artifact
	// Archives holds the image archives in storage order.
	Archives []*Artifact

	// tarball is the host path of the release tarball, if any.
	tarball string
	// binDir is, for a build tree, the binaries folder Open picked, and why
	// says why when it had a choice.
	binDir string
	why    string
	// imagesDir is, for a build tree, the image archives folder Open looked
	// in; imagesMissing reports that it does not exist.
	imagesDir     string
	imagesMissing bool
	// unpackIn is where Open makes the folder it unpacks a release
	// tarball's artifacts to ("" for none: later walks decompress the
	// tarball again); unpacked is that folder, which Close removes.
	unpackIn string
	unpacked string
	// ignoredBinaries is set when a folder opened with OpenArchives holds
	// kubeadm, which is not used.
	ignoredBinaries bool
	// passes counts decompressions of the tarball (for tests).
	passes atomic.Int64
}

// ArchiveFor returns the first archive providing an image whose Target or
// Ref equals target, comparing fully qualified forms (so "busybox:latest"
// matches "docker.io/library/busybox:latest"), or nil if none does.
func (s *ImageDir) ArchiveFor(target string) *Artifact {
	return FindArchive(s.Archives, target)
}

// FindArchive returns the first of archives providing an image whose
// Target or Ref equals target, comparing fully qualified forms, or nil.
func FindArchive(archives []*Artifact, target string) *Artifact {
	want := imageref.Normalize(target)
	for _, a := range archives {
		for _, img := range a.Images {
			if img.Target == target || img.Ref == target ||
				imageref.Normalize(img.Target) == want || imageref.Normalize(img.Ref) == want {
				return a
			}
		}
	}
	return nil
}

// ordered returns the artifacts in storage order: the order of the
// tarball's entries, then host files.
func (s *ImageDir) ordered() []*Artifact {
	var all []*Artifact
	for _, name := range Binaries {
		if a := s.Binaries[name]; a != nil {
			all = append(all, a)
		}
	}
	all = append(all, s.Archives...)
	// stable: artifacts built outside Open all have seq 0 and keep the
	// order above
	slices.SortStableFunc(all, func(a, b *Artifact) int { return cmp.Compare(a.seq, b.seq) })
	return all
}
