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
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/internal/lab/kindtest"
	"github.com/kindupgrade/kind-upgrade/internal/lab/manifest"
)

var conformanceFlag = flag.String("conformance", "", "the conformance suites' manifest (hack/e2e/build-artifacts.sh with E2E_CONFORMANCE=1 writes it beside the artifacts' manifest): TestIntegrationUpgradeCompatibility runs each version's [sig-api-machinery] conformance tests at its step")

var chainConformanceFlag = flag.String("chain-conformance", "", "comma separated: the conformance suites' manifests of a chain's pairs (E2E_CONFORMANCE=1): TestIntegrationUpgradeChainEmulation runs, after each of its steps, the [sig-api-machinery] conformance tests of the version the control plane emulates")

// conformanceFocus and conformanceSkip choose the tests each conformance
// run runs: every [sig-api-machinery] conformance test, [Serial] ones too
// (the run is serial), but the Aggregator's, whose sample API server image
// the lab does not build. conformanceSkipSlow also leaves out the [Slow]
// ones, for a suite that runs the tests at four steps: of v1.34.4's to
// v1.37.2's [sig-api-machinery] conformance tests, only API chunking's
// "compacted away" test is [Slow], and it waits for etcd's compaction
// (558 s of a 1190 s run); make e2e-compat runs it at both its steps.
const (
	conformanceFocus    = `\[sig-api-machinery\].*\[Conformance\]`
	conformanceSkip     = `\[sig-api-machinery\] Aggregator`
	conformanceSkipSlow = conformanceSkip + `|\[Slow\]`
)

// conformanceTimeout bounds a run of a conformance suite (Ginkgo's
// --ginkgo.timeout; the command gets 5 minutes more).
const conformanceTimeout = 75 * time.Minute

// teeBuffer keeps what is written and copies it to w. (Not an embedded
// bytes.Buffer: io.Copy would use its ReadFrom and skip the copy.)
type teeBuffer struct {
	buf bytes.Buffer
	w   io.Writer
}

func (t *teeBuffer) Write(p []byte) (int, error) {
	t.w.Write(p) //nolint:errcheck // the copy is for reading along; the buffer is what the test reads
	return t.buf.Write(p)
}

func (t *teeBuffer) String() string { return t.buf.String() }

// chainConformanceSuites reads the -chain-conformance manifests: each
// version's suite by its minor; empty without the flag.
func chainConformanceSuites(t *testing.T) map[int]manifest.ConformanceSuite {
	suites := map[int]manifest.ConformanceSuite{}
	if *chainConformanceFlag == "" {
		return suites
	}
	for _, path := range strings.Split(*chainConformanceFlag, ",") {
		c, err := manifest.LoadConformance(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []manifest.ConformanceSuite{c.From, c.To} {
			suites[kindtest.MinorOf(s.Version)] = s
		}
	}
	return suites
}

// conformanceSuites reads the -conformance manifest; nil without the flag.
func conformanceSuites(t *testing.T) *manifest.Conformance {
	if *conformanceFlag == "" {
		return nil
	}
	c, err := manifest.LoadConformance(*conformanceFlag)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// conformanceResult is what a run of a conformance suite reported.
type conformanceResult struct {
	passed, skipped []string
	// failed: test name -> failure message
	failed map[string]string
}

func (r conformanceResult) String() string {
	s := fmt.Sprintf("%d passed, %d failed", len(r.passed), len(r.failed))
	if len(r.failed) > 0 {
		var names []string
		for n := range r.failed {
			names = append(names, n)
		}
		sort.Strings(names)
		s += ": " + strings.Join(names, "; ")
	}
	return s
}

// loadConformanceImages loads, on every node, the images s's tests run
// and kubeadm's pause image (the tests' pause pods use its name; the
// source's node image holds containerd's sandbox image, not kubeadm's
// pause).
func (h *harness) loadConformanceImages(s manifest.ConformanceSuite) error {
	archives := []string{s.ImagesArchive}
	extras, err := filepath.Glob(filepath.Join(h.Manifest.ImageExtrasDir, "*.tar"))
	if err != nil || len(extras) == 0 {
		return fmt.Errorf("no archive in %s (%v)", h.Manifest.ImageExtrasDir, err)
	}
	for _, a := range append(archives, extras...) {
		if _, err := h.Run(nil, h.Kind, "load", "image-archive", a, "--name", h.Name); err != nil {
			return err
		}
	}
	return nil
}

// runConformance runs s's [sig-api-machinery] conformance tests but those
// skip matches against the cluster, serially, their reports under the
// artifacts with prefix: junit_<prefix>01.xml and <prefix>conformance.log.
func (h *harness) runConformance(s manifest.ConformanceSuite, prefix, skip string) (conformanceResult, error) {
	kubeconfig, err := h.writeKubeconfig()
	if err != nil {
		return conformanceResult{}, err
	}
	// the suite's output as it comes, to follow a run that takes half an
	// hour
	f, err := os.Create(filepath.Join(h.Artifacts, prefix+"conformance.log"))
	if err != nil {
		return conformanceResult{}, err
	}
	defer f.Close()
	tee := &teeBuffer{w: f}
	timeout := h.Timeout
	h.Timeout = conformanceTimeout + 5*time.Minute
	defer func() { h.Timeout = timeout }()
	h.t.Logf("%s's conformance tests running: their output goes to %s", s.Version, f.Name())
	log, runErr := h.RunTo(tee, nil, nil, s.Binary,
		"--kubeconfig", kubeconfig, "--provider", "skeleton", "--report-dir", h.Artifacts, "--report-prefix", prefix,
		"--ginkgo.focus", conformanceFocus, "--ginkgo.skip", skip,
		"--ginkgo.no-color", "--ginkgo.timeout", conformanceTimeout.String())
	r, err := readJUnitOutcomes(filepath.Join(h.Artifacts, "junit_"+prefix+"01.xml"))
	if err != nil {
		return r, fmt.Errorf("%v; the suite: %v\n%s", err, runErr, lastLines(log, 30))
	}
	if runErr != nil || len(r.failed) > 0 || len(r.passed) == 0 {
		return r, fmt.Errorf("%s's [sig-api-machinery] conformance tests: %s (%v)", s.Version, r, runErr)
	}
	return r, nil
}

// readJUnitOutcomes reads a Ginkgo JUnit report: each spec passed,
// failed or skipped (Ginkgo lists the specs it did not run as skipped).
func readJUnitOutcomes(path string) (conformanceResult, error) {
	r := conformanceResult{failed: map[string]string{}}
	data, err := os.ReadFile(path)
	if err != nil {
		return r, fmt.Errorf("the suite wrote no %s: %v", filepath.Base(path), err)
	}
	var report struct {
		Suites []struct {
			Cases []junitCase `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &report); err != nil {
		return r, fmt.Errorf("%s: %v", filepath.Base(path), err)
	}
	for _, s := range report.Suites {
		for _, c := range s.Cases {
			switch {
			case c.Skipped != nil:
				r.skipped = append(r.skipped, c.Name)
			case len(c.Failures) > 0 || len(c.Errors) > 0:
				var msgs []string
				for _, f := range append(c.Failures, c.Errors...) {
					msgs = append(msgs, firstLine(f.Message))
				}
				r.failed[c.Name] = strings.Join(msgs, "; ")
			case !suiteNode(c.Name):
				r.passed = append(r.passed, c.Name)
			}
		}
	}
	return r, nil
}

// suiteNode: Ginkgo reports its suite-level nodes ([BeforeSuite],
// [SynchronizedAfterSuite], [ReportAfterSuite]...) as test cases too; they
// count when they fail, not as tests passed.
func suiteNode(name string) bool {
	for _, n := range []string{"[BeforeSuite]", "[AfterSuite]", "[SynchronizedBeforeSuite]", "[SynchronizedAfterSuite]", "[ReportBeforeSuite]", "[ReportAfterSuite]"} {
		if strings.HasPrefix(name, n) {
			return true
		}
	}
	return false
}

// junitCase is a test case of a JUnit report.
type junitCase struct {
	Name     string    `xml:"name,attr"`
	Skipped  *struct{} `xml:"skipped"`
	Failures []struct {
		Message string `xml:"message,attr"`
	} `xml:"failure"`
	Errors []struct {
		Message string `xml:"message,attr"`
	} `xml:"error"`
}

// conformanceStep loads s's images, runs its tests as the check named
// what and records the run (its wall time and the API's availability go
// to the report through runs).
func (h *harness) conformanceStep(s manifest.ConformanceSuite, prefix, skip string, runs *[]compatRun) {
	h.Must("load the images of "+s.Version+"'s conformance tests and kubeadm's pause on every node", func() error {
		return h.loadConformanceImages(s)
	})
	name := s.Version + "'s own [sig-api-machinery] conformance tests"
	h.Check(name+" pass", func() error {
		start := time.Now()
		r, err := h.runConformance(s, prefix, skip)
		*runs = append(*runs, compatRun{name: fmt.Sprintf("%s: %s", name, r), start: start, end: time.Now()})
		return err
	})
}

// TestTeeBufferCopiesWhatIOCopyWrites: the output copied from a command's
// pipe (io.Copy) reaches both the buffer and the file.
func TestTeeBufferCopiesWhatIOCopyWrites(t *testing.T) {
	var file bytes.Buffer
	tee := &teeBuffer{w: &file}
	if _, err := io.Copy(tee, strings.NewReader("Running Suite\n")); err != nil {
		t.Fatal(err)
	}
	if tee.String() != "Running Suite\n" || file.String() != "Running Suite\n" {
		t.Errorf("buffer %q, copy %q; want both %q", tee.String(), file.String(), "Running Suite\n")
	}
}

// TestReadJUnitOutcomes: Ginkgo's JUnit report read as passed, failed and
// skipped specs.
func TestReadJUnitOutcomes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junit_01.xml")
	report := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4" failures="1">
  <testsuite name="Kubernetes e2e suite" tests="4">
    <testcase name="[sig-api-machinery] a [Conformance]" time="1.5"></testcase>
    <testcase name="[sig-api-machinery] b [Conformance]"><failure message="timed out waiting">stack</failure></testcase>
    <testcase name="[sig-node] c"><skipped message="skipped"></skipped></testcase>
    <testcase name="[SynchronizedBeforeSuite]"></testcase>
  </testsuite>
</testsuites>`
	if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := readJUnitOutcomes(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.passed) != 1 || len(r.skipped) != 1 || r.failed["[sig-api-machinery] b [Conformance]"] != "timed out waiting" {
		t.Errorf("got %+v", r)
	}
	if got := r.String(); got != "1 passed, 1 failed: [sig-api-machinery] b [Conformance]" {
		t.Errorf("String() = %q", got)
	}
}
