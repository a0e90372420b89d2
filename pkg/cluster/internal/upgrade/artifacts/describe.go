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
	"path"
	"path/filepath"
	"strings"
)

// Describe says which files s uses: the headline names the folders Open
// picked where the layout left it a choice (see Picked); the details, for a
// log, the layout and the path given, then one line per folder the
// binaries come from and one per folder of image archives, naming the
// files used from each.
func (s *ImageDir) Describe() (string, []string) {
	return s.Picked(), s.details()
}

// details are Describe's lines for a log.
func (s *ImageDir) details() []string {
	lines := []string{s.name() + " " + s.Path + ": " + string(s.Layout) + " layout"}
	var binaries []*Artifact
	for _, name := range Binaries {
		if a := s.Binaries[name]; a != nil {
			binaries = append(binaries, a)
		}
	}
	for _, g := range s.byFolder(binaries) {
		line := strings.Join(g.names, ", ") + " from " + g.dir
		if g.dir == s.binDir && s.why != "" {
			line += " (" + s.why + ")"
		}
		lines = append(lines, line)
	}
	for _, g := range s.byFolder(s.Archives) {
		lines = append(lines, "image archives from "+g.dir+": "+strings.Join(g.names, ", "))
	}
	if len(s.Archives) == 0 {
		lines = append(lines, "no image archives"+s.imagesNote())
	}
	if s.ignoredBinaries {
		lines = append(lines, "its kubeadm, kubelet and kubectl are not used: the node image provides them")
	}
	return lines
}

// Picked returns one line naming the folders Open picked where the layout
// left it a choice (for a build tree: the binaries folder among several,
// and the image archives folder), or "" for the other layouts.
func (s *ImageDir) Picked() string {
	if s.Layout != LayoutBuildTree {
		return ""
	}
	binaries := s.binDir
	if s.why != "" {
		binaries += " (" + s.why + ")"
	}
	images := "image archives from " + s.imagesDir
	if s.imagesMissing || len(s.Archives) == 0 {
		images = "no image archives" + s.imagesNote()
	}
	return "Using the Kubernetes build in " + s.Path + ": binaries from " + binaries + ", " + images
}

// imagesNote explains, for a build tree, why it has no image archives.
func (s *ImageDir) imagesNote() string {
	switch {
	case s.imagesDir == "":
		return ""
	case s.imagesMissing:
		return " (" + s.imagesDir + " does not exist)"
	}
	return " (none in " + s.imagesDir + ")"
}

// folder is the artifacts of one folder, by name.
type folder struct {
	dir   string
	names []string
}

// byFolder groups artifacts by the folder holding them, in the order the
// folders first appear.
func (s *ImageDir) byFolder(artifacts []*Artifact) []*folder {
	var folders []*folder
	index := map[string]*folder{}
	for _, a := range artifacts {
		dir := s.folderOf(a)
		f := index[dir]
		if f == nil {
			f = &folder{dir: dir}
			index[dir] = f
			folders = append(folders, f)
		}
		f.names = append(f.names, a.Name)
	}
	return folders
}

// folderOf returns the folder holding a: a host folder, or
// "<tarball>:<folder>" inside the release tarball.
func (s *ImageDir) folderOf(a *Artifact) string {
	if a.entry != "" {
		return s.tarball + ":" + path.Dir(a.entry)
	}
	return filepath.Dir(a.Path)
}
