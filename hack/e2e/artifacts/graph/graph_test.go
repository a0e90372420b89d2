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

package graph

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func key(t *testing.T, e *Entry) string {
	t.Helper()
	k, err := New().Key(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func entry(inputs map[string]Input) *Entry {
	return &Entry{Group: "bin", Name: "x", Inputs: inputs}
}

// TestEachKindOfInputChangesTheKey: for every kind of input, a change of
// what it is changes the key, and the same input elsewhere does not.
func TestEachKindOfInputChangesTheKey(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a", "f.txt"), "one")
	write(t, filepath.Join(dir, "a", "sub", "g.go"), "package sub")
	write(t, filepath.Join(dir, "a", "sub", "g_test.go"), "package sub")
	write(t, filepath.Join(dir, "b", "f.txt"), "one")
	write(t, filepath.Join(dir, "b", "sub", "g.go"), "package sub")
	write(t, filepath.Join(dir, "b", "sub", "g_test.go"), "package sub // another test")
	file, tree := File(filepath.Join(dir, "a", "f.txt")), Tree{Path: filepath.Join(dir, "a"), Skip: SkipTests}
	other := &Entry{Group: "bin", Name: "other", Inputs: map[string]Input{"v": Value("1")}}
	base := map[string]Input{"value": Value("v1.37.2"), "file": file, "tree": tree, "module": Module{"k8s.io/kubernetes", "v1.37.2"}, "tool": Tool{Name: "echo", Command: []string{"echo", "1"}}, "entry": Ref{other}}
	k0 := key(t, entry(base))
	if k0 != key(t, entry(base)) {
		t.Fatal("the same inputs gave two keys")
	}
	with := func(name string, in Input) map[string]Input {
		m := map[string]Input{}
		for k, v := range base {
			m[k] = v
		}
		m[name] = in
		return m
	}
	// where the checkout is, and a test beside a program, are not inputs
	if k := key(t, entry(with("tree", Tree{Path: filepath.Join(dir, "b"), Skip: SkipTests}))); k != k0 {
		t.Error("the same files in another folder (with another test) changed the key")
	}
	if k := key(t, entry(with("file", File(filepath.Join(dir, "b", "f.txt"))))); k != k0 {
		t.Error("the same file content elsewhere changed the key")
	}
	changes := map[string]func() map[string]Input{
		"a value":          func() map[string]Input { return with("value", Value("v1.37.3")) },
		"a module version": func() map[string]Input { return with("module", Module{"k8s.io/kubernetes", "v1.37.3"}) },
		"a tool's version": func() map[string]Input { return with("tool", Tool{Name: "echo", Command: []string{"echo", "2"}}) },
		"another entry's inputs": func() map[string]Input {
			return with("entry", Ref{&Entry{Group: "bin", Name: "other", Inputs: map[string]Input{"v": Value("2")}}})
		},
		"a file's content": func() map[string]Input { write(t, string(file), "two"); return base },
		"a file in a tree": func() map[string]Input {
			write(t, filepath.Join(dir, "a", "sub", "g.go"), "package sub\n")
			return base
		},
		"a file added to a tree": func() map[string]Input { write(t, filepath.Join(dir, "a", "h.txt"), ""); return base },
		"a file's mode in a tree": func() map[string]Input {
			if err := os.Chmod(filepath.Join(dir, "a", "h.txt"), 0o755); err != nil {
				t.Fatal(err)
			}
			return base
		},
		"an input added": func() map[string]Input { return with("another", Value("")) },
	}
	order := []string{"a value", "a module version", "a tool's version", "another entry's inputs", "an input added", "a file's content", "a file in a tree", "a file added to a tree", "a file's mode in a tree"}
	seen := map[string]string{k0: "the start"}
	for _, name := range order {
		k := key(t, entry(changes[name]()))
		if was, ok := seen[k]; ok {
			t.Errorf("changing %s left the key of %s", name, was)
		}
		seen[k] = name
	}
}

func TestExplainListsEveryInput(t *testing.T) {
	e := entry(map[string]Input{"version": Value("v1.37.2"), "module": Module{"k8s.io/kubernetes", "v1.37.2"}})
	out, err := New().Explain(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bin/x\n", "version", "value", "v1.37.2", "module", "k8s.io/kubernetes@v1.37.2", "key " + key(t, e)} {
		if !strings.Contains(out, want) {
			t.Errorf("Explain printed\n%s\nwithout %q", out, want)
		}
	}
}

// TestStoreBuildsOnceAndAgainWhenAnInputChanges, and a failed build
// leaves no entry.
func TestStoreBuildsOnceAndAgainWhenAnInputChanges(t *testing.T) {
	builds := 0
	fail := false
	version := Value("1")
	e := func() *Entry {
		return &Entry{Group: "bin/tool", Name: "v1", Inputs: map[string]Input{"version": version}, Build: func(_ context.Context, out string) error {
			builds++
			if fail {
				return errors.New("no")
			}
			return os.WriteFile(filepath.Join(out, "tool"), []byte(version), 0o644)
		}}
	}
	dir := t.TempDir()
	ensure := func() (string, error) {
		s := &Store{Dir: dir, Graph: New()}
		return s.Ensure(context.Background(), e())
	}
	for i := 0; i < 2; i++ {
		p, err := ensure()
		if err != nil {
			t.Fatal(err)
		}
		if p != filepath.Join(dir, "bin", "tool", "v1") {
			t.Errorf("entry at %s", p)
		}
	}
	if builds != 1 {
		t.Errorf("%d builds of an unchanged entry, want 1", builds)
	}
	version = "2"
	if _, err := ensure(); err != nil || builds != 2 {
		t.Errorf("after an input changed: %d builds, err %v", builds, err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "bin", "tool", "v1", "tool")); string(data) != "2" {
		t.Errorf("the entry holds %q after its rebuild", data)
	}
	version, fail = "3", true
	if _, err := ensure(); err == nil || !strings.Contains(err.Error(), "building bin/tool/v1 failed") {
		t.Errorf("a failed build: err = %v", err)
	}
	fail = false
	if _, err := ensure(); err != nil || builds != 4 {
		t.Errorf("after a failed build: %d builds, err %v", builds, err)
	}
	if olds, _ := filepath.Glob(filepath.Join(dir, "tmp", "*")); len(olds) != 0 {
		t.Errorf("left in tmp: %v", olds)
	}
	// an entry a Valid check refuses is built again
	invalid := e()
	invalid.Valid = func(string) bool { return false }
	if _, err := (&Store{Dir: dir, Graph: New()}).Ensure(context.Background(), invalid); err != nil || builds != 5 {
		t.Errorf("an invalid entry: %d builds, err %v", builds, err)
	}
}
