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

package imageref

import "testing"

func TestStripArchSuffix(t *testing.T) {
	t.Parallel()
	cases := []struct {
		ref  string
		want string
	}{
		{"registry.k8s.io/kube-apiserver-amd64:v1.34.4", "registry.k8s.io/kube-apiserver:v1.34.4"},
		{"registry.k8s.io/kube-proxy-arm64:v1.34.4", "registry.k8s.io/kube-proxy:v1.34.4"},
		{"registry.k8s.io/kube-scheduler-s390x:v1.34.4", "registry.k8s.io/kube-scheduler:v1.34.4"},
		{"registry.k8s.io/kube-controller-manager-ppc64le:v1.34.4", "registry.k8s.io/kube-controller-manager:v1.34.4"},
		{"registry.k8s.io/kubectl-arm:v1.34.4", "registry.k8s.io/kubectl:v1.34.4"},
		{"registry.k8s.io/kube-apiserver:v1.34.4", "registry.k8s.io/kube-apiserver:v1.34.4"},
		{"registry.k8s.io/etcd:3.6.4-0", "registry.k8s.io/etcd:3.6.4-0"},
		{"registry.k8s.io/pause:3.10-amd64", "registry.k8s.io/pause:3.10-amd64"},
		{
			"registry.k8s.io/kube-apiserver-amd64@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			"registry.k8s.io/kube-apiserver@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		},
		{
			"registry.k8s.io/kube-apiserver-amd64:v1.34.4@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			"registry.k8s.io/kube-apiserver:v1.34.4@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		},
		{"localhost:5000/foo-amd64:v1", "localhost:5000/foo:v1"},
		{"localhost:5000/foo:v1", "localhost:5000/foo:v1"},
		{"registry-amd64.example.com/foo:v1", "registry-amd64.example.com/foo:v1"},
		{"example.com/foo-amd64/bar:v1", "example.com/foo-amd64/bar:v1"},
		{"example.com/foo-amd64-bar:v1", "example.com/foo-amd64-bar:v1"},
		{"example.com/foo-amd64x:v1", "example.com/foo-amd64x:v1"},
		{"foo-riscv64", "foo"},
		{"foo-386:v1", "foo:v1"},
		{"-amd64:v1", "-amd64:v1"},
		{"", ""},
	}
	for _, tc := range cases {
		t.Run(tc.ref, func(t *testing.T) {
			t.Parallel()
			if got := StripArchSuffix(tc.ref); got != tc.want {
				t.Errorf("StripArchSuffix(%q) = %q, want %q", tc.ref, got, tc.want)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	cases := []struct {
		ref  string
		want string
	}{
		{"busybox", "docker.io/library/busybox:latest"},
		{"busybox:1.36", "docker.io/library/busybox:1.36"},
		{"kindest/node:v1.34.0", "docker.io/kindest/node:v1.34.0"},
		{"index.docker.io/library/busybox:1", "docker.io/library/busybox:1"},
		{"docker.io/library/busybox:1", "docker.io/library/busybox:1"},
		{"registry.k8s.io/pause:3.10.1", "registry.k8s.io/pause:3.10.1"},
		{"localhost:5000/foo", "localhost:5000/foo:latest"},
		{"localhost/foo:v1", "localhost/foo:v1"},
		{"busybox@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "docker.io/library/busybox@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},
		{"", ""},
	}
	for _, tc := range cases {
		t.Run(tc.ref, func(t *testing.T) {
			t.Parallel()
			if got := Normalize(tc.ref); got != tc.want {
				t.Errorf("Normalize(%q) = %q, want %q", tc.ref, got, tc.want)
			}
		})
	}
}

func TestComponent(t *testing.T) {
	t.Parallel()
	for ref, want := range map[string]string{
		"registry.k8s.io/kube-apiserver:v1.34.4":  "kube-apiserver",
		"registry.k8s.io/coredns/coredns:v1.12.1": "coredns",
		"etcd:3.6.5-0": "etcd",
		"localhost:5000/pause@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef": "pause",
		"Not A Reference": "Not A Reference",
	} {
		if got := Component(ref); got != want {
			t.Errorf("Component(%q) = %q, want %q", ref, got, want)
		}
	}
}
