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

package layout

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/host"
)

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
		t.Fatal(err)
	}
}

// entries makes a Kubernetes binaries entry and control-plane image
// entries as the lab's recipes leave them.
func entries(t *testing.T) (host.Path, []host.Path, host.Path) {
	dir := t.TempDir()
	kube := filepath.Join(dir, "kube")
	for _, b := range serverBinaries {
		write(t, filepath.Join(kube, b), b)
	}
	var cp []host.Path
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"} {
		d := filepath.Join(dir, c)
		write(t, filepath.Join(d, "image-names"), "registry.k8s.io/"+c+"-amd64:v1.37.2\n")
		write(t, filepath.Join(d, "image.tar"), c+" archive")
		cp = append(cp, host.Path(d))
	}
	pause := filepath.Join(dir, "pause")
	write(t, filepath.Join(pause, "image-names"), "registry.k8s.io/pause:3.10.1\n")
	write(t, filepath.Join(pause, "image.tar"), "pause archive")
	return host.Path(kube), cp, host.Path(pause)
}

func tree(t *testing.T, dir string) []string {
	var got []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			got = append(got, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	return got
}

func TestImageDirIsAReleasesServerBin(t *testing.T) {
	kube, cp, pause := entries(t)
	out := t.TempDir()
	if err := ImageDir(context.Background(), out, ImageDirSpec{Version: "v1.37.2", Kube: kube, ControlPlane: cp, Pause: pause}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"kubernetes/server/bin/kube-apiserver.docker_tag", "kubernetes/server/bin/kube-apiserver.tar",
		"kubernetes/server/bin/kube-controller-manager.docker_tag", "kubernetes/server/bin/kube-controller-manager.tar",
		"kubernetes/server/bin/kube-proxy.docker_tag", "kubernetes/server/bin/kube-proxy.tar",
		"kubernetes/server/bin/kube-scheduler.docker_tag", "kubernetes/server/bin/kube-scheduler.tar",
		"kubernetes/server/bin/kubeadm", "kubernetes/server/bin/kubectl", "kubernetes/server/bin/kubelet", "pause.tar",
	}
	if got := tree(t, out); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got\n%v\nwant\n%v", got, want)
	}
	tag, _ := os.ReadFile(filepath.Join(out, "kubernetes/server/bin/kube-proxy.docker_tag"))
	if string(tag) != "v1.37.2" {
		t.Errorf("docker_tag holds %q", tag)
	}
}

func TestReleaseTarball(t *testing.T) {
	kube, cp, _ := entries(t)
	out := t.TempDir()
	if err := Release(context.Background(), out, ReleaseSpec{Version: "v1.37.2", Kube: kube, ControlPlane: cp}); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, out); len(got) != 1 || got[0] != "kubernetes-server-linux-amd64.tar.gz" {
		t.Fatalf("the entry holds %v", got)
	}
	f, err := os.Open(filepath.Join(out, "kubernetes-server-linux-amd64.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	r := tar.NewReader(gz)
	files := map[string]string{}
	for {
		h, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(h.Name, "kubernetes/") || h.Uid != 0 {
			t.Errorf("%s: uid %d", h.Name, h.Uid)
		}
		if h.Typeflag == tar.TypeReg {
			data, _ := io.ReadAll(r)
			files[h.Name] = string(data)
		}
	}
	if files["kubernetes/version"] != "v1.37.2\n" || files["kubernetes/server/bin/kubeadm"] != "kubeadm" ||
		files["kubernetes/server/bin/kube-apiserver.tar"] != "kube-apiserver archive" || len(files) != 3+4*2+1 {
		t.Errorf("the tarball holds %v", files)
	}
}

func TestTreeIsAQuickReleaseOutput(t *testing.T) {
	kube, cp, pause := entries(t)
	out := t.TempDir()
	if err := Tree(context.Background(), out, TreeSpec{Kube: kube, ControlPlane: cp, Pause: pause}); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(tree(t, out), " ")
	for _, w := range []string{"_output/dockerized/bin/linux/amd64/kube-proxy", "_output/release-images/amd64/kube-scheduler.tar", "_output/release-images/amd64/pause.tar"} {
		if !strings.Contains(got, w) {
			t.Errorf("no %s in %s", w, got)
		}
	}
}

func TestAnArchiveOfAnotherImageIsRefused(t *testing.T) {
	kube, cp, pause := entries(t)
	cp[0] = pause
	if err := ImageDir(context.Background(), t.TempDir(), ImageDirSpec{Version: "v1.37.2", Kube: kube, ControlPlane: cp}); err == nil || !strings.Contains(err.Error(), "registry.k8s.io/pause") {
		t.Errorf("got %v, want an error naming the archive's image", err)
	}
}
