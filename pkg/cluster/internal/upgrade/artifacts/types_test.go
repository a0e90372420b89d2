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

package artifacts

import (
	"context"
	"debug/elf"
	"reflect"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts/artifactstest"
)

func TestImagesAndArchiveFor(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	artifactstest.WriteFiles(t, dir, artifactstest.Release(t, elf.EM_X86_64, "amd64"))
	artifactstest.WriteFiles(t, dir, []artifactstest.File{
		{Name: "busybox.tar", Body: artifactstest.Tar(t, artifactstest.DockerArchive(t, artifactstest.NewImage("amd64", "busybox:1.36")))},
		// the same image again, in another archive
		{Name: "proxy-again.tar", Body: artifactstest.Tar(t, artifactstest.DockerArchive(t, artifactstest.NewImage("amd64", "registry.k8s.io/kube-proxy-amd64:v1.34.4")))},
	})
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Image{
		{Ref: "busybox:1.36", Target: "busybox:1.36"},
		{Ref: "registry.k8s.io/kube-apiserver-amd64:v1.34.4", Target: "registry.k8s.io/kube-apiserver:v1.34.4"},
		{Ref: "registry.k8s.io/kube-proxy-amd64:v1.34.4", Target: "registry.k8s.io/kube-proxy:v1.34.4"},
		{Ref: "registry.k8s.io/kube-proxy-amd64:v1.34.4", Target: "registry.k8s.io/kube-proxy:v1.34.4"},
	}
	var got []Image
	for _, a := range s.Archives {
		got = append(got, a.Images...)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("images = %v, want %v", got, want)
	}
	cases := []struct {
		target string
		want   string
	}{
		{"registry.k8s.io/kube-apiserver:v1.34.4", "kube-apiserver.tar"},
		{"registry.k8s.io/kube-apiserver-amd64:v1.34.4", "kube-apiserver.tar"},
		{"registry.k8s.io/kube-proxy:v1.34.4", "kube-proxy.tar"},
		{"docker.io/library/busybox:1.36", "busybox.tar"},
		{"busybox:1.36", "busybox.tar"},
		{"registry.k8s.io/kube-apiserver:v1.34.3", ""},
		{"registry.k8s.io/etcd:3.6.4-0", ""},
	}
	for _, tc := range cases {
		t.Run(tc.target, func(t *testing.T) {
			t.Parallel()
			a := s.ArchiveFor(tc.target)
			got := ""
			if a != nil {
				got = a.Name
			}
			if got != tc.want {
				t.Errorf("ArchiveFor(%q) = %q, want %q", tc.target, got, tc.want)
			}
		})
	}
}
