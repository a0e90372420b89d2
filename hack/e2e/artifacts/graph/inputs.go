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

// Package graph is the offline lab's build graph as data: each entry of
// the artifact cache declares the inputs its build reads, typed (a value,
// a file, a folder, the Go packages a binary links, a module at a
// version, a tool's version, another entry), and its key is the hash of
// what those inputs are now, resolved. Nothing is inferred from how a
// build is written: an entry is rebuilt exactly when something it
// declares changes, and Explain prints every input with its hash.
package graph

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Input is one thing a build reads. Resolve returns a digest of what it is
// now; equal digests mean an equal input, wherever the checkout or the
// cache is.
type Input interface {
	// Kind names the input's type: value, file, tree, go-packages,
	// module, tool or entry.
	Kind() string
	// String says what it is, for Explain.
	String() string
	Resolve(ctx context.Context, g *Graph) (string, error)
}

func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Value is a plain value: a version, a name, a flag.
type Value string

// Kind names the input's type.
func (Value) Kind() string { return "value" }

// String says what it names.
func (v Value) String() string { return string(v) }

// Resolve digests what it is now.
func (v Value) Resolve(context.Context, *Graph) (string, error) {
	return digest(string(v)), nil
}

// File is one file, by its content (not its path).
type File string

// Kind names the input's type.
func (File) Kind() string { return "file" }

// String says what it names.
func (f File) String() string { return string(f) }

// Resolve digests what it is now.
func (f File) Resolve(context.Context, *Graph) (string, error) {
	return fileDigest(string(f))
}

func fileDigest(path string) (string, error) {
	file, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer file.Close()
	h := sha256.New()
	if _, err := io.Copy(h, file); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// Tree is a folder, by the relative paths, modes and contents of its files
// (Skip leaves some out: tests and test data of a program's sources).
type Tree struct {
	Path string
	Skip func(rel string, d fs.DirEntry) bool
}

// Kind names the input's type.
func (Tree) Kind() string { return "tree" }

// String says what it names.
func (t Tree) String() string { return t.Path }

// Resolve digests what it is now.
func (t Tree) Resolve(context.Context, *Graph) (string, error) {
	var lines []string
	err := filepath.WalkDir(t.Path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(t.Path, p)
		if rel != "." && t.Skip != nil && t.Skip(filepath.ToSlash(rel), d) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			lines = append(lines, fmt.Sprintf("%s link %s", filepath.ToSlash(rel), target))
			return nil
		}
		sum, err := fileDigest(p)
		if err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("%s %o %s", filepath.ToSlash(rel), info.Mode().Perm()&0o111, sum))
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("failed to read the folder %s: %w", t.Path, err)
	}
	sort.Strings(lines)
	return digest(lines...), nil
}

// SkipTests leaves out Go tests and test data: what a program's build does
// not read.
func SkipTests(rel string, d fs.DirEntry) bool {
	name := d.Name()
	return (d.IsDir() && name == "testdata") || strings.HasSuffix(name, "_test.go")
}

// Module is a Go module at a version: immutable, so its name is its
// content.
type Module struct{ Path, Version string }

// Kind names the input's type.
func (Module) Kind() string { return "module" }

// String says what it names.
func (m Module) String() string { return m.Path + "@" + m.Version }

// Resolve digests what it is now.
func (m Module) Resolve(context.Context, *Graph) (string, error) {
	return digest(m.Path, m.Version), nil
}

// Tool is a program the build runs, by what Command prints (its
// version, or go env's answers).
type Tool struct {
	Name    string
	Command []string
	// Env is added to the caller's environment: the one the build runs in
	Env []string
}

// Kind names the input's type.
func (Tool) Kind() string { return "tool" }

// String says what it names.
func (t Tool) String() string { return t.Name + " (" + strings.Join(t.Command, " ") + ")" }

// Resolve digests what it is now.
func (t Tool) Resolve(ctx context.Context, g *Graph) (string, error) {
	return g.memo("tool "+strings.Join(t.Command, " ")+" "+strings.Join(t.Env, " "), func() (string, error) {
		cmd := exec.CommandContext(ctx, t.Command[0], t.Command[1:]...)
		cmd.Env = append(os.Environ(), t.Env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("%s: %w: %s", strings.Join(t.Command, " "), err, bytes.TrimSpace(out))
		}
		return digest(string(out)), nil
	})
}

// GoToolchain is the go command's version and target in the environment
// env (the one the build runs in), which every Go build reads.
func GoToolchain(env ...string) Tool {
	return Tool{Name: "go", Command: []string{"go", "env", "GOVERSION", "GOOS", "GOARCH", "CGO_ENABLED", "GOFLAGS", "GOEXPERIMENT"}, Env: env}
}

// GoPackages are the packages a Go binary links, as go list -deps (with
// -test, a test binary's) resolves them in the module at Dir: a package
// of a module at a version by that version, a package of the checkout
// (the main module or a folder replace) by its files. Editing any file
// such a binary is built from changes the digest; editing a doc, a test
// of another package or an unlinked package does not.
type GoPackages struct {
	Dir      string
	Patterns []string
	Test     bool
	// Env is added to the go command's (GOOS, CGO_ENABLED, tags...)
	Env []string
}

// Kind names the input's type.
func (GoPackages) Kind() string { return "go-packages" }

// String says what it names.
func (p GoPackages) String() string {
	test := ""
	if p.Test {
		test = " -test"
	}
	return fmt.Sprintf("go list -deps%s %s (in %s)", test, strings.Join(p.Patterns, " "), p.Dir)
}

type goModule struct {
	Path, Version, Dir, GoMod string
	Main                      bool
	Replace                   *goModule
}

type goPackage struct {
	ImportPath, Dir, ForTest string
	Standard                 bool
	Module                   *goModule
	GoFiles, CgoFiles, CFiles, HFiles, SFiles, SysoFiles, EmbedFiles,
	TestGoFiles, XTestGoFiles []string
}

// Resolve digests what it is now.
func (p GoPackages) Resolve(ctx context.Context, g *Graph) (string, error) {
	return g.memo("go-packages "+p.String()+" "+strings.Join(p.Env, " "), func() (string, error) {
		lines, err := p.Lines(ctx)
		if err != nil {
			return "", err
		}
		return digest(lines...), nil
	})
}

// Lines are what the digest is made of, sorted: "module PATH@VERSION" for
// a package of a module at a version, "file MODULE/REL DIGEST" for each
// file of a package of the checkout (and its module's go.mod and go.sum).
func (p GoPackages) Lines(ctx context.Context) ([]string, error) {
	args := []string{"list", "-deps", "-json"}
	if p.Test {
		args = append(args, "-test")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, p.Patterns...)...)
	cmd.Dir = p.Dir
	cmd.Env = append(os.Environ(), p.Env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list could not resolve %s: %w: %s", p, err, bytes.TrimSpace(stderr.Bytes()))
	}
	lines := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var pkg goPackage
		if err := dec.Decode(&pkg); err != nil {
			return nil, fmt.Errorf("go list -json printed no package: %w", err)
		}
		if pkg.Standard || pkg.Module == nil {
			continue
		}
		// named by the module's path; a replace says where and at what
		// version it is
		name, m := pkg.Module.Path, pkg.Module
		if m.Replace != nil {
			m = m.Replace
		}
		if m.Version != "" {
			lines[fmt.Sprintf("module %s@%s", name, m.Version)] = true
			continue
		}
		// a package of the checkout: by its files, relative to its module
		files := [][]string{pkg.GoFiles, pkg.CgoFiles, pkg.CFiles, pkg.HFiles, pkg.SFiles, pkg.SysoFiles, pkg.EmbedFiles}
		if pkg.ForTest != "" {
			files = append(files, pkg.TestGoFiles, pkg.XTestGoFiles)
		}
		rel, err := filepath.Rel(m.Dir, pkg.Dir)
		if err != nil || strings.HasPrefix(rel, "..") {
			// generated (a test main): made from the others
			continue
		}
		for _, list := range files {
			for _, f := range list {
				if filepath.IsAbs(f) {
					// generated by go (a test main): made from the others
					continue
				}
				sum, err := fileDigest(filepath.Join(pkg.Dir, f))
				if err != nil {
					return nil, err
				}
				lines[fmt.Sprintf("file %s %s", filepath.ToSlash(filepath.Join(name, rel, f)), sum)] = true
			}
		}
		for _, f := range []string{"go.mod", "go.sum"} {
			if sum, err := fileDigest(filepath.Join(m.Dir, f)); err == nil {
				lines[fmt.Sprintf("file %s/%s %s", name, f, sum)] = true
			}
		}
	}
	sorted := make([]string, 0, len(lines))
	for l := range lines {
		sorted = append(sorted, l)
	}
	sort.Strings(sorted)
	return sorted, nil
}

// Ref is another entry: its key.
type Ref struct{ Entry *Entry }

// Kind names the input's type.
func (Ref) Kind() string { return "entry" }

// String says what it names.
func (r Ref) String() string { return r.Entry.ID() }

// Resolve digests what it is now.
func (r Ref) Resolve(ctx context.Context, g *Graph) (string, error) {
	return g.Key(ctx, r.Entry)
}
