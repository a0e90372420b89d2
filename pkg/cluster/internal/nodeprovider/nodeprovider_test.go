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

package nodeprovider

import (
	"testing"
)

// fakeHost is a Host whose tools say what says holds, counting the asks.
func fakeHost(says map[string]string, asked *int) *Host {
	return &Host{says: func(command string) string {
		*asked++
		return says[command]
	}}
}

// TestDetect: kind's own order and test (docker, then nerdctl or finch,
// then podman; each must say it is that tool, so a docker that is podman's
// shim is not Docker), unless KIND_EXPERIMENTAL_PROVIDER names one, in
// which case no tool is asked.
func TestDetect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  string
		says map[string]string
		want string
		asks int
	}{
		{"docker first", "", map[string]string{"docker": "Docker version 20.10.24+dfsg1, build 297e128", "podman": "podman version 4.3.1"}, "docker", 4},
		{"podman alone", "", map[string]string{"podman": "podman version 4.3.1"}, "podman", 4},
		{"podman's docker shim", "", map[string]string{"docker": "podman version 4.3.1", "podman": "podman version 4.3.1"}, "podman", 4},
		{"nerdctl before podman", "", map[string]string{"nerdctl": "nerdctl version 2.1.2", "podman": "podman version 4.3.1"}, "nerdctl", 4},
		{"finch", "", map[string]string{"finch": "finch version v1.8.0"}, "finch", 4},
		{"nothing", "", map[string]string{}, "docker", 4},
		{"the environment", "podman", map[string]string{"docker": "Docker version 29.0.0, build 1"}, "podman", 0},
		{"the environment, nerdctl.lima", "nerdctl.lima", map[string]string{}, "nerdctl.lima", 0},
		{"an unknown value is ignored, as kind does", "rkt", map[string]string{"podman": "podman version 4.3.1"}, "podman", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			asked := 0
			h := fakeHost(tc.says, &asked)
			if got := h.Detect(tc.env); got != tc.want {
				t.Errorf("Detect(%q) = %q, want %q", tc.env, got, tc.want)
			}
			// asked once per process, however often
			h.Detect(tc.env)
			if tc.asks == 0 && asked != 0 {
				t.Errorf("the environment named the provider, yet %d tools were asked", asked)
			}
			if tc.asks > 0 && asked != tc.asks {
				t.Errorf("%d tools asked, want %d (each once)", asked, tc.asks)
			}
		})
	}
}

// TestOthers: the host's other providers are those whose CLI says it is
// that tool, never the cluster's own.
func TestOthers(t *testing.T) {
	t.Parallel()
	asked := 0
	h := fakeHost(map[string]string{
		"docker": "Docker version 20.10.24+dfsg1, build 297e128",
		"podman": "podman version 4.3.1",
	}, &asked)
	for current, want := range map[string]int{"podman": 1, "docker": 1, "nerdctl": 2, "nerdctl.lima": 2} {
		if got := len(h.Others(current)); got != want {
			t.Errorf("beside %s: %d other providers, want %d", current, got, want)
		}
	}
	if asked != 4 {
		t.Errorf("%d tools asked, want 4 (each once)", asked)
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, c := range Commands() {
		if err := Check(c); err != nil {
			t.Errorf("Check(%q): %v", c, err)
		}
	}
	if err := Check("rkt"); err == nil {
		t.Error("Check(rkt) accepted an unknown provider")
	}
}

// TestImageName: podman gets the name kind's podman provider gives a
// node image (docker.io/ completed, as Docker completes it by itself);
// Docker and nerdctl get the name as it is.
func TestImageName(t *testing.T) {
	for _, tc := range []struct{ provider, ref, want string }{
		{"podman", "kindest/node:v1.37.2", "docker.io/kindest/node:v1.37.2"},
		{"podman", "node:v1", "docker.io/library/node:v1"},
		{"podman", "kind-upgrade-e2e/node:v1.37.2", "docker.io/kind-upgrade-e2e/node:v1.37.2"},
		{"podman", "localhost/kind-upgrade-e2e/node:v1.37.2", "localhost/kind-upgrade-e2e/node:v1.37.2"},
		{"podman", "registry.example:5000/node:v1", "registry.example:5000/node:v1"},
		{"podman", "quay.io/k/node@sha256:0123", "quay.io/k/node@sha256:0123"},
		{"docker", "kindest/node:v1.37.2", "kindest/node:v1.37.2"},
		{"nerdctl", "kindest/node:v1.37.2", "kindest/node:v1.37.2"},
	} {
		if got := ImageName(tc.provider, tc.ref); got != tc.want {
			t.Errorf("ImageName(%q, %q) = %q, want %q", tc.provider, tc.ref, got, tc.want)
		}
	}
}

// TestSaveCommand: Docker and nerdctl save for the nodes' platform (a
// one-platform pull would be saved as a multi-platform index without the
// other platforms' content); podman saves the one platform it holds.
func TestSaveCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ command, arch, want string }{
		{"docker", "amd64", "docker image save --platform linux/amd64 -o <dir>/<name>.tar <image>"},
		{"nerdctl", "arm64", "nerdctl save --platform linux/arm64 -o <dir>/<name>.tar <image>"},
		{"finch", "amd64", "finch save --platform linux/amd64 -o <dir>/<name>.tar <image>"},
		{"podman", "amd64", "podman save -o <dir>/<name>.tar <image>"},
		{"docker", "", "docker save -o <dir>/<name>.tar <image>"},
	} {
		if got := SaveCommand(tc.command, tc.arch); got != tc.want {
			t.Errorf("SaveCommand(%q, %q) = %q, want %q", tc.command, tc.arch, got, tc.want)
		}
	}
}
