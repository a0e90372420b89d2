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

package main

import "testing"

func TestNormalizeReference(t *testing.T) {
	t.Parallel()
	cases := []struct {
		ref      string
		wantRepo string
		wantTag  string
		wantErr  bool
	}{
		{ref: "kindest/kindnetd:v20260820-69b56db7", wantRepo: "docker.io/kindest/kindnetd", wantTag: "v20260820-69b56db7"},
		{ref: "busybox:1", wantRepo: "docker.io/library/busybox", wantTag: "1"},
		{ref: "busybox", wantRepo: "docker.io/library/busybox", wantTag: "latest"},
		{ref: "docker.io/busybox:1", wantRepo: "docker.io/library/busybox", wantTag: "1"},
		{ref: "index.docker.io/kindest/local-path-helper:v1", wantRepo: "docker.io/kindest/local-path-helper", wantTag: "v1"},
		{ref: "registry.k8s.io/pause:3.10", wantRepo: "registry.k8s.io/pause", wantTag: "3.10"},
		{ref: "registry.k8s.io/coredns/coredns:v1.12.1", wantRepo: "registry.k8s.io/coredns/coredns", wantTag: "v1.12.1"},
		{ref: "localhost:5000/canary", wantRepo: "localhost:5000/canary", wantTag: "latest"},
		{ref: "localhost:5000/canary:v1", wantRepo: "localhost:5000/canary", wantTag: "v1"},
		{ref: "localhost/canary:v1", wantRepo: "localhost/canary", wantTag: "v1"},
		{ref: "kind-upgrade-e2e/canary:v1", wantRepo: "docker.io/kind-upgrade-e2e/canary", wantTag: "v1"},
		{ref: "Example/canary:v1", wantRepo: "Example/canary", wantTag: "v1"},
		{ref: "busybox@sha256:0123", wantErr: true},
		{ref: "busybox:", wantErr: true},
		{ref: ":v1", wantErr: true},
		{ref: "registry.k8s.io/", wantErr: true},
		{ref: "Busybox:1", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.ref, func(t *testing.T) {
			t.Parallel()
			repo, tag, err := normalizeReference(tc.ref)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("normalizeReference(%q) = %q, %q; want an error", tc.ref, repo, tag)
				}
				return
			}
			if err != nil {
				t.Fatalf("normalizeReference(%q): %v", tc.ref, err)
			}
			if repo != tc.wantRepo || tag != tc.wantTag {
				t.Errorf("normalizeReference(%q) = %q, %q; want %q, %q", tc.ref, repo, tag, tc.wantRepo, tc.wantTag)
			}
		})
	}
}

func TestRegistryHost(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"registry-1.docker.io":     "docker.io",
		"registry-1.docker.io:443": "docker.io",
		"index.docker.io":          "docker.io",
		"docker.io":                "docker.io",
		"registry.k8s.io":          "registry.k8s.io",
		"Registry.K8s.io:443":      "registry.k8s.io",
		"registry.k8s.io:80":       "registry.k8s.io",
		"localhost:5000":           "localhost:5000",
	}
	for in, want := range cases {
		if got := registryHost(in); got != want {
			t.Errorf("registryHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParsePath(t *testing.T) {
	t.Parallel()
	cases := []struct {
		path            string
		name, kind, ref string
		wantOK          bool
	}{
		{path: "/v2/pause/manifests/3.10", name: "pause", kind: "manifests", ref: "3.10", wantOK: true},
		{path: "/v2/coredns/coredns/blobs/sha256:ab", name: "coredns/coredns", kind: "blobs", ref: "sha256:ab", wantOK: true},
		{path: "/v2/a/blobs/manifests/x", name: "a/blobs", kind: "manifests", ref: "x", wantOK: true},
		{path: "/v2/pause/tags/list"},
		{path: "/v2/manifests/3.10"},
		{path: "/v2/pause/manifests/"},
		{path: "/v1/pause/manifests/3.10"},
	}
	for _, tc := range cases {
		name, kind, ref, ok := parsePath(tc.path)
		if ok != tc.wantOK || (ok && (name != tc.name || kind != tc.kind || ref != tc.ref)) {
			t.Errorf("parsePath(%q) = %q, %q, %q, %v; want %q, %q, %q, %v",
				tc.path, name, kind, ref, ok, tc.name, tc.kind, tc.ref, tc.wantOK)
		}
	}
}
