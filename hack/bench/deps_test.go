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

package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNoTestPackage keeps the benchmark a tool: what it shares with
// the e2e tests lives in internal/lab, and nothing under test/ is linked.
func TestImportsNoTestPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	const test = "github.com/kindupgrade/kind-upgrade/test/"
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, test) {
			t.Errorf("hack/bench links %s: move what it needs to internal/lab", p)
		}
	}
}
