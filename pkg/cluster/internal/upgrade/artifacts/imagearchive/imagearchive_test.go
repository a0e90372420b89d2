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
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts/artifactstest"
)

func TestIndex(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		files    func(t *testing.T) []artifactstest.File
		wantRefs []string
		wantArch string
		// wantPartial: a multi-platform index lists platforms not here
		wantPartial bool
	}{
		{
			name: "docker-archive, manifest.json last",
			files: func(t *testing.T) []artifactstest.File {
				return artifactstest.DockerArchive(t, artifactstest.NewImage("amd64", "registry.k8s.io/kube-apiserver-amd64:v1.34.4"))
			},
			wantRefs: []string{"registry.k8s.io/kube-apiserver-amd64:v1.34.4"},
			wantArch: "amd64",
		},
		{
			name: "docker-archive, manifest.json first, ./ names",
			files: func(t *testing.T) []artifactstest.File {
				files := artifactstest.DockerArchive(t, artifactstest.NewImage("arm64", "registry.k8s.io/etcd:3.6.4-0"))
				last := len(files) - 1
				files = append([]artifactstest.File{files[last]}, files[:last]...)
				for i := range files {
					files[i].Name = "./" + files[i].Name
				}
				return files
			},
			wantRefs: []string{"registry.k8s.io/etcd:3.6.4-0"},
			wantArch: "arm64",
		},
		{
			name: "docker-archive, several images and tags",
			files: func(t *testing.T) []artifactstest.File {
				return artifactstest.DockerArchive(t,
					artifactstest.NewImage("amd64", "registry.k8s.io/coredns/coredns:v1.12.1", "registry.k8s.io/coredns/coredns:latest"),
					artifactstest.NewImage("amd64", "busybox:1.36"),
					artifactstest.NewImage("amd64"),
				)
			},
			wantRefs: []string{"registry.k8s.io/coredns/coredns:v1.12.1", "registry.k8s.io/coredns/coredns:latest", "busybox:1.36"},
			wantArch: "amd64",
		},
		{
			name: "docker-archive, images of different architectures",
			files: func(t *testing.T) []artifactstest.File {
				return artifactstest.DockerArchive(t, artifactstest.NewImage("amd64", "a:1"), artifactstest.NewImage("arm64", "b:1"))
			},
			wantRefs: []string{"a:1", "b:1"},
			wantArch: "",
		},
		{
			name: "docker-archive, a layer linked to another",
			files: func(t *testing.T) []artifactstest.File {
				files := artifactstest.DockerArchive(t, artifactstest.NewImage("amd64", "a:1"))
				last := len(files) - 1
				manifest := []map[string]interface{}{{
					"Config":   files[0].Name,
					"RepoTags": []string{"a:1"},
					"Layers":   []string{"layer0/layer.tar", "layer1/layer.tar"},
				}}
				return append(files[:last],
					artifactstest.File{Name: "layer1/layer.tar", Typeflag: tar.TypeSymlink, Linkname: "../layer0/layer.tar"},
					artifactstest.File{Name: "manifest.json", Body: artifactstest.JSON(t, manifest)},
				)
			},
			wantRefs: []string{"a:1"},
			wantArch: "amd64",
		},
		{
			name: "OCI layout from ctr images export",
			files: func(t *testing.T) []artifactstest.File {
				return artifactstest.OCIArchive(t, artifactstest.ContainerdName, artifactstest.NewImage("ppc64le", "registry.k8s.io/pause:3.10.1"))
			},
			wantRefs: []string{"registry.k8s.io/pause:3.10.1"},
			wantArch: "ppc64le",
		},
		{
			name: "OCI layout with a full reference in ref.name",
			files: func(t *testing.T) []artifactstest.File {
				return artifactstest.OCIArchive(t, artifactstest.OCIRefName, artifactstest.NewImage("amd64", "localhost:5000/etcd:3.6.4-0", "localhost:5000/etcd:latest"))
			},
			wantRefs: []string{"localhost:5000/etcd:3.6.4-0", "localhost:5000/etcd:latest"},
			wantArch: "amd64",
		},
		{
			name: "OCI layout with one platform of a multi-platform index",
			files: func(t *testing.T) []artifactstest.File {
				config, layer := artifactstest.ImageBlobs(t, artifactstest.NewImage("arm64"), 0)
				manifest := artifactstest.OCIManifest(t, config, layer)
				index := artifactstest.JSON(t, map[string]interface{}{
					"schemaVersion": 2,
					"mediaType":     "application/vnd.oci.image.index.v1+json",
					"manifests": []map[string]interface{}{
						{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": artifactstest.Digest([]byte("amd64")), "size": 5},
						{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": artifactstest.Digest(manifest), "size": len(manifest)},
					},
				})
				top := artifactstest.JSON(t, map[string]interface{}{
					"schemaVersion": 2,
					"manifests": []map[string]interface{}{{
						"mediaType":   "application/vnd.oci.image.index.v1+json",
						"digest":      artifactstest.Digest(index),
						"size":        len(index),
						"annotations": artifactstest.ContainerdName("registry.k8s.io/coredns/coredns:v1.12.1"),
					}},
				})
				return []artifactstest.File{
					artifactstest.Blob(config), artifactstest.Blob(layer), artifactstest.Blob(manifest), artifactstest.Blob(index),
					{Name: "index.json", Body: top},
				}
			},
			wantRefs:    []string{"registry.k8s.io/coredns/coredns:v1.12.1"},
			wantArch:    "arm64",
			wantPartial: true,
		},
		{
			name: "OCI layout with every platform of a multi-platform index",
			files: func(t *testing.T) []artifactstest.File {
				return multiPlatform(t, "registry.k8s.io/pause:3.10.1", []string{"amd64", "arm64"}, nil)
			},
			wantRefs: []string{"registry.k8s.io/pause:3.10.1"},
			wantArch: "",
		},
		{
			name: "docker image save --platform linux/amd64 of a multi-platform image (Docker 29, containerd image store)",
			files: func(t *testing.T) []artifactstest.File {
				return multiPlatform(t, "registry.k8s.io/etcd:3.6.4-0", []string{"amd64"}, []string{"arm64", "s390x"})
			},
			wantRefs:    []string{"registry.k8s.io/etcd:3.6.4-0"},
			wantArch:    "amd64",
			wantPartial: true,
		},
		{
			name: "docker save of the containerd image store: both formats",
			files: func(t *testing.T) []artifactstest.File {
				files := artifactstest.OCIArchive(t, artifactstest.ContainerdName, artifactstest.NewImage("amd64", "docker.io/library/busybox:latest"))
				config := files[3]
				layer := files[4]
				manifest := []map[string]interface{}{{
					"Config":   config.Name,
					"RepoTags": []string{"busybox:latest"},
					"Layers":   []string{layer.Name},
				}}
				return append(files, artifactstest.File{Name: "manifest.json", Body: artifactstest.JSON(t, manifest)})
			},
			wantRefs: []string{"busybox:latest", "docker.io/library/busybox:latest"},
			wantArch: "amd64",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			info, err := Index(bytes.NewReader(artifactstest.Tar(t, tc.files(t))), "test.tar")
			if err != nil {
				t.Fatalf("Index: %v", err)
			}
			if !reflect.DeepEqual(info.Refs, tc.wantRefs) {
				t.Errorf("refs = %v, want %v", info.Refs, tc.wantRefs)
			}
			if info.Arch != tc.wantArch {
				t.Errorf("arch = %q, want %q", info.Arch, tc.wantArch)
			}
			if info.Partial != tc.wantPartial {
				t.Errorf("partial = %v, want %v", info.Partial, tc.wantPartial)
			}
			if tc.wantArch != "" && !reflect.DeepEqual(info.Arches, []string{tc.wantArch}) {
				t.Errorf("arches = %v, want [%s]", info.Arches, tc.wantArch)
			}
		})
	}
}

func TestIndexErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		files func(t *testing.T) []artifactstest.File
		want  string
	}{
		{
			name: "Docker 29's one-platform archive with its layer cut off",
			files: func(t *testing.T) []artifactstest.File {
				files := multiPlatform(t, "registry.k8s.io/etcd:3.6.4-0", []string{"amd64"}, []string{"arm64"})
				// the layer is the second blob written
				return append(files[:1:1], files[2:]...)
			},
			want: "is not in the archive",
		},
		{
			name: "multi-platform index with none of its platforms",
			files: func(t *testing.T) []artifactstest.File {
				index := artifactstest.JSON(t, map[string]interface{}{
					"manifests": []map[string]interface{}{
						{"digest": artifactstest.Digest([]byte("amd64")), "size": 5},
					},
				})
				top := artifactstest.JSON(t, map[string]interface{}{
					"manifests": []map[string]interface{}{{
						"digest":      artifactstest.Digest(index),
						"annotations": artifactstest.ContainerdName("a:1"),
					}},
				})
				return []artifactstest.File{artifactstest.Blob(index), {Name: "index.json", Body: top}}
			},
			want: "is incomplete: none of the 1 manifests blobs/sha256/",
		},
		{
			name: "malformed digest",
			files: func(t *testing.T) []artifactstest.File {
				top := artifactstest.JSON(t, map[string]interface{}{
					"manifests": []map[string]interface{}{{"digest": "sha256/../x", "annotations": artifactstest.ContainerdName("a:1")}},
				})
				return []artifactstest.File{{Name: "index.json", Body: top}}
			},
			want: `is corrupt: index.json lists a malformed digest "sha256/../x"`,
		},
		{
			name: "docker-archive image without a config",
			files: func(t *testing.T) []artifactstest.File {
				return []artifactstest.File{{Name: "manifest.json", Body: []byte(`[{"RepoTags":["a:1"]}]`)}}
			},
			want: "is corrupt: image 0 in manifest.json has no Config",
		},
		{
			name: "bad image config",
			files: func(t *testing.T) []artifactstest.File {
				files := artifactstest.DockerArchive(t, artifactstest.NewImage("amd64", "a:1"))
				return artifactstest.WithBody(files, files[0].Name, []byte("{"))
			},
			want: "failed to parse ",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Index(bytes.NewReader(artifactstest.Tar(t, tc.files(t))), "test.tar")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "test.tar") {
				t.Errorf("Index error = %v, want it to name test.tar and contain %q", err, tc.want)
			}
		})
	}
}

// countingFile counts the bytes read from a file.
type countingFile struct {
	*os.File
	read int64
}

// Read implements io.Reader.
func (f *countingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.read += int64(n)
	return n, err
}

func TestIndexSeeksOverLayers(t *testing.T) {
	t.Parallel()
	files := artifactstest.DockerArchive(t, artifactstest.NewImage("amd64", "a:1"))
	big := bytes.Repeat([]byte("layer data "), 1<<20)
	files = artifactstest.WithBody(files, "layer0/layer.tar", big)
	p := filepath.Join(t.TempDir(), "a.tar")
	artifactstest.WriteFile(t, p, artifactstest.Tar(t, files), 0o644)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counter := &countingFile{File: f}
	if _, err := Index(counter, p); err != nil {
		t.Fatal(err)
	}
	if counter.read >= int64(len(big)) {
		t.Errorf("read %d bytes of a %d byte layer: want it skipped by seeking", counter.read, len(big))
	}
}

// multiPlatform is an archive as Docker 29 (with its containerd image store)
// writes one: manifest.json and index.json, whose image is a multi-platform
// index listing present (config, layer and manifest in the archive) and
// absent platforms (listed only).
func multiPlatform(t *testing.T, ref string, present, absent []string) []artifactstest.File {
	var files []artifactstest.File
	var children []map[string]interface{}
	var docker []map[string]interface{}
	for i, arch := range present {
		config, layer := artifactstest.ImageBlobs(t, artifactstest.NewImage(arch), i)
		manifest := artifactstest.OCIManifest(t, config, layer)
		files = append(files, artifactstest.Blob(config), artifactstest.Blob(layer), artifactstest.Blob(manifest))
		children = append(children, map[string]interface{}{
			"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": artifactstest.Digest(manifest), "size": len(manifest),
			"platform": map[string]string{"os": "linux", "architecture": arch},
		})
		docker = append(docker, map[string]interface{}{
			"Config": artifactstest.Blob(config).Name, "RepoTags": []string{ref}, "Layers": []string{artifactstest.Blob(layer).Name},
		})
	}
	for _, arch := range absent {
		children = append(children, map[string]interface{}{
			"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": artifactstest.Digest([]byte(arch)), "size": 1000,
			"platform": map[string]string{"os": "linux", "architecture": arch},
		})
	}
	index := artifactstest.JSON(t, map[string]interface{}{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": children,
	})
	top := artifactstest.JSON(t, map[string]interface{}{
		"schemaVersion": 2,
		"manifests": []map[string]interface{}{{
			"mediaType": "application/vnd.oci.image.index.v1+json", "digest": artifactstest.Digest(index), "size": len(index),
			"annotations": artifactstest.ContainerdName(ref),
		}},
	})
	files = append(files, artifactstest.Blob(index), artifactstest.File{Name: "index.json", Body: top})
	if len(present) == 1 {
		// docker save's manifest.json names the one platform it saved
		files = append(files, artifactstest.File{Name: "manifest.json", Body: artifactstest.JSON(t, docker)})
	}
	return files
}
