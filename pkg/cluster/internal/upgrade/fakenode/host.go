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
	"sort"
	"strings"
	"sync"
)

// InotifyCount is a number of inotify instances and watches.
type InotifyCount struct {
	Instances, Watches int
}

// What the root processes of a kind node hold, as counted on the real
// nodes of a 1 + 1 cluster at v1.37.2 (testdata/nodes/kubelet-inotify):
// the kubelet 7 instances and about 180 watches; beside it systemd 4,
// containerd 2 and kube-proxy 1 on every node, and on the control-plane
// node kube-controller-manager 7 and kube-apiserver 6: 27 instances there,
// 14 on a worker.
var (
	KubeletInotify      = InotifyCount{Instances: 7, Watches: 180}
	ControlPlaneInotify = InotifyCount{Instances: 20, Watches: 60}
	WorkerInotify       = InotifyCount{Instances: 7, Watches: 42}
)

// Host is the machine simulated nodes run on, with rootful Docker's
// accounting: every node's root processes count against the host's one
// per-user inotify limit. Clusters given the same Host (ShareHost) count
// together, as kind clusters on one Docker engine do.
type Host struct {
	mu sync.Mutex
	// Limit is fs.inotify.max_user_instances and max_user_watches.
	Limit InotifyCount
	// Outside is what the host's own root processes hold, which no node
	// can see.
	Outside InotifyCount
	// held is what each node's root processes hold, by node name.
	held map[string]InotifyCount
}

// NewHost returns a host with kind's advised inotify limits (512
// instances, 524288 watches) and little held outside the nodes.
func NewHost() *Host {
	return &Host{
		Limit:   InotifyCount{Instances: 512, Watches: 524288},
		Outside: InotifyCount{Instances: 10, Watches: 200},
		held:    map[string]InotifyCount{},
	}
}

// SetLimit sets the host's inotify limits, as `sysctl -w` does.
func (h *Host) SetLimit(limit InotifyCount) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Limit = limit
}

// SetOutside sets what processes outside the nodes hold.
func (h *Host) SetOutside(outside InotifyCount) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Outside = outside
}

// Used returns what every node and the host's own processes hold.
func (h *Host) Used() InotifyCount {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.usedLocked()
}

func (h *Host) usedLocked() InotifyCount {
	used := h.Outside
	for _, c := range h.held {
		used.Instances += c.Instances
		used.Watches += c.Watches
	}
	return used
}

// Held returns what node's root processes hold.
func (h *Host) Held(node string) InotifyCount {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held[node]
}

// SetHeld sets what node's root processes hold.
func (h *Host) SetHeld(node string, c InotifyCount) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held[node] = c
}

// acquire takes c for node if the limits leave room, as inotify_init and
// inotify_add_watch do; it reports whether they did.
func (h *Host) acquire(node string, c InotifyCount) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	used := h.usedLocked()
	if used.Instances+c.Instances > h.Limit.Instances || used.Watches+c.Watches > h.Limit.Watches {
		return false
	}
	held := h.held[node]
	h.held[node] = InotifyCount{Instances: held.Instances + c.Instances, Watches: held.Watches + c.Watches}
	return true
}

// release gives back c of what node holds.
func (h *Host) release(node string, c InotifyCount) {
	h.mu.Lock()
	defer h.mu.Unlock()
	held := h.held[node]
	h.held[node] = InotifyCount{Instances: max(0, held.Instances-c.Instances), Watches: max(0, held.Watches-c.Watches)}
}

// ShareHost makes c's nodes run on other's host, beside other's nodes.
func (c *Cluster) ShareHost(other *Cluster) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.Nodes {
		other.Host.SetHeld(n.Name, c.Host.Held(n.Name))
	}
	c.Host = other.Host
}

// inotifyListing answers the upgrade's inotify script as a real node does:
// the host's limits (the node has no user namespace of its own), then one
// line per instance its root processes hold, the kubelet's named, the
// watches spread over them.
func (n *Node) inotifyListing() string {
	h := n.cluster.Host
	h.mu.Lock()
	limit, held := h.Limit, h.held[n.Name]
	h.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "limits %d %d %d %d\n", limit.Instances, limit.Watches, limit.Instances, limit.Watches)
	kubelet := InotifyCount{}
	if n.KubeletVersion != "" {
		kubelet = KubeletInotify
	}
	write := func(c InotifyCount, comm string) {
		for i := 0; i < c.Instances; i++ {
			w := c.Watches / c.Instances
			if i == 0 {
				w += c.Watches % c.Instances
			}
			fmt.Fprintf(&b, "fd 0 %d %s\n", w, comm)
		}
	}
	write(kubelet, "kubelet")
	write(InotifyCount{Instances: held.Instances - kubelet.Instances, Watches: held.Watches - kubelet.Watches}, "systemd")
	// a process of another user: not counted against root's limit
	b.WriteString("fd 65532 3 coredns\n")
	return b.String()
}

// KubeletLog returns the lines the node's kubelet has logged since it was
// last started by systemd, oldest first.
func (n *Node) KubeletLog() []string {
	n.cluster.mu.Lock()
	defer n.cluster.mu.Unlock()
	return append([]string{}, n.kubeletLog...)
}

// kubeletExited records a kubelet at version that exited at start after
// logging lines, as real kubelets do; systemd then restarts it every
// second and it exits each time. The journal ends in its next run, as a
// real one is mostly read: started, not yet failed.
func (n *Node) kubeletExited(version string, lines ...string) {
	n.KubeletVersion = ""
	n.Ready = false
	n.kubeletCrashing = true
	run := append([]string{unitStarted, kubeletVersionLine(version)}, lines...)
	n.kubeletLog = append(append(run, unitExited, unitFailed), unitStarted, kubeletVersionLine(version))
}

// kubeletStarted records a kubelet at version that runs.
func (n *Node) kubeletStarted(version string) {
	n.KubeletVersion = version
	n.Ready = true
	n.kubeletCrashing = false
	n.kubeletLog = []string{
		unitStarted,
		kubeletVersionLine(version),
		`I1201 21:00:01.000000     123 kubelet_node_status.go:78] "Successfully registered node" node="` + n.Name + `"`,
	}
}

func kubeletVersionLine(version string) string {
	return `I1201 21:00:00.000000     123 server.go:530] "Kubelet version" kubeletVersion="` + version + `"`
}

// systemd's lines about kind's kubelet unit, as journalctl -o cat shows
// them.
const (
	unitStarted = "Started kubelet.service - kubelet: The Kubernetes Node Agent."
	unitExited  = "kubelet.service: Main process exited, code=exited, status=1/FAILURE"
	unitFailed  = "kubelet.service: Failed with result 'exit-code'."
)

// The lines a real kubelet logs when it finds the host's inotify
// instances exhausted (as captured in testdata/nodes/kubelet-inotify), and
// when it refuses a cgroup v1 host.
const (
	inotifyFileSource = `E1201 21:00:00.500000     123 file_linux.go:59] "Unable to read config path" err="unable to create inotify: too many open files" path="/etc/kubernetes/manifests"`
	inotifyCAdvisor   = `E1201 21:00:00.600000     123 kubelet.go:1833] "Failed to start cAdvisor" err="inotify_init: too many open files"`
	hostRefused       = `E1201 21:00:00.500000     123 run.go:72] "command failed" err="failed to run Kubelet: kubelet is configured to not run on a host using cgroup v1. cgroup v1 support is unsupported and will be removed in a future release"`
)

// systemdRestartsKubelet plays systemd restarting a kubelet that exited,
// a second later (kind's kubelet.service: Restart=always): the fake does
// it whenever the kubelet's state is looked at. It stays up once the host
// has room for it.
func (n *Node) systemdRestartsKubelet() {
	if !n.kubeletCrashing {
		return
	}
	n.kubeletRestarts++
	if _, version, ok := parseBinary(n.Files["/usr/bin/kubelet"].Content); ok && !n.refusesHost(version) && n.refusedFlag(version) == "" && n.cluster.Host.acquire(n.Name, KubeletInotify) {
		n.kubeletHolds = true
		n.kubeletStarted(version)
		n.notReadyReads = n.cluster.Delays.NodeReads
	}
}

// systemctlShow answers `systemctl show kubelet --property=...`: a kubelet
// that exits at start is restarted by systemd, and every read finds it
// restarted once more.
func (n *Node) systemctlShow(props []string) string {
	n.systemdRestartsKubelet()
	values := map[string]string{
		"ActiveState":  "active",
		"SubState":     "running",
		"NRestarts":    fmt.Sprint(n.kubeletRestarts),
		"InvocationID": fmt.Sprintf("%032x", n.kubeletRestarts+1),
	}
	if n.kubeletCrashing {
		values["ActiveState"], values["SubState"] = "activating", "auto-restart"
	}
	sort.Strings(props)
	var b strings.Builder
	for _, p := range props {
		if v, ok := values[p]; ok {
			fmt.Fprintf(&b, "%s=%s\n", p, v)
		}
	}
	return b.String()
}
