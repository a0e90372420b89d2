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

package nodeimage_test

import (
	"reflect"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/nodeimage"
)

// listing is part of `ctr images list` (containerd v2.3.4) in a node image
// kind v0.33's builder made here (kind-upgrade-e2e/node:v1.36.3): the kube-*
// archives imported under the release's -amd64 names, tagged again without
// the suffix, and named by digest (import-<date>@sha256:..., sha256:...).
const listing = `REF                                                                                       TYPE                                                 DIGEST                                                                  SIZE      PLATFORMS   LABELS                                                          
import-2026-12-02@sha256:943f88fead29b5995a8bba3c942a489a5f4326beb123572f56b68334b06e9e6e application/vnd.oci.image.index.v1+json              sha256:943f88fead29b5995a8bba3c942a489a5f4326beb123572f56b68334b06e9e6e 157.3 MiB linux/amd64 io.cri-containerd.image=managed,io.cri-containerd.pinned=pinned 
registry.k8s.io/kube-proxy-amd64:v1.36.3                                                  application/vnd.docker.distribution.manifest.v2+json sha256:265e6dd7dc917f18689b6b98824b951a45c5f0f821013f8d34a4c438e77423c5 157.3 MiB linux/amd64 io.cri-containerd.image=managed,io.cri-containerd.pinned=pinned 
registry.k8s.io/kube-proxy:v1.36.3                                                        application/vnd.docker.distribution.manifest.v2+json sha256:265e6dd7dc917f18689b6b98824b951a45c5f0f821013f8d34a4c438e77423c5 157.3 MiB linux/amd64 io.cri-containerd.image=managed                                 
registry.k8s.io/pause:3.10                                                                application/vnd.oci.image.manifest.v1+json           sha256:2a05fece9a392c3bcda1f8be64479fe5c9f6bdd7e636cedba1162b82d646c009 1.5 MiB   linux/amd64 io.cri-containerd.image=managed,io.cri-containerd.pinned=pinned 
sha256:8ca1b99d883fe3ac7753e2b238a3c34c41b8fef77f6dd5c0912fd159a8613095                   application/vnd.docker.distribution.manifest.v2+json sha256:265e6dd7dc917f18689b6b98824b951a45c5f0f821013f8d34a4c438e77423c5 157.3 MiB linux/amd64 io.cri-containerd.image=managed                                 
`

// mib is a size of n MiB, as ctr's "n MiB" is read.
func mib(n float64) int64 { return int64(n * (1 << 20)) }

func TestParseImageList(t *testing.T) {
	got := nodeimage.ParseImageList(listing)
	want := []nodeimage.ListedImage{
		{Ref: "registry.k8s.io/kube-proxy-amd64:v1.36.3", Size: mib(157.3)},
		{Ref: "registry.k8s.io/kube-proxy:v1.36.3", Size: mib(157.3)},
		{Ref: "registry.k8s.io/pause:3.10", Size: mib(1.5)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseImageList:\n got %+v\nwant %+v", got, want)
	}
}

func TestSandboxImage(t *testing.T) {
	cases := []struct {
		name, config, want string
	}{
		{"config version 4 (containerd v2.3.4 in a node image kind's builder made)", `version = 4
root = '/var/lib/containerd'
state = '/run/containerd'
[plugins]
  [plugins.'io.containerd.cri.v1.images']
    discard_unpacked_layers = true
    use_local_image_pull = false

    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = 'registry.k8s.io/pause:3.10'

    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = '/etc/containerd/certs.d'
`, "registry.k8s.io/pause:3.10"},
		{"config version 3 (containerd 2)", `version = 3
[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = 'registry.k8s.io/pause:3.10'
`, "registry.k8s.io/pause:3.10"},
		{"config version 2 (containerd 1.x)", `version = 2
[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "registry.k8s.io/pause:3.9"
`, "registry.k8s.io/pause:3.9"},
		{"no sandbox set", "version = 3\n", ""},
	}
	for _, c := range cases {
		got, err := nodeimage.SandboxImage(c.config)
		if err != nil || got != c.want {
			t.Errorf("%s: SandboxImage = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	if _, err := nodeimage.SandboxImage("version = 1\n"); err == nil {
		t.Error("SandboxImage took config version 1")
	}
}
