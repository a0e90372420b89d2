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
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/distribution/reference"
)

// This file holds the fixture builders the tests share: fake ELF binaries,
// docker-archive and OCI layout tars, release trees and release tarballs,
// all small and all built in t.TempDir().

// file is one entry of a fixture tar or folder.
type file struct {
	name     string
	body     []byte
	mode     int64 // 0 means 0o644
	typeflag byte  // 0 means a regular file
	linkname string
}

// tarOf returns a tar holding files in order.
func tarOf(t testing.TB, files []file) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Mode: f.mode, Typeflag: f.typeflag, Linkname: f.linkname}
		if hdr.Mode == 0 {
			hdr.Mode = 0o644
		}
		if hdr.Typeflag == 0 {
			hdr.Typeflag = tar.TypeReg
		}
		if hdr.Typeflag == tar.TypeReg {
			hdr.Size = int64(len(f.body))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// gzipOf compresses data.
func gzipOf(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeFile writes data to p with mode, creating parent folders.
func writeFile(t testing.TB, p string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		t.Fatal(err)
	}
	// WriteFile leaves the mode of an existing file and applies the umask
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// writeFiles writes files into dir; links are not supported here.
func writeFiles(t testing.TB, dir string, files []file) {
	t.Helper()
	for _, f := range files {
		mode := os.FileMode(f.mode)
		if mode == 0 {
			mode = 0o644
		}
		writeFile(t, filepath.Join(dir, f.name), f.body, mode)
	}
}

// writeTarball writes files under prefix (with folder entries) as a
// gzip tarball at p, and returns its path.
func writeTarball(t testing.TB, p, prefix string, files []file) string {
	t.Helper()
	var entries []file
	dir := ""
	for _, part := range splitPath(prefix) {
		dir = path.Join(dir, part)
		entries = append(entries, file{name: dir + "/", mode: 0o755, typeflag: tar.TypeDir})
	}
	for _, f := range files {
		f.name = path.Join(prefix, f.name)
		entries = append(entries, f)
	}
	writeFile(t, p, gzipOf(t, tarOf(t, entries)), 0o644)
	return p
}

// splitPath splits a slash-separated path into its elements.
func splitPath(p string) []string {
	var parts []string
	for p != "" && p != "." && p != "/" {
		dir, base := path.Split(path.Clean(p))
		parts = append([]string{base}, parts...)
		p = dir
	}
	return parts
}

// fakeELF returns the start of an ELF file for machine, followed by payload.
func fakeELF(class elf.Class, data elf.Data, machine elf.Machine, payload string) []byte {
	header := make([]byte, 64)
	copy(header, elf.ELFMAG)
	header[elf.EI_CLASS] = byte(class)
	header[elf.EI_DATA] = byte(data)
	header[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	var order binary.ByteOrder = binary.LittleEndian
	if data == elf.ELFDATA2MSB {
		order = binary.BigEndian
	}
	order.PutUint16(header[16:], uint16(elf.ET_EXEC))
	order.PutUint16(header[18:], uint16(machine))
	return append(header, payload...)
}

// fakeBinary returns a little-endian 64-bit ELF binary for machine whose
// payload names it.
func fakeBinary(machine elf.Machine, name string) []byte {
	return fakeELF(elf.ELFCLASS64, elf.ELFDATA2LSB, machine, "binary "+name)
}

// digestOf returns the sha256 digest of data.
func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// mustJSON marshals v.
func mustJSON(t testing.TB, v interface{}) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// fakeImage describes one image of a fixture archive.
type fakeImage struct {
	arch string
	tags []string
}

// img describes an image with the architecture arch and the tags.
func img(arch string, tags ...string) fakeImage {
	return fakeImage{arch: arch, tags: tags}
}

// imageBlobs returns a config and a one-file layer for an image.
func imageBlobs(t testing.TB, im fakeImage, n int) (config, layer []byte) {
	t.Helper()
	config = mustJSON(t, map[string]interface{}{
		"architecture": im.arch,
		"os":           "linux",
		"config":       map[string]interface{}{"Labels": map[string]string{"n": fmt.Sprint(n)}},
	})
	layer = tarOf(t, []file{{name: "hello", body: []byte(fmt.Sprintf("image %d %v", n, im.tags))}})
	return config, layer
}

// dockerArchive returns the files of a docker-archive holding images, in
// the order docker save writes them: manifest.json last.
func dockerArchive(t testing.TB, images ...fakeImage) []file {
	t.Helper()
	var files []file
	var manifest []map[string]interface{}
	for n, im := range images {
		config, layer := imageBlobs(t, im, n)
		configName := digestOf(config)[len("sha256:"):] + ".json"
		layerName := fmt.Sprintf("layer%d/layer.tar", n)
		files = append(files,
			file{name: configName, body: config},
			file{name: fmt.Sprintf("layer%d/", n), mode: 0o755, typeflag: tar.TypeDir},
			file{name: layerName, body: layer},
		)
		tags := im.tags
		manifest = append(manifest, map[string]interface{}{
			"Config":   configName,
			"RepoTags": tags,
			"Layers":   []string{layerName},
		})
	}
	return append(files, file{name: "manifest.json", body: mustJSON(t, manifest)})
}

// ociArchive returns the files of an OCI layout holding images, each named
// in index.json by the annotations nameAnnotations returns for its tags.
func ociArchive(t testing.TB, annotate func(tag string) map[string]string, images ...fakeImage) []file {
	t.Helper()
	files := []file{
		{name: "oci-layout", body: []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{name: "blobs/", mode: 0o755, typeflag: tar.TypeDir},
		{name: "blobs/sha256/", mode: 0o755, typeflag: tar.TypeDir},
	}
	var manifests []map[string]interface{}
	for n, im := range images {
		config, layer := imageBlobs(t, im, n)
		manifest := ociManifestOf(t, config, layer)
		files = append(files, blobFile(config), blobFile(layer), blobFile(manifest))
		for _, tag := range im.tags {
			manifests = append(manifests, map[string]interface{}{
				"mediaType":   "application/vnd.oci.image.manifest.v1+json",
				"digest":      digestOf(manifest),
				"size":        len(manifest),
				"annotations": annotate(tag),
			})
		}
	}
	index := mustJSON(t, map[string]interface{}{"schemaVersion": 2, "manifests": manifests})
	return append(files, file{name: "index.json", body: index})
}

// ociManifestOf returns an OCI image manifest for config and layer.
func ociManifestOf(t testing.TB, config, layer []byte) []byte {
	t.Helper()
	return mustJSON(t, map[string]interface{}{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]interface{}{
			"mediaType": "application/vnd.oci.image.config.v1+json",
			"digest":    digestOf(config),
			"size":      len(config),
		},
		"layers": []map[string]interface{}{{
			"mediaType": "application/vnd.oci.image.layer.v1.tar",
			"digest":    digestOf(layer),
			"size":      len(layer),
		}},
	})
}

// blobFile returns the OCI layout entry of a blob.
func blobFile(data []byte) file {
	return file{name: "blobs/sha256/" + digestOf(data)[len("sha256:"):], body: data}
}

// containerdName annotates like ctr images export.
func containerdName(tag string) map[string]string {
	return map[string]string{
		"io.containerd.image.name":          tag,
		"org.opencontainers.image.ref.name": tagOf(tag),
	}
}

// ociRefName annotates with a full reference in the OCI annotation only.
func ociRefName(tag string) map[string]string {
	return map[string]string{"org.opencontainers.image.ref.name": tag}
}

// tagOnly annotates with only the tag, as some tools do.
func tagOnly(tag string) map[string]string {
	return map[string]string{"org.opencontainers.image.ref.name": tagOf(tag)}
}

// tagOf returns the tag of a reference, "latest" if it has none.
func tagOf(ref string) string {
	if tagged, err := reference.Parse(ref); err == nil {
		if tagged, ok := tagged.(reference.Tagged); ok {
			return tagged.Tag()
		}
	}
	return "latest"
}

// withoutEntry returns files without the entry called name.
func withoutEntry(files []file, name string) []file {
	var kept []file
	for _, f := range files {
		if f.name != name {
			kept = append(kept, f)
		}
	}
	return kept
}

// withEntry returns files with the body of the entry called name replaced.
func withEntry(files []file, name string, body []byte) []file {
	kept := make([]file, len(files))
	copy(kept, files)
	for i := range kept {
		if kept[i].name == name {
			kept[i].body = body
		}
	}
	return kept
}

// entryNamed returns the entry called name, failing the test if none is.
func entryNamed(t testing.TB, files []file, name string) file {
	t.Helper()
	for _, f := range files {
		if f.name == name {
			return f
		}
	}
	t.Fatalf("no entry %s", name)
	return file{}
}

// release returns the files of a release's server/bin for machine, with
// the images tagged for arch: the three binaries, another binary, two
// image archives and their .docker_tag files.
func release(t testing.TB, machine elf.Machine, arch string) []file {
	t.Helper()
	return []file{
		{name: "kube-apiserver", body: fakeBinary(machine, "kube-apiserver"), mode: 0o755},
		{name: "kube-apiserver.docker_tag", body: []byte("v1.34.4\n")},
		{name: "kube-apiserver.tar", body: tarOf(t, dockerArchive(t, img(arch, "registry.k8s.io/kube-apiserver-"+arch+":v1.34.4")))},
		{name: "kube-proxy.docker_tag", body: []byte("v1.34.4\n")},
		{name: "kube-proxy.tar", body: tarOf(t, dockerArchive(t, img(arch, "registry.k8s.io/kube-proxy-"+arch+":v1.34.4")))},
		{name: "kubeadm", body: fakeBinary(machine, "kubeadm"), mode: 0o755},
		{name: "kubectl", body: fakeBinary(machine, "kubectl"), mode: 0o755},
		{name: "kubelet", body: fakeBinary(machine, "kubelet"), mode: 0o755},
	}
}

// extras returns image archives a user adds beside a release: etcd as a
// docker-archive and pause as an OCI layout.
func extras(t testing.TB) []file {
	t.Helper()
	return []file{
		{name: "etcd.tar", body: tarOf(t, dockerArchive(t, img("amd64", "registry.k8s.io/etcd:3.6.4-0")))},
		{name: "pause.tar", body: tarOf(t, ociArchive(t, containerdName, img("amd64", "registry.k8s.io/pause:3.10.1")))},
	}
}
