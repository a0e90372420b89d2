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

// Package manifest reads the manifest of the e2e's offline artifacts: the
// one file, written by hack/e2e/build-artifacts.sh, that says where the
// node image, the --image-dir folders, the canary and the images each
// version's kubeadm lists are. The e2e tests and the benchmark read it
// instead of one environment variable per artifact.
package manifest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
)

// Manifest is what build-artifacts.sh wrote for one version pair.
type Manifest struct {
	// From and To are the versions the cluster starts at and is upgraded to
	From string `json:"from"`
	To   string `json:"to"`
	// NodeImage is the kind node image at From
	NodeImage string `json:"nodeImage"`
	// TargetNodeImage is the kind node image at To (--image), made by
	// kind's builder from TargetRelease
	TargetNodeImage string `json:"targetNodeImage"`
	// ImageExtrasDir holds the archives TargetNodeImage lacks offline
	// (kubeadm's pause): the --image-dir beside --image
	ImageExtrasDir string `json:"imageExtrasDir"`
	// TargetRelease is To's kubernetes-server-linux-amd64.tar.gz
	TargetRelease string `json:"targetRelease"`
	// MirrorImage is the registry stand-in, MirrorCA the folder of the CA
	// the node images trust, PullArchives what it serves to nodes that
	// pull through it (To's etcd, CoreDNS and kubeadm's pause)
	MirrorImage  string `json:"mirrorImage"`
	MirrorCA     string `json:"mirrorCA"`
	PullArchives string `json:"pullArchives"`
	// ImageDir is the release-like --image-dir for To
	ImageDir string `json:"imageDir"`
	// BuildTree is a Kubernetes build tree's _output/ at To (the other
	// layout --image-dir takes)
	BuildTree string `json:"buildTree"`
	// DowngradeImageDir holds kubeadm, kubelet and kubectl at From
	DowngradeImageDir string `json:"downgradeImageDir"`
	// SourceRelease is From's kubernetes-server-linux-amd64.tar.gz
	SourceRelease string `json:"sourceRelease"`
	// the images each version's kubeadm lists
	FromEtcdImage    string `json:"fromEtcdImage"`
	FromCoreDNSImage string `json:"fromCoreDNSImage"`
	FromPauseImage   string `json:"fromPauseImage"`
	ToEtcdImage      string `json:"toEtcdImage"`
	ToCoreDNSImage   string `json:"toCoreDNSImage"`
	ToPauseImage     string `json:"toPauseImage"`
	// CanaryImage is the test workload's image, CanaryArchive its
	// docker-archive
	CanaryImage   string `json:"canaryImage"`
	CanaryArchive string `json:"canaryArchive"`
	// UpgradesSuite is the test binary of Kubernetes' upgrade tests
	// across kind alpha upgrade (test/upgrades) built from To's
	// k8s.io/kubernetes; TestImagesArchive the images they run, as a
	// docker-archive
	UpgradesSuite     string `json:"upgradesSuite"`
	TestImagesArchive string `json:"testImagesArchive"`
	// Kubectl is a host kubectl at From
	Kubectl string `json:"kubectl"`
}

// Load reads and checks the manifest at path: every field must be set,
// and no field may be unknown (a manifest from another version of the
// scripts is refused rather than half read).
func Load(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read the artifacts' manifest (build it with hack/e2e/build-artifacts.sh, as make e2e does): %w", err)
	}
	m, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("artifacts' manifest %s: %w", path, err)
	}
	return m, nil
}

// Parse is Load of the manifest's content.
func Parse(data []byte) (*Manifest, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not a manifest: %w", err)
	}
	var missing []string
	v := reflect.ValueOf(m)
	for i := 0; i < v.NumField(); i++ {
		if v.Field(i).String() == "" {
			missing = append(missing, strings.Split(v.Type().Field(i).Tag.Get("json"), ",")[0])
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	return &m, nil
}

// UnchangedImages are the images both versions' kubeadm list, which the
// release-like --image-dir therefore holds no archive of. Pause is not
// among them whatever its version: kind's node images hold containerd's
// sandbox image instead of kubeadm's pause.
func (m *Manifest) UnchangedImages() []string {
	var same []string
	for _, pair := range [][2]string{{m.FromEtcdImage, m.ToEtcdImage}, {m.FromCoreDNSImage, m.ToCoreDNSImage}} {
		if pair[0] == pair[1] {
			same = append(same, pair[1])
		}
	}
	return same
}

// Pair names the version pair: "v1.36.3-to-v1.37.2".
func (m *Manifest) Pair() string { return m.From + "-to-" + m.To }

// Check refuses a manifest with a field unset, as Parse does.
func (m *Manifest) Check() error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = Parse(data)
	return err
}

// Write writes the manifest to path whole or not at all (a file beside it,
// then renamed), indented, one field per line.
func (m *Manifest) Write(path string) error {
	if err := writeJSON(path, m); err != nil {
		return fmt.Errorf("failed to write the manifest: %w", err)
	}
	return nil
}

// writeJSON writes v to path, indented, whole or not at all (a file beside
// it, then renamed).
func writeJSON(path string, v interface{}) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	part := path + ".part"
	if err := os.WriteFile(part, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(part, path)
}

// Field is the value of the field whose JSON name is name.
func (m *Manifest) Field(name string) (string, error) {
	v := reflect.ValueOf(*m)
	for i := 0; i < v.NumField(); i++ {
		if strings.Split(v.Type().Field(i).Tag.Get("json"), ",")[0] == name {
			return v.Field(i).String(), nil
		}
	}
	return "", fmt.Errorf("the manifest has no field %q", name)
}
