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
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/kindupgrade/kind-upgrade/internal/lab/kindtest"
)

// loadTestImages loads the images Kubernetes' upgrade tests run, and the
// canary their Service availability test runs, on every node: the e2e's
// clusters cannot pull them.
func (h *harness) loadTestImages() error {
	for _, archive := range []string{h.Manifest.TestImagesArchive, h.Manifest.CanaryArchive} {
		if _, err := h.Run(nil, h.Kind, "load", "image-archive", archive, "--name", h.Name); err != nil {
			return err
		}
	}
	return nil
}

// writeKubeconfig writes the cluster's kubeconfig for the host to the
// artifacts folder, for the test binaries, and returns its path.
func (h *harness) writeKubeconfig() (string, error) {
	kubeconfig := filepath.Join(h.Artifacts, "kubeconfig")
	out, err := h.RunStdout(h.Kind, "get", "kubeconfig", "--name", h.Name)
	if err != nil {
		return "", err
	}
	return kubeconfig, os.WriteFile(kubeconfig, []byte(out), 0o600)
}

// suiteRun is one run of Kubernetes' upgrade tests across kind alpha
// upgrade (test/upgrades, the manifest's upgradesSuite).
type suiteRun struct {
	// Events are the upgrade's --output json events.
	Events string
	// Cases are the junit_<prefix>upgrades.xml test cases: name -> ""
	// when it passed, its failure otherwise.
	Cases map[string]string
	// Figures are the availability tests' report lines.
	Figures []string
}

// suiteSpec says how the suite binary runs: the upgrade's type (master,
// node or cluster), the prefix of its reports under the artifacts and the
// longest API outage allowed (zero: the suite's own bound, from the
// number of control-plane nodes).
type suiteSpec struct {
	typ, prefix    string
	apiOutageBound time.Duration
}

// runUpgradeSuite runs the suite binary as spec says with kind alpha
// upgrade's upgradeArgs.
func (h *harness) runUpgradeSuite(spec suiteSpec, upgradeArgs ...string) (suiteRun, error) {
	var run suiteRun
	typ, prefix := spec.typ, spec.prefix
	kubeconfig, err := h.writeKubeconfig()
	if err != nil {
		return run, err
	}
	args := []string{
		"--kubeconfig", kubeconfig, "--report-dir", h.Artifacts, "--report-prefix", prefix,
		"--kind-cluster", h.Name, "--kind-binary", h.Kind, "--upgrade-type", typ, "--ginkgo.no-color",
	}
	if spec.apiOutageBound > 0 {
		args = append(args, "--api-outage-bound", spec.apiOutageBound.String())
	}
	args = append(append(args, "--"), upgradeArgs...)
	log, runErr := h.Run(nil, h.Manifest.UpgradesSuite, args...)
	kindtest.WriteFile(h.t, h.Artifacts, prefix+"suite.log", log)
	events, err := os.ReadFile(filepath.Join(h.Artifacts, "kind-upgrade-"+prefix+"events.jsonl"))
	if err == nil {
		run.Events = string(events)
	}
	for _, name := range []string{"kind-upgrade-api-probe", "kind-upgrade-service-probes"} {
		if data, err := os.ReadFile(filepath.Join(h.Artifacts, prefix+name+".txt")); err == nil {
			run.Figures = append(run.Figures, firstLine(string(data)))
		}
	}
	cases, err := readUpgradesJUnit(filepath.Join(h.Artifacts, "junit_"+prefix+"upgrades.xml"))
	run.Cases = cases
	if runErr != nil {
		return run, fmt.Errorf("%s upgrade tests failed (%s): %v", typ, describeCases(cases), lastLines(log, 30))
	}
	if err != nil {
		return run, err
	}
	return run, nil
}

// readUpgradesJUnit reads Kubernetes' junit_*upgrades.xml.
func readUpgradesJUnit(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the suite wrote no %s: %v", filepath.Base(path), err)
	}
	var suite struct {
		Cases []struct {
			Name     string `xml:"name,attr"`
			Failures []struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(data, &suite); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Base(path), err)
	}
	cases := map[string]string{}
	for _, c := range suite.Cases {
		cases[c.Name] = ""
		for _, f := range c.Failures {
			cases[c.Name] += f.Message
		}
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("%s holds no test case", filepath.Base(path))
	}
	return cases, nil
}

// describeCases is "N passed, M failed: names" of a junit's cases.
func describeCases(cases map[string]string) string {
	var passed, failed []string
	for name, failure := range cases {
		if failure == "" {
			passed = append(passed, name)
		} else {
			failed = append(failed, name)
		}
	}
	sort.Strings(passed)
	sort.Strings(failed)
	s := fmt.Sprintf("%d passed", len(passed))
	if len(failed) > 0 {
		s += fmt.Sprintf(", %d failed: %s", len(failed), strings.Join(failed, ", "))
	}
	return s
}
