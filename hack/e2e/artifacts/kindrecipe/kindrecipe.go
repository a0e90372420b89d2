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

// Package kindrecipe reads the facts the offline lab takes from kind's own
// recipe in the sigs.k8s.io/kind module: the ARG defaults and Debian
// package list of its base image's Dockerfile, the sandbox image of its
// containerd config and the image names its node builder's Go constants
// give. Each reader parses its file with the format's own parser and fails,
// naming the file, on a shape it does not know, so that a kind bump that
// reshapes a file stops the build instead of yielding a partial answer.
package kindrecipe

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	dfparser "github.com/moby/buildkit/frontend/dockerfile/parser"
	"mvdan.cc/sh/v3/syntax"
)

// Base is what the lab rebuilds of kind's base image.
type Base struct {
	// Args are the defaults of every ARG the Dockerfile declares
	Args map[string]string
	// Suite is the Debian suite of its BASE_IMAGE (debian:trixie-slim:
	// trixie)
	Suite string
	// Packages are the Debian packages its base stage installs with
	// clean-install
	Packages []string
	// SandboxImage is the sandbox image of its containerd config
	SandboxImage string
}

// Arg is the default of ARG name, or an error naming the Dockerfile.
func (b *Base) Arg(name string) (string, error) {
	v, ok := b.Args[name]
	if !ok || v == "" {
		return "", fmt.Errorf("kind's base Dockerfile has no default for ARG %s", name)
	}
	return v, nil
}

// ReadBase reads images/base of the kind module at kindDir.
func ReadBase(kindDir string) (*Base, error) {
	dockerfile := filepath.Join(kindDir, "images", "base", "Dockerfile")
	data, err := os.ReadFile(dockerfile)
	if err != nil {
		return nil, fmt.Errorf("failed to read kind's base recipe: %w", err)
	}
	b, err := ParseDockerfile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dockerfile, err)
	}
	config := filepath.Join(kindDir, "images", "base", "files", "etc", "containerd", "config.toml")
	data, err = os.ReadFile(config)
	if err != nil {
		return nil, fmt.Errorf("failed to read kind's containerd config: %w", err)
	}
	if b.SandboxImage, err = SandboxImage(data); err != nil {
		return nil, fmt.Errorf("%s: %w", config, err)
	}
	return b, nil
}

// baseStage is the stage of kind's Dockerfile that becomes the image.
const baseStage = "base"

// ParseDockerfile reads the ARG defaults, the base image's suite and the
// base stage's clean-install packages of kind's base Dockerfile.
func ParseDockerfile(data []byte) (*Base, error) {
	res, err := dfparser.Parse(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("not a Dockerfile: %w", err)
	}
	stages, metaArgs, err := instructions.Parse(res.AST, nil)
	if err != nil {
		return nil, fmt.Errorf("not a Dockerfile: %w", err)
	}
	b := &Base{Args: map[string]string{}}
	addArgs := func(pairs []instructions.KeyValuePairOptional) error {
		for _, kv := range pairs {
			if kv.Value == nil {
				continue
			}
			v, err := shellWord(*kv.Value)
			if err != nil {
				return fmt.Errorf("ARG %s: %w", kv.Key, err)
			}
			if old, ok := b.Args[kv.Key]; ok && old != v {
				return fmt.Errorf("ARG %s has two defaults, %q and %q", kv.Key, old, v)
			}
			b.Args[kv.Key] = v
		}
		return nil
	}
	for _, a := range metaArgs {
		if err := addArgs(a.Args); err != nil {
			return nil, err
		}
	}
	var base *instructions.Stage
	for i := range stages {
		s := &stages[i]
		for _, c := range s.Commands {
			if a, ok := c.(*instructions.ArgCommand); ok {
				if err := addArgs(a.Args); err != nil {
					return nil, err
				}
			}
		}
		if s.Name == baseStage {
			base = s
		}
	}
	if base == nil {
		return nil, fmt.Errorf("no stage named %q", baseStage)
	}
	if base.BaseName != "$BASE_IMAGE" {
		return nil, fmt.Errorf("stage %q is FROM %s, not $BASE_IMAGE", baseStage, base.BaseName)
	}
	if b.Suite, err = debianSuite(b.Args["BASE_IMAGE"]); err != nil {
		return nil, err
	}
	for _, c := range base.Commands {
		run, ok := c.(*instructions.RunCommand)
		if !ok {
			continue
		}
		if !run.PrependShell || len(run.CmdLine) != 1 {
			return nil, fmt.Errorf("stage %q has a RUN in a form this reader does not know (line %d)", baseStage, run.Location()[0].Start.Line)
		}
		calls, err := cleanInstalls(run.CmdLine[0])
		if err != nil {
			return nil, fmt.Errorf("stage %q, RUN at line %d: %w", baseStage, run.Location()[0].Start.Line, err)
		}
		for _, pkgs := range calls {
			if b.Packages != nil {
				return nil, fmt.Errorf("stage %q runs clean-install more than once", baseStage)
			}
			b.Packages = pkgs
		}
	}
	if len(b.Packages) == 0 {
		return nil, fmt.Errorf("stage %q installs no packages with clean-install", baseStage)
	}
	return b, nil
}

// debianSuite is the suite of a Debian image reference:
// debian:trixie-slim is trixie.
func debianSuite(image string) (string, error) {
	repo, tag, ok := strings.Cut(image, ":")
	if !ok || (repo != "debian" && repo != "docker.io/library/debian") || tag == "" || strings.Contains(tag, "@") {
		return "", fmt.Errorf("BASE_IMAGE %q is not a debian:SUITE[-slim] image", image)
	}
	return strings.TrimSuffix(tag, "-slim"), nil
}

// cleanInstalls parses a RUN's shell and returns the arguments of each of
// its clean-install calls, which must all be plain words.
func cleanInstalls(script string) ([][]string, error) {
	f, err := syntax.NewParser().Parse(strings.NewReader(script), "")
	if err != nil {
		return nil, fmt.Errorf("not a shell script: %w", err)
	}
	var calls [][]string
	var walkErr error
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 || walkErr != nil {
			return true
		}
		if call.Args[0].Lit() != "clean-install" {
			return true
		}
		pkgs := []string{}
		for _, w := range call.Args[1:] {
			lit, err := plain(w)
			if err != nil {
				walkErr = fmt.Errorf("clean-install: %w", err)
				return false
			}
			pkgs = append(pkgs, lit)
		}
		calls = append(calls, pkgs)
		return true
	})
	return calls, walkErr
}

// SandboxImage is the sandbox image of a containerd config as kind writes
// it (config version 2: the CRI plugin's sandbox_image).
func SandboxImage(config []byte) (string, error) {
	var c struct {
		Version int                                  `toml:"version"`
		Plugins map[string]map[string]toml.Primitive `toml:"plugins"`
	}
	md, err := toml.Decode(string(config), &c)
	if err != nil {
		return "", fmt.Errorf("not a containerd config: %w", err)
	}
	if c.Version != 2 {
		return "", fmt.Errorf("containerd config version %d; this reader knows version 2", c.Version)
	}
	cri, ok := c.Plugins["io.containerd.grpc.v1.cri"]
	if !ok {
		return "", fmt.Errorf("no [plugins.\"io.containerd.grpc.v1.cri\"] table")
	}
	p, ok := cri["sandbox_image"]
	if !ok {
		return "", fmt.Errorf("the CRI plugin sets no sandbox_image")
	}
	var image string
	if err := md.PrimitiveDecode(p, &image); err != nil || image == "" {
		return "", fmt.Errorf("the CRI plugin's sandbox_image is not a string")
	}
	return image, nil
}

// GoConst is the value of the package-level string constant name in the
// Go file at path.
func GoConst(path, name string) (string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return "", fmt.Errorf("failed to parse %s: %w", path, err)
	}
	var found []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, id := range vs.Names {
				if id.Name != name {
					continue
				}
				if i >= len(vs.Values) {
					return "", fmt.Errorf("%s: const %s has no value of its own", path, name)
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return "", fmt.Errorf("%s: const %s is not a string literal", path, name)
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil {
					return "", fmt.Errorf("%s: const %s: %w", path, name, err)
				}
				found = append(found, v)
			}
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("%s: %d constants named %s, want 1", path, len(found), name)
	}
	return found[0], nil
}

// shellWord is the value of one shell word (an ARG default as written:
// v2.3.4, "v2.3.4" or 'v2.3.4'), which must be plain text.
func shellWord(s string) (string, error) {
	f, err := syntax.NewParser().Parse(strings.NewReader("_ "+s), "")
	if err != nil || len(f.Stmts) != 1 {
		return "", fmt.Errorf("%q is not one shell word", s)
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) != 2 {
		return "", fmt.Errorf("%q is not one shell word", s)
	}
	return plain(call.Args[1])
}

// plain is the text of a word made of literals and quoted literals only:
// anything the shell would expand is refused.
func plain(w *syntax.Word) (string, error) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", fmt.Errorf("the word at %s expands something", w.Pos())
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", fmt.Errorf("the word at %s expands something", w.Pos())
		}
	}
	return b.String(), nil
}
