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

package preflight

import (
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
)

func TestParseProbe(t *testing.T) {
	t.Parallel()
	target, images, err := ParseProbe("v1.34.4\nregistry.k8s.io/kube-apiserver:v1.34.4\n\nregistry.k8s.io/pause:3.10.1\n")
	if err != nil {
		t.Fatal(err)
	}
	if target.String() != "1.34.4" || strings.Join(images, ",") != "registry.k8s.io/kube-apiserver:v1.34.4,registry.k8s.io/pause:3.10.1" {
		t.Errorf("parsed %s %v", target, images)
	}
	for _, bad := range []string{"", "garbage\nimage", "v1.34.4\n"} {
		if _, _, err := ParseProbe(bad); err == nil {
			t.Errorf("ParseProbe(%q) did not fail", bad)
		}
	}
}

func TestParseDF(t *testing.T) {
	t.Parallel()
	got, err := ParseDF("Filesystem     1024-blocks     Used Available Capacity Mounted on\noverlay          263174212 12345678 250000000       5% /\n/dev/vda 263174212 12345678 1000 5% /var/lib/a b\n")
	if err != nil || len(got) != 2 || got[0] != (FileSystem{Device: "overlay", Size: 263174212 * 1024, Available: 250000000 * 1024, Mount: "/"}) || got[1] != (FileSystem{Device: "/dev/vda", Size: 263174212 * 1024, Available: 1000 * 1024, Mount: "/var/lib/a b"}) {
		t.Errorf("got %+v, %v", got, err)
	}
	if _, err := ParseDF("df: /var/lib/containerd: No such file or directory"); err == nil {
		t.Error("garbage parsed")
	}
}

func TestGoArch(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "s390x": "s390x", "ppc64le": "ppc64le", "i686": "386"} {
		if got := GoArch(in); got != want {
			t.Errorf("GoArch(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsCgroupV1(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{"cgroup2fs\n": false, "tmpfs\n": true, "cgroupfs": true} {
		if got := IsCgroupV1(in); got != want {
			t.Errorf("IsCgroupV1(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestHasSwap(t *testing.T) {
	t.Parallel()
	header := "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
	if HasSwap(header) {
		t.Error("no swap area, but HasSwap")
	}
	if !HasSwap(header + "/dev/vda2                               partition\t1048572\t\t0\t\t-2\n") {
		t.Error("a swap area, but not HasSwap")
	}
}

func TestHostRefusal(t *testing.T) {
	t.Parallel()
	no, yes := false, true
	v := semver.MustParse
	cases := []struct {
		name     string
		target   string
		cfg      kube.KubeletConfiguration
		v1, swap []string
		refused  bool
	}{
		{name: "v1.34 on cgroup v1", target: "1.34.4", v1: []string{"a"}},
		{name: "v1.35 on cgroup v1, unset", target: "1.35.0", v1: []string{"a"}, refused: true},
		{name: "v1.37 on cgroup v1, true", target: "1.37.2", cfg: kube.KubeletConfiguration{FailCgroupV1: &yes}, v1: []string{"a"}, refused: true},
		{name: "v1.37 on cgroup v1, false", target: "1.37.2", cfg: kube.KubeletConfiguration{FailCgroupV1: &no}, v1: []string{"a"}},
		{name: "v1.37 on cgroup v2", target: "1.37.2"},
		{name: "swap, unset", target: "1.34.4", swap: []string{"a"}, refused: true},
		{name: "swap, false", target: "1.34.4", cfg: kube.KubeletConfiguration{FailSwapOn: &no}, swap: []string{"a"}},
	}
	for _, tc := range cases {
		err := HostRefusal(v(tc.target), &tc.cfg, tc.v1, tc.swap, "dev")
		if (err != nil) != tc.refused {
			t.Errorf("%s: refused=%v, want %v (%v)", tc.name, err != nil, tc.refused, err)
		}
		if err != nil && !strings.Contains(err.Error(), "--context kind-dev") {
			t.Errorf("%s: the fix does not name the cluster's context: %v", tc.name, err)
		}
	}
}
