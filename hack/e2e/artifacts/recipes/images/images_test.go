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

package images

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/host"
)

// TestStaticImageRuns builds a static image with the real Docker engine,
// saves it under two names, loads the archive back and runs the binary
// from it: the Dockerfile, the streamed context (the binary, the link at
// /, /tmp's mode, /etc/passwd) and the archive are what the nodes get.
func TestStaticImageRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a Docker engine: not in -short")
	}
	if exec.Command("docker", "info").Run() != nil {
		t.Skip("no Docker engine answers")
	}
	ctx := context.Background()
	dir := t.TempDir()
	main := `package main

import (
	"fmt"
	"os"
)

func main() {
	fi, err := os.Stat("/tmp")
	if err != nil {
		panic(err)
	}
	passwd, _ := os.ReadFile("/etc/passwd")
	fmt.Printf("hello %v %d\n", fi.Mode(), len(passwd))
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "hello")
	if err := host.Run(ctx, host.Command{Dir: dir, Env: []string{"CGO_ENABLED=0"}, Name: "go", Args: []string{"build", "-o", bin, "."}}); err != nil {
		t.Fatal(err)
	}
	names := []string{"kind-upgrade-test/static:v1", "kind-upgrade-test/static-alias:v1"}
	out := t.TempDir()
	if err := Static(ctx, out, StaticSpec{Bin: host.Path(bin), Entrypoint: []string{"/hello"}, Names: names}); err != nil {
		t.Fatal(err)
	}
	if got, _ := host.Output(ctx, host.Cmd("docker", "images", "-q", names[0])); got != "" {
		t.Errorf("%s is still in Docker after the save", names[0])
	}
	listed, err := os.ReadFile(filepath.Join(out, "image-names"))
	if err != nil || strings.TrimSpace(string(listed)) != strings.Join(names, "\n") {
		t.Errorf("image-names holds %q (%v)", listed, err)
	}
	if err := host.Run(ctx, host.Cmd("docker", "load", "-i", filepath.Join(out, "image.tar"))); err != nil {
		t.Fatal(err)
	}
	defer host.Run(ctx, host.Cmd("docker", "rmi", names[0], names[1])) //nolint:errcheck // clean-up
	for _, n := range names {
		got, err := host.Output(ctx, host.Cmd("docker", "run", "--rm", n))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(got, "hello dtrwxrwxrwx ") || strings.HasSuffix(got, " 0") {
			t.Errorf("%s printed %q, want /tmp sticky and world-writable and an /etc/passwd", n, got)
		}
	}
}
