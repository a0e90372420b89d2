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

package upgrade

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
)

func TestParseKubectlVersion(t *testing.T) {
	t.Parallel()
	// `kubectl version --client -o json` of kubectl v1.36.3, captured on
	// a host
	captured, err := os.ReadFile(filepath.Join("testdata", "host", "kubectl-version-client-json.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, out, want, errHas string
	}{
		{name: "kubectl's output", out: string(captured), want: "1.36.3"},
		{name: "not JSON", out: "Client Version: v1.37.2\n", errHas: "failed to read kubectl's version"},
		{name: "no client version", out: `{"kustomizeVersion": "v5.7.1"}`, errHas: "no clientVersion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := parseKubectlVersion([]byte(tc.out))
			switch {
			case tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)):
				t.Errorf("want an error saying %q, got %v", tc.errHas, err)
			case tc.errHas == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.errHas == "" && v.String() != tc.want:
				t.Errorf("got %s, want %s", v, tc.want)
			}
		})
	}
}

func TestKubectlSkewHint(t *testing.T) {
	t.Parallel()
	cluster := semver.MustParse("1.37.0")
	for _, tc := range []struct {
		client string
		hint   bool
	}{
		{"1.35.4", true},
		{"1.36.9", false},
		{"1.37.0", false},
		{"1.38.0", false},
		{"1.39.0", true},
	} {
		hint := kubectlSkewHint(semver.MustParse(tc.client), cluster, "podman", "dev-control-plane")
		if (hint != "") != tc.hint {
			t.Errorf("kubectl %s against %s: hint %q, want one: %v", tc.client, cluster, hint, tc.hint)
		}
		if hint != "" && !strings.Contains(hint, "`podman cp dev-control-plane:/usr/bin/kubectl") {
			t.Errorf("the hint does not say how to copy the nodes' kubectl: %s", hint)
		}
	}
}
