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

// Package layout lays out, from the lab's built binaries and image
// archives (hard links: entries are immutable), the inputs a user brings
// to `kind alpha upgrade` and to `kind build node-image`: a release
// tarball, a folder of images, a Kubernetes build tree, a folder of
// binaries, the archives the mirror serves.
package layout

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/host"
)

var nodeBinaries = []string{"kubeadm", "kubelet", "kubectl"}

// controlPlaneName is the image name a control-plane archive entry holds
var controlPlaneName = regexp.MustCompile(`^registry\.k8s\.io/([a-z-]+)-amd64:\S+$`)

// component is the component of the control-plane image archive in dir
// (kube-apiserver, ...), read from its image-names.
func component(dir host.Path) (string, error) {
	data, err := os.ReadFile(dir.Join("image-names"))
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(string(data), "\n")
	m := controlPlaneName.FindStringSubmatch(first)
	if m == nil {
		return "", fmt.Errorf("%s names %q, not registry.k8s.io/<component>-amd64:<version>", dir.Join("image-names"), first)
	}
	return m[1], nil
}

// ImageDirSpec is what `kind alpha upgrade --image-dir` takes: a
// release's kubernetes/server/bin (kubeadm, kubelet, kubectl, the
// control-plane archives and their .docker_tag) and, beside it, the etcd,
// CoreDNS and pause archives that change (a release has none).
type ImageDirSpec struct {
	Version              string
	Kube                 host.Path
	ControlPlane         []host.Path
	Etcd, CoreDNS, Pause host.Path `json:",omitempty"`
}

// ImageDir lays out an ImageDirSpec in out.
func ImageDir(_ context.Context, out string, s ImageDirSpec) error {
	bin := filepath.Join(out, "kubernetes", "server", "bin")
	if err := linkAll(s.Kube, nodeBinaries, bin); err != nil {
		return err
	}
	components, err := linkControlPlane(s.ControlPlane, bin)
	if err != nil {
		return err
	}
	for _, c := range components {
		if err := os.WriteFile(filepath.Join(bin, c+".docker_tag"), []byte(s.Version), 0o644); err != nil {
			return err
		}
	}
	for name, d := range map[string]host.Path{"etcd.tar": s.Etcd, "coredns.tar": s.CoreDNS, "pause.tar": s.Pause} {
		if d != "" {
			if err := host.LinkOrCopy(d.Join("image.tar"), filepath.Join(out, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// linkAll links each of names in the folder from into the folder to.
func linkAll(from host.Path, names []string, to string) error {
	for _, n := range names {
		if err := host.LinkOrCopy(from.Join(n), filepath.Join(to, n)); err != nil {
			return err
		}
	}
	return nil
}

// linkControlPlane links the control-plane image archive of each entry
// into dir as <component>.tar and returns the components.
func linkControlPlane(entries []host.Path, dir string) ([]string, error) {
	var components []string
	for _, d := range entries {
		c, err := component(d)
		if err != nil {
			return nil, err
		}
		if err := host.LinkOrCopy(d.Join("image.tar"), filepath.Join(dir, c+".tar")); err != nil {
			return nil, err
		}
		components = append(components, c)
	}
	return components, nil
}

// ReleaseSpec is what kind's builder takes:
// kubernetes-server-linux-amd64.tar.gz with kubernetes/version and
// kubernetes/server/bin/ holding kubeadm, kubelet, kubectl and the four
// control-plane image archives (+ .docker_tag), as a release has them.
type ReleaseSpec struct {
	Version      string
	Kube         host.Path
	ControlPlane []host.Path
}

// Release writes out/kubernetes-server-linux-amd64.tar.gz, streaming.
func Release(ctx context.Context, out string, s ReleaseSpec) error {
	tree := filepath.Join(out, ".tree")
	if err := ImageDir(ctx, tree, ImageDirSpec{Version: s.Version, Kube: s.Kube, ControlPlane: s.ControlPlane}); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tree, "kubernetes", "version"), []byte(s.Version+"\n"), 0o644); err != nil {
		return err
	}
	dst := filepath.Join(out, "kubernetes-server-linux-amd64.tar.gz")
	if err := writeTarGz(filepath.Join(tree, "kubernetes"), "kubernetes", dst+".part"); err != nil {
		return err
	}
	if err := os.Rename(dst+".part", dst); err != nil {
		return err
	}
	return os.RemoveAll(tree)
}

// writeTarGz packs the folder dir as name/ into a gzip'd tar at dst, owner
// root, fastest compression (kind's builder unpacks it right away).
func writeTarGz(dir, name, dst string) error {
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewWriterLevel(f, gzip.BestSpeed)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	var paths []string
	if err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		paths = append(paths, p)
		return err
	}); err != nil {
		return err
	}
	sort.Strings(paths)
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(fi, "")
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(filepath.Join(name, rel))
		if fi.IsDir() {
			h.Name += "/"
		}
		h.Uid, h.Gid, h.Uname, h.Gname = 0, 0, "", ""
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, in)
			in.Close()
			if err != nil {
				return fmt.Errorf("failed to pack %s: %w", p, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return f.Close()
}

// BinariesSpec is kubeadm, kubelet and kubectl only (a downgrade's folder).
type BinariesSpec struct{ Kube host.Path }

// Binaries lays out a BinariesSpec in out.
func Binaries(_ context.Context, out string, s BinariesSpec) error {
	return linkAll(s.Kube, nodeBinaries, out)
}

// TreeSpec is the _output/ folder a Kubernetes source tree has after `make
// quick-release` (the parts `kind alpha upgrade` reads): every server
// binary in _output/dockerized/bin/linux/amd64/ and the control-plane
// archives in _output/release-images/amd64/, plus what the user guide
// tells a maintainer to add there: kubeadm's pause image, which kind's
// nodes lack (a build makes no etcd, CoreDNS or pause archive).
type TreeSpec struct {
	Kube         host.Path
	ControlPlane []host.Path
	Pause        host.Path
}

var serverBinaries = []string{"kubeadm", "kubelet", "kubectl", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"}

// Tree lays out a TreeSpec in out.
func Tree(_ context.Context, out string, s TreeSpec) error {
	bin := filepath.Join(out, "_output", "dockerized", "bin", "linux", "amd64")
	images := filepath.Join(out, "_output", "release-images", "amd64")
	if err := linkAll(s.Kube, serverBinaries, bin); err != nil {
		return err
	}
	if _, err := linkControlPlane(s.ControlPlane, images); err != nil {
		return err
	}
	return host.LinkOrCopy(s.Pause.Join("image.tar"), filepath.Join(images, "pause.tar"))
}

// ArchivesSpec is a folder of image archives, each named after its entry.
type ArchivesSpec struct{ Entries []host.Path }

// Archives lays out an ArchivesSpec in out.
func Archives(_ context.Context, out string, s ArchivesSpec) error {
	for _, d := range s.Entries {
		if err := host.LinkOrCopy(d.Join("image.tar"), filepath.Join(out, filepath.Base(string(d))+".tar")); err != nil {
			return err
		}
	}
	return nil
}
