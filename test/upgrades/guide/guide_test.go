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

package guide

import (
	"bufio"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// page is the guide's page; -page tests a copy (e.g. one with a line
// taken out, which must fail).
var page = flag.String("page", filepath.Join("..", "..", "..", "site", "content", "docs", "user", "upgrade-operator-tests.md"),
	"the page whose operator example is built")

// examples returns the page's fenced blocks that follow a marker line
// `<!-- operator-example: NAME -->`, by NAME.
func examples(text string) map[string]string {
	blocks := map[string]string{}
	name, in := "", false
	var body []string
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case in && strings.HasPrefix(line, "```"):
			blocks[name] = strings.Join(body, "\n") + "\n"
			name, in, body = "", false, nil
		case in:
			body = append(body, line)
		case name != "" && strings.HasPrefix(line, "```"):
			in = true
		case strings.HasPrefix(line, "<!-- operator-example: ") && strings.HasSuffix(line, " -->"):
			name = strings.TrimSuffix(strings.TrimPrefix(line, "<!-- operator-example: "), " -->")
		}
	}
	return blocks
}

// TestOperatorExampleBuilds: the page's module set-up, run as written in
// an empty folder outside this repository with $KIND_UPGRADE set to this
// checkout, gives a module in which the page's test compiles.
func TestOperatorExampleBuilds(t *testing.T) {
	text, err := os.ReadFile(*page)
	if err != nil {
		t.Fatal(err)
	}
	blocks := examples(string(text))
	setup, test := blocks["setup"], blocks["upgrade_test.go"]
	if setup == "" || test == "" {
		t.Fatalf("the page has no operator-example blocks named setup and upgrade_test.go (found %d blocks)", len(blocks))
	}
	checkout, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "upgrade_test.go"), []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "KIND_UPGRADE="+checkout, "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	run("bash", "-euo", "pipefail", "-c", setup)
	// vet and compile only: running it needs a cluster; -trimpath as make
	// unit builds this module, so that Kubernetes' packages come from the
	// build cache
	run("go", "vet", "-trimpath", ".")
	run("go", "test", "-trimpath", "-c", "-o", os.DevNull, ".")
}
