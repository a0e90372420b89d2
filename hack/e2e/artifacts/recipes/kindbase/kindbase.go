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

// Package kindbase is the recipe of kind's base image, rebuilt offline
// from kind's own recipe in the sigs.k8s.io/kind module this repository
// depends on: its files/ tree (entrypoint, systemd units, kubelet drop-ins,
// containerd config, sysctl files, helper scripts) and the unit set-up and
// containerd spec of its Dockerfile, on a Debian tree of the packages that
// Dockerfile installs (package rootfs), with containerd, runc, crictl, the
// CNI plugins and the fuse-overlayfs snapshotter built from the Go module
// proxy at the versions it names (package gobuild). Nothing of kind is
// copied into this repository; a kind bump changes the base image by
// itself. What differs on this host is the overlay of OverlayNote.
package kindbase

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/host"
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/image"
)

// Spec is one base image.
type Spec struct {
	// KindBase is images/base of the kind module
	KindBase host.Path
	// Rootfs is the Debian tree, a tar
	Rootfs host.Path
	// the folders of the built components
	Containerd, Runc, Crictl, CNI, Fuse host.Path
	// CA is the certificate of the lab's image mirror
	CA   host.Path
	Name string
}

// OverlayNote is written into the image as /kind/e2e-overlay.txt, so that
// anyone who looks at a node sees what differs from kind's base and why.
const OverlayNote = `kind-upgrade e2e: what this base image changes on top of kind's recipe
- containerd CRI restrict_oom_score_adj = true: this host's capability
  bounding set lacks CAP_SYS_RESOURCE, so a pod sandbox may not lower its
  oom_score_adj (kind sets it to true itself for rootless/userns nodes)
- /etc/ssl/certs/kind-upgrade-e2e-mirror.pem: the CA of the offline image
  mirror that ` + "`kind build node-image`" + ` fetches images through (HTTPS_PROXY),
  since no container registry is reachable here
`

// setup is what kind's Dockerfile runs on its base stage: no services but
// the ones kind enables, no tmpfiles set-up at boot, no kmsg in the
// journal, systemd as /sbin/init, and containerd's default runtime spec
// with kind's product-files hook and without rlimits.
var setup = []string{
	"rm -f /lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service" +
		" /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/*" +
		" /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev*" +
		" /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/*",
	"echo ReadKMsg=no >>/etc/systemd/journald.conf",
	"{ [ -e /sbin/init ] || ln -s /usr/lib/systemd/systemd /sbin/init; }",
	"systemctl --quiet enable kubelet.service containerd.service undo-mount-hacks.service",
	"systemctl --quiet mask systemd-binfmt.service",
	"mkdir -p /etc/kubernetes/manifests",
	`ctr oci spec | jq '.hooks.createContainer += [{"path": "/kind/bin/mount-product-files.sh"}] | del(.process.rlimits)' >/etc/containerd/cri-base.json`,
	"test -s /etc/containerd/cri-base.json",
	"containerd --version",
	"runc --version | grep -q libseccomp",
}

// Build builds the image and records it.
func Build(ctx context.Context, out string, s Spec) error {
	c := &image.Context{Dockerfile: fmt.Sprintf(`FROM scratch
ADD rootfs.tar /
COPY files/ /
RUN %s
ENV container=docker
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]
`, strings.Join(setup, " \\\n  && ")),
		Files: []image.File{{Name: "rootfs.tar", Mode: 0o644, Src: s.Rootfs}}}
	files, err := kindFiles(s.KindBase.Join("files"))
	if err != nil {
		return err
	}
	c.Add("files", files...)
	bin := func(dir host.Path, name, dest string) image.File {
		return image.File{Name: dest, Mode: 0o755, Src: host.Path(dir.Join(name))}
	}
	c.Add("files",
		bin(s.Containerd, "containerd", "usr/local/bin/containerd"),
		bin(s.Containerd, "ctr", "usr/local/bin/ctr"),
		bin(s.Containerd, "containerd-shim-runc-v2", "usr/local/bin/containerd-shim-runc-v2"),
		bin(s.Runc, "runc", "usr/local/sbin/runc"),
		bin(s.Crictl, "crictl", "usr/local/bin/crictl"),
		bin(s.Fuse, "containerd-fuse-overlayfs-grpc", "usr/local/bin/containerd-fuse-overlayfs-grpc"))
	for _, p := range []string{"host-local", "loopback", "ptp", "portmap"} {
		c.Add("files", bin(s.CNI, p, "opt/cni/bin/"+p))
	}
	config, err := os.ReadFile(s.KindBase.Join("files", "etc", "containerd", "config.toml"))
	if err != nil {
		return err
	}
	overlaid, err := RestrictOOMScoreAdj(config)
	if err != nil {
		return err
	}
	c.Add("files",
		image.File{Name: "etc/containerd/config.toml", Mode: 0o644, Data: overlaid},
		image.File{Name: "etc/ssl/certs/kind-upgrade-e2e-mirror.pem", Mode: 0o644, Src: s.CA},
		image.File{Name: "kind/e2e-overlay.txt", Mode: 0o644, Data: []byte(OverlayNote)})
	return image.Replace(ctx, out, s.Name, func() error { return image.Build(ctx, s.Name, c) })
}

// kindFiles are kind's files/ tree with the modes kind's Dockerfile gives
// them: its scripts (usr/local/bin, kind/bin) 0755, the rest 0644. No
// folder entries: Docker makes missing parents 0755 and leaves the
// existing ones (and the merged-/usr links) as they are. The containerd
// config is the overlay's.
func kindFiles(dir string) ([]image.File, error) {
	var files []image.File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("kind's base files: %s is not a regular file; review package kindbase", p)
		}
		if rel == "etc/containerd/config.toml" {
			return nil
		}
		mode := int64(0o644)
		if strings.HasPrefix(rel, "usr/local/bin/") || strings.HasPrefix(rel, "kind/bin/") {
			mode = 0o755
		}
		files = append(files, image.File{Name: rel, Mode: mode, Src: host.Path(p)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("failed to read kind's base files: %w", err)
	}
	return files, nil
}

var restrictLine = regexp.MustCompile(`(?m)^([ \t]*restrict_oom_score_adj[ \t]*=[ \t]*)false[ \t]*$`)

// RestrictOOMScoreAdj is kind's containerd config with the CRI plugin's
// restrict_oom_score_adj set to true; an error when the config no longer
// has the one line that sets it to false, or when the result does not
// read back as true.
func RestrictOOMScoreAdj(config []byte) ([]byte, error) {
	if n := len(restrictLine.FindAll(config, -1)); n != 1 {
		return nil, fmt.Errorf("kind's containerd config has %d lines setting restrict_oom_score_adj = false, want 1: review package kindbase", n)
	}
	out := restrictLine.ReplaceAll(config, []byte("${1}true"))
	var parsed struct {
		Plugins map[string]struct {
			RestrictOOMScoreAdj *bool `toml:"restrict_oom_score_adj"`
		} `toml:"plugins"`
	}
	if _, err := toml.Decode(string(out), &parsed); err != nil {
		return nil, fmt.Errorf("kind's containerd config does not parse after the overlay: %w", err)
	}
	if v := parsed.Plugins["io.containerd.grpc.v1.cri"].RestrictOOMScoreAdj; v == nil || !*v {
		return nil, fmt.Errorf("kind's containerd config does not set plugins.\"io.containerd.grpc.v1.cri\".restrict_oom_score_adj to true after the overlay: review package kindbase")
	}
	return out, nil
}
