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

package fakenode

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/imageref"
)

// ImageArchive returns a docker-archive tar holding one tiny amd64 image
// per ref.
func ImageArchive(refs ...string) []byte {
	return ImageArchiveFor("amd64", refs...)
}

// ImageArchiveFor is ImageArchive for images of arch.
func ImageArchiveFor(arch string, refs ...string) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	type entry struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	var manifest []entry
	add := func(name string, content []byte) {
		_ = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg})
		_, _ = tw.Write(content)
	}
	for i, ref := range refs {
		config := []byte(`{"architecture":"` + arch + `","os":"linux","ref":"` + ref + `"}`)
		layer := []byte("layer of " + ref)
		id := strings.Repeat(string(rune('a'+i%26)), 8)
		add(id+".json", config)
		add(id+"/layer.tar", layer)
		manifest = append(manifest, entry{Config: id + ".json", RepoTags: []string{ref}, Layers: []string{id + "/layer.tar"}})
	}
	m, _ := json.Marshal(manifest)
	add("manifest.json", m)
	_ = tw.Close()
	return buf.Bytes()
}

// archiveRefs returns the RepoTags of a docker-archive read from r.
func archiveRefs(r io.Reader) ([]string, error) {
	tr := tar.NewReader(r)
	var refs []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if h.Name != "manifest.json" {
			continue
		}
		var manifest []struct{ RepoTags []string }
		if err := json.NewDecoder(tr).Decode(&manifest); err != nil {
			return nil, err
		}
		for _, m := range manifest {
			refs = append(refs, m.RepoTags...)
		}
	}
	return refs, nil
}

// Layout selects how WriteRelease lays the artifacts out.
type Layout string

// Layouts WriteRelease supports.
const (
	// Flat: kubeadm, kubelet, kubectl and every *.tar in one folder.
	Flat Layout = "flat"
	// ReleaseTree: <dir>/kubernetes/server/bin with kube-*.tar archives
	// tagged <name>-amd64, plus etcd/coredns/pause archives in <dir>.
	ReleaseTree Layout = "release-tree"
	// Tarball: <dir>/kubernetes-server-linux-amd64.tar.gz (release-tree
	// content) plus etcd/coredns/pause archives in <dir>.
	Tarball Layout = "tarball"
	// BuildTree: a Kubernetes source tree after make quick-release, with
	// the binaries in <dir>/_output/dockerized/bin/linux/<arch> and every
	// archive in <dir>/_output/release-images/<arch>, kube-* tagged
	// <name>-<arch>.
	BuildTree Layout = "build-tree"
)

// WriteRelease writes what a user brings for version in dir and returns the
// path to pass as --image-dir: binaries for arch and an archive of every
// image KubeadmImages lists for version.
func WriteRelease(dir, version, arch string, layout Layout) (string, error) {
	files := map[string][]byte{}
	// bin holds the binaries, images the kube-* archives, extras the others
	bin, images, extras := "", "", ""
	switch layout {
	case ReleaseTree, Tarball:
		bin, images = "kubernetes/server/bin/", "kubernetes/server/bin/"
	case BuildTree:
		bin = "_output/dockerized/bin/linux/" + arch + "/"
		images = "_output/release-images/" + arch + "/"
		extras = images
	}
	for _, name := range []string{"kubeadm", "kubelet", "kubectl"} {
		files[bin+name] = Binary(name, version, arch)
	}
	for _, image := range KubeadmImages(version, ImageConfig{}) {
		component := imageref.Component(image)
		switch component {
		case "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy":
			ref := image
			if layout != Flat {
				ref = strings.Replace(image, component+":", component+"-"+arch+":", 1)
			}
			if layout == ReleaseTree || layout == Tarball {
				files[bin+component+".docker_tag"] = []byte(version)
			}
			files[images+component+".tar"] = ImageArchive(ref)
		default:
			files[extras+component+".tar"] = ImageArchive(image)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if layout == Tarball {
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		for name, content := range files {
			if !strings.HasPrefix(name, "kubernetes/") {
				continue
			}
			mode := int64(0o644)
			if !strings.Contains(name, ".") {
				mode = 0o755
			}
			if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
				return "", err
			}
			if _, err := tw.Write(content); err != nil {
				return "", err
			}
			delete(files, name)
		}
		if err := tw.Close(); err != nil {
			return "", err
		}
		if err := gz.Close(); err != nil {
			return "", err
		}
		files["kubernetes-server-linux-"+arch+".tar.gz"] = buf.Bytes()
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		mode := os.FileMode(0o644)
		if !strings.Contains(filepath.Base(name), ".") {
			mode = 0o755
		}
		if err := os.WriteFile(p, content, mode); err != nil {
			return "", err
		}
	}
	return dir, nil
}
