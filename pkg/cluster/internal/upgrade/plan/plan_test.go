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

package plan

import (
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/emulation"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	v := semver.MustParse
	same := func(version string) map[string]*semver.Version {
		return map[string]*semver.Version{"cp": v(version), "worker": v(version)}
	}
	cases := []struct {
		name      string
		target    string
		cp        string
		kubelets  map[string]*semver.Version
		installed map[string]*semver.Version
		want      Decision
		errHas    string
	}{
		{name: "patch upgrade", target: "v1.33.14", cp: "v1.33.13", kubelets: same("v1.33.13"), installed: same("v1.33.13"), want: Upgrade},
		{name: "minor upgrade", target: "v1.34.4", cp: "v1.33.13", kubelets: same("v1.33.13"), installed: same("v1.33.13"), want: Upgrade},
		{name: "minor upgrade to a release candidate", target: "v1.34.0-rc.1", cp: "v1.33.13", kubelets: same("v1.33.13"), installed: same("v1.33.13"), want: Upgrade},
		{name: "same version everywhere", target: "v1.34.4", cp: "v1.34.4", kubelets: same("v1.34.4"), installed: same("v1.34.4"), want: NothingToDo},
		{name: "control plane done, kubelets not (resume)", target: "v1.34.4", cp: "v1.34.4", kubelets: same("v1.33.13"), installed: same("v1.33.13"), want: Upgrade},
		{name: "kubelets done, /kind/version not (resume)", target: "v1.34.4", cp: "v1.34.4", kubelets: same("v1.34.4"),
			installed: map[string]*semver.Version{"cp": v("v1.34.4"), "worker": v("v1.33.13")}, want: Upgrade},
		{name: "one kubelet behind, others done (resume)", target: "v1.34.4", cp: "v1.34.4",
			kubelets: map[string]*semver.Version{"cp": v("v1.34.4"), "worker": v("v1.33.13")}, installed: same("v1.33.13"), want: Upgrade},
		{name: "patch downgrade", target: "v1.33.12", cp: "v1.33.13", kubelets: same("v1.33.13"), errHas: "that is a downgrade"},
		{name: "minor downgrade", target: "v1.32.5", cp: "v1.33.13", kubelets: same("v1.33.13"), errHas: "that is a downgrade"},
		{name: "release candidate of the current version is older", target: "v1.34.0-rc.1", cp: "v1.34.0", kubelets: same("v1.34.0"), errHas: "that is a downgrade"},
		{name: "skipping one minor", target: "v1.35.0", cp: "v1.33.13", kubelets: same("v1.33.13"), errHas: "upgrade to v1.34.x first"},
		{name: "skipping two minors", target: "v1.36.1", cp: "v1.33.13", kubelets: same("v1.33.13"), errHas: "skips a minor version"},
		{name: "major version", target: "v2.0.0", cp: "v1.33.13", kubelets: same("v1.33.13"), errHas: "the major version differs"},
		{name: "a kubelet newer than the target", target: "v1.34.4", cp: "v1.34.4",
			kubelets: map[string]*semver.Version{"cp": v("v1.34.4"), "worker": v("v1.34.5")}, errHas: `the kubelet on node "worker" is v1.34.5, newer than the target`},
		{name: "a kubelet too old for the target", target: "v1.34.4", cp: "v1.33.13",
			kubelets: map[string]*semver.Version{"cp": v("v1.33.13"), "worker": v("v1.30.2")}, errHas: "more than 3 minor versions older"},
		{name: "a kubelet three minors behind is allowed", target: "v1.34.4", cp: "v1.33.13",
			kubelets: map[string]*semver.Version{"cp": v("v1.33.13"), "worker": v("v1.31.2")}, want: Upgrade},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			installed := tc.installed
			if installed == nil {
				installed = tc.kubelets
			}
			got, err := Decide(v(tc.target), ClusterVersions{ControlPlane: v(tc.cp), Kubelets: tc.kubelets, Installed: installed})
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("error %v, want one containing %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("decision %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"v1.34.4", "1.34.4"},
		{"v1.35.0-rc.1\n", "1.35.0-rc.1"},
	} {
		got, err := ParseVersion(tc.in)
		if err != nil || got.String() != tc.want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"not a version", "Kubernetes v1.34.4"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion accepted %q", bad)
		}
	}
}

func TestParseBinaryVersion(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Kubernetes v1.34.4\n":                                 "v1.34.4",
		"Client Version: v1.34.4\nKustomize Version: v5.7.1\n": "v1.34.4",
	} {
		if got, err := ParseBinaryVersion(in); err != nil || got != want {
			t.Errorf("ParseBinaryVersion(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseBinaryVersion("Usage: kubelet"); err == nil {
		t.Error("garbage parsed")
	}
}

func TestImagePlanning(t *testing.T) {
	t.Parallel()
	list := []string{
		"registry.k8s.io/kube-apiserver:v1.34.4",
		"registry.k8s.io/kube-controller-manager:v1.34.4",
		"registry.k8s.io/kube-scheduler:v1.34.4",
		"registry.k8s.io/kube-proxy:v1.34.4",
		"registry.k8s.io/coredns/coredns:v1.12.1",
		"registry.k8s.io/pause:3.10.1",
		"registry.k8s.io/etcd:3.6.5-0",
	}
	if got := NeededOn(list, "control-plane"); len(got) != len(list) {
		t.Errorf("control plane needs %v", got)
	}
	worker := strings.Join(NeededOn(list, "worker"), " ")
	if worker != "registry.k8s.io/kube-proxy:v1.34.4 registry.k8s.io/coredns/coredns:v1.12.1 registry.k8s.io/pause:3.10.1" {
		t.Errorf("a worker needs %s", worker)
	}
	present := ImageSet([]string{"registry.k8s.io/pause:3.10.1", "docker.io/library/busybox:latest", "sha256:abcd"})
	missing := Missing([]string{"registry.k8s.io/pause:3.10.1", "busybox", "registry.k8s.io/etcd:3.6.5-0"}, present)
	if got := strings.Join(missing, " "); got != "registry.k8s.io/etcd:3.6.5-0" {
		t.Errorf("missing %s", got)
	}
	if got := ComponentImage(list, "etcd"); got != "registry.k8s.io/etcd:3.6.5-0" {
		t.Errorf("etcd image %s", got)
	}
}

func TestKubeProxySkew(t *testing.T) {
	t.Parallel()
	v := semver.MustParse
	same := map[string]*semver.Version{"cp": v("v1.36.3")}
	for _, tc := range []struct {
		name      string
		kubeProxy *semver.Version
		leaves    bool
		want      Decision
		checkErr  string
	}{
		{name: "at the target", kubeProxy: v("1.36.3"), want: NothingToDo},
		{name: "unknown", want: NothingToDo},
		{name: "behind, to upgrade (an earlier run left it)", kubeProxy: v("1.35.2"), want: Upgrade},
		{name: "behind, left", kubeProxy: v("1.35.2"), leaves: true, want: NothingToDo},
		{name: "three minors behind may stay", kubeProxy: v("1.33.0"), leaves: true, want: NothingToDo},
		{name: "four minors behind may not", kubeProxy: v("1.32.9"), leaves: true, want: NothingToDo,
			checkErr: "kube-proxy would stay at v1.32.9 while the API server goes to v1.36.3: kube-proxy may be at most 3 minor versions older than the API server (Kubernetes' version skew policy)"},
		{name: "newer than the API server", kubeProxy: v("1.37.0"), leaves: true, want: NothingToDo, checkErr: "kube-proxy must never be newer than the API server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			target := v("v1.36.3")
			got, err := Decide(target, ClusterVersions{ControlPlane: target, Kubelets: same, Installed: same, KubeProxy: tc.kubeProxy, LeavesKubeProxy: tc.leaves})
			if err != nil || got != tc.want {
				t.Errorf("Decide = %v, %v; want %v", got, err, tc.want)
			}
			err = CheckKubeProxy(target, tc.kubeProxy)
			switch {
			case tc.checkErr == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.checkErr != "" && (err == nil || !strings.Contains(err.Error(), tc.checkErr)):
				t.Errorf("error %v, want one containing %q", err, tc.checkErr)
			}
		})
	}
}

func TestImageVersion(t *testing.T) {
	t.Parallel()
	for image, want := range map[string]string{
		"registry.k8s.io/kube-proxy:v1.36.3":                           "1.36.3",
		"localhost:5000/kube-proxy:v1.37.0-alpha.1.123_0123456789abcd": "1.37.0",
		"registry.k8s.io/kube-proxy-amd64:v1.34.4":                     "1.34.4",
		"registry.k8s.io/kube-proxy@sha256:0123456789abcdef":           "<nil>",
		"registry.k8s.io/kube-proxy:latest":                            "<nil>",
		"":                                                             "<nil>",
	} {
		got := ImageVersion(image)
		s := "<nil>"
		if got != nil {
			s = got.String()
		}
		if s != want {
			t.Errorf("ImageVersion(%q) = %s, want %s", image, s, want)
		}
	}
}

func TestPlanText(t *testing.T) {
	t.Parallel()
	p := &Plan{From: "v1.36.3", To: "v1.36.3", ControlPlaneOnly: true,
		KubeadmConfig: []emulation.Change{{Sections: []string{"apiServer", "controllerManager", "scheduler"}, Arg: "emulated-version", Value: "1.36", Was: "1.35"}},
		Patches:       &Patches{Dir: "./patches", NodeDir: "/kind/upgrade/patches/0123456789ab", Files: []string{"kube-apiserver+json.yaml"}},
	}
	var b strings.Builder
	if err := p.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Upgrade plan: v1.36.3 -> v1.36.3 (the same version: the control plane is re-applied for its new kubeadm configuration)\n",
		"kubeadm configuration: apiServer, controllerManager, scheduler extraArgs emulated-version=1.36 (was: 1.35)\n",
		"kubeadm patches: ./patches, staged as /kind/upgrade/patches/0123456789ab: kube-apiserver+json.yaml\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, b.String())
		}
	}
}
