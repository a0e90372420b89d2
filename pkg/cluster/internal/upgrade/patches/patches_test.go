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

package patches

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
)

var (
	v136 = semver.MustParse("v1.36.3")
	v137 = semver.MustParse("v1.37.0-alpha.1")
)

func TestParseName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                string
		version             *semver.Version
		target, typ, ignore string
		errHas              string
	}{
		{name: "kube-apiserver.yaml", target: "kube-apiserver", typ: "strategic"},
		{name: "kube-apiserver+json.yaml", target: "kube-apiserver", typ: "json"},
		{name: "kube-apiserver0+merge.json", target: "kube-apiserver", typ: "merge"},
		{name: "etcd-more+strategic.yaml", target: "etcd", typ: "strategic"},
		{name: "kubeletconfiguration.json", target: "kubeletconfiguration", typ: "strategic"},
		{name: "corednsdeployment+json.yaml", target: "corednsdeployment", typ: "json"},
		{name: "kube-scheduler.patch.yaml", target: "kube-scheduler", typ: "strategic"},
		{name: "kube-apiserver+jsonish.yaml", target: "kube-apiserver", typ: "json"},
		{name: "kube-apiserver.yml", ignore: "the extension is not .json or .yaml"},
		{name: "README.md", ignore: "the extension is not"},
		{name: ".yaml", ignore: "the extension is not"},
		{name: "apiserver.yaml", ignore: "no known target"},
		{name: "kubeproxydaemonset+json.yaml", ignore: "no known target"},
		{name: "kubeproxydaemonset+json.yaml", version: v137, target: "kubeproxydaemonset", typ: "json"},
		{name: "kube-apiserver+.yaml", errHas: "unknown or missing patch type after '+' in \"kube-apiserver+.yaml\", must be one of json, merge, strategic"},
		{name: "kube-apiserver+jsn.yaml", errHas: "unknown or missing patch type"},
		{name: "etcd0+yaml.yaml", errHas: "unknown or missing patch type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			version := tc.version
			if version == nil {
				version = v136
			}
			target, typ, ignore, err := ParseName(tc.name, Targets(version))
			switch {
			case tc.errHas != "":
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Errorf("error %v, want one containing %q", err, tc.errHas)
				}
			case err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.ignore != "":
				if !strings.Contains(ignore, tc.ignore) || target != "" {
					t.Errorf("ignore %q target %q, want it ignored as %q", ignore, target, tc.ignore)
				}
			case target != tc.target || typ != tc.typ || ignore != "":
				t.Errorf("got %q %q (ignored: %q), want %q %q", target, typ, ignore, tc.target, tc.typ)
			}
		})
	}
}

// folder writes files (path: content) into a new folder.
func folder(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const jsonPatch = `[{"op": "add", "path": "/spec/containers/0/command/-", "value": "--v=4"}]`

func TestRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		files   map[string]string
		version *semver.Version
		want    []string
		ignored []string
		errHas  string
	}{
		{
			name:  "patches, in kubeadm's order, sub-folders too",
			files: map[string]string{"kube-apiserver+json.yaml": jsonPatch, "a/etcd.yaml": "spec:\n  priority: 1\n", "kube-scheduler0.json": "{}\n---\n{}\n"},
			want:  []string{"a/etcd.yaml", "kube-apiserver+json.yaml", "kube-scheduler0.json"},
		},
		{
			name:    "ignored files beside",
			files:   map[string]string{"kube-apiserver+json.yaml": jsonPatch, "README.md": "notes", "apiserver.yaml": "{}", "kube-scheduler.yaml": ""},
			want:    []string{"kube-apiserver+json.yaml"},
			ignored: []string{"README.md: the extension is not .json or .yaml", "apiserver.yaml: no known target", "kube-scheduler.yaml: empty"},
		},
		{
			name:   "an empty folder",
			files:  map[string]string{},
			errHas: "holds no patch kubeadm v1.36.3 would read: name each file <target>[suffix][+<type>]<extension>, target one of etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubeletconfiguration, corednsdeployment, type one of json, merge, strategic, extension .json or .yaml",
		},
		{
			name:   "only files kubeadm ignores",
			files:  map[string]string{"kube-apiserver.yml": jsonPatch, "notes.txt": "x"},
			errHas: "holds no patch kubeadm v1.36.3 would read",
		},
		{
			name:   "the kube-proxy target before v1.37",
			files:  map[string]string{"kubeproxydaemonset+json.yaml": jsonPatch},
			errHas: "ignored: kubeproxydaemonset+json.yaml: no known target",
		},
		{
			name:    "the kube-proxy target from v1.37",
			files:   map[string]string{"kubeproxydaemonset+json.yaml": jsonPatch},
			version: v137,
			want:    []string{"kubeproxydaemonset+json.yaml"},
		},
		{
			name:   "a + without a patch type",
			files:  map[string]string{"kube-apiserver+json.yaml": jsonPatch, "kube-scheduler+yaml.yaml": "{}"},
			errHas: "kubeadm v1.36.3 would refuse kube-scheduler+yaml.yaml: unknown or missing patch type after '+'",
		},
		{
			name:   "a patch that is not YAML",
			files:  map[string]string{"kube-apiserver.yaml": "spec: [unclosed\n"},
			errHas: "kubeadm v1.36.3 would refuse kube-apiserver.yaml: its patch 1 is neither YAML nor JSON",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			version := tc.version
			if version == nil {
				version = v136
			}
			set, err := Read(folder(t, tc.files), version, "--patches")
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("error %v, want one containing %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(set.Names(), " "); got != strings.Join(tc.want, " ") {
				t.Errorf("files %s, want %s", got, strings.Join(tc.want, " "))
			}
			if got := strings.Join(set.Ignored, "; "); got != strings.Join(tc.ignored, "; ") {
				t.Errorf("ignored %s, want %s", got, strings.Join(tc.ignored, "; "))
			}
			if len(set.Digest) != 64 {
				t.Errorf("digest %q", set.Digest)
			}
		})
	}
}

func TestReadRefusesWhatIsNoFolder(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "kube-apiserver.yaml")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(file, v136, "--patches"); err == nil || !strings.Contains(err.Error(), "is not a folder") {
		t.Errorf("error %v for a file", err)
	}
	if _, err := Read(filepath.Join(t.TempDir(), "missing"), v136, "--patches"); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("error %v for a missing folder", err)
	}
}

// TestDigestFollowsContent: the same patches have the same digest, other
// ones (a file changed or renamed) another.
func TestDigestFollowsContent(t *testing.T) {
	t.Parallel()
	read := func(files map[string]string) string {
		set, err := Read(folder(t, files), v136, "--patches")
		if err != nil {
			t.Fatal(err)
		}
		return set.Digest
	}
	a := read(map[string]string{"kube-apiserver+json.yaml": jsonPatch})
	if b := read(map[string]string{"kube-apiserver+json.yaml": jsonPatch, "notes.txt": "ignored"}); a != b {
		t.Error("an ignored file changed the digest")
	}
	if b := read(map[string]string{"kube-apiserver+json.yaml": jsonPatch + "\n"}); a == b {
		t.Error("a changed file kept the digest")
	}
	if b := read(map[string]string{"kube-apiserver0+json.yaml": jsonPatch}); a == b {
		t.Error("a renamed file kept the digest")
	}
}
