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
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/constants"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/imageref"
)

// File is a simulated file.
type File struct {
	Content []byte
	Mode    uint32
}

// Node is a simulated kind node. Its exported fields are its state; lock
// the Cluster to read them while commands may run.
type Node struct {
	cluster *Cluster

	Name     string
	NodeRole string
	Machine  string // `uname -m`
	Running  bool
	Files    map[string]*File
	// Images in containerd's k8s.io namespace (normalized refs) and
	// whether each is pinned.
	Images map[string]bool
	// KubeletVersion is the version of the running kubelet (what the API
	// reports); empty while the kubelet is stopped.
	KubeletVersion string
	Ready          bool
	Unschedulable  bool
	NoSchedule     bool
	Annotations    map[string]string
	// DiskFreeKB is what df reports as available on the host disk the
	// node's root overlay and its /var volume are both on (see run_df.go).
	DiskFreeKB int64
	// VarDisk, when set, is another host disk the node's /var volume is
	// on, as when the provider keeps its volumes apart from its layers.
	VarDisk *Disk
	// Evicted counts drains that evicted pods.
	Evicted int
	// Nudged is, per static pod component, the last value of the
	// annotation kube.NudgedAnnotation set on its mirror pod.
	Nudged map[string]string
	// CgroupV1 makes the node's /sys/fs/cgroup a cgroup v1 hierarchy, on
	// which kubelets from v1.35 on refuse to start unless their
	// configuration sets failCgroupV1: false.
	CgroupV1 bool
	// Swap makes the node see an active swap area.
	Swap bool
	// Kubeadm is a kubeadm an earlier run left holding the node's kubeadm
	// lock.
	Kubeadm KubeadmLeft
	// OldCtr makes the node's ctr one without `images import --local`
	// (containerd before 2), which refuses the flag.
	OldCtr bool

	// kubeletHolds is true while the kubelet holds its inotify instances
	// on the host; kubeletCrashing while it exits at every start, which
	// kubeletRestarts counts; kubeletLog is what its last run logged.
	kubeletHolds, kubeletCrashing bool
	kubeletRestarts               int
	kubeletLog                    []string

	// notReadyReads counts the node reads left that find it NotReady
	// after its kubelet restarted; podsUnready the reads of its static
	// pods left that find them not Ready after they were replaced;
	// kubeletUnsynced the reads of its static pods left before its
	// restarted kubelet syncs them (and then replaces them).
	notReadyReads, podsUnready, kubeletUnsynced int
	// generation numbers the static pods' containers: each replacement
	// starts new ones.
	generation int
}

// Delays are how long, in requests, a simulated change takes to settle the
// way it does on real nodes.
type Delays struct {
	// APIRequests are refused after an API server's static pod is
	// replaced or a control-plane node's kubelet restarts.
	APIRequests int
	// PodReads find a control-plane node's static pods not Ready after
	// they are replaced or its kubelet restarts.
	PodReads int
	// NodeReads find a node NotReady after its kubelet restarts.
	NodeReads int
	// KubeletSyncReads are the reads of a control-plane node's static
	// pods (through the API server or its kubelet) before its restarted
	// kubelet has synced them: until then the API server still shows the
	// previous kubelet's containers Ready and the kubelet reports them
	// without a status; then it replaces them.
	KubeletSyncReads int
	// APIDenials are requests an API server that has just restarted
	// denies (RBAC Forbidden) once it answers again, before its RBAC
	// caches are synced.
	APIDenials int
}

// KubeadmLeft is what a kubeadm left running by an interrupted run does.
type KubeadmLeft int

const (
	// KubeadmNone is no kubeadm holding the lock.
	KubeadmNone KubeadmLeft = iota
	// KubeadmRunning is a kubeadm that finishes while the next run waits for it.
	KubeadmRunning
	// KubeadmStuck is a kubeadm that outlasts any wait.
	KubeadmStuck
)

// Call is one recorded command.
type Call struct {
	Seq  int
	Node string
	// About is the node a kubectl command acts on (drain X), else Node.
	About string
	Argv  []string
	// Stdin is the sha256 of what the command read on stdin, if anything.
	Stdin string
	Err   bool
}

// Key identifies a call by node, argv and stdin.
func (c Call) Key() string {
	return c.Node + "\x00" + strings.Join(c.Argv, "\x00") + "\x00" + c.Stdin
}

// String prints the call.
func (c Call) String() string {
	return c.Node + ": " + strings.Join(c.Argv, " ")
}

// Cluster is a simulated kind cluster.
type Cluster struct {
	mu sync.Mutex

	Nodes []*Node
	// KubernetesVersion is the ClusterConfiguration's kubernetesVersion.
	KubernetesVersion string
	// ImageConfig is the ClusterConfiguration's image settings.
	ImageConfig ImageConfig
	// ConfigAPIVersion is the ClusterConfiguration's apiVersion as kubeadm
	// stored it (kubeadm.k8s.io/v1beta4 when empty).
	ConfigAPIVersion string
	// ExtraArgs are the extraArgs of the ClusterConfiguration's sections
	// (ArgSections), which kubeadm renders into the static pods' commands.
	ExtraArgs map[string][]Arg
	// KubeProxy and CoreDNS are the images of those add-ons.
	KubeProxy, CoreDNS string
	// StorageDown makes kind's local-path provisioner unavailable, as when
	// its pod cannot start.
	StorageDown bool
	// APIServerUp is false while the API server does not answer.
	APIServerUp bool
	// BarePods are pods without a controller, by node: kubectl drain
	// refuses to delete them unless forced, and then they are gone. Those
	// named local-path-storage/helper-pod-... are helpers of kind's storage
	// provisioner, which deletes them when they are done (unless StorageDown).
	BarePods map[string][]string
	// Deleting are the BarePods ("namespace/name") being deleted, and
	// TerminatingNamespaces the namespaces being deleted: their pods are
	// listed as such, kubectl drain still refuses them, and `kubectl wait
	// --for=delete` sees them go.
	Deleting, TerminatingNamespaces map[string]bool
	// KubeletConfig is the kubelet key of the kubelet-config ConfigMap,
	// which kubeadm upgrade writes to /var/lib/kubelet/config.yaml.
	KubeletConfig string
	// Delays are how long changes take to settle; NewCluster sets small
	// ones, so that every test goes through them.
	Delays Delays
	// CutImports makes the next CutImports `ctr images import` commands
	// fail as containerd's does when the stream into the node lost its end
	// (seen once in CI on Docker 20.10): they read all of their stdin, but
	// less than the archive. CutAtAnEntry makes the cut fall between two
	// of the archive's entries (before index.json, which containerd's
	// export writes after the blobs), where containerd only finds the
	// archive's description missing.
	CutImports   int
	CutAtAnEntry bool
	// FlakyAPI makes the first try of every distinct kubectl request fail
	// the way a load balancer switching API servers, or an etcd leader
	// election, fails a request.
	FlakyAPI bool
	// RBACDenies makes RBAC deny every kubectl request whose arguments
	// contain it, for good: a real denial, not a restarting API server's.
	RBACDenies string
	// PDBBlocked are pods, by node, whose PodDisruptionBudget allows no
	// disruption: kubectl drain cordons the node and then fails to evict
	// them until its --timeout.
	PDBBlocked map[string][]string
	// Lameduck are pods, by node, that take LameduckFor to go once evicted
	// (CoreDNS's lame duck): a kubectl drain whose --timeout is shorter
	// evicts them and stops waiting, as kubectl does; they are gone by the
	// next drain.
	Lameduck map[string][]string
	// Host is the machine the nodes run on: its inotify limits and what
	// counts against them. NewCluster gives each cluster its own;
	// ShareHost puts clusters on one.
	Host *Host
	// Unsettled lists the commands that upgraded or drained a node while
	// another control-plane node's static pods were still being replaced:
	// on a real cluster the API server may be away then and, with several
	// control-plane nodes, etcd may lose its quorum.
	Unsettled []string

	Calls []Call
	seq   int
	// failKey fails the failOccurrence-th call with that Key, before it
	// takes effect or, with failAfterEffect, after.
	failKey         string
	failOccurrence  int
	failAfterEffect bool
	keyCounts       map[string]int
	// cancelKey calls cancel (CancelOn's, or Before's function) when the
	// cancelOccurrence-th call with that Key starts.
	cancelKey        string
	cancelOccurrence int
	cancel           func()
	// apiRefusals counts the requests left that the API server refuses;
	// apiDenials those it then denies, its RBAC caches not yet synced.
	apiRefusals, apiDenials int
	// flaked are the kubectl requests FlakyAPI has failed once.
	flaked map[string]bool
	// provider is the host's provider CLI, made by Provider.
	provider *Provider
	// Registry are the images the nodes can pull (normalized refs), as
	// when they reach their registry through a proxy; nil: the nodes are
	// offline and every pull fails as it fails there.
	Registry map[string]bool
}

// LameduckFor is how long the Lameduck pods take to go once evicted.
const LameduckFor = 5 * time.Second

// NewCluster returns a healthy cluster at version with the given number of
// control-plane and worker nodes, named like kind names them.
func NewCluster(name, version string, controlPlanes, workers int) *Cluster {
	return NewClusterWithImages(name, version, controlPlanes, workers, ImageConfig{Repository: "registry.k8s.io"})
}

// NewClusterWithImages returns NewCluster's cluster created with the image
// settings of cfg, as kind creates it from a config whose
// kubeadmConfigPatches set them: its nodes run the images kubeadm lists
// with cfg.
func NewClusterWithImages(name, version string, controlPlanes, workers int, cfg ImageConfig) *Cluster {
	c := &Cluster{
		KubernetesVersion: version,
		ImageConfig:       cfg,
		APIServerUp:       true,
		KubeletConfig:     KindKubeletConfig,
		Delays:            Delays{APIRequests: 2, PodReads: 2, NodeReads: 2, KubeletSyncReads: 2, APIDenials: 1},
		Host:              NewHost(),
		keyCounts:         map[string]int{},
	}
	images := KubeadmImages(version, cfg)
	c.KubeProxy = images[3]
	c.CoreDNS = images[4]
	add := func(nodeName, role string) {
		n := &Node{
			cluster:        c,
			Name:           nodeName,
			NodeRole:       role,
			Machine:        "x86_64",
			Running:        true,
			Files:          map[string]*File{},
			Images:         map[string]bool{},
			KubeletVersion: version,
			Ready:          true,
			Annotations:    map[string]string{},
			DiskFreeKB:     50 << 20,
			kubeletHolds:   true,
		}
		held := WorkerInotify
		if role == constants.ControlPlaneNodeRoleValue {
			held = ControlPlaneInotify
		}
		c.Host.SetHeld(nodeName, InotifyCount{Instances: held.Instances + KubeletInotify.Instances, Watches: held.Watches + KubeletInotify.Watches})
		n.Files["/kind/version"] = &File{Content: []byte(version + "\n"), Mode: 0o644}
		n.Files[kubeletConfigPath] = &File{Content: []byte(c.KubeletConfig), Mode: 0o644}
		n.Files[KubeadmFlagsPath] = &File{Content: []byte(kubeadmFlags(nodeName, version)), Mode: 0o644}
		for _, b := range []string{"kubeadm", "kubelet", "kubectl"} {
			n.Files["/usr/bin/"+b] = &File{Content: Binary(b, version, "amd64"), Mode: 0o755}
		}
		needed := images
		if role == constants.ControlPlaneNodeRoleValue {
			n.Files[adminKubeconfig] = &File{Content: []byte("admin"), Mode: 0o600}
			for _, image := range images {
				if component := imageref.Component(image); isStatic(component) {
					n.Files[manifestPath(component)] = &File{Content: []byte(manifest(component, image, nil)), Mode: 0o600}
				}
			}
			if controlPlanes > 1 || workers > 0 {
				n.NoSchedule = true
			}
		} else {
			needed = images[3:6]
		}
		for _, image := range needed {
			n.Images[imageref.Normalize(image)] = true
		}
		c.Nodes = append(c.Nodes, n)
	}
	for i := 0; i < controlPlanes; i++ {
		suffix := ""
		if i > 0 {
			suffix = fmt.Sprint(i + 1)
		}
		add(name+"-control-plane"+suffix, constants.ControlPlaneNodeRoleValue)
	}
	for i := 0; i < workers; i++ {
		suffix := ""
		if i > 0 {
			suffix = fmt.Sprint(i + 1)
		}
		add(name+"-worker"+suffix, constants.WorkerNodeRoleValue)
	}
	return c
}

// CreatedWith makes c as kind creates a cluster whose kubeadmConfigPatches
// give its ClusterConfiguration extraArgs: kubeadm init rendered them into
// the control-plane nodes' static pods.
func (c *Cluster) CreatedWith(extraArgs map[string][]Arg) *Cluster {
	c.ExtraArgs = extraArgs
	for _, n := range c.Nodes {
		if n.NodeRole != constants.ControlPlaneNodeRoleValue {
			continue
		}
		for _, component := range staticPods {
			if image := n.manifestImage(component); image != "" {
				n.Files[manifestPath(component)] = &File{Content: []byte(manifest(component, image, c.ExtraArgs[sectionOf(component)])), Mode: 0o600}
			}
		}
	}
	return c
}

// KindKubeletConfig is the part of the KubeletConfiguration kind writes
// that the fake reads.
const KindKubeletConfig = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\nfailSwapOn: false\n"

const kubeletConfigPath = "/var/lib/kubelet/config.yaml"

// KubeadmFlagsPath is the kubelet's flags file kubeadm writes at join.
const KubeadmFlagsPath = "/var/lib/kubelet/kubeadm-flags.env"

// PodInfraFlag is the kubelet flag kubeadm wrote at join up to v1.34
// (the sandbox image), which kubeadm v1.35's upgrade removes and kubelets
// from v1.35 refuse.
const PodInfraFlag = "--pod-infra-container-image"

// kubeadmFlags is the flags file kubeadm at version writes for a kind
// node, as captured from kind's nodes.
func kubeadmFlags(node, version string) string {
	podInfra := ""
	if olderMinor(version, "v1.35.0") {
		podInfra = PodInfraFlag + "=" + KubeadmImages(version, ImageConfig{})[5] + " "
	}
	return `KUBELET_KUBEADM_ARGS="` + podInfra + `--node-ip=172.18.0.2 --node-labels= --provider-id=kind://docker/kind/` + node + `"` + "\n"
}

// KindNodes returns the nodes as nodes.Node.
func (c *Cluster) KindNodes() []nodes.Node {
	out := make([]nodes.Node, 0, len(c.Nodes))
	for _, n := range c.Nodes {
		out = append(out, n)
	}
	return out
}

// Node returns the named node.
func (c *Cluster) Node(name string) *Node {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// FailOn makes the occurrence-th call (counting from 1) with the same Key as
// call fail before it takes effect.
func (c *Cluster) FailOn(call Call, occurrence int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failKey, c.failOccurrence, c.failAfterEffect = call.Key(), occurrence, false
}

// FailAfterEffect makes the occurrence-th call with the same Key as call
// take effect and then report an error, as when the connection to a node
// drops while the command finishes.
func (c *Cluster) FailAfterEffect(call Call, occurrence int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failKey, c.failOccurrence, c.failAfterEffect = call.Key(), occurrence, true
}

// CancelOn calls cancel as the occurrence-th call with the same Key as call
// starts, before it runs: as a user's Ctrl-C at that moment, which the
// command, given the cancelled context, sees.
func (c *Cluster) CancelOn(call Call, occurrence int, cancel func()) {
	c.Before(call, occurrence, cancel)
}

// Before calls fn as the occurrence-th call with the same Key as call
// starts, before it runs: to change the world around the nodes at that
// moment (the host's limits, say). fn must not run commands.
func (c *Cluster) Before(call Call, occurrence int, fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancelKey, c.cancelOccurrence, c.cancel = call.Key(), occurrence, fn
}

// Occurrence returns how many calls up to and including Calls[i] have the
// same Key as it.
func (c *Cluster) Occurrence(i int) int {
	count := 0
	for _, call := range c.Calls[:i+1] {
		if call.Key() == c.Calls[i].Key() {
			count++
		}
	}
	return count
}

// Seq returns how many commands ran so far.
func (c *Cluster) Seq() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

// Snapshot returns a printable copy of the whole state, to compare states.
func (c *Cluster) Snapshot() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "version=%s kube-proxy=%s coredns=%s api=%v kubelet-config=%q bare-pods=%v pdb-blocked=%v extra-args=%v\n", c.KubernetesVersion, c.KubeProxy, c.CoreDNS, c.APIServerUp, c.KubeletConfig, c.BarePods, c.PDBBlocked, c.ExtraArgs)
	for _, n := range c.Nodes {
		fmt.Fprintf(&b, "node %s role=%s running=%v kubelet=%s ready=%v unschedulable=%v annotations=%v evicted=%d\n",
			n.Name, n.NodeRole, n.Running, n.KubeletVersion, n.Ready, n.Unschedulable, n.Annotations, n.Evicted)
		var paths []string
		for p := range n.Files {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			f := n.Files[p]
			fmt.Fprintf(&b, "  file %s %04o %.12s\n", p, f.Mode, digest(f.Content))
		}
		var images []string
		for image, pinned := range n.Images {
			images = append(images, fmt.Sprintf("%s pinned=%v", image, pinned))
		}
		sort.Strings(images)
		for _, image := range images {
			fmt.Fprintf(&b, "  image %s\n", image)
		}
	}
	return b.String()
}

// nodes.Node

func (n *Node) String() string { return n.Name }

// Role returns the node's role.
func (n *Node) Role() (string, error) { return n.NodeRole, nil }

// IP returns a fake address.
func (n *Node) IP() (string, string, error) { return "172.18.0.2", "", nil }

// SerialLogs writes nothing.
func (n *Node) SerialLogs(io.Writer) error { return nil }

// Command returns a command run against the simulated node.
func (n *Node) Command(name string, args ...string) exec.Cmd {
	return n.CommandContext(context.Background(), name, args...)
}

// CommandContext returns a command run against the simulated node.
func (n *Node) CommandContext(ctx context.Context, name string, args ...string) exec.Cmd {
	return &cmd{node: n, ctx: ctx, argv: append([]string{name}, args...)}
}
