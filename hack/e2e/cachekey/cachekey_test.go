// Copyright 2026 The kind-upgrade Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package cachekey

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fixture is a build script in the shape of build-artifacts.sh: a builder
// (build_thing) that calls a helper, reads a global variable, a checkout
// file named as ${E2E_DIR}/..., an argument file and another cache entry.
const fixture = `source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TOOL_FLAGS="-x"
helper() { printf '%s\n' "${TOOL_FLAGS}" >"$1/flags"; }
build_dep() { printf 'dep v1\n' >"$1/file"; }
build_thing() {
  log "building the thing"
  helper "$1"
  cat "${E2E_DIR}/data/input.txt" "$2/file" "$3" >"$1/out"
  printf 'built from main.go\n' >>"$1/out"
}
unrelated() { echo unrelated; }
main() { echo "orchestrates: $(derive_key thing build_thing)"; }
`

// checkout writes a checkout (lib.sh, the fixture, its data) under root and
// returns the fixture's path.
func checkout(t *testing.T, root string, edit func(name, content string) string) string {
	t.Helper()
	lib, err := os.ReadFile("../lib.sh")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"hack/e2e/lib.sh":                 string(lib),
		"hack/e2e/fixture.sh":             fixture,
		"hack/e2e/data/input.txt":         "input v1\n",
		"hack/e2e/data/sub/input_test.go": "package sub\n",
		"arg.txt":                         "arg v1\n",
	}
	for name, content := range files {
		if edit != nil {
			content = edit(name, content)
		}
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(root, "hack", "e2e", "fixture.sh")
}

// key builds the dependency entry in cache, then prints build_thing's key
// with that entry and the argument file; it also builds the thing and
// reports whether cached rebuilt it (an entry of the same key is reused).
func key(t *testing.T, script, cache, root string) (string, bool) {
	t.Helper()
	cmd := exec.Command("bash", "-c", `set -o errexit -o nounset -o pipefail
source "$1"
dep="$(cached deps dep build_dep)"
before="$(cat "${E2E_CACHE}/things/thing/.e2e-stamp" 2>/dev/null || true)"
key="$(derive_key thing build_thing "${dep}" "$2")"
cached things thing build_thing "${dep}" "$2" >/dev/null
after="$(cat "${E2E_CACHE}/things/thing/.e2e-stamp")"
[[ "${after}" == "${key}" ]] || { echo "cached stamped ${after}, derive_key says ${key}" >&2; exit 1; }
rebuilt=no
[[ "${before}" == "${after}" ]] || rebuilt=yes
printf '%s %s\n' "${key}" "${rebuilt}"`, "bash", script, filepath.Join(root, "arg.txt"))
	cmd.Env = append(os.Environ(), "KIND_UPGRADE_E2E_CACHE="+cache)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	fields := strings.Fields(lines[len(lines)-1])
	if len(fields) != 2 {
		t.Fatalf("unexpected output:\n%s", out)
	}
	return fields[0], fields[1] == "yes"
}

func TestEveryInputChangesTheKey(t *testing.T) {
	dir := t.TempDir()
	base, _ := key(t, checkout(t, filepath.Join(dir, "base"), nil), filepath.Join(dir, "base-cache"), filepath.Join(dir, "base"))
	if !strings.HasPrefix(base, "thing-") {
		t.Fatalf("key %q does not start with the entry's name", base)
	}
	replace := func(file, old, with string) func(name, content string) string {
		return func(name, content string) string {
			if name != file {
				return content
			}
			if !strings.Contains(content, old) {
				t.Fatalf("%s has no %q", file, old)
			}
			return strings.ReplaceAll(content, old, with)
		}
	}
	cases := []struct {
		name    string
		edit    func(name, content string) string
		changes bool
	}{
		{"a function the builder calls", replace("hack/e2e/fixture.sh", `printf '%s\n' "${TOOL_FLAGS}"`, `printf '%s\n\n' "${TOOL_FLAGS}"`), true},
		{"the builder itself", replace("hack/e2e/fixture.sh", `"$3" >"$1/out"`, `"$3" "$3" >"$1/out"`), true},
		{"a global variable a called function reads", replace("hack/e2e/fixture.sh", `TOOL_FLAGS="-x"`, `TOOL_FLAGS="-y"`), true},
		{"a checkout file the builder names", replace("hack/e2e/data/input.txt", "v1", "v2"), true},
		{"an argument's content", replace("arg.txt", "v1", "v2"), true},
		{"the cache entry it builds on", replace("hack/e2e/fixture.sh", `'dep v1\n'`, `'dep v2\n'`), true},
		{"a function it does not call", replace("hack/e2e/fixture.sh", "echo unrelated", "echo other"), false},
		{"the script's main (it only passes arguments; main.go in a body is a file name)", replace("hack/e2e/fixture.sh", "echo \"orchestrates:", "echo \"runs:"), false},
		{"a log line's wording (log does not shape artifacts)", replace("hack/e2e/lib.sh", `printf '[%s] %s\n'`, `printf '(%s) %s\n'`), false},
		{"a Go test beside a named folder's sources", replace("hack/e2e/data/sub/input_test.go", "package sub", "package sub_test"), false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(dir, "case", string(rune('a'+i)))
			got, _ := key(t, checkout(t, root, c.edit), filepath.Join(root, "cache"), root)
			if changed := got != base; changed != c.changes {
				t.Errorf("key %s, base %s: changed=%v, want %v", got, base, changed, c.changes)
			}
		})
	}
}

func TestTheKeyDoesNotDependOnWhereThingsAre(t *testing.T) {
	dir := t.TempDir()
	a, _ := key(t, checkout(t, filepath.Join(dir, "one"), nil), filepath.Join(dir, "cache-one"), filepath.Join(dir, "one"))
	b, _ := key(t, checkout(t, filepath.Join(dir, "elsewhere", "two"), nil), filepath.Join(dir, "elsewhere", "cache-two"), filepath.Join(dir, "elsewhere", "two"))
	if a != b {
		t.Errorf("the same checkout and inputs elsewhere: key %s, want %s", b, a)
	}
}

func TestCachedRebuildsExactlyWhenTheKeyChanges(t *testing.T) {
	dir := t.TempDir()
	root, cache := filepath.Join(dir, "repo"), filepath.Join(dir, "cache")
	script := checkout(t, root, nil)
	first, rebuilt := key(t, script, cache, root)
	if !rebuilt {
		t.Fatalf("the first run did not build")
	}
	if again, rebuilt := key(t, script, cache, root); rebuilt || again != first {
		t.Errorf("an unchanged input rebuilt the entry (key %s, was %s)", again, first)
	}
	if err := os.WriteFile(filepath.Join(root, "hack", "e2e", "data", "input.txt"), []byte("input v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if changed, rebuilt := key(t, script, cache, root); !rebuilt || changed == first {
		t.Errorf("a changed input did not rebuild the entry (key %s, was %s)", changed, first)
	}
}
