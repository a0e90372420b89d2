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

// Package patches reads a folder of kubeadm patches (--patches) on the
// host with kubeadm's rules for their file names, so that a folder kubeadm
// would refuse, or read nothing from, is refused before anything changes.
package patches

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/yaml"
)

// baseTargets are what kubeadm patches, as a patch file's name begins;
// KubeProxyTarget comes with kubeadm v1.37.
var baseTargets = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubeletconfiguration", "corednsdeployment"}

// KubeProxyTarget is the kube-proxy DaemonSet's target.
const KubeProxyTarget = "kubeproxydaemonset"

// kubeProxySince is the first kubeadm that patches KubeProxyTarget.
var kubeProxySince = semver.MustParse("1.37.0-0")

// Types are the patch types a file name may give after "+"; without one,
// a patch is strategic.
var Types = []string{"json", "merge", "strategic"}

// Extensions are the extensions kubeadm reads.
var Extensions = []string{".json", ".yaml"}

// Targets returns the targets kubeadm at version patches.
func Targets(version *semver.Version) []string {
	targets := append([]string{}, baseTargets...)
	if !version.LessThan(kubeProxySince) {
		targets = append(targets, KubeProxyTarget)
	}
	return targets
}

// File is a patch file kubeadm reads.
type File struct {
	// Rel is its path in the folder, with "/" separators.
	Rel string
	// Target is what it patches, Type its patch type.
	Target, Type string
	Content      []byte
}

// Set is what kubeadm reads of a folder of patches.
type Set struct {
	// Dir is the folder, as given.
	Dir string
	// Files are the files kubeadm reads, in the order it reads them.
	Files []File
	// Ignored are the files kubeadm ignores, each with why.
	Ignored []string
	// Digest is the sha256 of the files' paths and contents: the same
	// patches, the same digest.
	Digest string
}

// Names lists the files' paths in the folder.
func (s *Set) Names() []string {
	var names []string
	for _, f := range s.Files {
		names = append(names, f.Rel)
	}
	return names
}

// Read reads dir as kubeadm at version reads a --patches folder: every
// file under it (sub-folders too, in lexical order) named
// <target>[suffix][+<type>].<json|yaml>. A file with another extension or
// target, or empty, is ignored, as kubeadm ignores it (with a warning). It
// refuses what kubeadm refuses: a "+" not followed by a patch type, a file
// that is not YAML or JSON; and a folder of which kubeadm would read no
// patch at all. name is how messages name the choice (--patches).
func Read(dir string, version *semver.Version, name string) (*Set, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, errors.Wrapf(err, "%s %s cannot be read", name, dir)
	}
	if !info.IsDir() {
		return nil, errors.Errorf("%s %s is not a folder: kubeadm reads patches from a folder", name, dir)
	}
	targets := Targets(version)
	set := &Set{Dir: dir}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		target, typ, ignore, err := ParseName(d.Name(), targets)
		if err != nil {
			return errors.Wrapf(err, "kubeadm v%s would refuse %s", version, rel)
		}
		if ignore != "" {
			set.Ignored = append(set.Ignored, rel+": "+ignore)
			return nil
		}
		content, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if len(content) == 0 {
			set.Ignored = append(set.Ignored, rel+": empty")
			return nil
		}
		if err := checkDocuments(content); err != nil {
			return errors.Wrapf(err, "kubeadm v%s would refuse %s", version, rel)
		}
		set.Files = append(set.Files, File{Rel: rel, Target: target, Type: typ, Content: content})
		return nil
	})
	if err != nil {
		return nil, errors.Wrapf(err, "%s %s", name, dir)
	}
	if len(set.Files) == 0 {
		ignored := ""
		if len(set.Ignored) > 0 {
			ignored = "; ignored: " + strings.Join(set.Ignored, ", ")
		}
		return nil, errors.Errorf("%s %s holds no patch kubeadm v%s would read: name each file <target>[suffix][+<type>]<extension>, target one of %s, type one of %s, extension %s%s",
			name, dir, version, strings.Join(targets, ", "), strings.Join(Types, ", "), strings.Join(Extensions, " or "), ignored)
	}
	set.Digest = digest(set.Files)
	return set, nil
}

// ParseName reads a patch file's name as kubeadm does: its target and
// patch type; or why kubeadm ignores the file (another extension, an
// unknown target); or an error for a name kubeadm refuses (a "+" not
// followed by a patch type).
func ParseName(name string, targets []string) (target, typ, ignore string, err error) {
	known := false
	for _, ext := range Extensions {
		known = known || (strings.HasSuffix(name, ext) && len(name) > len(ext))
	}
	if !known {
		return "", "", "the extension is not " + strings.Join(Extensions, " or "), nil
	}
	for _, t := range targets {
		if strings.HasPrefix(name, t) {
			target = t
			break
		}
	}
	if target == "" {
		return "", "", "no known target", nil
	}
	// the suffix runs to the first "." or "+"
	rest := name[len(target):]
	if i := strings.IndexAny(rest, ".+"); i >= 0 {
		rest = rest[i:]
	}
	if !strings.HasPrefix(rest, "+") {
		return target, "strategic", "", nil
	}
	for _, t := range Types {
		if strings.HasPrefix(rest[1:], t) {
			return target, t, "", nil
		}
	}
	return "", "", "", errors.Errorf("unknown or missing patch type after '+' in %q, must be one of %s", name, strings.Join(Types, ", "))
}

// checkDocuments checks that each of the documents of a patch file
// (separated by lines "---") is YAML or JSON, as kubeadm converts each to
// JSON.
func checkDocuments(content []byte) error {
	for i, doc := range splitDocuments(content) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		if _, err := yaml.YAMLToJSON(doc); err != nil {
			return errors.Wrapf(err, "its patch %d is neither YAML nor JSON", i+1)
		}
	}
	return nil
}

func splitDocuments(content []byte) [][]byte {
	var docs [][]byte
	var cur []byte
	for _, line := range bytes.SplitAfter(content, []byte("\n")) {
		if strings.TrimRight(string(line), " \t\r\n") == "---" {
			docs = append(docs, cur)
			cur = nil
			continue
		}
		cur = append(cur, line...)
	}
	return append(docs, cur)
}

// digest is the sha256 of the files' paths and contents.
func digest(files []File) string {
	sorted := append([]File{}, files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Rel < sorted[j].Rel })
	h := sha256.New()
	for _, f := range sorted {
		fmt.Fprintf(h, "%s\x00%d\x00", f.Rel, len(f.Content))
		h.Write(f.Content)
	}
	return hex.EncodeToString(h.Sum(nil))
}
