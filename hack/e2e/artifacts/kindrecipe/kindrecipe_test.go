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

package kindrecipe

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// kindModule is the sigs.k8s.io/kind module the repository requires.
func kindModule(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kind")
	cmd.Dir = filepath.Join("..", "..", "..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m sigs.k8s.io/kind: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestReadBaseOfKindsModule reads the recipe of the kind this repository
// builds on: what the lab's base image is made of.
func TestReadBaseOfKindsModule(t *testing.T) {
	b, err := ReadBase(kindModule(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"CONTAINERD_VERSION", "RUNC_VERSION", "CRICTL_VERSION", "CNI_PLUGINS_VERSION", "CONTAINERD_FUSE_OVERLAYFS_VERSION"} {
		if v, err := b.Arg(name); err != nil || !strings.HasPrefix(v, "v") || strings.ContainsAny(v, "\"' ") {
			t.Errorf("Arg(%s) = %q, %v: want a plain version", name, v, err)
		}
	}
	if v, _ := b.Arg("BUILDTAGS"); !strings.Contains(v, " ") || strings.Contains(v, "\"") {
		t.Errorf("Arg(BUILDTAGS) = %q: want the tags without quotes", v)
	}
	if b.Suite == "" || strings.Contains(b.Suite, ":") {
		t.Errorf("Suite = %q", b.Suite)
	}
	// the go-build stage's clean-install (build tools) must not leak in
	for _, want := range []string{"systemd", "iptables", "procps"} {
		if !contains(b.Packages, want) {
			t.Errorf("Packages = %v: no %s", b.Packages, want)
		}
	}
	for _, not := range []string{"build-essential", "git", "make"} {
		if contains(b.Packages, not) {
			t.Errorf("Packages = %v: %s is the go-build stage's", b.Packages, not)
		}
	}
	if !strings.HasPrefix(b.SandboxImage, "registry.k8s.io/pause:") {
		t.Errorf("SandboxImage = %q", b.SandboxImage)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

const dockerfile = `ARG BASE_IMAGE=debian:trixie-slim
FROM $BASE_IMAGE AS base
RUN echo "Installing" \
    && DEBIAN_FRONTEND=noninteractive clean-install \
      systemd \
      "iptables" 'jq' \
    && ln -s /usr/lib/systemd/systemd /sbin/init
FROM $BASE_IMAGE AS go-build
RUN clean-install git make
FROM go-build AS build-containerd
ARG CONTAINERD_VERSION="v2.3.4"
ARG BUILDTAGS="no_aufs no_zfs"
`

func TestParseDockerfile(t *testing.T) {
	b, err := ParseDockerfile([]byte(dockerfile))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"systemd", "iptables", "jq"}; !reflect.DeepEqual(b.Packages, want) {
		t.Errorf("Packages = %q, want %q", b.Packages, want)
	}
	if b.Suite != "trixie" || b.Args["CONTAINERD_VERSION"] != "v2.3.4" || b.Args["BUILDTAGS"] != "no_aufs no_zfs" {
		t.Errorf("read %+v", b)
	}
}

// TestParseDockerfileRefusesShapesItDoesNotKnow: a reshaped recipe stops
// the build with a message instead of yielding a partial answer.
func TestParseDockerfileRefusesShapesItDoesNotKnow(t *testing.T) {
	cases := []struct{ name, from, to, want string }{
		{"packages from a variable", "      systemd \\", "      $PKGS \\", "expands something"},
		{"no clean-install in the base stage", "clean-install \\", "apt-get install -y \\", "installs no packages"},
		{"two clean-installs", "&& ln -s", "&& clean-install bash && ln -s", "more than once"},
		{"no base stage", "AS base", "AS root", "no stage named"},
		{"not Debian", "debian:trixie-slim", "ubuntu:24.04", "not a debian"},
		{"an ARG that expands", "\"v2.3.4\"", "\"${V}\"", "expands something"},
		{"two defaults", "ARG BUILDTAGS=", "ARG CONTAINERD_VERSION=v2.0.0\nARG BUILDTAGS=", "two defaults"},
		{"exec-form RUN", "RUN clean-install git make", "RUN [\"clean-install\", \"git\"]", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			changed := strings.Replace(dockerfile, c.from, c.to, 1)
			if changed == dockerfile {
				t.Fatalf("%q is not in the test Dockerfile", c.from)
			}
			_, err := ParseDockerfile([]byte(changed))
			if c.want == "" {
				// outside the base stage: not read, not refused
				if err != nil {
					t.Errorf("err = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestSandboxImage(t *testing.T) {
	got, err := SandboxImage([]byte("version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  sandbox_image = \"registry.k8s.io/pause:3.10\"\n"))
	if err != nil || got != "registry.k8s.io/pause:3.10" {
		t.Errorf("SandboxImage = %q, %v", got, err)
	}
	for _, bad := range []string{
		"version = 3\n[plugins.\"io.containerd.cri.v1.images\".pinned_images]\n  sandbox = \"registry.k8s.io/pause:3.10\"\n",
		"version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  enable_cdi = true\n",
		"version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  sandbox_image = 3\n",
	} {
		if got, err := SandboxImage([]byte(bad)); err == nil {
			t.Errorf("SandboxImage(%q) = %q, want an error", bad, got)
		}
	}
}

func TestGoConst(t *testing.T) {
	p := filepath.Join(t.TempDir(), "const.go")
	src := "package x\n\nconst a = \"docker.io/kindest/a:v1\"\n\nconst (\n\tb = \"b\"\n\tc = 3\n\td = a\n)\n"
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := GoConst(p, "a"); err != nil || v != "docker.io/kindest/a:v1" {
		t.Errorf("GoConst(a) = %q, %v", v, err)
	}
	if v, err := GoConst(p, "b"); err != nil || v != "b" {
		t.Errorf("GoConst(b) = %q, %v", v, err)
	}
	for _, name := range []string{"c", "d", "e"} {
		if v, err := GoConst(p, name); err == nil {
			t.Errorf("GoConst(%s) = %q, want an error", name, v)
		}
	}
	// the constants the lab reads from kind's node builder
	dir := filepath.Join(kindModule(t), "pkg", "build", "nodeimage")
	for file, name := range map[string]string{"const_cni.go": "kindnetdImage", "const_storage.go": "storageHelperImage"} {
		if v, err := GoConst(filepath.Join(dir, file), name); err != nil || !strings.HasPrefix(v, "docker.io/kindest/") {
			t.Errorf("%s %s = %q, %v", file, name, v, err)
		}
	}
}
