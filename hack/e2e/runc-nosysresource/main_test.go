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

// Command runc-nosysresource stands in for runc on hosts whose capability
package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// limit20000 plays a host whose hard RLIMIT_NOFILE is 20000 and which
// cannot read any other limit.
func limit20000(resource int) (uint64, bool) {
	if resource == resources["RLIMIT_NOFILE"] {
		return 20000, true
	}
	return 0, false
}

// podmanSpec is the part of a spec podman 4.3 writes that the wrapper
// changes.
const podmanSpec = `{"ociVersion":"1.0.2-dev","process":{"args":["/sbin/init"],
"capabilities":{"bounding":["CAP_CHOWN","CAP_SYS_RESOURCE","CAP_SYS_ADMIN"],"effective":["CAP_SYS_RESOURCE"]},
"rlimits":[{"type":"RLIMIT_NOFILE","hard":1048576,"soft":1048576},{"type":"RLIMIT_NPROC","hard":4194304,"soft":4194304}]},
"root":{"path":"rootfs"}}`

func writeSpec(t *testing.T, doc string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "config.json")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func readSpec(t *testing.T, p string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestAdjustFileDropsTheCapabilityAndClampsRlimits(t *testing.T) {
	p := writeSpec(t, podmanSpec)
	if err := adjustFile(p, true, limit20000); err != nil {
		t.Fatal(err)
	}
	proc := readSpec(t, p)["process"].(map[string]any)
	caps := proc["capabilities"].(map[string]any)
	if want := []any{"CAP_CHOWN", "CAP_SYS_ADMIN"}; !reflect.DeepEqual(caps["bounding"], want) {
		t.Errorf("bounding = %v, want %v", caps["bounding"], want)
	}
	if len(caps["effective"].([]any)) != 0 {
		t.Errorf("effective = %v, want none", caps["effective"])
	}
	want := []any{
		map[string]any{"type": "RLIMIT_NOFILE", "hard": 20000.0, "soft": 20000.0},
		// a limit the host's cannot be read for stays as asked
		map[string]any{"type": "RLIMIT_NPROC", "hard": 4194304.0, "soft": 4194304.0},
	}
	if !reflect.DeepEqual(proc["rlimits"], want) {
		t.Errorf("rlimits = %v, want %v", proc["rlimits"], want)
	}
}

func TestAdjustFileKeepsLimitsWithinTheHosts(t *testing.T) {
	// a soft limit below the host's hard one stays; a soft one above a
	// lowered hard limit comes down with it
	p := writeSpec(t, `{"rlimits":[{"type":"RLIMIT_NOFILE","hard":30000,"soft":1024}],"args":["sh"]}`)
	if err := adjustFile(p, false, limit20000); err != nil {
		t.Fatal(err)
	}
	got := readSpec(t, p)["rlimits"].([]any)[0].(map[string]any)
	if got["hard"] != 20000.0 || got["soft"] != 1024.0 {
		t.Errorf("exec process rlimit = %v, want hard 20000, soft 1024", got)
	}
}

func TestAdjustFileLeavesAFittingSpecUntouched(t *testing.T) {
	doc := `{"process":{"capabilities":{"bounding":["CAP_CHOWN"]},"rlimits":[{"type":"RLIMIT_NOFILE","hard":1024,"soft":1024}]}}`
	p := writeSpec(t, doc)
	before, _ := os.Stat(p)
	if err := adjustFile(p, true, limit20000); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	after, _ := os.Stat(p)
	if string(b) != doc || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("a spec that needs no change was rewritten: %s", b)
	}
}

func TestAdjustFileRefusesAnRlimitThatIsNotANumber(t *testing.T) {
	p := writeSpec(t, `{"process":{"rlimits":[{"type":"RLIMIT_NOFILE","hard":"many","soft":1}]}}`)
	if err := adjustFile(p, true, limit20000); err == nil {
		t.Error("a hard limit of \"many\" was accepted")
	}
}

func TestRewriteFindsTheSpecOfEachCommand(t *testing.T) {
	bundle := t.TempDir()
	spec := filepath.Join(bundle, "config.json")
	process := filepath.Join(t.TempDir(), "process.json")
	for _, tc := range []struct {
		args []string
		file string
		doc  string
	}{
		{[]string{"--root", "/run/runc", "create", "--bundle", bundle, "id"}, spec, podmanSpec},
		{[]string{"--log=/tmp/l", "run", "-b=" + bundle, "id"}, spec, podmanSpec},
		{[]string{"exec", "--process", process, "id"}, process, `{"args":["sh"],"rlimits":[{"type":"RLIMIT_NOFILE","hard":1048576,"soft":1048576}]}`},
	} {
		if err := os.WriteFile(tc.file, []byte(tc.doc), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := rewriteWith(tc.args, limit20000); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		b, _ := os.ReadFile(tc.file)
		if string(b) == tc.doc {
			t.Errorf("%v left %s unchanged", tc.args, tc.file)
		}
	}
	// other commands read no spec
	if err := rewriteWith([]string{"delete", "--force", "id"}, limit20000); err != nil {
		t.Error(err)
	}
}
