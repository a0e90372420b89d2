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
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// inputs are the variables the scripts read: the test's environment must
// not leak them into a script.
var inputs = []string{"FROM_VERSION", "TO_VERSION", "E2E_FROM", "E2E_TO", "NODE_IMAGE", "TARGET_NODE_IMAGE",
	"TARGET_IMAGE_DIR", "TOPOLOGY", "UPGRADE_TYPES", "UPGRADES_TEST", "TEST_IMAGES_ARCHIVE", "CANARY_ARCHIVE",
	"KIND", "CLUSTER_NAME", "ARTIFACTS", "GINKGO_ARGS", "KIND_UPGRADE_ARGS",
	"EMULATED_VERSION", "PREV_E2E_TEST", "E2E_TEST", "TEST_IMAGES_ARCHIVES", "FOCUS", "SKIP", "FINISH", "E2E_CONFORMANCE"}

// fake records its name and arguments in $CALLS and succeeds; as docker,
// it answers `docker info` with cgroup version $FAKE_CGROUP (default 2);
// as kind, its first $FAKE_PORT_RACES `create cluster` runs fail the way
// kind does when Docker refuses a node's port (with $FAKE_CREATE_ERROR's
// message instead when it is set).
const fake = `#!/usr/bin/env bash
echo "$(basename "$0") $*" >>"${CALLS}"
[[ "$(basename "$0")" != docker || "$1" != info ]] || echo "${FAKE_CGROUP:-2}"
if [[ "$(basename "$0")" == kind && "$1 $2" == "create cluster" ]]; then
  races="$(grep -c "^kind create cluster" "${CALLS}")"
  if ((races <= ${FAKE_PORT_RACES:-0})); then
    echo "${FAKE_CREATE_ERROR:-docker: Error response from daemon: driver failed programming external connectivity on endpoint x: Bind for 127.0.0.1:40619 failed: port is already allocated}" >&2
    exit 1
  fi
fi
`

// runScript runs e2e-k8s-upgrade.sh with env on top of a clean
// environment, kind, docker, go and the suite faked; it returns the
// script's exit code, its output and the commands it ran.
func runScript(t *testing.T, env map[string]string) (int, string, string) {
	t.Helper()
	return runCIScript(t, "e2e-k8s-upgrade.sh", env)
}

// runCIScript runs script with env on top of a clean environment, kind,
// docker, go and the test binaries (upgrades.test, e2e.test; an env value
// that is one of these names becomes its path) faked.
func runCIScript(t *testing.T, script string, env map[string]string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kind", "docker", "go", "upgrades.test", "e2e.test"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(fake), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	calls := filepath.Join(dir, "calls")
	cmd := exec.Command("bash", script)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains(inputs, k) && k != "PATH" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "CALLS="+calls,
		"KIND="+filepath.Join(bin, "kind"), "ARTIFACTS="+filepath.Join(dir, "artifacts"))
	for k, v := range env {
		switch v {
		case "SUITE":
			v = filepath.Join(bin, "upgrades.test")
		case "e2e.test":
			v = filepath.Join(bin, v)
		}
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	ran, err := os.ReadFile(calls)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return code, string(out), string(ran)
}

// TestPartialInputsAreRefused: a partial set of the inputs is refused
// before anything runs, naming what is set, what is missing and the two
// ways out; a full set runs the suite without building anything.
func TestPartialInputsAreRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // in the output; empty: the script succeeds
	}{{
		name: "node image only",
		env:  map[string]string{"NODE_IMAGE": "kindest/node:v1.36.3"},
		want: "(set: NODE_IMAGE; missing: TARGET_NODE_IMAGE (or TARGET_IMAGE_DIR), UPGRADES_TEST)",
	}, {
		name: "target and suite, no node image",
		env:  map[string]string{"TARGET_NODE_IMAGE": "kindest/node:v1.37.2", "TARGET_IMAGE_DIR": "/extras", "UPGRADES_TEST": "SUITE"},
		want: "(set: TARGET_NODE_IMAGE and TARGET_IMAGE_DIR, UPGRADES_TEST; missing: NODE_IMAGE)",
	}, {
		name: "images, no suite",
		env:  map[string]string{"NODE_IMAGE": "kindest/node:v1.36.3", "TARGET_IMAGE_DIR": "/extras"},
		want: "(set: NODE_IMAGE, TARGET_IMAGE_DIR; missing: UPGRADES_TEST)",
	}, {
		name: "all of them",
		env:  map[string]string{"NODE_IMAGE": "kindest/node:v1.36.3", "TARGET_NODE_IMAGE": "kindest/node:v1.37.2", "UPGRADES_TEST": "SUITE"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, ran := runScript(t, tc.env)
			if tc.want == "" {
				if code != 0 {
					t.Fatalf("exit code %d, want 0:\n%s", code, out)
				}
				for _, want := range []string{"kind create cluster", "upgrades.test", "--upgrade-type master", "--upgrade-type node"} {
					if !strings.Contains(ran, want) {
						t.Errorf("it ran no %q; it ran:\n%s", want, ran)
					}
				}
				if strings.Contains(out, "building") || strings.Contains(ran, "go ") {
					t.Errorf("it built something with all the inputs given:\n%s\n%s", out, ran)
				}
				return
			}
			if code == 0 {
				t.Fatalf("exit code 0, want a refusal:\n%s", out)
			}
			for _, want := range []string{tc.want, "Set all of them, or none of them to build every artifact here (about an hour on a cold machine)"} {
				if !strings.Contains(out, want) {
					t.Errorf("the output lacks %q:\n%s", want, out)
				}
			}
			if ran != "" {
				t.Errorf("it ran commands before refusing:\n%s", ran)
			}
		})
	}
}

// TestCreateClusterRetriesThePortRace: a cluster whose creation lost
// kind's host port race is created again, up to three times in all; any
// other failure of kind create cluster is not retried.
func TestCreateClusterRetriesThePortRace(t *testing.T) {
	t.Parallel()
	all := map[string]string{"NODE_IMAGE": "kindest/node:v1.36.3", "TARGET_NODE_IMAGE": "kindest/node:v1.37.2", "UPGRADES_TEST": "SUITE"}
	for _, tc := range []struct {
		races, wantCode, wantCreates int
		other                        string
	}{
		{races: 1, wantCode: 0, wantCreates: 2},
		{races: 3, wantCode: 1, wantCreates: 3},
		{races: 1, wantCode: 1, wantCreates: 1, other: "ERROR: failed to create cluster: no space left on device"},
	} {
		t.Run(fmt.Sprintf("%d races %s", tc.races, tc.other), func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"FAKE_PORT_RACES": strconv.Itoa(tc.races)}
			if tc.other != "" {
				env["FAKE_CREATE_ERROR"] = tc.other
			}
			for k, v := range all {
				env[k] = v
			}
			code, out, ran := runScript(t, env)
			if code != tc.wantCode || strings.Count(ran, "kind create cluster") != tc.wantCreates {
				t.Fatalf("exit code %d after %d kind create cluster; want %d after %d:\n%s", code, strings.Count(ran, "kind create cluster"), tc.wantCode, tc.wantCreates, out)
			}
			if retried := strings.Count(out, "creating the cluster again"); retried != tc.wantCreates-1 {
				t.Errorf("said %d retries, want %d:\n%s", retried, tc.wantCreates-1, out)
			}
		})
	}
}
