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

// Package rootfs makes a Debian tree with debootstrap (the one step of the
// lab that stays a shell program, Debian's own) and packs it as a tar: the
// root file system of kind's base image and of the kube-proxy and
// kindnetd images.
package rootfs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/host"
)

// Spec is one tree: Debian Suite with Packages, from Mirror.
type Spec struct {
	Suite    string
	Packages []string
	Mirror   string
	// Debs is debootstrap's download cache (not an input: it only saves
	// downloads), shared by concurrent runs under a lock.
	Debs string `json:"-"`
}

// trimmed are removed from the tree: documentation, logs, apt's lists.
var trimmed = []string{
	"var/lib/apt/lists/*", "var/cache/apt/*.bin", "usr/share/doc/*", "usr/share/man/*",
	"usr/share/info/*", "var/log/*.log", "var/log/apt/*", "tmp/*", "run/*",
}

// Build writes out/rootfs.tar.
func Build(ctx context.Context, out string, s Spec) error {
	if _, err := os.Stat("/usr/sbin/debootstrap"); err != nil {
		return fmt.Errorf("debootstrap is not installed (apt-get install debootstrap)")
	}
	root := filepath.Join(out, "root")
	debs := s.Debs
	if debs == "" {
		debs = filepath.Join(out, "debs")
	}
	if err := os.MkdirAll(debs, 0o755); err != nil {
		return err
	}
	host.Logf(ctx, "debootstrap %s from %s: %s", s.Suite, s.Mirror, strings.Join(s.Packages, ","))
	err := host.WithFileLock(ctx, debs+".lock", func() error {
		return host.Run(ctx, host.Cmd("debootstrap", "--variant=minbase", "--include="+strings.Join(s.Packages, ","),
			"--cache-dir="+debs, s.Suite, root, s.Mirror))
	})
	if err != nil {
		return err
	}
	if err := host.Run(ctx, host.Cmd("chroot", root, "apt-get", "clean")); err != nil {
		return err
	}
	for _, pattern := range trimmed {
		matches, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			return err
		}
		for _, m := range matches {
			if err := os.RemoveAll(m); err != nil {
				return err
			}
		}
	}
	locales, _ := filepath.Glob(filepath.Join(root, "usr/share/locale/*"))
	for _, l := range locales {
		if filepath.Base(l) != "locale.alias" {
			if err := os.RemoveAll(l); err != nil {
				return err
			}
		}
	}
	// a fresh identity per container: an empty machine-id, no dbus copy
	if err := os.WriteFile(filepath.Join(root, "etc/machine-id"), nil, 0o444); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(root, "var/lib/dbus/machine-id")); err != nil && !os.IsNotExist(err) {
		return err
	}
	// Debian's CNI plugins where the CNI config expects them
	if _, err := os.Stat(filepath.Join(root, "usr/lib/cni")); err == nil {
		if err := os.MkdirAll(filepath.Join(root, "opt/cni/bin"), 0o755); err != nil {
			return err
		}
		if err := host.Run(ctx, host.Cmd("cp", "-a", filepath.Join(root, "usr/lib/cni")+"/.", filepath.Join(root, "opt/cni/bin")+"/")); err != nil {
			return err
		}
	}
	// tar, not archive/tar: it keeps every file kind and owner debootstrap made
	if err := host.Run(ctx, host.Cmd("tar", "-C", root, "--numeric-owner", "--exclude=./dev/*", "--exclude=./proc/*", "--exclude=./sys/*",
		"-cf", filepath.Join(out, "rootfs.tar"), ".")); err != nil {
		return err
	}
	return os.RemoveAll(root)
}

// Mirror is the Debian mirror apt uses on this machine (deb822 sources
// first, then sources.list), else deb.debian.org.
func Mirror(suite string) string {
	sources, _ := filepath.Glob("/etc/apt/sources.list.d/*.sources")
	for _, f := range sources {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) >= 2 && fields[0] == "URIs:" && strings.HasSuffix(strings.TrimSuffix(fields[1], "/"), "/debian") {
				return fields[1]
			}
		}
	}
	if data, err := os.ReadFile("/etc/apt/sources.list"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) >= 3 && fields[0] == "deb" && fields[2] == suite {
				return fields[1]
			}
		}
	}
	return "http://deb.debian.org/debian"
}
