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
	"os"
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/graph"
)

// TestUpgradesSuiteFollowsTheCheckout: the key of the upgrade tests'
// binary is made of the files of every package of this checkout it links,
// pkg/cluster's among them (the step identifiers its checks match), and of
// no doc. (graph's TestGoPackagesFollowWhatTheBinaryLinks shows, on a
// module of the same shape, that editing such a file changes the key.)
func TestUpgradesSuiteFollowsTheCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("resolves k8s.io/kubernetes's packages: not in -short")
	}
	l, err := newLab("v1.36.3", "v1.37.2")
	if err != nil {
		t.Fatal(err)
	}
	e := l.suiteEntry()
	lines, err := e.Inputs["packages"].(graph.GoPackages).Lines(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var cluster, suite, docs int
	for _, line := range lines {
		switch {
		case strings.HasPrefix(line, "file github.com/kindupgrade/kind-upgrade/pkg/cluster/"):
			cluster++
		case strings.HasPrefix(line, "file github.com/kindupgrade/kind-upgrade/test/upgrades/suite/suite_test.go "):
			suite++
		}
		if strings.Contains(line, ".md ") {
			docs++
		}
	}
	if cluster == 0 || suite != 1 || docs != 0 {
		t.Errorf("the suite's inputs hold %d files of pkg/cluster (want some), the suite's test %d times (want 1), %d docs (want 0)", cluster, suite, docs)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "module k8s.io/kubernetes@") {
		t.Error("the suite's inputs do not name k8s.io/kubernetes's version")
	}
}

// TestRecipesReadOnlyWhatTheyDeclare: a bash recipe runs without E2E_DIR
// and without the caller's environment but for where things are, gets
// its declared environment, and every argument is an input of its entry.
func TestRecipesReadOnlyWhatTheyDeclare(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir+"/lib.sh", "E2E_DIR=/somewhere\n")
	writeFile(t, dir+"/r.sh", `build_reads_dir() { cat "${E2E_DIR}/x"; }
build_env() { printf '%s %s' "${DECLARED}" "${UNDECLARED:-unset}" >"$1/out"; }
`)
	writeFile(t, dir+"/input.txt", "one")
	t.Setenv("UNDECLARED", "leaked")
	l := &lab{e2eDir: dir, prefix: "test", store: &graph.Store{Dir: t.TempDir(), Graph: graph.New()}}
	scripts := script{"lib.sh", "r.sh"}
	if err := l.run(context.Background(), recipe{scripts: scripts, fn: "build_reads_dir"}, t.TempDir()); err == nil {
		t.Error("a recipe read E2E_DIR")
	}
	out := t.TempDir()
	r := recipe{scripts: scripts, fn: "build_env", args: []arg{file(dir + "/input.txt")}, env: map[string]arg{"DECLARED": lit("yes")}}
	if err := l.run(context.Background(), r, out); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, out+"/out"); got != "yes unset" {
		t.Errorf("the recipe saw %q, want the declared variable only", got)
	}
	key := func() string {
		k, err := graph.New().Key(context.Background(), l.entry("bin", "x", r, nil))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k0 := key()
	writeFile(t, dir+"/input.txt", "two")
	if key() == k0 {
		t.Error("editing a file given as an argument left the key")
	}
	k1 := key()
	r.env["DECLARED"] = lit("no")
	if key() == k1 {
		t.Error("changing a declared variable left the key")
	}
	k2 := key()
	writeFile(t, dir+"/r.sh", "# edited\n"+readFile(t, dir+"/r.sh"))
	if key() == k2 {
		t.Error("editing a recipe script left the key")
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestKeysDoNotDependOnTheCallersGoEnvironment: make exports other Go
// variables than a shell; the recipes set their own, so the key does too.
func TestKeysDoNotDependOnTheCallersGoEnvironment(t *testing.T) {
	l := &lab{e2eDir: t.TempDir(), prefix: "test"}
	r := recipe{scripts: script{}, fn: "build_x"}
	key := func() string {
		k, err := graph.New().Key(context.Background(), l.entry("bin", "x", r, nil))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	t.Setenv("CGO_ENABLED", "1")
	t.Setenv("GOFLAGS", "-mod=readonly")
	k1 := key()
	t.Setenv("CGO_ENABLED", "0")
	t.Setenv("GOFLAGS", "")
	if key() != k1 {
		t.Error("the caller's CGO_ENABLED and GOFLAGS changed the key")
	}
}
