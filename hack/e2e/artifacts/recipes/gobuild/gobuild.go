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

// Package gobuild builds main packages of a Go module at a version, from
// the module proxy, in a scratch module: the recipe of every Go binary the
// lab does not build from this checkout (Kubernetes, etcd, CoreDNS,
// containerd, runc, crictl, the CNI plugins...).
package gobuild

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/host"
)

// Spec is one build. Its JSON is its entry's input.
type Spec struct {
	// Module and Version are required by the scratch module.
	Module, Version string
	// Replaces are `go mod edit -replace` values (OLD=NEW@VERSION).
	Replaces []string `json:",omitempty"`
	// Builds are the main packages to build (full import paths), each to
	// OUT/<last element>. Empty with MainFile.
	Builds []Group `json:",omitempty"`
	// MainFile, when set, is a main package of one file that imports the
	// module (CoreDNS's, with the plugins the lab wants), built to OUT/Name.
	MainFile host.Path `json:",omitempty"`
	Name     string    `json:",omitempty"`
	// Tags and LDFlags are go build's (-s -w always).
	Tags    string `json:",omitempty"`
	LDFlags string `json:",omitempty"`
	// Checks run a built binary and want a text in its output.
	Checks []Check `json:",omitempty"`
}

// Group is packages built by one go build, with cgo or without.
type Group struct {
	Packages []string
	CGO      bool `json:",omitempty"`
	// Name names the binary of a group of one package (go's default
	// drops a /vN suffix to the element before it: etcd's would be
	// "server").
	Name string `json:",omitempty"`
}

// Check is a self-check of a built binary: OUT/Bin Args... reports Want.
type Check struct {
	Bin  string
	Args []string
	Want string
	// Exact wants the output (trimmed) to be Want, not contain it
	Exact bool `json:",omitempty"`
}

// env is every go command's: this Go, a Linux amd64 binary, modules
// resolved as needed (scratch modules have no go.sum)
var env = []string{"GOTOOLCHAIN=local", "GOOS=linux", "GOARCH=amd64", "GOFLAGS=-mod=mod"}

// goVersion is the go line of the scratch modules.
const goVersion = "1.24.0"

// Build builds s into out.
func Build(ctx context.Context, out string, s Spec) error {
	if s.Module == "" || s.Version == "" || (len(s.Builds) == 0) == (s.MainFile == "") || (s.MainFile != "" && s.Name == "") {
		return fmt.Errorf("gobuild: a spec needs a module, a version and either packages or a main file and its name: %+v", s)
	}
	work := filepath.Join(out, ".work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	gomod := fmt.Sprintf("module kindupgrade.local/e2e/build\n\ngo %s\n\nrequire %s %s\n", goVersion, s.Module, s.Version)
	if err := os.WriteFile(filepath.Join(work, "go.mod"), []byte(gomod), 0o644); err != nil {
		return err
	}
	goCmd := func(cgo bool, args ...string) host.Command {
		e := append([]string{"CGO_ENABLED=0"}, env...)
		if cgo {
			e[0] = "CGO_ENABLED=1"
		}
		return host.Command{Dir: work, Env: e, Name: "go", Args: args}
	}
	if len(s.Replaces) > 0 {
		args := []string{"mod", "edit"}
		for _, r := range s.Replaces {
			args = append(args, "-replace="+r)
		}
		if err := host.Run(ctx, goCmd(false, args...)); err != nil {
			return err
		}
	}
	builds := s.Builds
	if s.MainFile != "" {
		data, err := os.ReadFile(string(s.MainFile))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(work, "main.go"), data, 0o644); err != nil {
			return err
		}
		builds = []Group{{Packages: []string{"."}}}
	} else {
		var b strings.Builder
		b.WriteString("//go:build tools\n\npackage tools\n\nimport (\n")
		for _, g := range s.Builds {
			for _, p := range g.Packages {
				fmt.Fprintf(&b, "\t_ %q\n", p)
			}
		}
		b.WriteString(")\n")
		if err := os.WriteFile(filepath.Join(work, "tools.go"), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	if err := host.Run(ctx, goCmd(false, "mod", "tidy")); err != nil {
		return err
	}
	ldflags := strings.TrimSpace("-s -w " + s.LDFlags)
	for _, g := range builds {
		target := out + "/"
		switch {
		case s.MainFile != "":
			target = filepath.Join(out, s.Name)
		case g.Name != "" && len(g.Packages) == 1:
			target = filepath.Join(out, g.Name)
		case g.Name != "":
			return fmt.Errorf("gobuild: a group of %d packages cannot be named %s", len(g.Packages), g.Name)
		}
		cgo := ""
		if g.CGO {
			cgo = " (cgo)"
		}
		host.Logf(ctx, "go build %s@%s%s: %s", s.Module, s.Version, cgo, strings.Join(g.Packages, " "))
		args := append([]string{"build", "-trimpath", "-tags", s.Tags, "-ldflags", ldflags, "-o", target}, g.Packages...)
		if err := host.Run(ctx, goCmd(g.CGO, args...)); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(work); err != nil {
		return err
	}
	for _, c := range s.Checks {
		cmd := host.Cmd(filepath.Join(out, c.Bin), c.Args...)
		if !c.Exact {
			if err := host.Reports(ctx, c.Want, cmd); err != nil {
				return err
			}
			continue
		}
		got, err := host.Output(ctx, cmd)
		if err != nil {
			return err
		}
		if got != c.Want {
			return fmt.Errorf("%s reports %q, want %q", cmd, got, c.Want)
		}
	}
	return nil
}
