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
// answers scripts what they need of the manifest and of other JSON.
//
//	artifacts build [-from V] [-to V]        the artifacts and the manifest (E2E_FROM, E2E_TO; v1.36.3 -> v1.37.2)
//	artifacts explain [-from V] [-to V] ENTRY  the same, then every input of ENTRY (group/name) with its digest, and its key
//	artifacts staging-retarget DIR VERSION   DIR/go.mod requires VERSION with its staging replaces (then go mod tidy)
//	artifacts manifest-field FILE KEY        one field of a manifest
//	artifacts json-field FILE KEY            a top-level field of any JSON object (a report's)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

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
		return nil, usage("build | explain | staging-retarget | manifest-field | json-field ...")
	}
	switch cmd, args := args[0], args[1:]; cmd {
	case "build", "explain":
		return buildCommand(cmd, args)
	case "staging-retarget":
		if len(args) != 2 {
			return nil, usage("staging-retarget MODULE_DIR VERSION")
		}
		rs, err := staging.Download(args[1])
		if err != nil {
			return nil, err
		}
		return nil, staging.Retarget(filepath.Join(args[0], "go.mod"), args[1], rs)
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

// buildCommand runs build or explain.
func buildCommand(cmd string, args []string) ([]string, error) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	from := fs.String("from", getenv("E2E_FROM", "v1.36.3"), "the version the e2e clusters start at")
	to := fs.String("to", getenv("E2E_TO", "v1.37.2"), "the version they are upgraded to")
	conformance := fs.Bool("conformance", getenv("E2E_CONFORMANCE", "") == "1", "also build Kubernetes' own [sig-api-machinery] tests of both versions and their images, listed in the manifest's -conformance.json")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if (cmd == "explain") != (fs.NArg() == 1) || fs.NArg() > 1 {
		return nil, usage("build [-from V] [-to V] [-conformance] | explain [-from V] [-to V] [-conformance] GROUP/NAME")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	l, err := newLab(*from, *to)
	if err != nil {
		return nil, err
	}
	l.conformance = *conformance
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

// jsonField is a field of the JSON object in path, as JSON prints it (a
// number, or a string without its quotes); a dotted key (to.binary) names
// a field of a nested object.
func jsonField(path, key string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	raw := json.RawMessage(data)
	for _, k := range strings.Split(key, ".") {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("%s: %s is not an object: %w", path, key, err)
		}
		var ok bool
		if raw, ok = obj[k]; !ok {
			return nil, fmt.Errorf("%s has no field %s", path, key)
		}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}, nil
	}
	return []string{string(raw)}, nil
}
