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

package upgrade_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/fakenode"
)

// TestDiskPerFileSystem: preflight counts what goes to each of a node's
// file systems against that file system, as a real kind node lays them
// out: the staged binaries on the root overlay (/kind/upgrade), the images
// on the /var volume (/var/lib/containerd). Here the volume is on a disk
// of its own (VarDisk), so that each file system's room is its own. A fake
// with one file system for every path could not tell these cases apart:
// it sums both needs on one file system, and refuses the last case.
func TestDiskPerFileSystem(t *testing.T) {
	t.Parallel()
	// what each file system needs on the cluster's 2 nodes: the binaries
	// staged, installed and kept (3 times, exactly), the archives
	// streamed and unpacked (twice at most, all of them at most)
	probe := newEnv(t, 1, 1, fakenode.Flat)
	binaries, archives := releaseSizes(t, probe.imageDir)
	nodes := int64(len(probe.cluster.Nodes))
	rootKB, varKB := kib(3*binaries*nodes), kib(2*archives*nodes)
	cases := []struct {
		name            string
		rootKB, varKB   int64
		errHas, errNone string
	}{
		{
			name:   "the root overlay has room, the /var volume does not",
			rootKB: 1 << 30, varKB: 0,
			errHas: `has 0 MiB free in /var/lib/containerd (file system /var), which holds kind-control-plane:/var/lib/containerd, kind-worker:/var/lib/containerd,`,
		},
		{
			name:   "the /var volume has room, the root overlay does not",
			rootKB: 0, varKB: 1 << 30,
			errHas: `has 0 MiB free in /kind/upgrade (file system /), which holds kind-control-plane:/kind/upgrade, kind-worker:/kind/upgrade,`,
		},
		{
			// each holds its own share, not the other's
			name:   "each has room for what goes to it",
			rootKB: rootKB, varKB: varKB,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 1, 1, fakenode.Flat)
			for _, n := range e.cluster.Nodes {
				n.DiskFreeKB = tc.rootKB
				n.VarDisk = &fakenode.Disk{Device: "/dev/vdb", SizeKB: 100 << 20, FreeKB: tc.varKB}
			}
			_, err := e.run(nil)
			switch {
			case tc.errHas == "" && err != nil:
				t.Errorf("error %v, want none (root overlay %d KiB free for %d KiB, /var %d KiB free for at most %d KiB)", err, tc.rootKB, rootKB, tc.varKB, varKB)
			case tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)):
				t.Errorf("error %v, want it to contain %q", err, tc.errHas)
			}
		})
	}
}

// releaseSizes returns the bytes of the binaries and of the image
// archives in a flat release folder.
func releaseSizes(t *testing.T, dir string) (binaries, archives int64) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, entry := range entries {
		info, err := os.Stat(filepath.Join(dir, entry.Name()))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(entry.Name(), ".tar"):
			archives += info.Size()
		case entry.Name() == "kubeadm" || entry.Name() == "kubelet" || entry.Name() == "kubectl":
			binaries += info.Size()
		}
	}
	if binaries == 0 || archives == 0 {
		t.Fatalf("no binaries or archives in %s", dir)
	}
	return binaries, archives
}

// kib is bytes in KiB, rounded up.
func kib(bytes int64) int64 {
	return (bytes + 1023) >> 10
}
