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

// Command artifacts builds, offline, everything the upgrade e2e tests need
// for a version pair, and writes the artifacts' manifest, whose path is
// the one line it prints: the build graph (package graph) of the cache's
// entries, each keyed by the inputs it declares, made by the recipes in
// this folder (gorecipes.go) and hack/e2e's recipe scripts. It also
// answers scripts what they need of kind's recipe and of the manifest.
//
//	artifacts build [-from V] [-to V]        the artifacts and the manifest (E2E_FROM, E2E_TO; v1.36.3 -> v1.37.2)
//	artifacts explain [-from V] [-to V] ENTRY  the same, then every input of ENTRY (group/name) with its digest, and its key
//	artifacts kind-dir                       the sigs.k8s.io/kind module's folder (as the repository's go.mod requires it)
//	artifacts kind-base KIND_DIR arg NAME    an ARG default of kind's base Dockerfile
//	artifacts kind-base KIND_DIR suite       the Debian suite of its BASE_IMAGE
//	artifacts kind-base KIND_DIR packages    its base stage's clean-install packages, comma separated
//	artifacts kind-base KIND_DIR sandbox     the sandbox image of its containerd config
//	artifacts kind-const FILE NAME           a string constant of a Go file
//	artifacts staging-replaces VERSION       go mod edit -replace flags of VERSION's staging modules
//	artifacts staging-retarget DIR VERSION   DIR/go.mod requires VERSION with its staging replaces (then go mod tidy)
//	artifacts manifest-write FILE KEY VALUE...   the manifest, checked, written whole
//	artifacts manifest-field FILE KEY        one field of a manifest
//	artifacts json-field FILE KEY            a top-level field of any JSON object (a report's)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/kindrecipe"
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/staging"
	"github.com/kindupgrade/kind-upgrade/internal/lab/manifest"
)

func main() {
	out, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "artifacts: %v\n", err)
		os.Exit(1)
	}
	for _, line := range out {
		fmt.Println(line)
	}
}

func usage(what string) error {
	return fmt.Errorf("usage: artifacts %s", what)
}

func run(args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, usage("kind-dir | kind-base | kind-const | staging-replaces | manifest-write | manifest-field ...")
	}
	switch cmd, args := args[0], args[1:]; cmd {
	case "build", "explain":
		return buildCommand(cmd, args)
	case "kind-dir":
		if len(args) != 0 {
			return nil, usage("kind-dir")
		}
		return kindDir()
	case "kind-base":
		return kindBase(args)
	case "kind-const":
		if len(args) != 2 {
			return nil, usage("kind-const FILE NAME")
		}
		v, err := kindrecipe.GoConst(args[0], args[1])
		return []string{v}, err
	case "staging-replaces":
		if len(args) != 1 {
			return nil, usage("staging-replaces VERSION")
		}
		rs, err := staging.Download(args[0])
		if err != nil {
			return nil, err
		}
		var flags []string
		for _, r := range rs {
			flags = append(flags, r.Flag())
		}
		return flags, nil
	case "staging-retarget":
		if len(args) != 2 {
			return nil, usage("staging-retarget MODULE_DIR VERSION")
		}
		rs, err := staging.Download(args[1])
		if err != nil {
			return nil, err
		}
		return nil, staging.Retarget(filepath.Join(args[0], "go.mod"), args[1], rs)
	case "manifest-write":
		return nil, manifestWrite(args)
	case "manifest-field":
		if len(args) != 2 {
			return nil, usage("manifest-field FILE KEY")
		}
		m, err := manifest.Load(args[0])
		if err != nil {
			return nil, err
		}
		v, err := m.Field(args[1])
		return []string{v}, err
	case "json-field":
		if len(args) != 2 {
			return nil, usage("json-field FILE KEY")
		}
		return jsonField(args[0], args[1])
	default:
		return nil, fmt.Errorf("unknown command %q", cmd)
	}
}

// kindDir is the folder of sigs.k8s.io/kind at the version the
// repository's go.mod (two folders up from hack/e2e) requires.
func kindDir() ([]string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kind")
	cmd.Dir = filepath.Join("..", "..")
	if wd, err := os.Getwd(); err == nil && filepath.Base(wd) == "e2e" {
		cmd.Dir = filepath.Join(wd, "..", "..")
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		return nil, fmt.Errorf("go list -m sigs.k8s.io/kind found no module folder (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "images", "base", "Dockerfile")); err != nil {
		return nil, fmt.Errorf("the kind module at %s has no images/base/Dockerfile", dir)
	}
	return []string{dir}, nil
}

func kindBase(args []string) ([]string, error) {
	if len(args) < 2 {
		return nil, usage("kind-base KIND_DIR arg NAME | suite | packages | sandbox")
	}
	b, err := kindrecipe.ReadBase(args[0])
	if err != nil {
		return nil, err
	}
	switch what := args[1]; {
	case what == "arg" && len(args) == 3:
		v, err := b.Arg(args[2])
		return []string{v}, err
	case what == "suite" && len(args) == 2:
		return []string{b.Suite}, nil
	case what == "packages" && len(args) == 2:
		return []string{strings.Join(b.Packages, ",")}, nil
	case what == "sandbox" && len(args) == 2:
		return []string{b.SandboxImage}, nil
	default:
		return nil, usage("kind-base KIND_DIR arg NAME | suite | packages | sandbox")
	}
}

func manifestWrite(args []string) error {
	if len(args) < 1 || len(args)%2 != 1 {
		return usage("manifest-write FILE KEY VALUE...")
	}
	fields := map[string]string{}
	for i := 1; i < len(args); i += 2 {
		if _, dup := fields[args[i]]; dup {
			return fmt.Errorf("manifest field %s given twice", args[i])
		}
		fields[args[i]] = args[i+1]
	}
	m, err := manifest.Fields(fields)
	if err != nil {
		return fmt.Errorf("manifest %s: %w", args[0], err)
	}
	return m.Write(args[0])
}

// buildCommand runs build or explain.
func buildCommand(cmd string, args []string) ([]string, error) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	from := fs.String("from", getenv("E2E_FROM", "v1.36.3"), "the version the e2e clusters start at")
	to := fs.String("to", getenv("E2E_TO", "v1.37.2"), "the version they are upgraded to")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if (cmd == "explain") != (fs.NArg() == 1) || fs.NArg() > 1 {
		return nil, usage("build [-from V] [-to V] | explain [-from V] [-to V] GROUP/NAME")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	l, err := newLab(*from, *to)
	if err != nil {
		return nil, err
	}
	defer func() {
		if l.helpers != "" {
			os.RemoveAll(l.helpers)
		}
	}()
	_, path, err := l.build(ctx)
	if err != nil {
		return nil, err
	}
	if cmd == "build" {
		return []string{path}, nil
	}
	e, ok := l.entries[fs.Arg(0)]
	if !ok {
		var ids []string
		for id := range l.entries {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		return nil, fmt.Errorf("no entry %s; the entries are:\n  %s", fs.Arg(0), strings.Join(ids, "\n  "))
	}
	out, err := l.store.Graph.Explain(ctx, e)
	return []string{strings.TrimSuffix(out, "\n")}, err
}

// jsonField is a top-level field of the JSON object in path, as JSON
// prints it (a number, or a string without its quotes).
func jsonField(path, key string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	raw, ok := obj[key]
	if !ok {
		return nil, fmt.Errorf("%s has no field %s", path, key)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}, nil
	}
	return []string{string(raw)}, nil
}
