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
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/graph"
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/host"
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

// testSpec is a recipe's spec for the tests below.
type testSpec struct {
	Version string
	Bin     host.Path
	Inputs  []host.Path
}

func testLab(t *testing.T) *lab {
	t.Helper()
	l, err := newLab("v1.36.3", "v1.37.2")
	if err != nil {
		t.Fatal(err)
	}
	l.store = &graph.Store{Dir: t.TempDir(), Graph: graph.New()}
	return l
}

func noBuild(context.Context, string, testSpec) error { return nil }

// TestRecipesReadOnlyWhatTheyDeclare: a spec naming a path of this machine
// that no declared input covers is refused; a declared file's content and
// the spec's values are in the key, where the file is is not (the helper
// programs are built into a new folder every run).
func TestRecipesReadOnlyWhatTheyDeclare(t *testing.T) {
	l := testLab(t)
	dir := t.TempDir()
	writeFile(t, dir+"/tool", "one")
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), dir+"/tool") {
				t.Errorf("an undeclared path was accepted (%v)", r)
			}
		}()
		recipeEntry(l, "bin", "x", "layout", testSpec{Bin: host.Path(dir + "/tool")}, nil, noBuild)
	}()
	other := &graph.Entry{Group: "bin", Name: "other", Inputs: map[string]graph.Input{"v": graph.Value("1")}}
	key := func(bin string, version string) string {
		t.Helper()
		tool := file(bin)
		e := recipeEntry(l, "bin", "x", "layout",
			testSpec{Version: version, Bin: tool.hp(), Inputs: []host.Path{l.entryIn(other, "sub", "file").hp()}},
			map[string]in{"tool": tool, "other": l.entryIn(other)}, noBuild)
		k, err := graph.New().Key(context.Background(), e)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k0 := key(dir+"/tool", "1")
	moved := t.TempDir()
	writeFile(t, moved+"/tool", "one")
	if key(moved+"/tool", "1") != k0 {
		t.Error("the same file in another folder changed the key")
	}
	writeFile(t, dir+"/tool", "two")
	if key(dir+"/tool", "1") == k0 {
		t.Error("editing a declared file left the key")
	}
	if key(moved+"/tool", "2") == key(moved+"/tool", "1") {
		t.Error("changing a value of the spec left the key")
	}
	k1 := key(moved+"/tool", "1")
	other.Inputs["v"] = graph.Value("2")
	if key(moved+"/tool", "1") == k1 {
		t.Error("another key of the entry a path lies in left the key")
	}
}

// TestEachRecipeIsItsOwnInput: an entry's recipe input is its package and
// what it links of the checkout, so that editing one recipe rebuilds only
// what it makes: the folder layouts do not link the image recipes, the
// small images do not link kind's base image or the node image, and the
// Go builds link neither.
func TestEachRecipeIsItsOwnInput(t *testing.T) {
	l := testLab(t)
	files := func(pkg string) map[string]bool {
		lines, err := graph.GoPackages{Dir: l.e2eDir, Patterns: []string{recipesDir + pkg}, Env: goEnv}.Lines(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, line := range lines {
			if f, ok := strings.CutPrefix(line, "file github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/"); ok {
				seen[strings.Fields(f)[0]] = true
			}
		}
		return seen
	}
	for pkg, want := range map[string][]string{
		"gobuild":   {"gobuild/gobuild.go", "host/host.go"},
		"layout":    {"layout/layout.go", "host/host.go"},
		"images":    {"images/images.go", "image/image.go"},
		"kindbase":  {"kindbase/kindbase.go", "image/image.go"},
		"nodeimage": {"nodeimage/nodeimage.go", "image/image.go"},
		"rootfs":    {"rootfs/rootfs.go"},
	} {
		got := files(pkg)
		for _, w := range want {
			if !got[w] {
				t.Errorf("%s's key does not hold %s (it holds %v)", pkg, w, got)
			}
		}
		for f := range got {
			if other := strings.Split(f, "/")[0]; other != pkg && other != "host" && other != "image" {
				t.Errorf("%s's key holds %s: editing that recipe would rebuild %s's entries", pkg, f, pkg)
			}
		}
	}
}

// TestRecipesReadNoEnvironment: the recipes' code calls nothing that reads
// the process's environment; what a recipe needs is in its spec. (Checked
// to fail on a recipe that calls os.Getenv.)
func TestRecipesReadNoEnvironment(t *testing.T) {
	dir := "recipes"
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, call := range environmentReads(t, p, src) {
			// the commands recipes run inherit the environment (PATH,
			// HOME, Go's and Docker's settings); host only passes it on
			if p == filepath.Join("recipes", "host", "host.go") && call == "os.Environ" {
				continue
			}
			t.Errorf("%s reads the environment (%s): put what it needs in its spec", p, call)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := environmentReads(t, "bad.go", []byte("package bad\nimport \"os\"\nfunc f() string { return os.Getenv(\"X\") + os.TempDir() }\n")); len(got) != 2 {
		t.Errorf("the check found %v in a recipe that reads two variables", got)
	}
}

// environmentReads are the calls of the os functions that read the
// environment in a Go file.
func environmentReads(t *testing.T, name string, src []byte) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), name, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "os" {
			switch sel.Sel.Name {
			case "Getenv", "LookupEnv", "Environ", "ExpandEnv", "TempDir", "UserHomeDir", "UserCacheDir":
				found = append(found, "os."+sel.Sel.Name)
			}
		}
		return true
	})
	return found
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestKeysDoNotDependOnTheCallersGoEnvironment: make exports other Go
// variables than a shell; the recipes set their own, so the key does too.
func TestKeysDoNotDependOnTheCallersGoEnvironment(t *testing.T) {
	l := testLab(t)
	key := func() string {
		k, err := graph.New().Key(context.Background(), recipeEntry(l, "bin", "x", "gobuild", testSpec{Version: "1"}, nil, noBuild))
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
