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

// Package image builds Docker images from a Dockerfile and a build context
// the lab streams to `docker build` (no folder is laid out on disk), saves
// them as archives and records the ones kept in Docker.
//
// The engine's legacy builder is used: BuildKit needs the buildx plugin,
// which the Docker CLI of this machine lacks (hack/e2e/README.md). Its
// layer cache still keys every step by its inputs, so a rebuild with an
// unchanged step reuses it.
package image

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/host"
)

// File is one entry of a build context: a regular file (Src, a host file,
// or Data), a folder (Dir) or a symbolic link (Link).
type File struct {
	Name string
	Mode int64
	Src  host.Path `json:",omitempty"`
	Data []byte    `json:",omitempty"`
	Dir  bool      `json:",omitempty"`
	Link string    `json:",omitempty"`
}

// Context is a build context: the Dockerfile and the files it copies.
type Context struct {
	Dockerfile string
	Files      []File
}

// Add adds files under the folder prefix of the context.
func (c *Context) Add(prefix string, files ...File) {
	for _, f := range files {
		f.Name = filepath.Join(prefix, f.Name)
		c.Files = append(c.Files, f)
	}
}

// write streams the context as a tar: owner root, times zero, sorted, so
// that the same context always makes the same archive (and the layer
// cache hits).
func (c *Context) write(w io.Writer) error {
	tw := tar.NewWriter(w)
	files := append([]File{{Name: "Dockerfile", Mode: 0o644, Data: []byte(c.Dockerfile)}}, c.Files...)
	sort.SliceStable(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	for _, f := range files {
		h := &tar.Header{Name: f.Name, Mode: f.Mode, Format: tar.FormatPAX}
		switch {
		case f.Dir:
			h.Typeflag, h.Name = tar.TypeDir, f.Name+"/"
		case f.Link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, f.Link
		case f.Src != "":
			fi, err := os.Stat(string(f.Src))
			if err != nil {
				return err
			}
			h.Typeflag, h.Size = tar.TypeReg, fi.Size()
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.Data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if f.Src == "" {
			if _, err := tw.Write(f.Data); err != nil {
				return err
			}
			continue
		}
		in, err := os.Open(string(f.Src))
		if err != nil {
			return err
		}
		_, err = io.Copy(tw, in)
		in.Close()
		if err != nil {
			return fmt.Errorf("failed to add %s to the build context: %w", f.Src, err)
		}
	}
	return tw.Close()
}

// Build builds the context as the image name.
func Build(ctx context.Context, name string, c *Context) error {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(c.write(pw)) }()
	err := host.Run(ctx, host.Command{Env: []string{"DOCKER_BUILDKIT=0"}, Stdin: pr, Name: "docker",
		Args: []string{"build", "-q", "--force-rm", "-t", name, "-"}})
	pr.Close()
	if err != nil {
		return fmt.Errorf("failed to build the image %s: %w", name, err)
	}
	return nil
}

// MinimalRoot is what an image of one static binary needs besides it.
func MinimalRoot() []File {
	return []File{
		{Name: "etc", Mode: 0o755, Dir: true},
		{Name: "etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n")},
		{Name: "etc/group", Mode: 0o644, Data: []byte("root:x:0:\nnogroup:x:65534:\n")},
		{Name: "etc/nsswitch.conf", Mode: 0o644, Data: []byte("hosts: files dns\n")},
		{Name: "tmp", Mode: 0o1777, Dir: true},
		{Name: "usr", Mode: 0o755, Dir: true},
		{Name: "usr/local", Mode: 0o755, Dir: true},
		{Name: "usr/local/bin", Mode: 0o755, Dir: true},
	}
}

// JSON is a Dockerfile's exec form of args (ENTRYPOINT, CMD).
func JSON(args ...string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// ID is Docker's id of the image name, "" when Docker has none.
func ID(ctx context.Context, name string) string {
	id, err := host.Output(ctx, host.Cmd("docker", "image", "inspect", "-f", "{{.Id}}", name))
	if err != nil {
		return ""
	}
	return id
}

// Tag gives the image name more names.
func Tag(ctx context.Context, name string, more ...string) error {
	for _, m := range more {
		if err := host.Run(ctx, host.Cmd("docker", "tag", name, m)); err != nil {
			return err
		}
	}
	return nil
}

// Save writes a docker-archive of names to out/image.tar and the names to
// out/image-names.
func Save(ctx context.Context, out string, names ...string) error {
	tmp := filepath.Join(out, "image.tar.part")
	if err := host.Run(ctx, host.Cmd("docker", append([]string{"save", "-o", tmp}, names...)...)); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(out, "image.tar")); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "image-names"), []byte(strings.Join(names, "\n")+"\n"), 0o644)
}

// Remove drops the names from Docker (best effort: a container may use
// one).
func Remove(ctx context.Context, names ...string) {
	_ = host.Run(ctx, host.Cmd("docker", append([]string{"rmi"}, names...)...))
}

// Record writes the name and id of an image kept in Docker to
// out/image-name and out/image-id (what the lab checks it still has).
func Record(ctx context.Context, out, name string) error {
	id := ID(ctx, name)
	if id == "" {
		return fmt.Errorf("the image %s vanished", name)
	}
	if err := os.WriteFile(filepath.Join(out, "image-name"), []byte(name), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "image-id"), []byte(id+"\n"), 0o644)
}

// Replace builds the image name with build and records it; the image the
// name used to point to is removed unless something still uses it.
func Replace(ctx context.Context, out, name string, build func() error) error {
	old := ID(ctx, name)
	if err := build(); err != nil {
		return err
	}
	if err := Record(ctx, out, name); err != nil {
		return err
	}
	if old != "" && old != ID(ctx, name) {
		Remove(ctx, old)
	}
	return nil
}

// TagLock serialises the runs that use the registry.k8s.io/... names in
// Docker (they exist only between build and save; runs with different
// caches share them).
func TagLock(ctx context.Context, f func() error) error {
	return host.WithFileLock(ctx, "/tmp/kind-upgrade-e2e-docker-tags.lock", f)
}
