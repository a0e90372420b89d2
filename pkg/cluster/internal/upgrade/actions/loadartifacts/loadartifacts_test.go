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

package loadartifacts

import "testing"

func TestParseSnapshotter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, config, want string
	}{
		{"version 2", "version = 2\n[plugins]\n  [plugins.\"io.containerd.grpc.v1.cri\"]\n    sandbox_image = \"registry.k8s.io/pause:3.10\"\n    [plugins.\"io.containerd.grpc.v1.cri\".containerd]\n      snapshotter = \"overlayfs\"\n", "overlayfs"},
		{"version 3", "version = 3\n[plugins.\"io.containerd.cri.v1.images\"]\n  snapshotter = \"native\"\n", "native"},
		{"version 4", "version = 4\n[plugins.\"io.containerd.cri.v1.images\"]\n  snapshotter = \"fuse-overlayfs\"\n", "fuse-overlayfs"},
		{"unknown version", "version = 9\n", ""},
		{"no snapshotter", "version = 2\n", ""},
		{"not toml", "version = = 2", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseSnapshotter([]byte(tc.config))
			if tc.want == "" {
				if err == nil {
					t.Errorf("got %q, want an error", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
