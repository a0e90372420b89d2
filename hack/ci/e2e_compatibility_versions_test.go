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

package ci

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestCompatibilityVersionsRefusesBadInputs: a partial set of inputs, and
// versions that are not one minor apart, are refused before anything runs.
func TestCompatibilityVersionsRefusesBadInputs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{{
		name: "node image and target only",
		env:  map[string]string{"NODE_IMAGE": "kindest/node:v1.36.3", "TARGET_IMAGE_DIR": "/v1.37.2"},
		want: "(set: NODE_IMAGE TARGET_IMAGE_DIR; missing: PREV_E2E_TEST E2E_TEST). Set all of them, or none of them",
	}, {
		name: "two minors apart",
		env:  map[string]string{"FROM_VERSION": "v1.35.4", "TO_VERSION": "v1.37.2"},
		want: "FROM_VERSION v1.35.4 and TO_VERSION v1.37.2 must be one minor apart",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, ran := runCIScript(t, "e2e-compatibility-versions.sh", tc.env)
			if code == 0 || !strings.Contains(out, tc.want) {
				t.Errorf("exit code %d, want a refusal saying %q:\n%s", code, tc.want, out)
			}
			if ran != "" {
				t.Errorf("it ran commands before refusing:\n%s", ran)
			}
		})
	}
}

// TestCompatibilityVersionsRunsTheJobsSteps: with every input given, the
// script creates the cluster emulating the source's minor, upgrades the
// control plane keeping the emulation with the node side left behind,
// runs the source's tests, removes the emulation, runs the target's, then
// upgrades the rest, in that order, building nothing.
func TestCompatibilityVersionsRunsTheJobsSteps(t *testing.T) {
	t.Parallel()
	code, out, ran := runCIScript(t, "e2e-compatibility-versions.sh", map[string]string{
		"NODE_IMAGE": "kindest/node:v1.36.3", "TARGET_IMAGE_DIR": "/v1.37.2", "PREV_E2E_TEST": "e2e.test", "E2E_TEST": "e2e.test",
		"TEST_IMAGES_ARCHIVES": "/images.tar",
	})
	if code != 0 {
		t.Fatalf("exit code %d, want 0:\n%s", code, out)
	}
	steps := []string{
		`kind create cluster --name kind-upgrade-compat-ci --image kindest/node:v1.36.3 --config \S+/kind-config.yaml`,
		`kind load image-archive /images.tar --name kind-upgrade-compat-ci`,
		`kind alpha upgrade --name kind-upgrade-compat-ci --image-dir /v1.37.2 --output json --emulated-version 1.36 --emulation-forward-compatible --skip-phases kubelets,control-plane/kube-proxy\n`,
		`e2e.test --kubeconfig \S+ --provider skeleton --report-dir \S+ --report-prefix step1- --ginkgo.focus \\\[sig-api-machinery\\\]\.\*\\\[Conformance\\\] --ginkgo.skip \\\[sig-api-machinery\\\] Aggregator`,
		`kind alpha upgrade --name kind-upgrade-compat-ci --image-dir /v1.37.2 --output json --emulated-version none --skip-phases kubelets,control-plane/kube-proxy\n`,
		`e2e.test .*--report-prefix step2-`,
		`kind alpha upgrade --name kind-upgrade-compat-ci --image-dir /v1.37.2 --output json\s*\n`,
		`kind delete cluster --name kind-upgrade-compat-ci`,
	}
	rest := ran
	for _, step := range steps {
		loc := regexp.MustCompile(step).FindStringIndex(rest)
		if loc == nil {
			t.Fatalf("no %q (in order) among what it ran:\n%s", step, ran)
		}
		rest = rest[loc[1]:]
	}
	if strings.Contains(ran, "go ") {
		t.Errorf("it built something with all the inputs given:\n%s", ran)
	}
}

// TestCompatibilityVersionsClusterConfig: the config the script writes
// sets the emulation on the three components, as the job's cluster has,
// and on a cgroup v1 host lets the kubelets start; FINISH=false leaves the
// node side behind.
func TestCompatibilityVersionsClusterConfig(t *testing.T) {
	t.Parallel()
	for _, cgroup := range []string{"1", "2"} {
		t.Run("cgroup v"+cgroup, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			code, out, ran := runCIScript(t, "e2e-compatibility-versions.sh", map[string]string{
				"NODE_IMAGE": "n", "TARGET_IMAGE_DIR": "/t", "PREV_E2E_TEST": "e2e.test", "E2E_TEST": "e2e.test", "EMULATED_VERSION": "1.35",
				"ARTIFACTS": dir, "FINISH": "false", "FAKE_CGROUP": cgroup,
			})
			if code != 0 {
				t.Fatalf("exit code %d:\n%s", code, out)
			}
			var config struct {
				Patches []string `json:"kubeadmConfigPatches"`
				Nodes   []struct {
					Role string `json:"role"`
				} `json:"nodes"`
			}
			data := readFile(t, dir+"/kind-config.yaml")
			if err := yaml.Unmarshal([]byte(data), &config); err != nil {
				t.Fatalf("the config is not YAML: %v\n%s", err, data)
			}
			want := 1
			if cgroup == "1" {
				want = 2
			}
			if len(config.Patches) != want || len(config.Nodes) != 3 {
				t.Fatalf("%d patches and %d nodes, want %d and 3:\n%s", len(config.Patches), len(config.Nodes), want, data)
			}
			for _, c := range []string{"apiServer", "controllerManager", "scheduler"} {
				if want := c + ":\n  extraArgs:\n    emulated-version: \"1.35\"\n"; !strings.Contains(config.Patches[0], want) {
					t.Errorf("the first patch lacks %q:\n%s", want, config.Patches[0])
				}
			}
			if cgroup == "1" && !strings.Contains(config.Patches[1], "failCgroupV1: false") {
				t.Errorf("the second patch lacks failCgroupV1: false:\n%s", config.Patches[1])
			}
			if n := strings.Count(ran, "kind alpha upgrade"); n != 2 {
				t.Errorf("FINISH=false: %d upgrades, want 2:\n%s", n, ran)
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
