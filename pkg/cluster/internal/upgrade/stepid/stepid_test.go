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

package stepid

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     ID
		errHas   string
	}{
		{name: "a step", in: "kubelets/drain", want: KubeletsDrain},
		{name: "the first step", in: "preflight/nodes", want: PreflightNodes},
		{name: "the last step", in: "verify/workloads", want: VerifyWorkloads},
		{name: "a phase is no step", in: "kubelets", errHas: `unknown upgrade step "kubelets"`},
		{name: "the display text is no step", in: "draining", errHas: `e.g. "kubelets/drain"`},
		{name: "case matters", in: "Kubelets/Drain", errHas: "unknown upgrade step"},
		{name: "empty", in: "", errHas: "unknown upgrade step"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tc.in)
			switch {
			case tc.errHas == "" && (err != nil || got != tc.want):
				t.Errorf("Parse(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			case tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)):
				t.Errorf("Parse(%q) = %q, %v; want an error containing %q", tc.in, got, err, tc.errHas)
			}
		})
	}
}

// TestParseTakesEveryStep: every identifier All lists parses to itself,
// and none is listed twice.
func TestParseTakesEveryStep(t *testing.T) {
	t.Parallel()
	seen := map[ID]bool{}
	for _, id := range All() {
		if seen[id] {
			t.Errorf("%s is listed twice", id)
		}
		seen[id] = true
		if got, err := Parse(string(id)); err != nil || got != id {
			t.Errorf("Parse(%q) = %q, %v", id, got, err)
		}
	}
}
