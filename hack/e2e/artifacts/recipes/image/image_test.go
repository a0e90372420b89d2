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

package image

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/host"
)

// TestContextIsTheSameArchiveEveryTime: the context is sorted, owned by
// root, dated zero and keeps modes, links and folders, so that the same
// inputs give the same archive (and Docker's layer cache hits).
func TestContextIsTheSameArchiveEveryTime(t *testing.T) {
	src := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(src, []byte("binary"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &Context{Dockerfile: "FROM scratch\nCOPY root/ /\n"}
	c.Add("root", File{Name: "usr/local/bin/x", Mode: 0o755, Src: host.Path(src)}, File{Name: "x", Link: "usr/local/bin/x"})
	c.Add("root", MinimalRoot()...)
	var a, b bytes.Buffer
	if err := c.write(&a); err != nil {
		t.Fatal(err)
	}
	if err := c.write(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two writes of one context differ")
	}
	r := tar.NewReader(&a)
	seen := map[string]*tar.Header{}
	var names []string
	for {
		h, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || !h.ModTime.IsZero() && h.ModTime.Unix() != 0 {
			t.Errorf("%s: uid %d gid %d time %v", h.Name, h.Uid, h.Gid, h.ModTime)
		}
		seen[h.Name] = h
		names = append(names, h.Name)
		if h.Name == "root/usr/local/bin/x" {
			data, _ := io.ReadAll(r)
			if string(data) != "binary" {
				t.Errorf("the binary holds %q", data)
			}
		}
	}
	for i := 1; i < len(names); i++ {
		if names[i-1] > names[i] {
			t.Errorf("not sorted: %s before %s", names[i-1], names[i])
		}
	}
	for name, want := range map[string]struct {
		typ  byte
		mode int64
	}{
		"Dockerfile": {tar.TypeReg, 0o644}, "root/usr/local/bin/x": {tar.TypeReg, 0o755},
		"root/x": {tar.TypeSymlink, 0}, "root/tmp/": {tar.TypeDir, 0o1777},
	} {
		h := seen[name]
		if h == nil || h.Typeflag != want.typ || h.Mode != want.mode {
			t.Errorf("%s: %+v, want type %c mode %o", name, h, want.typ, want.mode)
		}
	}
	if seen["root/x"].Linkname != "usr/local/bin/x" {
		t.Errorf("the link points to %s", seen["root/x"].Linkname)
	}
}

// TestContextFailsOnAMissingFile: a missing source is an error, not an
// empty file in the image.
func TestContextFailsOnAMissingFile(t *testing.T) {
	c := &Context{Dockerfile: "FROM scratch\n", Files: []File{{Name: "x", Mode: 0o644, Src: "/nonexistent/x"}}}
	if err := c.write(io.Discard); err == nil {
		t.Error("a context with a missing file was written")
	}
}

func TestJSON(t *testing.T) {
	if got := JSON(); got != "[]" {
		t.Errorf("JSON() = %s", got)
	}
	if got := JSON("/agnhost", "netexec", "--http-port=80"); got != `["/agnhost", "netexec", "--http-port=80"]` {
		t.Errorf("JSON(...) = %s", got)
	}
}
