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
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// written is a manifest as Write writes it.
const written = `{
  "from": "v1.36.3",
  "to": "v1.37.2",
  "nodeImage": "kind-upgrade-e2e/node:v1.36.3",
  "targetNodeImage": "kind-upgrade-e2e/node:v1.37.2",
  "imageExtrasDir": "/cache/artifacts/extras-v1.37.2",
  "targetRelease": "/cache/artifacts/release-v1.37.2/kubernetes-server-linux-amd64.tar.gz",
  "mirrorImage": "kind-upgrade-e2e/registry-mirror:v1",
  "mirrorCA": "/cache/certs/mirror-ca",
  "pullArchives": "/cache/artifacts/pull-v1.37.2",
  "imageDir": "/cache/artifacts/v1.37.2-from-v1.36.3",
  "buildTree": "/cache/artifacts/tree-v1.37.2",
  "downgradeImageDir": "/cache/artifacts/binaries-v1.36.3",
  "sourceRelease": "/cache/artifacts/release-v1.36.3/kubernetes-server-linux-amd64.tar.gz",
  "fromEtcdImage": "registry.k8s.io/etcd:3.6.5-0",
  "fromCoreDNSImage": "registry.k8s.io/coredns/coredns:v1.13.1",
  "fromPauseImage": "registry.k8s.io/pause:3.10.1",
  "toEtcdImage": "registry.k8s.io/etcd:3.6.6-0",
  "toCoreDNSImage": "registry.k8s.io/coredns/coredns:v1.13.1",
  "toPauseImage": "registry.k8s.io/pause:3.10.1",
  "canaryImage": "kind-upgrade-e2e/canary:v1",
  "canaryArchive": "/cache/images/canary_v1/image.tar",
  "upgradesSuite": "/cache/bin/upgrades-v1.34.4/upgrades.test",
  "testImagesArchive": "/cache/images/test-images-v1.34.4/image.tar",
  "kubectl": "/cache/bin/kubernetes/v1.36.3/kubectl"
}
`

func TestLoadReadsWhatTheScriptWrites(t *testing.T) {
	p := filepath.Join(t.TempDir(), "v1.36.3-to-v1.37.2.json")
	if err := os.WriteFile(p, []byte(written), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if m.From != "v1.36.3" || m.To != "v1.37.2" || m.NodeImage != "kind-upgrade-e2e/node:v1.36.3" || m.Kubectl != "/cache/bin/kubernetes/v1.36.3/kubectl" {
		t.Errorf("read %+v", m)
	}
	if got, want := m.UnchangedImages(), []string{"registry.k8s.io/coredns/coredns:v1.13.1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("UnchangedImages() = %v, want %v", got, want)
	}
	if m.Pair() != "v1.36.3-to-v1.37.2" {
		t.Errorf("Pair() = %q", m.Pair())
	}
}

func TestParseRefusesIncompleteOrForeignManifests(t *testing.T) {
	cases := []struct {
		name, content, want string
	}{
		{"a field missing", strings.Replace(written, `  "buildTree": "/cache/artifacts/tree-v1.37.2",`+"\n", "", 1), "missing buildTree"},
		{"a field empty", strings.Replace(written, `"v1.37.2",`, `"",`, 1), "missing to"},
		{"an unknown field", strings.Replace(written, `"from":`, `"fromVersion": "x", "from":`, 1), "unknown field"},
		{"not JSON", "NODE_IMAGE=kind-upgrade-e2e/node:v1.36.3\n", "not a manifest"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.content))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Parse: err = %v, want one containing %q", err, c.want)
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "absent.json")); err == nil || !strings.Contains(err.Error(), "build-artifacts.sh") {
		t.Errorf("Load of a missing file: err = %v, want one naming build-artifacts.sh", err)
	}
}

func TestWriteWritesWhatLoadReads(t *testing.T) {
	var fields map[string]string
	if err := json.Unmarshal([]byte(written), &fields); err != nil {
		t.Fatal(err)
	}
	m, err := Parse([]byte(written))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "manifests", "v1.36.3-to-v1.37.2.json")
	if err := m.Write(p); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != written {
		t.Errorf("Write wrote\n%s\nwant\n%s", data, written)
	}
	if got, err := m.Field("buildTree"); err != nil || got != "/cache/artifacts/tree-v1.37.2" {
		t.Errorf(`Field("buildTree") = %q, %v`, got, err)
	}
	if _, err := m.Field("BuildTree"); err == nil {
		t.Error(`Field("BuildTree") found a field: only JSON names are fields`)
	}
	delete(fields, "kubectl")
	fields["hostKubectl"] = "/x"
	misspelt, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(misspelt); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Errorf("Parse with a misspelt name: err = %v, want an unknown field", err)
	}
}

// TestConformanceRoundTrip: Write then LoadConformance gives the same
// suites, beside the manifest; a suite without its binary is refused.
func TestConformanceRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := ConformancePath(filepath.Join(dir, "v1.36.3-to-v1.37.2.json"))
	if want := filepath.Join(dir, "v1.36.3-to-v1.37.2-conformance.json"); path != want {
		t.Fatalf("ConformancePath = %s, want %s", path, want)
	}
	c := &Conformance{
		From: ConformanceSuite{Version: "v1.36.3", Binary: "/b/36/conformance.test", ImagesArchive: "/i/36.tar"},
		To:   ConformanceSuite{Version: "v1.37.2", Binary: "/b/37/conformance.test", ImagesArchive: "/i/37.tar"},
	}
	if err := c.Write(path); err != nil {
		t.Fatal(err)
	}
	got, err := LoadConformance(path)
	if err != nil || *got != *c {
		t.Fatalf("LoadConformance = %+v, %v; want %+v", got, err, c)
	}
	c.To.Binary = ""
	if err := c.Write(path); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConformance(path); err == nil || !strings.Contains(err.Error(), "lacks its version, binary or images archive") {
		t.Errorf("LoadConformance of a suite without its binary: %v", err)
	}
}
