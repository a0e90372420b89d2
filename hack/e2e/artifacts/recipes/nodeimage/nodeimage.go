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

// Package nodeimage makes node images with kind's own builder, offline.
// `kind build node-image` (this repository's binary, i.e. kind's builder
// unchanged) takes a Kubernetes release tarball and the base image. Inside
// its build container it fetches the images it does not build (etcd,
// CoreDNS, the sandbox image, kindnetd, local-path-provisioner and its
// helper) with `ctr content fetch`, through HTTPS_PROXY when that is set.
// No registry is reachable here, so the images built on this machine are
// served by hack/e2e/mirror: an HTTPS proxy that answers for
// registry.k8s.io and docker.io itself from `docker save` archives, with a
// CA the base image trusts (package kindbase).
package nodeimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/host"
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/image"
)

const mirrorPort = "3128"

// mirrorContext is the mirror program as an image.
func mirrorContext(bin host.Path) *image.Context {
	c := &image.Context{Dockerfile: "FROM scratch\nCOPY root/ /\nENTRYPOINT [\"/usr/local/bin/mirror\"]\n"}
	c.Add("root", image.MinimalRoot()...)
	c.Add("root", image.File{Name: "usr/local/bin/mirror", Mode: 0o755, Src: bin})
	return c
}

// MirrorSpec is the mirror as the image Name, kept in Docker: the
// registry the e2e clusters that pull through a mirror use.
type MirrorSpec struct {
	Bin  host.Path
	Name string
}

// Mirror builds a MirrorSpec.
func Mirror(ctx context.Context, out string, s MirrorSpec) error {
	return image.Replace(ctx, out, s.Name, func() error { return image.Build(ctx, s.Name, mirrorContext(s.Bin)) })
}

// Spec is one node image.
type Spec struct {
	// Kind is the kind binary that builds it
	Kind host.Path
	// Tarball is the Kubernetes release (kubernetes-server-linux-amd64.tar.gz)
	Tarball host.Path
	// Base is the base image's name (its entry is an input of the node's)
	Base, Name string
	// Archives are the image archives the mirror serves, CA its CA's folder
	Archives, CA host.Path
	MirrorBin    host.Path
	// Mirror names the mirror's image and container during the build
	Mirror string
}

// Build builds and records the node image.
func Build(ctx context.Context, out string, s Spec) error {
	mirrorImage := s.Mirror + ":build"
	if err := image.Build(ctx, mirrorImage, mirrorContext(s.MirrorBin)); err != nil {
		return err
	}
	stop := func() { _ = host.Run(context.Background(), host.Cmd("docker", "rm", "-f", s.Mirror)) }
	stop()
	defer stop()
	if err := host.Run(ctx, host.Cmd("docker", "run", "-d", "--name", s.Mirror,
		"-v", string(s.Archives)+":/archives:ro", "-v", string(s.CA)+":/ca:ro", mirrorImage,
		"serve", "--listen", ":"+mirrorPort, "--ca-dir", "/ca", "--archives", "/archives")); err != nil {
		return err
	}
	proxy, err := mirrorURL(ctx, s.Mirror)
	if err != nil {
		return err
	}
	host.Logf(ctx, "kind build node-image %s (images through the mirror at %s)", s.Name, proxy)
	return image.Replace(ctx, out, s.Name, func() error {
		buildLog := filepath.Join(out, "build.log")
		_, err := host.Output(ctx, host.Command{
			Env:  []string{"HTTPS_PROXY=" + proxy, "HTTP_PROXY=" + proxy, "NO_PROXY="},
			Name: "sh", Args: []string{"-c", `"$@" >"$0" 2>&1`, buildLog,
				string(s.Kind), "build", "node-image", "--type", "file", "--base-image", s.Base, "--image", s.Name, string(s.Tarball)},
		})
		logs, _ := host.Output(ctx, host.Cmd("sh", "-c", `docker logs "$1" >"$0" 2>&1; tail -n 20 "$0"`, filepath.Join(out, "mirror.log"), s.Mirror))
		if err != nil {
			data, _ := os.ReadFile(buildLog)
			return fmt.Errorf("kind build node-image %s failed: %w\n%s\nthe mirror's log ends:\n%s", s.Name, err, lastLines(string(data), 40), logs)
		}
		return nil
	})
}

// mirrorURL waits until the mirror has indexed its archives and listens,
// and returns its proxy URL.
func mirrorURL(ctx context.Context, name string) (string, error) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		logs, _ := host.Output(ctx, host.Cmd("sh", "-c", `docker logs "$0" 2>&1`, name))
		if strings.Contains(logs, "proxy listening") {
			break
		}
		running, _ := host.Output(ctx, host.Cmd("docker", "inspect", "-f", "{{.State.Running}}", name))
		if time.Now().After(deadline) || running != "true" {
			return "", fmt.Errorf("the mirror did not start: %s", lastLines(logs, 20))
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	ip, err := host.Output(ctx, host.Cmd("docker", "inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", name))
	if err != nil || ip == "" {
		return "", fmt.Errorf("the mirror container has no IP address (%v)", err)
	}
	return "http://" + ip + ":" + mirrorPort, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
