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
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/errors"
)

// buildOutputName is the folder a Kubernetes build writes to, in the root
// of the source tree.
const buildOutputName = "_output"

// buildBinDirs are where a Kubernetes build puts the Linux binaries, one
// <arch> folder each, relative to _output. make quick-release and make
// quick-release-images build in a container and copy the binaries out to
// dockerized/bin, and make the image archives from them; make all builds
// on the host into local/bin. The first is preferred when both have an
// equally new kubeadm, as the images match it.
var buildBinDirs = []string{
	filepath.Join("dockerized", "bin", "linux"),
	filepath.Join("local", "bin", "linux"),
}

// buildImagesDir is where make quick-release and make quick-release-images
// put the image archives, one <arch> folder each, relative to _output.
const buildImagesDir = "release-images"

// buildHelp says how to build what a build tree must hold.
const buildHelp = `build them with make quick-release, or with make all WHAT="cmd/kubeadm cmd/kubelet cmd/kubectl" and then make quick-release-images for the image archives`

// buildOutput returns the _output folder when dir is a Kubernetes source
// tree holding one or is such a folder itself (by its name or because it
// holds a build's folders), else "".
func buildOutput(dir string) string {
	if out := filepath.Join(dir, buildOutputName); isDir(out) {
		return out
	}
	if filepath.Base(dir) == buildOutputName {
		return dir
	}
	for _, sub := range append([]string{buildImagesDir}, buildBinDirs...) {
		if isDir(filepath.Join(dir, sub)) {
			return dir
		}
	}
	return ""
}

// openBuildTree indexes the build in out, the _output folder of the tree
// given as path, picking the build for goarch when there are builds for
// several architectures.
func openBuildTree(path, out, goarch, name string) (*ImageDir, error) {
	built, err := builtKubeadms(out)
	if err != nil {
		return nil, err
	}
	arch, err := pickArch(path, out, built, goarch, name)
	if err != nil {
		return nil, err
	}
	s := &ImageDir{Path: path, Layout: LayoutBuildTree}
	s.binDir, s.why, err = pickBinDir(built[arch])
	if err != nil {
		return nil, err
	}
	if others := otherArches(built, arch); len(others) > 0 {
		s.why = joinReasons(s.why, fmt.Sprintf("%s is this machine's architecture; the builds for %s are left out", arch, strings.Join(others, ", ")))
	}
	for _, name := range Binaries {
		if !exists(filepath.Join(s.binDir, name)) {
			return nil, errors.Errorf("%s not found in %s: %s", name, s.binDir, buildHelp)
		}
	}
	if err := s.indexBinaryFiles(s.binDir); err != nil {
		return nil, err
	}
	// a build without images is fine: preflight names the images missing
	s.imagesDir = filepath.Join(out, buildImagesDir, arch)
	if _, err := os.Stat(s.imagesDir); os.IsNotExist(err) {
		s.imagesMissing = true
		return s, nil
	}
	if err := s.indexArchiveFiles(s.imagesDir); err != nil {
		return nil, err
	}
	return s, nil
}

// builtKubeadms returns, by <arch>, the binaries folders of out that hold a
// kubeadm, in the order of buildBinDirs.
func builtKubeadms(out string) (map[string][]string, error) {
	built := map[string][]string{}
	for _, bin := range buildBinDirs {
		root := filepath.Join(out, bin)
		if !isDir(root) {
			continue
		}
		entries, err := os.ReadDir(root)
		if err != nil {
			return nil, errors.Wrapf(err, "failed to read %s", root)
		}
		for _, e := range entries {
			dir := filepath.Join(root, e.Name())
			if isDir(dir) && exists(filepath.Join(dir, "kubeadm")) {
				built[e.Name()] = append(built[e.Name()], dir)
			}
		}
	}
	return built, nil
}

// pickArch returns the only <arch> built, or goarch among several.
func pickArch(path, out string, built map[string][]string, goarch, name string) (string, error) {
	arches := sortedArches(built)
	switch {
	case len(arches) == 1:
		return arches[0], nil
	case len(arches) == 0:
		var looked []string
		for _, bin := range buildBinDirs {
			looked = append(looked, filepath.Join(out, bin, "<arch>"))
		}
		return "", errors.Errorf("%s %s is a Kubernetes build tree without a built kubeadm (looked in %s): %s", name, path, strings.Join(looked, " and "), buildHelp)
	case built[goarch] != nil:
		return goarch, nil
	}
	var dirs []string
	for _, arch := range arches {
		dirs = append(dirs, built[arch]...)
	}
	return "", errors.Errorf("%[1]s %[2]s holds kubeadm builds for several architectures and none for this machine's (%[3]s): %[4]s; remove the others, or give the folder of the one to use as %[1]s", name, path, goarch, strings.Join(dirs, ", "))
}

// pickBinDir returns the one of dirs whose kubeadm is the newest (the
// first of those equally new), and, when there was a choice, why.
func pickBinDir(dirs []string) (dir, why string, err error) {
	times := make([]time.Time, len(dirs))
	best := 0
	for i, d := range dirs {
		p := filepath.Join(d, "kubeadm")
		info, err := os.Stat(p)
		if err != nil {
			return "", "", errors.Wrapf(err, "failed to read %s", p)
		}
		times[i] = info.ModTime()
		if times[i].After(times[best]) {
			best = i
		}
	}
	for i, d := range dirs {
		if i == best {
			continue
		}
		than := "newer than"
		if times[i].Equal(times[best]) {
			than = "as new as"
		}
		why = joinReasons(why, fmt.Sprintf("its kubeadm is %s %s", than, filepath.Join(d, "kubeadm")))
	}
	return dirs[best], why, nil
}

// otherArches returns the <arch> built other than arch, sorted.
func otherArches(built map[string][]string, arch string) []string {
	var others []string
	for _, a := range sortedArches(built) {
		if a != arch {
			others = append(others, a)
		}
	}
	return others
}

// sortedArches returns the <arch> built, sorted.
func sortedArches(built map[string][]string) []string {
	arches := make([]string, 0, len(built))
	for arch := range built {
		arches = append(arches, arch)
	}
	sort.Strings(arches)
	return arches
}

// joinReasons joins two reasons with "; ", either of which may be "".
func joinReasons(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}
