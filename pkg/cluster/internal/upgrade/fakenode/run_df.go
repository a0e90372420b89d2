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

package fakenode

import (
	"fmt"
	"strings"
)

// Disk is a host disk as df shows it through a node: its device and its
// size and free space in KiB.
type Disk struct {
	Device         string
	SizeKB, FreeKB int64
}

// HostDiskKB is the size of the host disk the nodes' files are on.
const HostDiskKB = 256 << 20

// tmpfsKB is the size of a node's /tmp, a tmpfs of half the host's memory.
const tmpfsKB = 12 << 20

// mount is one file system of a node, as df shows it.
type mount struct {
	device         string
	sizeKB, freeKB int64
	at             string
}

// mounts are the node's file systems, the most specific first: kind runs
// a node with /var on a volume of its own (containerd's images, the
// kubelet's pods) and /tmp on a tmpfs; the rest, /kind and /usr/bin
// included, is the container's root overlay. The overlay and the volume
// are both under the provider's data root on the host's disk, so df
// shows them with the same size and free space under two device names, as
// on a real node (testdata/nodes/v1.36.3/df-layout.txt), unless VarDisk
// puts the volume on a disk of its own.
func (n *Node) mounts() []mount {
	root := mount{device: "overlay", sizeKB: HostDiskKB, freeKB: n.DiskFreeKB, at: "/"}
	vol := mount{device: "/dev/vda", sizeKB: HostDiskKB, freeKB: n.DiskFreeKB, at: "/var"}
	if d := n.VarDisk; d != nil {
		vol = mount{device: d.Device, sizeKB: d.SizeKB, freeKB: d.FreeKB, at: "/var"}
	}
	return []mount{
		vol,
		{device: "tmpfs", sizeKB: tmpfsKB, freeKB: tmpfsKB, at: "/tmp"},
		root,
	}
}

// mountOf returns the file system path is on.
func (n *Node) mountOf(path string) mount {
	all := n.mounts()
	for _, m := range all {
		if path == m.at || strings.HasPrefix(path, strings.TrimSuffix(m.at, "/")+"/") {
			return m
		}
	}
	return all[len(all)-1]
}

// runDF answers `df -Pk PATH...`: one line per path, the file system it is
// on, as GNU df prints them.
func (n *Node) runDF(args []string) (string, int) {
	if len(args) == 0 || args[0] != "-Pk" {
		return "fakenode: only df -Pk is simulated", 127
	}
	var b strings.Builder
	b.WriteString("Filesystem     1024-blocks     Used Available Capacity Mounted on\n")
	for _, p := range args[1:] {
		if !strings.HasPrefix(p, "/") {
			return "df: " + p + ": No such file or directory", 1
		}
		m := n.mountOf(p)
		used := m.sizeKB - m.freeKB
		capacity := 0
		if m.sizeKB > 0 {
			// df rounds the percentage up
			capacity = int((used*100 + m.sizeKB - 1) / m.sizeKB)
		}
		fmt.Fprintf(&b, "%-14s %11d %8d %9d %7d%% %s\n", m.device, m.sizeKB, used, m.freeKB, capacity, m.at)
	}
	return b.String(), 0
}
