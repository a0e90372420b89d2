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

// Package staging says how to build against k8s.io/kubernetes from the Go
// module proxy: its go.mod replaces every staging module (k8s.io/api,
// k8s.io/client-go, ...) by one of its own folders, which a module that
// requires k8s.io/kubernetes cannot see; each is published as
// k8s.io/X v0.MINOR.PATCH, and a module that requires k8s.io/kubernetes
// replaces it by that version. The one place those replace lines are made.
package staging

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
)

// Replace is one staging module and the version it is published at.
type Replace struct {
	Path    string
	Version string
}

// Flag is the replace as a go mod edit flag.
func (r Replace) Flag() string {
	return fmt.Sprintf("-replace=%s=%s@%s", r.Path, r.Path, r.Version)
}

var release = regexp.MustCompile(`^v1\.([0-9]+)\.([0-9]+)$`)

// Replaces reads the go.mod of k8s.io/kubernetes at version (data) and
// returns the replace of each staging module it lists.
func Replaces(version string, data []byte) ([]Replace, error) {
	m := release.FindStringSubmatch(version)
	if m == nil {
		return nil, fmt.Errorf("bad Kubernetes version %q: want v1.MINOR.PATCH", version)
	}
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return nil, fmt.Errorf("go.mod of k8s.io/kubernetes@%s: %w", version, err)
	}
	published := fmt.Sprintf("v0.%s.%s", m[1], m[2])
	var out []Replace
	for _, r := range f.Replace {
		if !modfile.IsDirectoryPath(r.New.Path) {
			continue
		}
		if !strings.HasPrefix(r.New.Path, "./staging/src/"+r.Old.Path) {
			return nil, fmt.Errorf("go.mod of k8s.io/kubernetes@%s replaces %s by %s, not a staging folder", version, r.Old.Path, r.New.Path)
		}
		if err := module.Check(r.Old.Path, published); err != nil {
			return nil, err
		}
		out = append(out, Replace{Path: r.Old.Path, Version: published})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("go.mod of k8s.io/kubernetes@%s replaces no staging module", version)
	}
	return out, nil
}

// Download finds, through the go command (and so the module proxy), the
// go.mod of k8s.io/kubernetes at version and returns its replaces.
func Download(version string) ([]Replace, error) {
	cmd := exec.Command("go", "mod", "download", "-json", "k8s.io/kubernetes@"+version)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go mod download k8s.io/kubernetes@%s: %w", version, err)
	}
	var info struct {
		GoMod string
		Error string
	}
	if err := json.Unmarshal(out, &info); err != nil {
		return nil, fmt.Errorf("go mod download -json printed no module: %w", err)
	}
	if info.Error != "" || info.GoMod == "" {
		return nil, fmt.Errorf("go mod download k8s.io/kubernetes@%s: %s", version, info.Error)
	}
	data, err := os.ReadFile(info.GoMod)
	if err != nil {
		return nil, err
	}
	return Replaces(version, data)
}

// Retarget points the go.mod at path to k8s.io/kubernetes at version: its
// require, no replace of another version's staging modules, no indirect
// require, no require of a staging module that version does not have,
// and the replaces rs (Replaces of that version). go mod tidy is the
// caller's.
func Retarget(path, version string, rs []Replace) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	f, err := modfile.Parse(path, data, nil)
	if err != nil {
		return err
	}
	if err := f.AddRequire("k8s.io/kubernetes", version); err != nil {
		return err
	}
	for _, r := range f.Replace {
		if strings.HasPrefix(r.Old.Path, "k8s.io/") && r.Old.Path != "k8s.io/kubernetes" {
			if err := f.DropReplace(r.Old.Path, r.Old.Version); err != nil {
				return err
			}
		}
	}
	staged := map[string]bool{}
	for _, r := range rs {
		staged[r.Path] = true
		if err := f.AddReplace(r.Path, "", r.Path, r.Version); err != nil {
			return err
		}
	}
	// the indirect requires are the other version's needs (the newer
	// version's would win over what this one's code compiles with), and a
	// staging module of another version that this one does not have
	// (required at v0.0.0, as k8s.io/kubernetes requires its staging
	// modules) exists at no version: go mod tidy adds back what is needed
	for _, r := range f.Require {
		if r.Indirect || (strings.HasPrefix(r.Mod.Path, "k8s.io/") && r.Mod.Version == "v0.0.0" && !staged[r.Mod.Path]) {
			if err := f.DropRequire(r.Mod.Path); err != nil {
				return err
			}
		}
	}
	f.Cleanup()
	out, err := f.Format()
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}
