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
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/staging"
)

// The recipes written in Go live in this file, which is an input of the
// entries they build (with the packages they use, as GoPackages).

// goEntry is an entry built by Go code of this file.
func (l *lab) goEntry(group, name string, inputs map[string]graph.Input, build func(ctx context.Context, out string) error) *graph.Entry {
	inputs["recipe"] = graph.File(filepath.Join(l.e2eDir, "artifacts", "gorecipes.go"))
	return &graph.Entry{Group: group, Name: name, Inputs: inputs, Build: build}
}

// helperPrograms are this repository's programs the lab puts in images.
var helperPrograms = []string{"pause", "canary", "mirror", "kindnetd", "envoy"}

// buildHelpers builds the helper programs into a folder of this run, every
// run: Go's build cache keys them, and entries that put one in an image
// declare the binary itself as an input.
func (l *lab) buildHelpers(ctx context.Context) error {
	dir, err := os.MkdirTemp(filepath.Join(l.store.Dir, "tmp"), "helpers.run.")
	if err != nil {
		return err
	}
	l.helpers = dir
	// no VCS stamp: a binary that changes with every commit would rebuild
	// every image it goes into
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w", "-o", dir + "/"}
	for _, p := range helperPrograms {
		args = append(args, "./"+p)
	}
	_, err = output(ctx, l.e2eDir, goEnv, "go", args...)
	return err
}

// suiteEntry is Kubernetes' upgrade tests across kind alpha upgrade
// (test/upgrades) built against k8s.io/kubernetes at the target: the test
// binary, agnhost from that module's source (for the test images) and
// images, the images the tests run (ROLE NAME lines). Its key follows
// every package the binary links, this checkout's by their files.
func (l *lab) suiteEntry() *graph.Entry {
	return l.testModuleEntry("upgrades-"+l.to, l.to, "./suite", "upgrades.test", nil)
}

// conformanceEntry is Kubernetes' own [sig-api-machinery] tests
// (test/upgrades/conformance) built against k8s.io/kubernetes v, with
// agnhost and images as suiteEntry's; the binary reports v as its version.
func (l *lab) conformanceEntry(v string) *graph.Entry {
	return l.testModuleEntry("conformance-"+v, v, "./conformance", "conformance.test",
		[]string{"-ldflags", "-X k8s.io/component-base/version.gitVersion=" + v})
}

// testModuleEntry builds the test package pkg of this repository's
// test/upgrades module against k8s.io/kubernetes v (a copy whose go.mod is
// retargeted when the module requires another version) into binary, with
// agnhost from that version's source and images, what `binary
// --list-kind-images` prints.
func (l *lab) testModuleEntry(name, v, pkg, binary string, flags []string) *graph.Entry {
	module := filepath.Join(l.repo, "test", "upgrades")
	return l.goEntry("bin", name, map[string]graph.Input{
		"packages":   graph.GoPackages{Dir: module, Patterns: []string{pkg}, Test: true, Env: goEnv},
		"kubernetes": graph.Module{Path: "k8s.io/kubernetes", Version: v},
		"staging":    graph.GoPackages{Dir: l.e2eDir, Patterns: []string{"./artifacts/staging"}, Env: goEnv},
		"go":         graph.GoToolchain(goEnv...),
	}, func(ctx context.Context, out string) error {
		work := filepath.Join(out, ".work")
		if err := os.CopyFS(work, os.DirFS(module)); err != nil {
			return fmt.Errorf("failed to copy %s: %w", module, err)
		}
		goIn := func(args ...string) (string, error) { return output(ctx, work, goEnv, "go", args...) }
		if _, err := goIn("mod", "edit", "-replace", "github.com/kindupgrade/kind-upgrade="+l.repo); err != nil {
			return err
		}
		committed, err := goIn("list", "-m", "-f", "{{.Version}}", "k8s.io/kubernetes")
		if err != nil {
			return err
		}
		if committed != v {
			l.logf("test/upgrades requires k8s.io/kubernetes %s: building a copy against %s", committed, v)
			rs, err := staging.Download(v)
			if err != nil {
				return err
			}
			if err := staging.Retarget(filepath.Join(work, "go.mod"), v, rs); err != nil {
				return err
			}
			if _, err := goIn("mod", "tidy"); err != nil {
				return err
			}
		}
		args := append(append([]string{"test", "-c", "-trimpath"}, flags...), "-o", filepath.Join(out, binary), pkg)
		if _, err := goIn(args...); err != nil {
			return err
		}
		if _, err := goIn("build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(out, "agnhost"), "k8s.io/kubernetes/test/images/agnhost"); err != nil {
			return err
		}
		if err := os.RemoveAll(work); err != nil {
			return err
		}
		images, err := exec.CommandContext(ctx, filepath.Join(out, binary), "--list-kind-images").Output()
		if err != nil || len(strings.TrimSpace(string(images))) == 0 {
			return fmt.Errorf("%s --list-kind-images listed nothing (%v)", binary, err)
		}
		return os.WriteFile(filepath.Join(out, "images"), images, 0o644)
	})
}
