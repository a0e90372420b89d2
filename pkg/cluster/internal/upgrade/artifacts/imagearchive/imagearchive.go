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

package imagearchive

import (
	"archive/tar"
	"encoding/json"
	"io"
	"path"
	"sort"
	"strings"

	"sigs.k8s.io/kind/pkg/errors"
)

const (
	// maxIndexSize bounds manifest.json and index.json.
	maxIndexSize = 16 << 20
	// maxSmallEntry is the largest other entry kept in memory while an
	// archive is scanned: image configs and OCI manifests are a few KiB.
	maxSmallEntry = 1 << 20
	// maxSmallTotal bounds the memory kept for one archive.
	maxSmallTotal = 32 << 20
	// maxIndexDepth bounds OCI indexes nested in indexes.
	maxIndexDepth = 4

	dockerManifestName = "manifest.json"
	ociIndexName       = "index.json"

	archiveHelp = "save it again with docker save, podman save or ctr images export"
)

// archiveEntry is what a scan remembers of an entry it did not keep.
type archiveEntry struct {
	size int64
	link bool
}

// archiveScan is the result of reading an image archive's tar stream once.
type archiveScan struct {
	name    string // for messages
	entries map[string]archiveEntry
	small   map[string][]byte
	kept    int64
	// partial is set when an index lists a manifest that is not here
	partial bool
}

// Info is what Index reads of an image archive.
type Info struct {
	// Refs are the image references the archive names, in order and
	// without duplicates.
	Refs []string
	// Arch is the architecture of its images when they all name the same
	// one, else "".
	Arch string
	// Arches are the architectures of the images whose content is in the
	// archive, sorted ("" stands for an image whose config names none or
	// was too large to read).
	Arches []string
	// Partial is set when a multi-platform index in the archive lists
	// manifests whose content is not in it: an archive written for one
	// platform (docker image save --platform, Docker 29 with its containerd
	// image store, ctr images export of an image fetched for one platform,
	// podman save). containerd imports such an archive for a platform it
	// holds (ctr images import --platform), not with --all-platforms.
	Partial bool
}

// dockerManifest is one entry of a docker-archive manifest.json.
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// ociDescriptor is an OCI content descriptor.
type ociDescriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations"`
}

// ociDocument is an OCI image index or image manifest.
type ociDocument struct {
	Manifests []ociDescriptor `json:"manifests"`
	Config    *ociDescriptor  `json:"config"`
	Layers    []ociDescriptor `json:"layers"`
}

// imageConfig is the part of an image config we read.
type imageConfig struct {
	Architecture string `json:"architecture"`
}

// Index reads the tar stream r of the image archive called name (for
// messages) once and checks that it is a complete docker-archive or OCI
// layout: every config and layer its manifests list is there, and every
// manifest its index lists, except the other platforms' manifests of a
// multi-platform index of which at least one platform is there (Partial).
// Given an *os.File, the tar reader skips layer data by seeking.
func Index(r io.Reader, name string) (Info, error) {
	scan, err := scanArchive(r, name)
	if err != nil {
		return Info{}, err
	}
	manifest, hasManifest := scan.small[dockerManifestName]
	index, hasIndex := scan.small[ociIndexName]
	if !hasManifest && !hasIndex {
		return Info{}, errors.Errorf("%s is not an image archive or is truncated: it has neither manifest.json (docker-archive) nor index.json (OCI layout); %s", name, archiveHelp)
	}
	var named []string
	found := map[string]bool{}
	if hasManifest {
		r, a, err := scan.dockerImages(manifest)
		if err != nil {
			return Info{}, err
		}
		named = append(named, r...)
		mergeArches(found, a)
	}
	if hasIndex {
		r, a, err := scan.ociImages(index)
		if err != nil {
			return Info{}, err
		}
		named = append(named, r...)
		if !hasManifest {
			mergeArches(found, a)
		}
	}
	info := Info{Partial: scan.partial}
	seen := map[string]bool{}
	for _, ref := range named {
		if ref == "" || seen[ref] {
			continue
		}
		seen[ref] = true
		info.Refs = append(info.Refs, ref)
	}
	if len(info.Refs) == 0 {
		return Info{}, errors.Errorf("%s has no image references (its images are untagged): tag each image and save it by name, for example docker save registry.k8s.io/etcd:3.6.4-0 -o etcd.tar", name)
	}
	for a := range found {
		info.Arches = append(info.Arches, a)
	}
	sort.Strings(info.Arches)
	if len(info.Arches) == 1 {
		info.Arch = info.Arches[0]
	}
	return info, nil
}

// mergeArches adds from to into.
func mergeArches(into, from map[string]bool) {
	for a := range from {
		into[a] = true
	}
}

// scanArchive reads every header of the tar stream r, keeping the content of
// the small entries needed to validate and name the images.
func scanArchive(r io.Reader, name string) (*archiveScan, error) {
	scan := &archiveScan{
		name:    name,
		entries: map[string]archiveEntry{},
		small:   map[string][]byte{},
	}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return scan, nil
		}
		if err != nil {
			return nil, errors.Wrapf(err, "failed to read image archive %s (the file is truncated or not a tar archive; %s)", name, archiveHelp)
		}
		entry := cleanEntry(hdr.Name)
		switch hdr.Typeflag {
		case tar.TypeReg:
			scan.entries[entry] = archiveEntry{size: hdr.Size}
		case tar.TypeSymlink, tar.TypeLink:
			// docker save links layers that several images share
			scan.entries[entry] = archiveEntry{link: true}
			continue
		default:
			continue
		}
		if err := scan.keep(tr, entry, hdr.Size); err != nil {
			return nil, err
		}
	}
}

// keep reads the current entry into memory when validation needs it.
func (s *archiveScan) keep(r io.Reader, entry string, size int64) error {
	if entry == dockerManifestName || entry == ociIndexName {
		if size > maxIndexSize {
			return errors.Errorf("%s in image archive %s is too large (%d bytes); %s", entry, s.name, size, archiveHelp)
		}
	} else if size > maxSmallEntry || s.kept+size > maxSmallTotal ||
		!(strings.HasPrefix(entry, "blobs/") || strings.HasSuffix(entry, ".json")) {
		return nil
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return errors.Wrapf(err, "failed to read %s in image archive %s (the file is truncated or corrupt; %s)", entry, s.name, archiveHelp)
	}
	s.small[entry] = data
	s.kept += int64(len(data))
	return nil
}

// cleanEntry turns a tar entry name into a clean relative path:
// "./manifest.json" becomes "manifest.json".
func cleanEntry(name string) string {
	return strings.TrimPrefix(path.Clean("/"+name), "/")
}

// missing is the error for an entry the archive's own index refers to.
func (s *archiveScan) missing(listedIn, entry string) error {
	return errors.Errorf("image archive %s is incomplete: %s lists %s, which is not in the archive (the file is truncated or corrupt; %s)", s.name, listedIn, entry, archiveHelp)
}

// badJSON is the error for JSON that does not parse.
func (s *archiveScan) badJSON(err error, entry string) error {
	return errors.Wrapf(err, "failed to parse %s in image archive %s (the file is corrupt; %s)", entry, s.name, archiveHelp)
}

// dockerImages validates a docker-archive manifest.json and returns its
// RepoTags and the architectures of its images' configs.
func (s *archiveScan) dockerImages(manifest []byte) ([]string, map[string]bool, error) {
	var images []dockerManifest
	if err := json.Unmarshal(manifest, &images); err != nil {
		return nil, nil, s.badJSON(err, dockerManifestName)
	}
	var refs []string
	arches := map[string]bool{}
	for i, img := range images {
		if img.Config == "" {
			return nil, nil, errors.Errorf("image archive %s is corrupt: image %d in manifest.json has no Config; %s", s.name, i, archiveHelp)
		}
		for _, entry := range append([]string{img.Config}, img.Layers...) {
			if _, ok := s.entries[cleanEntry(entry)]; !ok {
				return nil, nil, s.missing(dockerManifestName, entry)
			}
		}
		arch, err := s.configArch(cleanEntry(img.Config))
		if err != nil {
			return nil, nil, err
		}
		arches[arch] = true
		refs = append(refs, img.RepoTags...)
	}
	return refs, arches, nil
}

// ociImages validates an OCI index.json and the blobs it reaches, and
// returns the image names its annotations give and the architectures of
// the images' configs.
func (s *archiveScan) ociImages(index []byte) ([]string, map[string]bool, error) {
	var doc ociDocument
	if err := json.Unmarshal(index, &doc); err != nil {
		return nil, nil, s.badJSON(err, ociIndexName)
	}
	var refs []string
	arches := map[string]bool{}
	for _, desc := range doc.Manifests {
		a, err := s.ociManifest(desc, ociIndexName, 0)
		if err != nil {
			return nil, nil, err
		}
		mergeArches(arches, a)
		if ref := ociName(desc.Annotations); ref != "" {
			refs = append(refs, ref)
		}
	}
	return refs, arches, nil
}

// ociName returns the image name in an index.json descriptor's annotations.
func ociName(annotations map[string]string) string {
	if ref := annotations["io.containerd.image.name"]; ref != "" {
		return ref
	}
	// the OCI annotation often holds only a tag ("v1.34.4"); a tag cannot
	// hold '/', ':' or '@', a full reference has at least one of them
	if ref := annotations["org.opencontainers.image.ref.name"]; strings.ContainsAny(ref, "/:@") {
		return ref
	}
	return ""
}

// blobEntry returns the entry of a digest in an OCI layout, or "" if the
// digest is malformed.
func blobEntry(digest string) string {
	algorithm, encoded, ok := strings.Cut(digest, ":")
	if !ok || algorithm == "" || encoded == "" || strings.ContainsAny(digest, "/\\") {
		return ""
	}
	return "blobs/" + algorithm + "/" + encoded
}

// ociBlob checks that the blob desc names is in the archive with the size
// desc gives, and returns its entry.
func (s *archiveScan) ociBlob(desc ociDescriptor, listedIn string) (string, error) {
	entry := blobEntry(desc.Digest)
	if entry == "" {
		return "", errors.Errorf("image archive %s is corrupt: %s lists a malformed digest %q; %s", s.name, listedIn, desc.Digest, archiveHelp)
	}
	e, ok := s.entries[entry]
	if !ok {
		return "", s.missing(listedIn, entry)
	}
	if !e.link && desc.Size > 0 && e.size != desc.Size {
		return "", errors.Errorf("image archive %s is corrupt: %s is %d bytes but %s says %d; %s", s.name, entry, e.size, listedIn, desc.Size, archiveHelp)
	}
	return entry, nil
}

// ociManifest validates the manifest or index desc names and what it
// reaches, and returns the architectures of the images' configs. A blob too
// large to have been kept is only checked for presence.
func (s *archiveScan) ociManifest(desc ociDescriptor, listedIn string, depth int) (map[string]bool, error) {
	entry, err := s.ociBlob(desc, listedIn)
	if err != nil {
		return nil, err
	}
	arches := map[string]bool{}
	data, ok := s.small[entry]
	if !ok {
		arches[""] = true
		return arches, nil
	}
	var doc ociDocument
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, s.badJSON(err, entry)
	}
	if doc.Config == nil {
		// an index: an export for one platform holds only that platform's
		// manifests, so at least one of them must be here
		if depth >= maxIndexDepth {
			return nil, errors.Errorf("image archive %s is corrupt: indexes nest deeper than %d at %s; %s", s.name, maxIndexDepth, entry, archiveHelp)
		}
		present := 0
		for _, child := range doc.Manifests {
			if _, ok := s.entries[blobEntry(child.Digest)]; !ok {
				continue
			}
			present++
			a, err := s.ociManifest(child, entry, depth+1)
			if err != nil {
				return nil, err
			}
			mergeArches(arches, a)
		}
		if present < len(doc.Manifests) {
			s.partial = true
		}
		if present == 0 {
			return nil, errors.Errorf("image archive %s is incomplete: none of the %d manifests %s lists is in the archive (the file is truncated or corrupt; %s)", s.name, len(doc.Manifests), entry, archiveHelp)
		}
		return arches, nil
	}
	config, err := s.ociBlob(*doc.Config, entry)
	if err != nil {
		return nil, err
	}
	for _, layer := range doc.Layers {
		if _, err := s.ociBlob(layer, entry); err != nil {
			return nil, err
		}
	}
	arch, err := s.configArch(config)
	if err != nil {
		return nil, err
	}
	arches[arch] = true
	return arches, nil
}

// configArch returns the architecture an image config kept in memory names,
// or "" when the config was not kept or names none.
func (s *archiveScan) configArch(entry string) (string, error) {
	data, ok := s.small[entry]
	if !ok {
		return "", nil
	}
	var config imageConfig
	if err := json.Unmarshal(data, &config); err != nil {
		return "", s.badJSON(err, entry)
	}
	return config.Architecture, nil
}
