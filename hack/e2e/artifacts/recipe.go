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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/graph"
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/host"
)

// in is something of this machine a recipe reads: where it is and the
// input that stands for it (a file, a tree, another entry's folder, a
// module's folder, a tool).
type in struct {
	path  string
	input graph.Input
}

// file is a file of this machine, by its content.
func file(p string) in { return in{path: p, input: graph.File(p)} }

// pathOf is a path that input stands for.
func pathOf(p string, input graph.Input) in { return in{path: p, input: input} }

// entryIn is the folder of another entry (or a file in it), by its key.
func (l *lab) entryIn(e *graph.Entry, rel ...string) in {
	return in{path: filepath.Join(append([]string{l.store.Path(e)}, rel...)...), input: graph.Ref{Entry: e}}
}

// hp is the host.Path of a declared input, for a spec.
func (i in) hp() host.Path { return host.Path(i.path) }

// recipesDir is where the recipe packages are, below hack/e2e.
const recipesDir = "./artifacts/recipes/"

// recipeEntry is an entry that build, a function of the recipe package
// pkg, makes from spec. Its key is made of the package (every file of the
// checkout it links, so that editing one recipe rebuilds only the entries
// it makes), the spec's JSON, the Go toolchain and the declared inputs.
// A recipe reads the host only through the host.Paths of its spec, and
// each must lie in a declared input: recipeEntry panics on one that does
// not (a mistake in this program, caught by the first run of any test).
func recipeEntry[S any](l *lab, group, name, pkg string, spec S, declared map[string]in, build func(context.Context, string, S) error) *graph.Entry {
	if err := covered(spec, declared); err != nil {
		panic(fmt.Sprintf("entry %s/%s: %v", group, name, err))
	}
	data, err := specJSON(spec, declared)
	if err != nil {
		panic(fmt.Sprintf("entry %s/%s: %v", group, name, err))
	}
	inputs := map[string]graph.Input{
		"go":     graph.GoToolchain(goEnv...),
		"recipe": graph.GoPackages{Dir: l.e2eDir, Patterns: []string{recipesDir + pkg}, Env: goEnv},
		"spec":   graph.Value(data),
	}
	for n, d := range declared {
		inputs["in "+n] = d.input
	}
	return &graph.Entry{Group: group, Name: name, Inputs: inputs, Build: func(ctx context.Context, out string) error {
		return build(ctx, out, spec)
	}}
}

// specJSON is the spec's JSON with each declared input's path replaced by
// the input's name: the key holds what the input is (its own digest), not
// where it is (a run's helper folder, the module cache, the cache dir).
func specJSON(spec interface{}, declared map[string]in) ([]byte, error) {
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(declared))
	for n := range declared {
		if declared[n].path != "" {
			names = append(names, n)
		}
	}
	// longest first: a path inside another input's folder is named by its own
	sort.Slice(names, func(i, j int) bool {
		a, b := declared[names[i]].path, declared[names[j]].path
		return len(a) > len(b) || (len(a) == len(b) && names[i] < names[j])
	})
	for _, n := range names {
		quoted, err := json.Marshal(declared[n].path)
		if err != nil {
			return nil, err
		}
		data = bytes.ReplaceAll(data, quoted[1:len(quoted)-1], []byte("{in "+n+"}"))
	}
	return data, nil
}

// covered checks that every host.Path in spec lies in a declared input.
func covered(spec interface{}, declared map[string]in) error {
	var bad []string
	for _, p := range hostPaths(reflect.ValueOf(spec)) {
		ok := false
		for _, d := range declared {
			if d.path != "" && (string(p) == d.path || strings.HasPrefix(string(p), strings.TrimSuffix(d.path, "/")+"/")) {
				ok = true
				break
			}
		}
		if !ok {
			bad = append(bad, string(p))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("the spec reads %s, which no declared input covers", strings.Join(bad, ", "))
	}
	return nil
}

var hostPathType = reflect.TypeOf(host.Path(""))

// hostPaths are the non-empty host.Paths in v (fields, slices, maps,
// pointers).
func hostPaths(v reflect.Value) []host.Path {
	switch v.Kind() {
	case reflect.String:
		if v.Type() == hostPathType && v.String() != "" {
			return []host.Path{host.Path(v.String())}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return hostPaths(v.Elem())
		}
	case reflect.Struct:
		var out []host.Path
		for i := 0; i < v.NumField(); i++ {
			out = append(out, hostPaths(v.Field(i))...)
		}
		return out
	case reflect.Slice, reflect.Array:
		var out []host.Path
		for i := 0; i < v.Len(); i++ {
			out = append(out, hostPaths(v.Index(i))...)
		}
		return out
	case reflect.Map:
		var out []host.Path
		for _, k := range v.MapKeys() {
			out = append(out, hostPaths(v.MapIndex(k))...)
		}
		return out
	}
	return nil
}
