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
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

const (
	manifestMediaType = "application/vnd.oci.image.manifest.v1+json"
	configMediaType   = "application/vnd.oci.image.config.v1+json"
	layerMediaType    = "application/vnd.oci.image.layer.v1.tar"
)

// dockerManifest is one entry of the manifest.json of a docker-archive. Its
// paths name files of the archive ("<hex>.json", "<hex>/layer.tar" from
// Docker 20.10, "blobs/sha256/<hex>" from later versions).
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

type descriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Size      int64  `json:"size"`
}

type ociManifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

// blob is where the bytes of a blob are: a run of an archive file.
type blob struct {
	file   *os.File
	offset int64
	size   int64
}

type repository struct {
	tags      map[string]string // tag → manifest digest
	manifests map[string][]byte // manifest digest → manifest
	blobs     map[string]bool   // digests of its configs and layers
}

// registry is what the archives hold, by repository ("docker.io/library/busybox").
type registry struct {
	files   []*os.File
	repos   map[string]*repository
	blobs   map[string]blob
	sources map[string]string // "repository:tag" → archive path
}

// loadArchives indexes every *.tar under dir, computing every digest once.
func loadArchives(dir string) (*registry, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".tar") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("failed to list the archives in %s: %w", dir, err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no *.tar in %s", dir)
	}
	reg := &registry{repos: map[string]*repository{}, blobs: map[string]blob{}, sources: map[string]string{}}
	for _, p := range paths {
		if err := reg.addArchive(p); err != nil {
			reg.Close()
			return nil, fmt.Errorf("failed to load %s: %w", p, err)
		}
	}
	return reg, nil
}

// Close closes the archive files.
func (r *registry) Close() {
	for _, f := range r.files {
		f.Close()
	}
}

func (r *registry) addArchive(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	r.files = append(r.files, f)
	index, err := indexTar(f)
	if err != nil {
		return err
	}
	a := &archive{file: f, index: index}
	manifestJSON, err := a.read("manifest.json")
	if err != nil {
		return err
	}
	var entries []dockerManifest
	if err := json.Unmarshal(manifestJSON, &entries); err != nil {
		return fmt.Errorf("failed to parse manifest.json: %w", err)
	}
	for _, entry := range entries {
		body, blobs, err := a.manifest(entry)
		if err != nil {
			return err
		}
		for _, ref := range entry.RepoTags {
			if err := r.add(ref, p, body, blobs); err != nil {
				return err
			}
		}
	}
	return nil
}

// add records the image of the manifest body as ref.
func (r *registry) add(ref, source string, body []byte, blobs map[string]blob) error {
	name, tag, err := normalizeReference(ref)
	if err != nil {
		return err
	}
	digest := sha256Digest(body)
	repo := r.repos[name]
	if repo == nil {
		repo = &repository{tags: map[string]string{}, manifests: map[string][]byte{}, blobs: map[string]bool{}}
		r.repos[name] = repo
	}
	key := name + ":" + tag
	if old, ok := repo.tags[tag]; ok && old != digest {
		return fmt.Errorf("%s is also in %s, as another image", key, r.sources[key])
	}
	repo.tags[tag] = digest
	repo.manifests[digest] = body
	for d, b := range blobs {
		repo.blobs[d] = true
		r.blobs[d] = b
	}
	r.sources[key] = source
	return nil
}

// describe lists the images, one "repository:tag digest (archive)" each.
func (r *registry) describe() []string {
	lines := make([]string, 0, len(r.sources))
	for key, source := range r.sources {
		i := strings.LastIndex(key, ":")
		lines = append(lines, fmt.Sprintf("%s %s (%s)", key, r.repos[key[:i]].tags[key[i+1:]], source))
	}
	sort.Strings(lines)
	return lines
}

// archive is an indexed docker-archive.
type archive struct {
	file  *os.File
	index *tarIndex
}

// manifest builds the OCI manifest of an entry of manifest.json; it returns
// it with where its config and layers are.
func (a *archive) manifest(entry dockerManifest) ([]byte, map[string]blob, error) {
	blobs := map[string]blob{}
	config, err := a.descriptor(entry.Config, blobs)
	if err != nil {
		return nil, nil, err
	}
	config.MediaType = configMediaType
	m := ociManifest{SchemaVersion: 2, MediaType: manifestMediaType, Config: config, Layers: []descriptor{}}
	for _, name := range entry.Layers {
		layer, err := a.descriptor(name, blobs)
		if err != nil {
			return nil, nil, err
		}
		if layer.MediaType, err = a.layerMediaType(blobs[layer.Digest]); err != nil {
			return nil, nil, err
		}
		m.Layers = append(m.Layers, layer)
	}
	body, err := json.Marshal(m)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to encode the manifest of %v: %w", entry.RepoTags, err)
	}
	return body, blobs, nil
}

// descriptor describes the file name of the archive (without media type)
// and records where it is in blobs.
func (a *archive) descriptor(name string, blobs map[string]blob) (descriptor, error) {
	e, err := a.index.lookup(name)
	if err != nil {
		return descriptor{}, err
	}
	blobs[e.digest] = blob{file: a.file, offset: e.offset, size: e.size}
	return descriptor{Digest: e.digest, Size: e.size}, nil
}

// layerMediaType tells a compressed layer (newer Docker may save layers as
// pulled) from the uncompressed tar of Docker 20.10 by its magic number.
func (a *archive) layerMediaType(b blob) (string, error) {
	magic := make([]byte, 4)
	n, err := io.ReadFull(io.NewSectionReader(b.file, b.offset, b.size), magic)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("failed to read a layer: %w", err)
	}
	switch {
	case bytes.HasPrefix(magic[:n], []byte{0x1f, 0x8b}):
		return layerMediaType + "+gzip", nil
	case bytes.HasPrefix(magic[:n], []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return layerMediaType + "+zstd", nil
	}
	return layerMediaType, nil
}

// read returns the content of the file name of the archive.
func (a *archive) read(name string) ([]byte, error) {
	e, err := a.index.lookup(name)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.NewSectionReader(a.file, e.offset, e.size))
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", name, err)
	}
	return data, nil
}

// tarEntry is a regular file of a tar: where its content starts, its size
// and digest.
type tarEntry struct {
	offset int64
	size   int64
	digest string
}

// tarIndex maps the names of a tar's regular files to their entries, and
// the names of its links (symbolic or hard) to their targets.
type tarIndex struct {
	files map[string]tarEntry
	links map[string]string
}

// indexTar reads a whole tar once, hashing each regular file.
func indexTar(r io.Reader) (*tarIndex, error) {
	counter := &countingReader{r: bufio.NewReaderSize(r, 1<<20)}
	tr := tar.NewReader(counter)
	index := &tarIndex{files: map[string]tarEntry{}, links: map[string]string{}}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return index, nil
		}
		if err != nil {
			return nil, fmt.Errorf("failed to read the archive: %w", err)
		}
		name := cleanName(hdr.Name)
		switch hdr.Typeflag {
		case tar.TypeReg:
			offset, h := counter.n, sha256.New()
			n, err := io.Copy(h, tr)
			if err != nil {
				return nil, fmt.Errorf("failed to read %s in the archive: %w", hdr.Name, err)
			}
			// a sparse file is not stored as one run: it cannot be served
			if counter.n-offset == n {
				index.files[name] = tarEntry{offset: offset, size: n, digest: "sha256:" + hex.EncodeToString(h.Sum(nil))}
			}
		case tar.TypeLink:
			index.links[name] = cleanName(hdr.Linkname)
		case tar.TypeSymlink:
			target := hdr.Linkname
			if !path.IsAbs(target) {
				target = path.Join(path.Dir(name), target)
			}
			index.links[name] = cleanName(target)
		}
	}
}

// lookup returns the regular file name, following links.
func (idx *tarIndex) lookup(name string) (tarEntry, error) {
	current := cleanName(name)
	for range 16 {
		if e, ok := idx.files[current]; ok {
			return e, nil
		}
		target, ok := idx.links[current]
		if !ok {
			break
		}
		current = target
	}
	return tarEntry{}, fmt.Errorf("no regular file %s in the archive", name)
}

// cleanName makes the names of a tar comparable: "./a/b", "/a/b" and
// "a//b" are all "a/b".
func cleanName(name string) string {
	return strings.TrimPrefix(path.Clean("/"+name), "/")
}

// countingReader counts the bytes read through it: after tar.Reader.Next,
// the offset of the entry's content.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func sha256Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}
