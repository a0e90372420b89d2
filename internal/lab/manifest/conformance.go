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

package manifest

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Conformance is what the lab builds for Kubernetes' own conformance tests
// around an upgrade (hack/e2e/build-artifacts.sh with E2E_CONFORMANCE=1),
// written beside the manifest of the same versions (ConformancePath).
type Conformance struct {
	From ConformanceSuite `json:"from"`
	To   ConformanceSuite `json:"to"`
}

// ConformanceSuite is the [sig-api-machinery] test binary built from one
// version's k8s.io/kubernetes (test/upgrades/conformance) and the test
// images its tests run, as a docker-archive.
type ConformanceSuite struct {
	Version       string `json:"version"`
	Binary        string `json:"binary"`
	ImagesArchive string `json:"imagesArchive"`
}

// ConformancePath is where the Conformance of the manifest at path is.
func ConformancePath(manifestPath string) string {
	return strings.TrimSuffix(manifestPath, ".json") + "-conformance.json"
}

// LoadConformance reads the Conformance at path; every field must be set.
func LoadConformance(path string) (*Conformance, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read the conformance suites' manifest (build them with E2E_CONFORMANCE=1 hack/e2e/build-artifacts.sh, as make e2e-compat does): %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var c Conformance
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s is not a conformance manifest: %w", path, err)
	}
	for _, s := range []ConformanceSuite{c.From, c.To} {
		if s.Version == "" || s.Binary == "" || s.ImagesArchive == "" {
			return nil, fmt.Errorf("%s: a suite lacks its version, binary or images archive", path)
		}
	}
	return &c, nil
}

// Write writes c to path, indented, whole or not at all.
func (c *Conformance) Write(path string) error {
	if err := writeJSON(path, c); err != nil {
		return fmt.Errorf("failed to write the conformance manifest: %w", err)
	}
	return nil
}
