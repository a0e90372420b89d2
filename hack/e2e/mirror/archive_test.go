// Copyright 2026 The kind-upgrade Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tarFile is an entry of a test tar: a regular file (body), a directory
// (name ending in "/"), or a link when typeflag is tar.TypeSymlink or
// tar.TypeLink.
type tarFile struct {
	name     string
	body     []byte
	typeflag byte
	link     string
}

func buildTar(t *testing.T, files []tarFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Mode: 0o644, Typeflag: f.typeflag, Linkname: f.link}
		switch {
		case f.typeflag != 0:
		case strings.HasSuffix(f.name, "/"):
			hdr.Typeflag, hdr.Mode = tar.TypeDir, 0o755
		default:
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(f.body))
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

// testImage is what a test archive holds for its RepoTags.
type testImage struct {
	refs        []string
	config      []byte
	layers      [][]byte
	layerMedia  []string
	symlinkedTo map[int]int // layer index → the layer it is a link to
}

func hexDigest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// pattern returns n bytes that differ from one seed to another and span
// several tar blocks, so that a wrong offset shows.
func pattern(seed byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7%251)
	}
	return b
}

func gzipped(t *testing.T, data []byte) []byte {
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

func manifestJSON(t *testing.T, entries []dockerManifest) []byte {
	t.Helper()
	data, err := json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// legacyArchive is a docker-archive as Docker 20.10 saves it: its second
// layer, identical to the first, a symlink to it.
func legacyArchive(t *testing.T) ([]byte, testImage) {
	t.Helper()
	img := testImage{
		refs:        []string{"kindest/kindnetd:v1", "registry.k8s.io/pause:3.10"},
		config:      []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers"}}`),
		layers:      [][]byte{pattern(1, 3000), pattern(1, 3000)},
		layerMedia:  []string{layerMediaType, layerMediaType},
		symlinkedTo: map[int]int{1: 0},
	}
	configName := hexDigest(img.config) + ".json"
	data := buildTar(t, []tarFile{
		{name: "aaaa/"},
		{name: "aaaa/VERSION", body: []byte("1.0")},
		{name: "aaaa/layer.tar", body: img.layers[0]},
		{name: "bbbb/"},
		{name: "bbbb/layer.tar", typeflag: tar.TypeSymlink, link: "../aaaa/layer.tar"},
		{name: configName, body: img.config},
		{name: "manifest.json", body: manifestJSON(t, []dockerManifest{{
			Config: configName, RepoTags: img.refs, Layers: []string{"aaaa/layer.tar", "bbbb/layer.tar"},
		}})},
	})
	return data, img
}

// ociArchive is a docker-archive as later Docker versions save it, with
// blobs/sha256/<hex> paths, "./" names, a gzip layer and a hard link.
func ociArchive(t *testing.T) ([]byte, testImage) {
	t.Helper()
	img := testImage{
		refs:       []string{"busybox:1"},
		config:     []byte(`{"architecture":"amd64","os":"linux","config":{}}`),
		layers:     [][]byte{gzipped(t, pattern(2, 5000)), pattern(3, 700)},
		layerMedia: []string{layerMediaType + "+gzip", layerMediaType},
	}
	blobPath := func(data []byte) string { return "blobs/sha256/" + hexDigest(data) }
	data := buildTar(t, []tarFile{
		{name: "./blobs/"},
		{name: "./blobs/sha256/"},
		{name: "./" + blobPath(img.config), body: img.config},
		{name: "./" + blobPath(img.layers[0]), body: img.layers[0]},
		{name: "./" + blobPath(img.layers[1]), body: img.layers[1]},
		{name: "./links/second", typeflag: tar.TypeLink, link: "./" + blobPath(img.layers[1])},
		{name: "./manifest.json", body: manifestJSON(t, []dockerManifest{{
			Config: blobPath(img.config), RepoTags: img.refs, Layers: []string{blobPath(img.layers[0]), "links/second"},
		}})},
	})
	return data, img
}

func TestIndexTar(t *testing.T) {
	t.Parallel()
	data := buildTar(t, []tarFile{
		{name: "./dir/"},
		{name: "./dir/file", body: pattern(9, 1500)},
		{name: "dir/rel", typeflag: tar.TypeSymlink, link: "file"},
		{name: "up/abs", typeflag: tar.TypeSymlink, link: "/dir/rel"},
		{name: "hard", typeflag: tar.TypeLink, link: "dir/file"},
		{name: "dangling", typeflag: tar.TypeSymlink, link: "nowhere"},
		{name: "loop1", typeflag: tar.TypeSymlink, link: "loop2"},
		{name: "loop2", typeflag: tar.TypeSymlink, link: "loop1"},
		{name: "empty", body: []byte{}},
	})
	index, err := indexTar(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	want := pattern(9, 1500)
	for _, name := range []string{"dir/file", "./dir/file", "/dir/file", "dir/rel", "up/abs", "hard"} {
		e, err := index.lookup(name)
		if err != nil {
			t.Errorf("lookup(%q): %v", name, err)
			continue
		}
		got := data[e.offset : e.offset+e.size]
		if !bytes.Equal(got, want) || e.digest != "sha256:"+hexDigest(want) {
			t.Errorf("lookup(%q) = offset %d size %d digest %s: not the content of dir/file", name, e.offset, e.size, e.digest)
		}
	}
	if e, err := index.lookup("empty"); err != nil || e.size != 0 || e.digest != "sha256:"+hexDigest(nil) {
		t.Errorf("lookup(empty) = %+v, %v; want an empty file", e, err)
	}
	for _, name := range []string{"dangling", "loop1", "missing", "dir"} {
		if e, err := index.lookup(name); err == nil {
			t.Errorf("lookup(%q) = %+v, want an error", name, e)
		}
	}
}

func TestLoadArchives(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	legacy, legacyImg := legacyArchive(t)
	writeFile(t, filepath.Join(dir, "legacy.tar"), legacy)
	oci, ociImg := ociArchive(t)
	writeFile(t, filepath.Join(dir, "sub", "oci.tar"), oci)
	writeFile(t, filepath.Join(dir, "notes.txt"), []byte("not an archive"))

	reg, err := loadArchives(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	wantRepos := []string{"docker.io/kindest/kindnetd", "registry.k8s.io/pause", "docker.io/library/busybox"}
	if len(reg.repos) != len(wantRepos) {
		t.Errorf("repositories: got %d, want %d", len(reg.repos), len(wantRepos))
	}
	for _, repo := range wantRepos {
		if reg.repos[repo] == nil {
			t.Errorf("repository %s missing", repo)
		}
	}
	// config, one layer (twice) for the legacy image; config, two layers for the other
	if len(reg.blobs) != 5 {
		t.Errorf("blobs: got %d, want 5", len(reg.blobs))
	}
	if got := len(reg.describe()); got != len(legacyImg.refs)+len(ociImg.refs) {
		t.Errorf("describe: got %d lines, want %d", got, len(legacyImg.refs)+len(ociImg.refs))
	}
}

func TestLoadArchivesConflict(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	legacy, _ := legacyArchive(t)
	writeFile(t, filepath.Join(dir, "a.tar"), legacy)
	other := buildTar(t, []tarFile{
		{name: "c.json", body: []byte(`{"os":"linux"}`)},
		{name: "manifest.json", body: manifestJSON(t, []dockerManifest{{Config: "c.json", RepoTags: []string{"registry.k8s.io/pause:3.10"}}})},
	})
	writeFile(t, filepath.Join(dir, "b.tar"), other)
	if reg, err := loadArchives(dir); err == nil {
		reg.Close()
		t.Fatal("two different images as registry.k8s.io/pause:3.10: want an error")
	}
}

func TestLoadArchivesErrors(t *testing.T) {
	t.Parallel()
	cases := map[string][]byte{
		"no manifest.json": buildTar(t, []tarFile{{name: "x", body: []byte("x")}}),
		"missing layer": buildTar(t, []tarFile{
			{name: "c.json", body: []byte("{}")},
			{name: "manifest.json", body: []byte(`[{"Config":"c.json","RepoTags":["a:1"],"Layers":["l/layer.tar"]}]`)},
		}),
		"not a tar": []byte("hello"),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "x.tar"), data)
			if reg, err := loadArchives(dir); err == nil {
				reg.Close()
				t.Fatal("want an error")
			}
		})
	}
	if reg, err := loadArchives(t.TempDir()); err == nil {
		reg.Close()
		t.Error("no archives: want an error")
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
