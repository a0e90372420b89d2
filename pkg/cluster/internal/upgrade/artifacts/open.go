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
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"sigs.k8s.io/kind/pkg/errors"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts/elfarch"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts/imagearchive"
)

// layoutsHelp ends the errors that mean the layout is wrong.
const layoutsHelp = "the folder must contain kubeadm, kubelet and kubectl (a release's kubernetes/server/bin, its parent, the kubernetes-server-linux-<arch>.tar.gz, a Kubernetes source tree after make quick-release, or a flat folder)"

// releaseBinDirs are where a release tree keeps its binaries, relative to
// the folder given, in the order they are looked for.
var releaseBinDirs = []string{
	filepath.Join("kubernetes", "server", "bin"),
	filepath.Join("server", "bin"),
}

// releaseTarballPattern matches a release tarball inside a folder.
const releaseTarballPattern = "kubernetes-server-linux-*.tar.gz"

// Open detects the layout of path, indexes the binaries and image archives
// it holds, and validates them: every required binary is present and
// executable, and every image archive is complete and names its images.
// It does not compare architectures: Artifact.Arch is for the caller to
// check against the nodes.
//
// The first rule that matches wins:
//  1. a *.tar.gz or *.tgz file: a release tarball, read from its
//     kubernetes/server/bin/ (or server/bin/);
//  2. a folder holding kubeadm: flat, with the *.tar beside it;
//  3. a folder holding kubernetes/server/bin/kubeadm or server/bin/kubeadm:
//     a release tree, with the *.tar of that bin and of the folder itself;
//  4. a folder holding one kubernetes-server-linux-*.tar.gz: that tarball,
//     with the *.tar of the folder;
//  5. a Kubernetes source tree holding _output, or that _output folder (by
//     its name or because it holds a build's folders): a build tree, with
//     the binaries of _output/dockerized/bin/linux/<arch> or
//     _output/local/bin/linux/<arch>, whichever has the newer kubeadm, and
//     the *.tar of _output/release-images/<arch>. With builds for several
//     architectures, <arch> is this machine's.
//
// Options: UnpackTarballIn, Named.
func Open(ctx context.Context, path string, options ...OpenOption) (*ImageDir, error) {
	name := choiceOf(options)
	if path == "" {
		return nil, errors.Errorf("%s is empty: %s", name, layoutsHelp)
	}
	info, err := os.Stat(path)
	if os.IsNotExist(err) {
		return nil, errors.Errorf("%s %s does not exist: %s", name, path, layoutsHelp)
	}
	if err != nil {
		return nil, errors.Wrapf(err, "failed to read %s %s", name, path)
	}
	var s *ImageDir
	if !info.IsDir() {
		if !isTarballName(path) {
			return nil, errors.Errorf("%s %s is a file but not a release tarball (*.tar.gz or *.tgz): %s", name, path, layoutsHelp)
		}
		s, err = openTarball(ctx, path, path, options)
	} else {
		s, err = openDir(ctx, path, name, options)
	}
	if err != nil {
		return nil, err
	}
	s.choice = name
	return s, nil
}

// Named makes messages name the folder's choice name (--image-dir by
// default).
func Named(name string) OpenOption {
	return func(s *ImageDir) { s.choice = name }
}

// choiceOf is the name options give the folder's choice.
func choiceOf(options []OpenOption) string {
	probe := &ImageDir{}
	for _, o := range options {
		o(probe)
	}
	return probe.name()
}

// name is how messages name the folder's choice.
func (s *ImageDir) name() string {
	if s.choice == "" {
		return "--image-dir"
	}
	return s.choice
}

// OpenArchives indexes the *.tar image archives of the folder dir, which
// add to the images of another source (a node image): it holds no
// binaries, and any it has are not used. A folder without archives is
// refused: it would add nothing.
//
// Options: Named.
func OpenArchives(dir string, options ...OpenOption) (*ImageDir, error) {
	name := choiceOf(options)
	info, err := os.Stat(dir)
	if os.IsNotExist(err) {
		return nil, errors.Errorf("%s %s does not exist: give a folder of image archives (*.tar) to add to the node image's images", name, dir)
	}
	if err != nil {
		return nil, errors.Wrapf(err, "failed to read %s %s", name, dir)
	}
	if !info.IsDir() {
		return nil, errors.Errorf("%s %s is not a folder: give a folder of image archives (*.tar) to add to the node image's images", name, dir)
	}
	s := &ImageDir{Path: dir, Layout: LayoutArchives, choice: name}
	if err := s.indexArchiveFiles(dir); err != nil {
		return nil, err
	}
	if len(s.Archives) == 0 {
		return nil, errors.Errorf("%s %s holds no image archives (*.tar): beside a node image, it adds archives to the image's images", name, dir)
	}
	s.ignoredBinaries = exists(filepath.Join(dir, "kubeadm"))
	return s, nil
}

// openTarball indexes the release tarball given as path, unpacking it when
// options say so.
func openTarball(ctx context.Context, path, tarball string, options []OpenOption) (*ImageDir, error) {
	s := &ImageDir{Path: path, Layout: LayoutReleaseTarball, tarball: tarball}
	for _, o := range options {
		o(s)
	}
	if s.unpackIn != "" {
		if err := s.makeUnpackDir(); err != nil {
			return nil, err
		}
	}
	if err := s.indexTarball(ctx, tarball); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// isTarballName reports whether a file name is that of a gzip tarball.
func isTarballName(name string) bool {
	return strings.HasSuffix(name, ".tar.gz") || strings.HasSuffix(name, ".tgz")
}

// openDir detects the layout of the folder dir and indexes it.
func openDir(ctx context.Context, dir, name string, options []OpenOption) (*ImageDir, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, errors.Wrapf(err, "failed to read %s %s", name, dir)
	}
	// a flat folder, including a release's server/bin itself
	if exists(filepath.Join(dir, "kubeadm")) {
		return openFolders(dir, LayoutFlat, dir)
	}
	// the parent of a release's server/bin: its binaries and archives, plus
	// archives added beside it
	for _, bin := range releaseBinDirs {
		if exists(filepath.Join(dir, bin, "kubeadm")) {
			return openFolders(dir, LayoutReleaseTree, filepath.Join(dir, bin), dir)
		}
	}
	// a release tarball, plus archives added beside it
	var tarballs []string
	for _, e := range entries {
		if ok, _ := filepath.Match(releaseTarballPattern, e.Name()); ok && !e.IsDir() {
			tarballs = append(tarballs, filepath.Join(dir, e.Name()))
		}
	}
	if len(tarballs) == 1 {
		s, err := openTarball(ctx, dir, tarballs[0], options)
		if err != nil {
			return nil, err
		}
		if err := s.indexArchiveFiles(dir); err != nil {
			_ = s.Close()
			return nil, err
		}
		return s, nil
	}
	if len(tarballs) > 1 {
		return nil, errors.Errorf("%[1]s %[2]s holds %[3]d release tarballs (%[4]s): give the one to use as %[1]s", name, dir, len(tarballs), strings.Join(tarballs, ", "))
	}
	// a Kubernetes source tree after a build, last: a source tree holds none
	// of the above, so this rule takes nothing from them
	if out := buildOutput(dir); out != "" {
		return openBuildTree(dir, out, runtime.GOARCH, name)
	}
	// no kubeadm anywhere: name the folder the user most likely meant
	for _, bin := range releaseBinDirs {
		if isDir(filepath.Join(dir, bin)) {
			return nil, notFound("kubeadm", filepath.Join(dir, bin))
		}
	}
	if exists(filepath.Join(dir, "kubelet")) || exists(filepath.Join(dir, "kubectl")) {
		return nil, notFound("kubeadm", dir)
	}
	return nil, errors.Errorf("%s %s has no known layout: %s", name, dir, layoutsHelp)
}

// notFound is the error for a required binary that is missing from where.
func notFound(binary, where string) error {
	return errors.Errorf("%s not found in %s: %s", binary, where, layoutsHelp)
}

// exists reports whether something is at path, following no symlink.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// isDir reports whether path is a folder.
func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// openFolders indexes the binaries in binDir and the image archives in
// binDir and then in each of extra.
func openFolders(path string, layout Layout, binDir string, extra ...string) (*ImageDir, error) {
	s := &ImageDir{Path: path, Layout: layout}
	if err := s.indexBinaryFiles(binDir); err != nil {
		return nil, err
	}
	for _, dir := range append([]string{binDir}, extra...) {
		if err := s.indexArchiveFiles(dir); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// indexBinaryFiles indexes the required binaries in the folder dir.
func (s *ImageDir) indexBinaryFiles(dir string) error {
	for _, name := range Binaries {
		a, err := binaryFile(name, dir)
		if err != nil {
			return err
		}
		s.add(a)
	}
	return nil
}

// add records a in s, in storage order.
func (s *ImageDir) add(a *Artifact) {
	a.seq = len(s.Binaries) + len(s.Archives) + 1
	if a.Kind == KindBinary {
		if s.Binaries == nil {
			s.Binaries = map[string]*Artifact{}
		}
		s.Binaries[a.Name] = a
		return
	}
	s.Archives = append(s.Archives, a)
}

// binaryFile indexes the required binary name in the folder dir.
func binaryFile(name, dir string) (*Artifact, error) {
	p := filepath.Join(dir, name)
	info, err := os.Stat(p)
	if os.IsNotExist(err) {
		return nil, notFound(name, dir)
	}
	if err != nil {
		return nil, errors.Wrapf(err, "failed to read %s", p)
	}
	if !info.Mode().IsRegular() {
		return nil, errors.Errorf("%s is not a file: it must be the %s binary", p, name)
	}
	if info.Mode().Perm()&0o111 == 0 {
		return nil, errors.Errorf("%s is not executable: run chmod +x %s", p, p)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, errors.Wrapf(err, "failed to open %s", p)
	}
	defer f.Close()
	arch, err := elfarch.Read(f)
	if err != nil {
		return nil, errors.Wrapf(err, "failed to read %s", p)
	}
	return &Artifact{
		Name: name,
		Path: p,
		Size: info.Size(),
		Kind: KindBinary,
		Mode: info.Mode().Perm(),
		Arch: arch,
		file: p,
	}, nil
}

// isArchiveName reports whether a base name is that of an image archive:
// *.tar, not hidden (which skips macOS "._" files).
func isArchiveName(name string) bool {
	return strings.HasSuffix(name, ".tar") && !strings.HasPrefix(name, ".")
}

// indexArchiveFiles indexes the *.tar files directly in dir, by name.
func (s *ImageDir) indexArchiveFiles(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return errors.Wrapf(err, "failed to read %s", dir)
	}
	for _, e := range entries {
		if !isArchiveName(e.Name()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		info, err := os.Stat(p)
		if err != nil {
			return errors.Wrapf(err, "failed to read image archive %s", p)
		}
		if !info.Mode().IsRegular() {
			continue
		}
		a, err := archiveFile(p, info)
		if err != nil {
			return err
		}
		s.add(a)
	}
	return nil
}

// archiveFile indexes the image archive at p.
func archiveFile(p string, info os.FileInfo) (*Artifact, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, errors.Wrapf(err, "failed to open image archive %s", p)
	}
	defer f.Close()
	// the tar reader seeks over the layers of an *os.File
	index, err := imagearchive.Index(f, p)
	if err != nil {
		return nil, err
	}
	a := &Artifact{
		Name: filepath.Base(p),
		Path: p,
		Size: info.Size(),
		Kind: KindImageArchive,
		Mode: info.Mode().Perm(),
		file: p,
	}
	a.setArchive(index)
	return a, nil
}
