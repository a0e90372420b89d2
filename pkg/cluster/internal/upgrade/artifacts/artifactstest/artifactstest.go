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

package artifactstest

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

// File is one entry of a fixture tar or folder.
type File struct {
	Name     string
	Body     []byte
	Mode     int64 // 0 means 0o644
	Typeflag byte  // 0 means a regular file
	Linkname string
}

// Tar returns a tar holding files in order.
func Tar(t testing.TB, files []File) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{Name: f.Name, Mode: f.Mode, Typeflag: f.Typeflag, Linkname: f.Linkname}
		if hdr.Mode == 0 {
			hdr.Mode = 0o644
		}
		if hdr.Typeflag == 0 {
			hdr.Typeflag = tar.TypeReg
		}
		if hdr.Typeflag == tar.TypeReg {
			hdr.Size = int64(len(f.Body))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.Body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Gzip compresses data.
func Gzip(t testing.TB, data []byte) []byte {
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

// WriteFile writes data to p with mode, creating parent folders.
func WriteFile(t testing.TB, p string, data []byte, mode os.FileMode) {
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

// WriteFiles writes files into dir; links are not supported here.
func WriteFiles(t testing.TB, dir string, files []File) {
	t.Helper()
	for _, f := range files {
		mode := os.FileMode(f.Mode)
		if mode == 0 {
			mode = 0o644
		}
		WriteFile(t, filepath.Join(dir, f.Name), f.Body, mode)
	}
}

// WriteTarball writes files under prefix (with folder entries) as a
// gzip tarball at p, and returns its path.
func WriteTarball(t testing.TB, p, prefix string, files []File) string {
	t.Helper()
	var entries []File
	dir := ""
	for _, part := range splitPath(prefix) {
		dir = path.Join(dir, part)
		entries = append(entries, File{Name: dir + "/", Mode: 0o755, Typeflag: tar.TypeDir})
	}
	for _, f := range files {
		f.Name = path.Join(prefix, f.Name)
		entries = append(entries, f)
	}
	WriteFile(t, p, Gzip(t, Tar(t, entries)), 0o644)
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

// ELF returns the start of an ELF file for machine, followed by payload.
func ELF(class elf.Class, data elf.Data, machine elf.Machine, payload string) []byte {
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

// Binary returns a little-endian 64-bit ELF binary for machine whose
// payload names it.
func Binary(machine elf.Machine, name string) []byte {
	return ELF(elf.ELFCLASS64, elf.ELFDATA2LSB, machine, "binary "+name)
}

// Digest returns the sha256 digest of data.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// JSON marshals v.
func JSON(t testing.TB, v interface{}) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Image describes one image of a fixture archive.
type Image struct {
	arch string
	tags []string
}

// NewImage describes an image with the architecture arch and the tags.
func NewImage(arch string, tags ...string) Image {
	return Image{arch: arch, tags: tags}
}

// ImageBlobs returns a config and a one-file layer for an image.
func ImageBlobs(t testing.TB, im Image, n int) (config, layer []byte) {
	t.Helper()
	config = JSON(t, map[string]interface{}{
		"architecture": im.arch,
		"os":           "linux",
		"config":       map[string]interface{}{"Labels": map[string]string{"n": fmt.Sprint(n)}},
	})
	layer = Tar(t, []File{{Name: "hello", Body: []byte(fmt.Sprintf("image %d %v", n, im.tags))}})
	return config, layer
}

// DockerArchive returns the files of a docker-archive holding images, in
// the order docker save writes them: manifest.json last.
func DockerArchive(t testing.TB, images ...Image) []File {
	t.Helper()
	var files []File
	var manifest []map[string]interface{}
	for n, im := range images {
		config, layer := ImageBlobs(t, im, n)
		configName := Digest(config)[len("sha256:"):] + ".json"
		layerName := fmt.Sprintf("layer%d/layer.tar", n)
		files = append(files,
			File{Name: configName, Body: config},
			File{Name: fmt.Sprintf("layer%d/", n), Mode: 0o755, Typeflag: tar.TypeDir},
			File{Name: layerName, Body: layer},
		)
		tags := im.tags
		manifest = append(manifest, map[string]interface{}{
			"Config":   configName,
			"RepoTags": tags,
			"Layers":   []string{layerName},
		})
	}
	return append(files, File{Name: "manifest.json", Body: JSON(t, manifest)})
}

// OCIArchive returns the files of an OCI layout holding images, each named
// in index.json by the annotations annotate returns for its tags.
func OCIArchive(t testing.TB, annotate func(tag string) map[string]string, images ...Image) []File {
	t.Helper()
	files := []File{
		{Name: "oci-layout", Body: []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{Name: "blobs/", Mode: 0o755, Typeflag: tar.TypeDir},
		{Name: "blobs/sha256/", Mode: 0o755, Typeflag: tar.TypeDir},
	}
	var manifests []map[string]interface{}
	for n, im := range images {
		config, layer := ImageBlobs(t, im, n)
		manifest := OCIManifest(t, config, layer)
		files = append(files, Blob(config), Blob(layer), Blob(manifest))
		for _, tag := range im.tags {
			manifests = append(manifests, map[string]interface{}{
				"mediaType":   "application/vnd.oci.image.manifest.v1+json",
				"digest":      Digest(manifest),
				"size":        len(manifest),
				"annotations": annotate(tag),
			})
		}
	}
	index := JSON(t, map[string]interface{}{"schemaVersion": 2, "manifests": manifests})
	return append(files, File{Name: "index.json", Body: index})
}

// OCIManifest returns an OCI image manifest for config and layer.
func OCIManifest(t testing.TB, config, layer []byte) []byte {
	t.Helper()
	return JSON(t, map[string]interface{}{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]interface{}{
			"mediaType": "application/vnd.oci.image.config.v1+json",
			"digest":    Digest(config),
			"size":      len(config),
		},
		"layers": []map[string]interface{}{{
			"mediaType": "application/vnd.oci.image.layer.v1.tar",
			"digest":    Digest(layer),
			"size":      len(layer),
		}},
	})
}

// Blob returns the OCI layout entry of a blob.
func Blob(data []byte) File {
	return File{Name: "blobs/sha256/" + Digest(data)[len("sha256:"):], Body: data}
}

// ContainerdName annotates like ctr images export.
func ContainerdName(tag string) map[string]string {
	return map[string]string{
		"io.containerd.image.name":          tag,
		"org.opencontainers.image.ref.name": tagOf(tag),
	}
}

// OCIRefName annotates with a full reference in the OCI annotation only.
func OCIRefName(tag string) map[string]string {
	return map[string]string{"org.opencontainers.image.ref.name": tag}
}

// TagOnly annotates with only the tag, as some tools do.
func TagOnly(tag string) map[string]string {
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

// Without returns files without the entry called name.
func Without(files []File, name string) []File {
	var kept []File
	for _, f := range files {
		if f.Name != name {
			kept = append(kept, f)
		}
	}
	return kept
}

// WithBody returns files with the body of the entry called name replaced.
func WithBody(files []File, name string, body []byte) []File {
	kept := make([]File, len(files))
	copy(kept, files)
	for i := range kept {
		if kept[i].Name == name {
			kept[i].Body = body
		}
	}
	return kept
}

// Entry returns the entry called name, failing the test if none is.
func Entry(t testing.TB, files []File, name string) File {
	t.Helper()
	for _, f := range files {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no entry %s", name)
	return File{}
}

// Release returns the files of a release's server/bin for machine, with
// the images tagged for arch: the three binaries, another binary, two
// image archives and their .docker_tag files.
func Release(t testing.TB, machine elf.Machine, arch string) []File {
	t.Helper()
	return []File{
		{Name: "kube-apiserver", Body: Binary(machine, "kube-apiserver"), Mode: 0o755},
		{Name: "kube-apiserver.docker_tag", Body: []byte("v1.34.4\n")},
		{Name: "kube-apiserver.tar", Body: Tar(t, DockerArchive(t, NewImage(arch, "registry.k8s.io/kube-apiserver-"+arch+":v1.34.4")))},
		{Name: "kube-proxy.docker_tag", Body: []byte("v1.34.4\n")},
		{Name: "kube-proxy.tar", Body: Tar(t, DockerArchive(t, NewImage(arch, "registry.k8s.io/kube-proxy-"+arch+":v1.34.4")))},
		{Name: "kubeadm", Body: Binary(machine, "kubeadm"), Mode: 0o755},
		{Name: "kubectl", Body: Binary(machine, "kubectl"), Mode: 0o755},
		{Name: "kubelet", Body: Binary(machine, "kubelet"), Mode: 0o755},
	}
}

// Extras returns image archives a user adds beside a release: etcd as a
// docker-archive and pause as an OCI layout.
func Extras(t testing.TB) []File {
	t.Helper()
	return []File{
		{Name: "etcd.tar", Body: Tar(t, DockerArchive(t, NewImage("amd64", "registry.k8s.io/etcd:3.6.4-0")))},
		{Name: "pause.tar", Body: Tar(t, OCIArchive(t, ContainerdName, NewImage("amd64", "registry.k8s.io/pause:3.10.1")))},
	}
}

// BuildBinaries returns the files of a Kubernetes build's
// _output/.../bin/linux/<arch> for machine: the three binaries and another.
func BuildBinaries(machine elf.Machine) []File {
	return []File{
		{Name: "kube-apiserver", Body: Binary(machine, "kube-apiserver"), Mode: 0o755},
		{Name: "kubeadm", Body: Binary(machine, "kubeadm"), Mode: 0o755},
		{Name: "kubectl", Body: Binary(machine, "kubectl"), Mode: 0o755},
		{Name: "kubelet", Body: Binary(machine, "kubelet"), Mode: 0o755},
	}
}

// ReleaseImages returns the image archives make quick-release writes to
// _output/release-images/<arch>, each image tagged
// registry.k8s.io/<name>-<arch>:<tag>.
func ReleaseImages(t testing.TB, arch, tag string) []File {
	t.Helper()
	var files []File
	for _, name := range []string{"kube-apiserver", "kube-controller-manager", "kube-proxy", "kube-scheduler", "kubectl"} {
		ref := "registry.k8s.io/" + name + "-" + arch + ":" + tag
		files = append(files, File{Name: name + ".tar", Body: Tar(t, DockerArchive(t, NewImage(arch, ref)))})
	}
	return files
}
