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

// Package images holds the recipes of the lab's small images: one static
// binary on an empty root (kubeadm's control-plane images, etcd, CoreDNS,
// pause, the canary), a binary on the Debian base (kube-proxy, kindnetd,
// the load balancer stand-in), the stand-ins of Kubernetes' test images
// and of kind's storage helper. Each is a Dockerfile built with package
// image; the archives are saved and the names removed from Docker, unless
// the image is one Docker has to keep.
package images

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/host"
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/image"
)

// StaticSpec is an image holding only Bin (at /usr/local/bin and linked
// from /), saved as out/image.tar under Names. Kubernetes' own images get
// no ENTRYPOINT and the binary as CMD, so that both kubeadm's pod specs
// (command: [kube-apiserver, ...]) and `docker run IMAGE kube-apiserver
// --version` work; CoreDNS, pause and the canary run from their
// ENTRYPOINT.
type StaticSpec struct {
	Bin             host.Path
	Entrypoint, Cmd []string
	Names           []string
}

// Static builds a StaticSpec.
func Static(ctx context.Context, out string, s StaticSpec) error {
	base := filepath.Base(string(s.Bin))
	c := &image.Context{Dockerfile: fmt.Sprintf("FROM scratch\nCOPY root/ /\nENV PATH=/usr/local/bin:/usr/bin:/bin\nENTRYPOINT %s\nCMD %s\n",
		image.JSON(s.Entrypoint...), image.JSON(s.Cmd...))}
	c.Add("root", image.MinimalRoot()...)
	c.Add("root",
		image.File{Name: "usr/local/bin/" + base, Mode: 0o755, Src: s.Bin},
		image.File{Name: base, Link: "usr/local/bin/" + base})
	return image.TagLock(ctx, func() error { return buildAndSave(ctx, out, c, s.Names...) })
}

func buildAndSave(ctx context.Context, out string, c *image.Context, names ...string) error {
	defer image.Remove(ctx, names...)
	if err := image.Build(ctx, names[0], c); err != nil {
		return err
	}
	if err := image.Tag(ctx, names[0], names[1:]...); err != nil {
		return err
	}
	return image.Save(ctx, out, names...)
}

// iptablesCommands run iptables-auto, which picks the node's backend.
var iptablesCommands = []string{"iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save", "ip6tables-restore"}

// DebianToolSpec is Bin (in /usr/local/bin) on the Debian base image Base,
// its iptables commands picking the backend the node uses
// (IptablesAuto): the kube-proxy and kindnetd images, saved as
// out/image.tar.
type DebianToolSpec struct {
	Base, Name      string
	Bin             host.Path
	IptablesAuto    host.Path
	Entrypoint, Cmd []string
}

// DebianTool builds a DebianToolSpec.
func DebianTool(ctx context.Context, out string, s DebianToolSpec) error {
	c := &image.Context{Dockerfile: fmt.Sprintf("FROM %s\nCOPY files/ /\nENTRYPOINT %s\nCMD %s\n",
		s.Base, image.JSON(s.Entrypoint...), image.JSON(s.Cmd...))}
	c.Add("files",
		image.File{Name: "usr/local/bin/" + filepath.Base(string(s.Bin)), Mode: 0o755, Src: s.Bin},
		image.File{Name: "usr/local/sbin/iptables-auto", Mode: 0o755, Src: s.IptablesAuto})
	for _, cmd := range iptablesCommands {
		c.Add("files", image.File{Name: "usr/sbin/" + cmd, Link: "/usr/local/sbin/iptables-auto"})
	}
	return image.TagLock(ctx, func() error { return buildAndSave(ctx, out, c, s.Name) })
}

// DebianBaseSpec is the Debian tree Rootfs (a tar) as the image Name, kept
// in Docker: the base of the DebianTool images, the test images and the
// load balancer.
type DebianBaseSpec struct {
	Rootfs host.Path
	Name   string
}

// DebianBase builds a DebianBaseSpec.
func DebianBase(ctx context.Context, out string, s DebianBaseSpec) error {
	c := &image.Context{
		Dockerfile: "FROM scratch\nADD rootfs.tar /\nENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n",
		Files:      []image.File{{Name: "rootfs.tar", Mode: 0o644, Src: s.Rootfs}},
	}
	return image.Replace(ctx, out, s.Name, func() error { return image.Build(ctx, s.Name, c) })
}

// busyboxRoot is Debian's static busybox with the applets linked.
func busyboxRoot(ctx context.Context, busybox host.Path, applets []string) ([]image.File, error) {
	if len(applets) == 0 {
		list, err := host.Output(ctx, host.Cmd(string(busybox), "--list"))
		if err != nil {
			return nil, err
		}
		applets = strings.Fields(list)
	}
	files := append(image.MinimalRoot(),
		image.File{Name: "bin", Mode: 0o755, Dir: true},
		image.File{Name: "bin/busybox", Mode: 0o755, Src: busybox})
	for _, a := range applets {
		if a != "busybox" {
			files = append(files, image.File{Name: "bin/" + a, Link: "busybox"})
		}
	}
	return files, nil
}

// StorageHelperSpec is the helper image kind's storage manifest runs for
// volume set-up and teardown (sh, mkdir, rm): Debian's static Busybox,
// saved as out/image.tar under Name.
type StorageHelperSpec struct {
	Busybox host.Path
	Name    string
}

// StorageHelper builds a StorageHelperSpec.
func StorageHelper(ctx context.Context, out string, s StorageHelperSpec) error {
	files, err := busyboxRoot(ctx, s.Busybox, []string{"sh", "mkdir", "rm", "ls", "cat"})
	if err != nil {
		return err
	}
	c := &image.Context{Dockerfile: "FROM scratch\nCOPY root/ /\nENV PATH=/usr/local/bin:/usr/bin:/bin\nCMD [\"/bin/sh\"]\n"}
	c.Add("root", files...)
	return image.TagLock(ctx, func() error { return buildAndSave(ctx, out, c, s.Name) })
}

// TestImagesSpec is the images Kubernetes' upgrade tests ask for (the file
// Suite/images: role and name per line), built here by role: agnhost, the
// suite module's own agnhost (Suite/agnhost) on the Debian base (Debian's
// sh and coreutils for the commands the tests run in its pods; the real
// image is Alpine's with bash, curl and more); busybox, Debian's static
// Busybox with its applets linked (the real one is Busybox built by
// Kubernetes); nginx, agnhost serving HTTP on port 80 (the tests only run
// it and wait for it to be ready). Saved as out/image.tar.
type TestImagesSpec struct {
	Base    string
	Suite   host.Path
	Busybox host.Path
	// Prefix names the images the stand-ins are built as before tagging
	Prefix string
}

// TestImages builds a TestImagesSpec.
func TestImages(ctx context.Context, out string, s TestImagesSpec) error {
	list, err := os.ReadFile(s.Suite.Join("images"))
	if err != nil {
		return err
	}
	agnhost := s.Prefix + "/agnhost:test"
	byRole := map[string]string{"agnhost": agnhost, "nginx": agnhost + "-nginx", "busybox": agnhost + "-busybox"}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		role, name, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || byRole[role] == "" {
			return fmt.Errorf("no stand-in for the test image line %q of %s (roles: agnhost, nginx, busybox)", line, s.Suite.Join("images"))
		}
		names = append(names, strings.TrimSpace(name))
	}
	bb, err := busyboxRoot(ctx, s.Busybox, nil)
	if err != nil {
		return err
	}
	return image.TagLock(ctx, func() error {
		defer image.Remove(ctx, append(names, agnhost, byRole["nginx"], byRole["busybox"])...)
		c := &image.Context{
			Dockerfile: fmt.Sprintf("FROM %s\nCOPY agnhost /agnhost\nENTRYPOINT [\"/agnhost\"]\nCMD [\"pause\"]\n", s.Base),
			Files:      []image.File{{Name: "agnhost", Mode: 0o755, Src: host.Path(s.Suite.Join("agnhost"))}},
		}
		if err := image.Build(ctx, agnhost, c); err != nil {
			return err
		}
		nginx := &image.Context{Dockerfile: fmt.Sprintf("FROM %s\nENTRYPOINT [\"/agnhost\", \"netexec\", \"--http-port=80\"]\nCMD []\n", agnhost)}
		if err := image.Build(ctx, byRole["nginx"], nginx); err != nil {
			return err
		}
		busybox := &image.Context{Dockerfile: "FROM scratch\nCOPY root/ /\nENV PATH=/usr/local/bin:/usr/bin:/bin\nCMD [\"sh\"]\n"}
		busybox.Add("root", bb...)
		if err := image.Build(ctx, byRole["busybox"], busybox); err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
			role, name, _ := strings.Cut(strings.TrimSpace(line), " ")
			if err := image.Tag(ctx, byRole[role], strings.TrimSpace(name)); err != nil {
				return err
			}
		}
		return image.Save(ctx, out, names...)
	})
}

// LoadBalancerSpec is the stand-in for kind's HA load balancer image: kind
// runs a container of the image its loadbalancer.Image names
// (docker.io/envoyproxy/envoy:<tag>), which cannot be pulled here, with
// its own `bash -c` script (it writes /home/envoy/envoy.yaml and loops on
// `envoy -c`) in place of the image's CMD. So the image is built under
// kind's name on the Debian base (bash, coreutils) with Bin as `envoy` and
// no ENTRYPOINT, and kept in Docker, where kind's `docker run` finds it.
type LoadBalancerSpec struct {
	Base, Name string
	Bin        host.Path
}

// LoadBalancer builds a LoadBalancerSpec.
func LoadBalancer(ctx context.Context, out string, s LoadBalancerSpec) error {
	// the stand-in says which image it was written for (kind_test.go pins it)
	if err := host.Reports(ctx, "stand-in for "+s.Name+" ", host.Cmd(string(s.Bin), "--version")); err != nil {
		return err
	}
	c := &image.Context{Dockerfile: fmt.Sprintf("FROM %s\nCOPY files/ /\nWORKDIR /home/envoy\nENTRYPOINT []\nCMD [\"envoy\", \"--version\"]\n", s.Base)}
	c.Add("files",
		image.File{Name: "usr/local/bin/envoy", Mode: 0o755, Src: s.Bin},
		image.File{Name: "home/envoy", Mode: 0o755, Dir: true})
	return image.Replace(ctx, out, s.Name, func() error {
		if err := image.Build(ctx, s.Name, c); err != nil {
			return err
		}
		// what kind's script runs besides envoy: bash, mkdir, sleep
		if err := host.Run(ctx, host.Cmd("docker", "run", "--rm", s.Name, "bash", "-c", "command -v envoy mkdir sleep >/dev/null")); err != nil {
			return fmt.Errorf("%s lacks what kind's load balancer script runs (bash, mkdir, sleep, envoy): %w", s.Name, err)
		}
		return nil
	})
}
