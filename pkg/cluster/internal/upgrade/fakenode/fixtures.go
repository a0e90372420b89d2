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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
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

// OnePlatformArchive returns an archive as Docker 29 (with its containerd
// image store) writes `docker save` of images pulled for one platform: per
// ref, a multi-platform index listing linux/present, whose config, layer
// and manifest are in the archive, and linux/<absent...>, whose content is
// not; a manifest.json names the present platform's image.
func OnePlatformArchive(present string, absent []string, refs ...string) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(content []byte) string {
		sum := sha256.Sum256(content)
		name := "blobs/sha256/" + hex.EncodeToString(sum[:])
		_ = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg})
		_, _ = tw.Write(content)
		return name
	}
	digest := func(name string) string { return "sha256:" + strings.TrimPrefix(name, "blobs/sha256/") }
	type descriptor struct {
		MediaType   string            `json:"mediaType"`
		Digest      string            `json:"digest"`
		Size        int               `json:"size"`
		Platform    map[string]string `json:"platform,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	}
	type dockerEntry struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	var top []descriptor
	var docker []dockerEntry
	for _, ref := range refs {
		config := []byte(`{"architecture":"` + present + `","os":"linux","ref":"` + ref + `"}`)
		layer := []byte("layer of " + ref)
		configName, layerName := add(config), add(layer)
		manifest, _ := json.Marshal(map[string]interface{}{
			"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
			"config": descriptor{MediaType: "application/vnd.oci.image.config.v1+json", Digest: digest(configName), Size: len(config)},
			"layers": []descriptor{{MediaType: "application/vnd.oci.image.layer.v1.tar", Digest: digest(layerName), Size: len(layer)}},
		})
		children := []descriptor{{MediaType: "application/vnd.oci.image.manifest.v1+json", Digest: digest(add(manifest)), Size: len(manifest),
			Platform: map[string]string{"os": "linux", "architecture": present}}}
		for _, arch := range absent {
			sum := sha256.Sum256([]byte(ref + " for " + arch))
			children = append(children, descriptor{MediaType: "application/vnd.oci.image.manifest.v1+json", Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: 1000,
				Platform: map[string]string{"os": "linux", "architecture": arch}})
		}
		index, _ := json.Marshal(map[string]interface{}{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": children})
		top = append(top, descriptor{MediaType: "application/vnd.oci.image.index.v1+json", Digest: digest(add(index)), Size: len(index),
			Annotations: map[string]string{"io.containerd.image.name": ref}})
		docker = append(docker, dockerEntry{Config: configName, RepoTags: []string{ref}, Layers: []string{layerName}})
	}
	write := func(name string, v interface{}) {
		content, _ := json.Marshal(v)
		_ = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg})
		_, _ = tw.Write(content)
	}
	write("index.json", map[string]interface{}{"schemaVersion": 2, "manifests": top})
	write("manifest.json", docker)
	_ = tw.Close()
	return buf.Bytes()
}

// archiveContent is what the fake's ctr reads of an archive it imports.
type archiveContent struct {
	refs []string
	// missing are the digests of manifests an index lists that are not in
	// the archive, by the architecture of their platform
	missing map[string]string
	// arches are the architectures of the manifests that are in it
	arches map[string]bool
}

// readArchive reads a docker-archive or OCI layout from r: its refs and,
// for a multi-platform index, which platforms' manifests it holds.
func readArchive(r io.Reader) (archiveContent, error) {
	content := archiveContent{missing: map[string]string{}, arches: map[string]bool{}}
	tr := tar.NewReader(r)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return content, err
		}
		if h.Name == "manifest.json" || h.Name == "index.json" || (strings.HasPrefix(h.Name, "blobs/") && h.Size < 1<<20) {
			b, err := io.ReadAll(tr)
			if err != nil {
				return content, err
			}
			files[h.Name] = b
		}
	}
	if m, ok := files["manifest.json"]; ok {
		var manifest []struct{ RepoTags []string }
		if err := json.Unmarshal(m, &manifest); err != nil {
			return content, err
		}
		for _, e := range manifest {
			content.refs = append(content.refs, e.RepoTags...)
		}
	}
	type descriptor struct {
		Digest      string            `json:"digest"`
		Platform    map[string]string `json:"platform"`
		Annotations map[string]string `json:"annotations"`
	}
	type document struct {
		Manifests []descriptor `json:"manifests"`
	}
	if idx, ok := files["index.json"]; ok {
		var top document
		if err := json.Unmarshal(idx, &top); err != nil {
			return content, err
		}
		for _, d := range top.Manifests {
			if ref := d.Annotations["io.containerd.image.name"]; ref != "" && !slices.Contains(content.refs, ref) {
				content.refs = append(content.refs, ref)
			}
			var inner document
			if err := json.Unmarshal(files["blobs/"+strings.Replace(d.Digest, ":", "/", 1)], &inner); err != nil {
				continue
			}
			for _, c := range inner.Manifests {
				if _, ok := files["blobs/"+strings.Replace(c.Digest, ":", "/", 1)]; ok {
					content.arches[c.Platform["architecture"]] = true
				} else {
					content.missing[c.Digest] = c.Platform["architecture"]
				}
			}
		}
	}
	return content, nil
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
