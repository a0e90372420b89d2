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
	"path/filepath"
	"testing"
)

// TestGoPackagesFollowWhatTheBinaryLinks: a test binary in one module
// that links, through a folder replace, a package of another (as
// test/upgrades links pkg/cluster of the checkout) is rebuilt when a file
// of that package changes, and not for a doc, an unlinked package or
// another package's test.
func TestGoPackagesFollowWhatTheBinaryLinks(t *testing.T) {
	root := t.TempDir()
	repo, suite := filepath.Join(root, "repo"), filepath.Join(root, "repo", "test", "upgrades")
	write(t, filepath.Join(repo, "go.mod"), "module example.com/repo\n\ngo 1.24\n")
	write(t, filepath.Join(repo, "pkg", "cluster", "events.go"), "package cluster\n\nconst Step = \"preflight\"\n")
	write(t, filepath.Join(repo, "pkg", "cluster", "events_test.go"), "package cluster\n")
	write(t, filepath.Join(repo, "pkg", "cluster", "README.md"), "events\n")
	write(t, filepath.Join(repo, "pkg", "other", "other.go"), "package other\n")
	write(t, filepath.Join(repo, "timeline", "timeline.go"), "package timeline\n\nimport \"example.com/repo/pkg/cluster\"\n\nvar Step = cluster.Step\n")
	write(t, filepath.Join(suite, "go.mod"), "module example.com/repo/test/upgrades\n\ngo 1.24\n\nrequire example.com/repo v0.0.0\n\nreplace example.com/repo => ../..\n")
	write(t, filepath.Join(suite, "suite", "suite_test.go"), "package suite\n\nimport (\n\t\"testing\"\n\n\t\"example.com/repo/timeline\"\n)\n\nfunc TestStep(t *testing.T) { _ = timeline.Step }\n")
	e := &Entry{Group: "bin", Name: "upgrades", Inputs: map[string]Input{
		"packages": GoPackages{Dir: suite, Patterns: []string{"./suite"}, Test: true, Env: []string{"GOFLAGS=-mod=mod", "GOWORK=off"}},
	}}
	k0 := key(t, e)
	same := map[string]func(){
		"a doc beside the package": func() { write(t, filepath.Join(repo, "pkg", "cluster", "README.md"), "more\n") },
		"an unlinked package":      func() { write(t, filepath.Join(repo, "pkg", "other", "other.go"), "package other\n\nvar X = 1\n") },
		"a test of a linked package": func() {
			write(t, filepath.Join(repo, "pkg", "cluster", "events_test.go"), "package cluster\n\nvar y = 2\n")
		},
	}
	for name, change := range same {
		change()
		if k := key(t, e); k != k0 {
			t.Errorf("editing %s changed the key", name)
		}
	}
	changed := []struct {
		name   string
		change func()
	}{
		{"a file of a package linked through another", func() {
			write(t, filepath.Join(repo, "pkg", "cluster", "events.go"), "package cluster\n\nconst Step = \"preflight/nodes\"\n")
		}},
		{"a file added to a linked package", func() { write(t, filepath.Join(repo, "pkg", "cluster", "more.go"), "package cluster\n") }},
		{"the suite's own test", func() {
			write(t, filepath.Join(suite, "suite", "suite_test.go"), "package suite\n\nimport (\n\t\"testing\"\n\n\t\"example.com/repo/timeline\"\n)\n\nfunc TestStep(t *testing.T) { _ = timeline.Step + \"x\" }\n")
		}},
		{"the suite's go.mod", func() {
			write(t, filepath.Join(suite, "go.mod"), "module example.com/repo/test/upgrades\n\ngo 1.24.0\n\nrequire example.com/repo v0.0.0\n\nreplace example.com/repo => ../..\n")
		}},
	}
	seen := map[string]bool{k0: true}
	for _, c := range changed {
		c.change()
		k := key(t, e)
		if seen[k] {
			t.Errorf("editing %s left the key as it was", c.name)
		}
		seen[k] = true
	}
	if _, err := New().Key(context.Background(), &Entry{Group: "bin", Name: "x", Inputs: map[string]Input{"p": GoPackages{Dir: suite, Patterns: []string{"./nope"}}}}); err == nil {
		t.Error("a pattern go list cannot resolve gave a key")
	}
}
