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

package kindbase

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRestrictOOMScoreAdjOnKindsConfig: the overlay applies to the config
// of the kind module this repository depends on.
func TestRestrictOOMScoreAdjOnKindsConfig(t *testing.T) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kind")
	cmd.Dir = "../../../../.." // the repository's module, which requires kind
	out, err := cmd.Output()
	if err != nil || len(strings.TrimSpace(string(out))) == 0 {
		t.Skipf("the kind module is not here: %v", err)
	}
	config, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "images", "base", "files", "etc", "containerd", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := RestrictOOMScoreAdj(config)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(got), "restrict_oom_score_adj = true") != 1 || len(got) != len(config)-1 {
		t.Errorf("the overlay changed more than the one value:\n%s", got)
	}
}

// TestRestrictOOMScoreAdjRefusesOtherShapes: a config without the line,
// with two, or with the line in another table fails, naming the package
// to review.
func TestRestrictOOMScoreAdjRefusesOtherShapes(t *testing.T) {
	for name, config := range map[string]string{
		"no line":      "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  sandbox_image = \"x\"\n",
		"two lines":    "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  restrict_oom_score_adj = false\n[plugins.\"other\"]\n  restrict_oom_score_adj = false\n",
		"other table":  "version = 3\n[plugins.\"io.containerd.cri.v1.runtime\"]\n  restrict_oom_score_adj = false\n",
		"not toml now": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"\n  restrict_oom_score_adj = false\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := RestrictOOMScoreAdj([]byte(config)); err == nil || !strings.Contains(err.Error(), "kindbase") && !strings.Contains(err.Error(), "parse") {
				t.Errorf("got %v, want an error naming what to review", err)
			}
		})
	}
}

// TestKindFilesModes: kind's scripts are executable, the rest not, the
// containerd config left to the overlay, and no folder entry (Docker
// keeps the image's own folders and links).
func TestKindFilesModes(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"usr/local/bin/entrypoint", "kind/bin/mount-product-files.sh", "etc/systemd/system/kubelet.service", "etc/containerd/config.toml", "LICENSES/README.txt"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	files, err := kindFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, f := range files {
		got[f.Name] = f.Mode
		if f.Dir {
			t.Errorf("%s is a folder entry", f.Name)
		}
	}
	want := map[string]int64{"usr/local/bin/entrypoint": 0o755, "kind/bin/mount-product-files.sh": 0o755, "etc/systemd/system/kubelet.service": 0o644, "LICENSES/README.txt": 0o644}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for n, m := range want {
		if got[n] != m {
			t.Errorf("%s: mode %o, want %o", n, got[n], m)
		}
	}
}
