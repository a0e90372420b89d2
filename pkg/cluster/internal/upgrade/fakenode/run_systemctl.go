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
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/constants"
)

func (n *Node) runSystemctl(args []string) (string, int) {
	if len(args) >= 2 && args[0] == "show" && args[1] == "kubelet" {
		var props []string
		for _, a := range args[2:] {
			if v, ok := strings.CutPrefix(a, "--property="); ok {
				props = append(props, strings.Split(v, ",")...)
			}
		}
		return n.systemctlShow(props), 0
	}
	if len(args) == 2 && args[0] == "restart" && args[1] == "kubelet" {
		_, version, ok := parseBinary(n.Files["/usr/bin/kubelet"].Content)
		if !ok {
			return "kubelet.service: main process exited", 1
		}
		// the old kubelet's inotify instances go with it
		if n.kubeletHolds {
			n.cluster.Host.release(n.Name, KubeletInotify)
			n.kubeletHolds = false
		}
		// systemd starts the new one and the restart succeeds even when
		// it exits at once: the node stays NotReady
		if n.refusesHost(version) {
			n.kubeletExited(version, hostRefused)
			return "", 0
		}
		if line := n.refusedFlag(version); line != "" {
			n.kubeletExited(version, line)
			return "", 0
		}
		if !n.cluster.Host.acquire(n.Name, KubeletInotify) {
			n.kubeletExited(version, inotifyFileSource, inotifyCAdvisor)
			return "", 0
		}
		n.kubeletHolds = true
		n.kubeletStarted(version)
		n.notReadyReads = n.cluster.Delays.NodeReads
		if n.NodeRole == constants.ControlPlaneNodeRoleValue {
			// the new kubelet restarts the static pods once more, once it
			// has synced them
			n.kubeletUnsynced = n.cluster.Delays.KubeletSyncReads
			if n.kubeletUnsynced == 0 {
				n.restartStaticPods()
			}
		}
		return "", 0
	}
	return "fakenode: unsupported systemctl command", 127
}
