//go:build e2e

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

package e2e

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kindupgrade/kind-upgrade/internal/lab/kindtest"
	"github.com/kindupgrade/kind-upgrade/internal/lab/manifest"
)

// The tests' configuration: flags after -args (hack/e2e/run.sh passes
// them), nothing read from the environment but kind's ARTIFACTS.
var (
	manifestFlag  = flag.String("manifest", "", "the offline artifacts' manifest, as hack/e2e/build-artifacts.sh prints its path (required)")
	kindFlag      = flag.String("kind", "", "the kind binary with `kind alpha upgrade` (default: bin/kind of this checkout)")
	artifactsFlag = flag.String("artifacts", "", "where logs, reports and `kind export logs` go (default: $ARTIFACTS, else _artifacts of this checkout)")
	keepFlag      = flag.Bool("keep-cluster", false, "leave each test's cluster behind, to look at it")
	layoutFlag    = flag.String("image-dir-layout", "release", "the --image-dir TestIntegrationUpgrade upgrades from: release (a release-like folder) or build-tree (a Kubernetes build tree's _output/)")
	// the version matrix (hack/e2e/matrix.sh) gives these from other pairs' artifacts
	skippedMinorFlag  = flag.String("skipped-minor-image-dir", "", "an --image-dir two or more minors above the source: TestIntegrationUpgrade checks it is refused")
	cgroupRefusalFlag = flag.String("cgroup-refusal-image-dir", "", "binaries one minor above the target, v1.35 or later: on a cgroup v1 host, TestIntegrationUpgrade checks they are refused")
)

var (
	loaded   *manifest.Manifest
	loadErr  error
	loadOnce sync.Once
)

// integration is the skip helper every test here calls first, as kind's
// integration tests do: under -short it skips; otherwise it returns the
// artifacts' manifest, and fails the test when there is none (this
// package runs with `go test -tags e2e`, which make e2e and its siblings
// do through hack/e2e/run.sh).
func integration(t *testing.T) *manifest.Manifest {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs Docker and the offline artifacts (make e2e)")
	}
	loadOnce.Do(func() {
		if *manifestFlag == "" {
			loadErr = errors.New("no -manifest: run this test with make e2e (or hack/e2e/run.sh), which builds the offline artifacts and passes their manifest")
			return
		}
		loaded, loadErr = manifest.Load(*manifestFlag)
	})
	if loadErr != nil {
		t.Fatalf("%v", loadErr)
	}
	return loaded
}

// harness is the cluster a test drives (kindtest.Cluster) plus the
// checks of this package, as methods.
type harness struct {
	*kindtest.Cluster
	t *testing.T
}

// newHarness prepares the test's cluster name with nodeCount nodes; its
// artifacts go to the folder sub of the artifacts folder ("" for the
// folder itself).
func newHarness(t *testing.T, m *manifest.Manifest, name string, nodeCount int, sub string) *harness {
	t.Helper()
	return &harness{t: t, Cluster: kindtest.New(t, kindtest.Options{
		Kind:        kindBinary(t),
		Name:        name,
		NodeCount:   nodeCount,
		Artifacts:   filepath.Join(artifactsRoot(t), sub),
		Manifest:    m,
		KeepCluster: *keepFlag,
	})}
}

// repoRoot is this checkout: go test runs in the package's folder.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func kindBinary(t *testing.T) string {
	if *kindFlag != "" {
		return *kindFlag
	}
	return filepath.Join(repoRoot(t), "bin", "kind")
}

func artifactsRoot(t *testing.T) string {
	if *artifactsFlag != "" {
		return *artifactsFlag
	}
	if dir := os.Getenv("ARTIFACTS"); dir != "" {
		return dir
	}
	return filepath.Join(repoRoot(t), "_artifacts")
}

// imageDir is the --image-dir of the target, in the layout -image-dir-layout names.
func imageDir(t *testing.T, m *manifest.Manifest) string {
	t.Helper()
	switch *layoutFlag {
	case "release":
		return m.ImageDir
	case "build-tree":
		return m.BuildTree
	}
	t.Fatalf("-image-dir-layout must be release or build-tree, not %q", *layoutFlag)
	return ""
}

// firstLine is the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
