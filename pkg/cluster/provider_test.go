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

package cluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/fakenode"
)

// fakeTools puts commands on PATH that print, for -v, what each tool's
// real one prints (or fail, for an empty line).
func fakeTools(t *testing.T, says map[string]string) {
	dir := t.TempDir()
	for name, line := range says {
		script := "#!/bin/sh\necho '" + line + "'\n"
		if line == "" {
			script = "#!/bin/sh\nexit 1\n"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
}

// TestDetectedProviderCommand: kind's own order and test (docker, then
// nerdctl or finch, then podman; each must say it is that tool, so a
// docker that is podman's shim is not Docker), unless
// KIND_EXPERIMENTAL_PROVIDER names one.
func TestDetectedProviderCommand(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  string
		says map[string]string
		want string
	}{
		{"docker first", "", map[string]string{"docker": "Docker version 20.10.24+dfsg1, build 297e128", "podman": "podman version 4.3.1"}, "docker"},
		{"podman alone", "", map[string]string{"podman": "podman version 4.3.1"}, "podman"},
		{"podman's docker shim", "", map[string]string{"docker": "podman version 4.3.1", "podman": "podman version 4.3.1"}, "podman"},
		{"a failing docker", "", map[string]string{"docker": "", "podman": "podman version 4.3.1"}, "podman"},
		{"nerdctl before podman", "", map[string]string{"nerdctl": "nerdctl version 2.1.2", "podman": "podman version 4.3.1"}, "nerdctl"},
		{"finch", "", map[string]string{"finch": "finch version v1.8.0"}, "finch"},
		{"nothing", "", map[string]string{}, "docker"},
		{"the environment", "podman", map[string]string{"docker": "Docker version 29.0.0, build 1"}, "podman"},
		{"the environment, nerdctl.lima", "nerdctl.lima", map[string]string{}, "nerdctl.lima"},
		{"an unknown value is ignored, as kind does", "rkt", map[string]string{"podman": "podman version 4.3.1"}, "podman"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KIND_EXPERIMENTAL_PROVIDER", tc.env)
			fakeTools(t, tc.says)
			if got := detectedProviderCommand(); got != tc.want {
				t.Errorf("detectedProviderCommand() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestProviderCommandOfANodeOfNoKnownProvider: a node of none of kind's
// providers (here the fake's) gets the detected command.
func TestProviderCommandOfANodeOfNoKnownProvider(t *testing.T) {
	t.Setenv("KIND_EXPERIMENTAL_PROVIDER", "podman")
	c := fakenode.NewCluster("kind", "v1.36.3", 1, 0)
	if got := providerCommand(c.Nodes[0]); got != "podman" {
		t.Errorf("providerCommand(fake node) = %q, want podman", got)
	}
}

// TestOtherProviders: the host's other providers are those whose CLI says
// it is that tool, never the cluster's own.
func TestOtherProviders(t *testing.T) {
	fakeTools(t, map[string]string{
		"docker": "Docker version 20.10.24+dfsg1, build 297e128",
		"podman": "podman version 4.3.1",
		"finch":  "",
	})
	if got := len(otherProviders("podman")); got != 1 {
		t.Errorf("beside podman: %d other providers, want 1 (docker)", got)
	}
	if got := len(otherProviders("docker")); got != 1 {
		t.Errorf("beside docker: %d other providers, want 1 (podman)", got)
	}
	if got := len(otherProviders("nerdctl")); got != 2 {
		t.Errorf("beside nerdctl: %d other providers, want 2", got)
	}
}
