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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// Media types of the OCI image layout.
const (
	ociIndexType    = "application/vnd.oci.image.index.v1+json"
	ociManifestType = "application/vnd.oci.image.manifest.v1+json"
	ociConfigType   = "application/vnd.oci.image.config.v1+json"
	ociLayerType    = "application/vnd.oci.image.layer.v1.tar"
)

type ociDescriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    map[string]string `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// onePlatformArchive writes to dst the image of the docker-archive src the
// way Docker 29 with its containerd image store saves an image pulled for
// one platform: an OCI layout (with a docker manifest.json beside) whose
// image is a multi-platform index listing linux/<arch> of src, whose
// content is in the archive, and linux/<absent...>, whose content is not.
func onePlatformArchive(src, dst, arch string, absent []string) error {
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	// first pass: manifest.json and the digests of the config and layers
	digests := map[string]ociDescriptor{}
	err := eachEntry(src, func(name string, r io.Reader) error {
		if name == "manifest.json" {
			return json.NewDecoder(r).Decode(&manifest)
		}
		h := sha256.New()
		n, err := io.Copy(h, r)
		digests[name] = ociDescriptor{Digest: "sha256:" + hex.EncodeToString(h.Sum(nil)), Size: n}
		return err
	})
	if err != nil {
		return err
	}
	if len(manifest) != 1 || len(manifest[0].RepoTags) == 0 {
		return fmt.Errorf("%s: want a docker-archive of one tagged image", src)
	}
	image := manifest[0]
	blob := func(d ociDescriptor) string { return "blobs/sha256/" + strings.TrimPrefix(d.Digest, "sha256:") }
	config := digests[path.Clean(image.Config)]
	config.MediaType = ociConfigType
	var layers []ociDescriptor
	for _, l := range image.Layers {
		d := digests[path.Clean(l)]
		d.MediaType = ociLayerType
		layers = append(layers, d)
	}
	ociManifest, err := json.Marshal(map[string]interface{}{"schemaVersion": 2, "mediaType": ociManifestType, "config": config, "layers": layers})
	if err != nil {
		return err
	}
	children := []ociDescriptor{described(ociManifestType, ociManifest, map[string]string{"os": "linux", "architecture": arch})}
	for _, a := range absent {
		child := described(ociManifestType, []byte(image.RepoTags[0]+" for "+a), map[string]string{"os": "linux", "architecture": a})
		child.Size = 1024
		children = append(children, child)
	}
	index, err := json.Marshal(map[string]interface{}{"schemaVersion": 2, "mediaType": ociIndexType, "manifests": children})
	if err != nil {
		return err
	}
	top := described(ociIndexType, index, nil)
	ref := image.RepoTags[0]
	top.Annotations = map[string]string{"io.containerd.image.name": "docker.io/" + ref, "org.opencontainers.image.ref.name": ref[strings.LastIndex(ref, ":")+1:]}
	if strings.Count(strings.SplitN(ref, "/", 2)[0], ".") > 0 {
		top.Annotations["io.containerd.image.name"] = ref
	}
	topIndex, err := json.Marshal(map[string]interface{}{"schemaVersion": 2, "mediaType": ociIndexType, "manifests": []ociDescriptor{top}})
	if err != nil {
		return err
	}
	var dockerLayers []string
	for _, l := range layers {
		dockerLayers = append(dockerLayers, blob(l))
	}
	dockerManifest, err := json.Marshal([]map[string]interface{}{{"Config": blob(config), "RepoTags": image.RepoTags, "Layers": dockerLayers}})
	if err != nil {
		return err
	}

	// second pass: the blobs, then the small files
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer out.Close()
	tw := tar.NewWriter(out)
	write := func(name string, size int64, r io.Reader) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: size, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := io.Copy(tw, r)
		return err
	}
	written := map[string]bool{}
	err = eachEntry(src, func(name string, r io.Reader) error {
		d, ok := digests[name]
		if !ok || (name != path.Clean(image.Config) && !isLayer(image.Layers, name)) || written[blob(d)] {
			return nil
		}
		written[blob(d)] = true
		return write(blob(d), d.Size, r)
	})
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{blob(described("", ociManifest, nil)), ociManifest},
		{blob(top), index},
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", topIndex},
		{"manifest.json", dockerManifest},
	} {
		if err := write(f.name, int64(len(f.data)), strings.NewReader(string(f.data))); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return out.Close()
}

// described is the descriptor of data.
func described(mediaType string, data []byte, platform map[string]string) ociDescriptor {
	sum := sha256.Sum256(data)
	return ociDescriptor{MediaType: mediaType, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(data)), Platform: platform}
}

func isLayer(layers []string, name string) bool {
	for _, l := range layers {
		if path.Clean(l) == name {
			return true
		}
	}
	return false
}

// eachEntry calls fn with every regular file of the tar archive p.
func eachEntry(p string, fn func(name string, r io.Reader) error) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if err := fn(path.Clean(h.Name), tr); err != nil {
			return fmt.Errorf("%s: %s: %w", p, h.Name, err)
		}
	}
}
