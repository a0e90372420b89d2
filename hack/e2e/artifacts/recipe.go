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

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/graph"
)

// arg is one argument (or environment value) of a recipe: its text and
// the inputs it stands for, which join the entry's inputs, so that
// nothing reaches a recipe undeclared.
type arg struct {
	text   string
	inputs map[string]graph.Input
}

// lit is a plain value.
func lit(v string) arg { return arg{text: v, inputs: map[string]graph.Input{"": graph.Value(v)}} }

// path is a path the recipe reads, standing for input.
func path(p string, in graph.Input) arg {
	return arg{text: p, inputs: map[string]graph.Input{"": in}}
}

// file is a file the recipe reads, by its content.
func file(p string) arg { return path(p, graph.File(p)) }

// entryPath is a path inside another entry (or the entry itself).
func (l *lab) entryPath(e *graph.Entry, rel ...string) arg {
	return path(filepath.Join(append([]string{l.store.Path(e)}, rel...)...), graph.Ref{Entry: e})
}

// words joins several args with spaces, as one.
func words(args ...arg) arg {
	out := arg{inputs: map[string]graph.Input{}}
	var texts []string
	for i, a := range args {
		texts = append(texts, a.text)
		for k, in := range a.inputs {
			out.inputs[fmt.Sprintf("%d%s", i, k)] = in
		}
	}
	out.text = strings.Join(texts, " ")
	return out
}

// script is a set of recipe scripts: sourced in order, and each an input
// of every entry they build.
type script []string

// recipe is a bash recipe: FUNC OUT ARGS... of scripts, with env.
type recipe struct {
	scripts script
	fn      string
	args    []arg
	env     map[string]arg
}

// passThrough are the variables a recipe gets from the caller's
// environment: where things are (not what they are), so not inputs.
var passThrough = []string{"PATH", "HOME", "TMPDIR", "LANG", "GOPATH", "GOCACHE", "GOMODCACHE", "GOPROXY", "GONOSUMDB", "GONOSUMCHECK", "GOPRIVATE", "GOINSECURE", "GOSUMDB", "KIND_UPGRADE_E2E_CACHE", "XDG_CACHE_HOME", "DEBIAN_MIRROR", "DOCKER_HOST"}

// entry makes a cache entry of a bash recipe: its inputs are the scripts,
// the Go toolchain, the args and env, plus extra.
func (l *lab) entry(group, name string, r recipe, extra map[string]graph.Input) *graph.Entry {
	inputs := map[string]graph.Input{"go": graph.GoToolchain(goEnv...), "env E2E_IMAGE_PREFIX": graph.Value(l.prefix)}
	for i, s := range r.scripts {
		inputs[fmt.Sprintf("script%d", i)] = graph.File(filepath.Join(l.e2eDir, s))
	}
	inputs["recipe"] = graph.Value(r.fn)
	for i, a := range r.args {
		for k, in := range a.inputs {
			inputs[fmt.Sprintf("arg%d%s", i+1, k)] = in
		}
	}
	for n, a := range r.env {
		for k, in := range a.inputs {
			inputs["env "+n+k] = in
		}
	}
	for k, in := range extra {
		inputs[k] = in
	}
	return &graph.Entry{Group: group, Name: name, Inputs: inputs, Build: func(ctx context.Context, out string) error {
		return l.run(ctx, r, out)
	}}
}

// run runs the recipe with out as its first argument: bash with nounset,
// the declared scripts sourced, E2E_DIR unset (a recipe reads only what it
// is given), only the declared environment plus where things are.
func (l *lab) run(ctx context.Context, r recipe, out string) error {
	var b strings.Builder
	b.WriteString("set -o errexit -o nounset -o pipefail\n")
	for _, s := range r.scripts {
		fmt.Fprintf(&b, "source %q\n", filepath.Join(l.e2eDir, s))
		if s == "lib.sh" {
			b.WriteString("unset E2E_DIR\n")
		}
	}
	b.WriteString("\"$@\"\n")
	args := []string{"-c", b.String(), "recipe", r.fn, out}
	for _, a := range r.args {
		args = append(args, a.text)
	}
	cmd := exec.CommandContext(ctx, "bash", args...)
	for _, k := range passThrough {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	cmd.Env = append(cmd.Env, "E2E_IMAGE_PREFIX="+l.prefix)
	for k, a := range r.env {
		cmd.Env = append(cmd.Env, k+"="+a.text)
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", r.fn, err)
	}
	return nil
}
