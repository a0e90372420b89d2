//go:build e2e

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

package e2e

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// linkTree makes dst a tree of folders mirroring src, with a symlink to
// each of src's files.
func linkTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		return os.Symlink(p, target)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// replaceFile makes p, a symlink in a linked tree, a file of its own with
// content and mode.
func replaceFile(p string, content []byte, mode os.FileMode) error {
	if err := os.Remove(p); err != nil {
		return err
	}
	return os.WriteFile(p, content, mode)
}

// readThrough reads the file a linked tree's p points to.
func readThrough(p string) ([]byte, error) {
	return os.ReadFile(p)
}

// extractFromTarball returns the file named name in a .tar.gz.
func extractFromTarball(tarball, name string) ([]byte, error) {
	f, err := os.Open(tarball)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err != nil {
			return nil, fmt.Errorf("%s not found in %s: %v", name, tarball, err)
		}
		if hdr.Name == name {
			return io.ReadAll(tr)
		}
	}
}

// badInput is a case of bad input: how to make it and what the refusal
// must say.
type badInput struct {
	name string
	// args are kind alpha upgrade's arguments; "<dir>" stands for the
	// case's --image-dir, which setup prepares from a linked copy of the
	// good one.
	args  []string
	setup func(dir string) error
	want  []string
}

// badInputs are the cases, for a cluster at the source version whose
// bin/<dir> layout is the release tree with archives beside it.
func badInputs(t *testing.T, h *harness, bin string) []badInput {
	none := func(string) error { return nil }
	remove := func(rel string) func(string) error {
		return func(dir string) error { return os.Remove(filepath.Join(dir, rel)) }
	}
	alter := func(rel string, mode os.FileMode, change func([]byte) []byte) func(string) error {
		return func(dir string) error {
			p := filepath.Join(dir, rel)
			b, err := readThrough(p)
			if err != nil {
				return err
			}
			return replaceFile(p, change(b), mode)
		}
	}
	upgrade := []string{"alpha", "upgrade", "--name", h.Name, "--image-dir", "<dir>"}
	with := func(extra ...string) []string { return append(append([]string{}, upgrade...), extra...) }
	cases := []badInput{
		{"an empty folder", upgrade, func(dir string) error {
			entries, err := os.ReadDir(dir)
			for _, e := range entries {
				if err == nil {
					err = os.RemoveAll(filepath.Join(dir, e.Name()))
				}
			}
			return err
		}, []string{"has no known layout"}},
		{"a folder that does not exist", with(), os.RemoveAll, []string{"does not exist"}},
		{"kubeadm missing", upgrade, remove(bin + "/kubeadm"), []string{"kubeadm not found in"}},
		{"kubelet not executable", upgrade, alter(bin+"/kubelet", 0o644, func(b []byte) []byte { return b }), []string{"kubelet is not executable: run chmod +x"}},
		{"kubeadm built for arm64", upgrade, alter(bin+"/kubeadm", 0o755, func(b []byte) []byte {
			b = append([]byte{}, b...)
			b[18], b[19] = 183, 0 // ELF e_machine: EM_AARCH64
			return b
		}), []string{"kubeadm in --image-dir", "is built for arm64 but node", "linux/amd64"}},
		{"kubectl not a Linux binary", upgrade, alter(bin+"/kubectl", 0o755, func([]byte) []byte { return []byte("#!/bin/sh\necho v1.99.0\n") }), []string{"kubectl in --image-dir", "is not a Linux binary"}},
		{"a truncated image archive", upgrade, alter("etcd.tar", 0o644, func(b []byte) []byte { return b[:len(b)/2] }), []string{"etcd.tar", "truncated"}},
		{"a corrupt image archive", upgrade, alter(bin+"/kube-proxy.tar", 0o644, func(b []byte) []byte {
			b = append([]byte{}, b...)
			for i := 0; i < 1024 && i < len(b); i++ {
				b[i] = 0xff
			}
			return b
		}), []string{"kube-proxy.tar"}},
		{"the etcd archive missing", upgrade, remove("etcd.tar"), []string{"neither on the nodes nor in --image-dir", h.Manifest.ToEtcdImage}},
		{"the CoreDNS archive missing", upgrade, remove("coredns.tar"), []string{"neither on the nodes nor in --image-dir", h.Manifest.ToCoreDNSImage}},
		{"the pause archive missing", upgrade, remove("pause.tar"), []string{"neither on the nodes nor in --image-dir", "pause"}},
		{"a cluster that does not exist", []string{"alpha", "upgrade", "--name", "no-such-cluster", "--image-dir", "<dir>"}, none, []string{`cluster "no-such-cluster" not found`, "kind get clusters"}},
		{"a --skip-phases typo", with("--skip-phases", "kubelet"), none, []string{`unknown phase "kubelet" in --skip-phases`}},
		{"--skip-phases that would break the version skew", with("--skip-phases", "control-plane"), none, []string{"a kubelet must never be newer than the API server"}},
		{"skipping preflight", with("--skip-phases", "preflight"), none, []string{`phase "preflight" cannot be skipped`}},
		{"a non-positive --wait", with("--wait", "0s"), none, []string{"the wait for readiness must be positive, not 0s"}},
		{"a tarball that is not a Kubernetes release", []string{"alpha", "upgrade", "--name", h.Name, "--image-dir", "<dir>/notes.tar.gz"}, func(dir string) error {
			return writeTarball(filepath.Join(dir, "notes.tar.gz"), map[string]string{"notes/README": "not Kubernetes\n"})
		}, []string{"kubeadm not found in", "notes.tar.gz"}},
		{"two release tarballs in a folder", upgrade, func(dir string) error {
			for _, name := range []string{"kubernetes-server-linux-amd64.tar.gz", "kubernetes-server-linux-arm64.tar.gz"} {
				if err := writeTarball(filepath.Join(dir, name), map[string]string{"kubernetes/README": "x\n"}); err != nil {
					return err
				}
			}
			return os.RemoveAll(filepath.Join(dir, "kubernetes"))
		}, []string{"holds 2 release tarballs"}},
	}
	// the source version's release tarball: its image archives are of
	// another version than the target's
	if release := h.Manifest.SourceRelease; release != "" {
		cases = append(cases, badInput{"an image archive of the source version", upgrade, func(dir string) error {
			b, err := extractFromTarball(release, "kubernetes/server/bin/kube-apiserver.tar")
			if err != nil {
				return err
			}
			return replaceFile(filepath.Join(dir, bin, "kube-apiserver.tar"), b, 0o644)
		}, []string{"neither on the nodes nor in --image-dir", "kube-apiserver:" + h.Manifest.To}})
	}
	return cases
}

// writeTarball writes a .tar.gz of files (name -> content).
func writeTarball(p string, files map[string]string) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for name, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content))}); err != nil {
			return err
		}
		if _, err := tw.Write([]byte(content)); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return f.Close()
}

// nodeState is what a refused run must leave as it was: on each node the
// binaries' checksums, /kind/version, what is staged, containerd's images
// and the static pod manifests; in the API each node's kubelet version,
// cordon state and annotations.
func (h *harness) nodeState(nodes []string) (string, error) {
	var b strings.Builder
	for _, n := range nodes {
		out, err := h.RunStdout(h.Provider, "exec", n, "sh", "-c",
			`sha256sum /usr/bin/kubeadm /usr/bin/kubelet /usr/bin/kubectl; cat /kind/version; echo; `+
				`ls -la /kind/upgrade 2>/dev/null | awk '{print $1, $5, $NF}'; ctr --namespace=k8s.io images ls -q | sort; `+
				`sha256sum /etc/kubernetes/manifests/* 2>/dev/null; sha256sum /var/lib/kubelet/config.yaml`)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "== %s\n%s", n, out)
	}
	out, err := h.Kubectl("get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.name} {.status.nodeInfo.kubeletVersion} unschedulable={.spec.unschedulable} {.metadata.annotations.kind-upgrade\.x-k8s\.io/cordoned-by-upgrade}{"\n"}{end}`)
	if err != nil {
		return "", err
	}
	return b.String() + "== API\n" + out, nil
}

// refusedChangingNothing runs kind with args and checks that it exits
// non-zero with every string of want in its output and leaves nodeState
// as it was.
func (h *harness) refusedChangingNothing(nodes []string, args []string, want []string) (string, error) {
	before, err := h.nodeState(nodes)
	if err != nil {
		return "", err
	}
	cmd := exec.Command(h.Kind, args...)
	out, runErr := cmd.CombinedOutput()
	fmt.Fprintf(h.CommandLog, "$ %s  # err=%v\n%s\n", strings.Join(cmd.Args, " "), runErr, out)
	msg := strings.TrimSpace(string(out))
	if runErr == nil {
		return msg, fmt.Errorf("exit 0, not refused:\n%s", lastLines(msg, 10))
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			return msg, fmt.Errorf("the refusal does not say %q:\n%s", w, lastLines(msg, 10))
		}
	}
	after, err := h.nodeState(nodes)
	if err != nil {
		return msg, err
	}
	if after != before {
		return msg, fmt.Errorf("the cluster changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	return msg, nil
}
