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

package actions

import (
	"context"
	"path"
	"sync"

	"github.com/Masterminds/semver/v3"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/exec"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/emulation"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/options"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/patches"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/report"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/source"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/stepid"
)

// Action is one phase of the upgrade.
type Action interface {
	Execute(ctx *Context) error
}

// The phases' names, in the order they run: what --skip-phases and the
// events' phase field name them.
const (
	PhasePreflight     = "preflight"
	PhaseLoadArtifacts = "load-artifacts"
	PhaseControlPlane  = "control-plane"
	PhaseKubelets      = "kubelets"
	PhaseVerify        = "verify"
)

// PhaseKubeProxy is the part of the control-plane phase that upgrades
// kube-proxy (kubeadm's addon/kube-proxy phase): --skip-phases names it to
// leave kube-proxy at its version.
const PhaseKubeProxy = PhaseControlPlane + "/kube-proxy"

// InotifyAdvice is the command kind's known-issues page gives for hosts
// whose inotify limits kind's nodes exhaust (kubelets then die with
// "too many open files").
const InotifyAdvice = "sysctl -w fs.inotify.max_user_watches=524288 fs.inotify.max_user_instances=512"

// StagingRoot is where upgrade artifacts are staged on every node, one
// folder per target version.
const StagingRoot = "/kind/upgrade"

// ClusterFinder finds the cluster to upgrade and the nodes that share its
// host.
type ClusterFinder interface {
	// Nodes returns the cluster's nodes; its error (e.g. the cluster does
	// not exist) says what to do.
	Nodes() ([]nodes.Node, error)
	// Neighbours returns the nodes of the host's other kind clusters (any
	// provider), which share the host's limits.
	Neighbours() []nodes.Node
}

// Options are the user's choices, as the command's flags and the public
// options set them.
type Options = options.Upgrade

// Context is what phases run with. It is also the context.Context the
// upgrade runs under: pass it to node helpers and commands, and cancelling
// it stops the phases between commands.
type Context struct {
	context.Context
	Logger log.Logger
	Report *report.Reporter
	// Cluster finds Nodes and Neighbours, which preflight's first step
	// sets from it.
	Cluster ClusterFinder
	// HostCmder runs the provider's commands on the host (reading
	// --image); exec.DefaultCmder when nil.
	HostCmder exec.Cmder
	Nodes     []nodes.Node
	// Neighbours are the nodes of the other kind clusters of the same
	// provider: they share the host's limits with Nodes.
	Neighbours []nodes.Node
	Source     source.Source
	Options    Options
	// State is established by preflight.
	State *State

	// Hop is, in a chain of targets, what the chain asks of this one;
	// nil for a single target.
	Hop *Hop
	// Hook, when set, is the caller's function, run after each phase, hop
	// and node (see HookPoint).
	Hook func(HookPoint) error

	// work started by Go and not yet collected by Wait; shared by the
	// contexts WithContext derives
	background *background
	// apiRestarts is set by AfterAPIRestarts.
	apiRestarts bool
	// kubeOn and kubeconfig are set by WithKubeOn.
	kubeOn     nodes.Node
	kubeconfig []byte
}

// AfterAPIRestarts returns a copy of c for work that may run right after
// an API server restarted (the control-plane phase, a control-plane
// node's kubelet restart, a rerun's preflight): its Kube client also
// retries RBAC denials, which such an API server gives until its caches
// are synced. Everywhere else a denial is real and fails at once.
func (c *Context) AfterAPIRestarts() *Context {
	derived := *c
	derived.apiRestarts = true
	return &derived
}

// WithKubeOn returns a copy of c whose Kube client runs kubectl on node n,
// handed kubeconfig (the admin kubeconfig's content) when n lacks it: for
// a node's steps that run while other work reads from the bootstrap node
// (a node runs one command at a time).
func (c *Context) WithKubeOn(n nodes.Node, kubeconfig []byte) *Context {
	derived := *c
	derived.kubeOn, derived.kubeconfig = n, kubeconfig
	return &derived
}

// Hop is what a chain of targets asks of one of them.
type Hop struct {
	// Index is the hop's 1-based position, Count the chain's length.
	Index, Count int
	// Ahead is true while the chain looks ahead, before any hop runs:
	// preflight then checks the hop against the cluster as it is, as if
	// the control plane ran From, and changes nothing.
	Ahead bool
	// From is, looking ahead, the version the control plane will run
	// when the hop starts (the previous hop's target); nil for the first.
	From *semver.Version
	// KubeletsAt is, when the kubelets do not move at this hop, why: the
	// hop at which they do.
	KubeletsAt string
	// DiskPlanned is, looking ahead, the disk space the earlier hops
	// need, by file system (see preflight's disk check); preflight adds
	// this hop's.
	DiskPlanned map[string]int64
}

// HookPoint is where the upgrade is when it runs the caller's hook.
type HookPoint struct {
	// Hop is the 1-based hop of a chain (1 for a single target), Target
	// its version.
	Hop    int
	Target string
	// Phase is the phase just finished, or in which Node just finished;
	// "" after a whole hop.
	Phase string
	// Node is the node just finished in Phase; "" after a phase or a hop.
	Node string
}

// String names the point for messages.
func (p HookPoint) String() string {
	switch {
	case p.Node != "":
		return "node " + p.Node + " in phase " + p.Phase
	case p.Phase != "":
		return "phase " + p.Phase
	}
	return "the upgrade to " + p.Target
}

// RunHook runs the caller's hook, if any, at point (its Hop and Target
// filled in from c), as a step of its own: its error fails the upgrade.
func (c *Context) RunHook(point HookPoint) error {
	if c.Hook == nil || c.State == nil || c.Options.DryRun {
		return nil
	}
	point.Hop, point.Target = 1, c.State.Target
	if c.Hop != nil {
		point.Hop = c.Hop.Index
	}
	return c.Report.Run(report.Scope{Phase: point.Phase, Node: point.Node, StepID: stepid.CallerHook, Step: "the caller's hook after " + point.String()}, func() (bool, string, error) {
		if err := c.Hook(point); err != nil {
			return false, "", errors.Wrapf(err, "the caller's hook after %s failed (run the upgrade again to go on from there)", point)
		}
		return false, "", nil
	})
}

// background is the work Context.Go started.
type background struct {
	wg     sync.WaitGroup
	mu     sync.Mutex
	errors []error
}

// NewContext returns a Context that runs under parent; set its other
// fields before use.
func NewContext(parent context.Context) *Context {
	return &Context{Context: parent, background: &background{}}
}

// bg returns c's background work, made on first use for a Context that
// NewContext did not make (tests; not safe from several goroutines).
func (c *Context) bg() *background {
	if c.background == nil {
		c.background = &background{}
	}
	return c.background
}

// WithContext returns a copy of c that runs under ctx (a wait's deadline,
// say): commands started with it stop when ctx is done. Work started with
// Go is shared with c.
func (c *Context) WithContext(ctx context.Context) *Context {
	derived := *c
	derived.Context = ctx
	return &derived
}

// Go runs fn beside the phases that follow. Wait collects it; the upgrade
// waits for all of it before it returns, whatever happened.
func (c *Context) Go(fn func() error) {
	bg := c.bg()
	bg.wg.Add(1)
	go func() {
		defer bg.wg.Done()
		if err := fn(); err != nil {
			bg.mu.Lock()
			bg.errors = append(bg.errors, err)
			bg.mu.Unlock()
		}
	}()
}

// Wait waits for the work started by Go and returns its errors.
func (c *Context) Wait() error {
	bg := c.bg()
	bg.wg.Wait()
	bg.mu.Lock()
	defer bg.mu.Unlock()
	err := errors.NewAggregate(bg.errors)
	bg.errors = nil
	return err
}

// NodeInfo is what preflight learnt about one node.
type NodeInfo struct {
	Role string
	Arch string
	// Installed is the node's /kind/version.
	Installed *semver.Version
	// Kubelet is the kubeletVersion the node reports to the API server.
	Kubelet *semver.Version
	// Needed are the images from kubeadm's list this node runs.
	Needed []string
	// Present is the set of (normalized) images in the node's containerd.
	Present map[string]bool
	// Load are the archives of the source providing images the node lacks.
	Load []*artifacts.Artifact
	// Pull are the images the node lacks that no source provides: the
	// node pulls them from their registry (preflight checked it can).
	Pull []string
	// CgroupV1 is true when the node's /sys/fs/cgroup is cgroup v1.
	CgroupV1 bool
	// Swap is true when the node sees active swap.
	Swap bool
}

// State is the plan preflight establishes and later phases follow.
type State struct {
	// Target is the version kubeadm in --image-dir reports, e.g. "v1.34.4".
	Target        string
	TargetVersion *semver.Version
	// From is the control plane's version before the upgrade.
	From string
	// Images are the images `kubeadm config images list` gives for Target
	// with the cluster's image settings (repository, etcd and CoreDNS).
	Images []string
	// ClusterConfig is the cluster's kubeadm ClusterConfiguration as
	// preflight read it.
	ClusterConfig *kube.ClusterConfiguration
	// Bootstrap is the control-plane node `kubeadm upgrade apply` runs on.
	Bootstrap nodes.Node
	// ControlPlanes are the control-plane nodes, Bootstrap first.
	ControlPlanes []nodes.Node
	// Workers are the other nodes.
	Workers []nodes.Node
	// Info is keyed by node name.
	Info map[string]*NodeInfo
	// Registered are the nodes as the API server listed them in preflight.
	Registered []kube.Node
	// NothingToDo is true when the cluster already runs Target.
	NothingToDo bool
	// UpgradesControlPlane and UpgradesKubelets are preflight's reading
	// of --skip-phases: whether the control-plane and the kubelets phases
	// run. Phases read these facts, not each other's names. A run that
	// only re-applies the control plane (ControlPlaneOnly) upgrades no
	// kubelet.
	UpgradesControlPlane, UpgradesKubelets bool
	// EmulationNow are the emulation arguments of the cluster's kubeadm
	// configuration as preflight read them, Emulation those the upgrade
	// leaves there (the user's choice applied).
	EmulationNow, Emulation emulation.Args
	// EmulationManaged is true when the user asked something of the
	// emulation or the cluster's configuration sets one: a control-plane
	// node is then done only when its static pods run with Emulation.
	EmulationManaged bool
	// ConfigChanges are how Emulation differs from EmulationNow: the
	// kubeadm configuration's changes.
	ConfigChanges []emulation.Change
	// ControlPlaneOnly is true when every node already runs Target and
	// only the control plane is to change (its emulation): it is
	// re-applied with kubeadm at the same version, node by node, and the
	// kubelets are left alone.
	ControlPlaneOnly bool
	// KubeProxy is the version of kube-proxy's image before the upgrade,
	// nil when the cluster has no kube-proxy or its tag names no version.
	KubeProxy *semver.Version
	// LeavesKubeProxy is true when kube-proxy stays at its version
	// (--skip-phases control-plane/kube-proxy): kubeadm skips its
	// addon/kube-proxy phase.
	LeavesKubeProxy bool
	// Patches are the kubeadm patches handed to kubeadm (--patches), nil
	// for none.
	Patches *patches.Set
	// Moving are the nodes whose kubelets move, by name (--nodes); nil
	// for every node.
	Moving map[string]bool
	// KubeletsAt is, in a chain whose kubelets do not move at this hop,
	// the hop at which they do.
	KubeletsAt string
	// Passed is true when, looking ahead in a chain, the control plane
	// already runs a later version than Target: the hop is done.
	Passed bool
	// Loading are the nodes the load-artifacts phase loads beside the
	// control-plane phase that the control-plane phase upgrades (the
	// other control-plane nodes), by name: each gate opens when the
	// node's loading ends. Set before the control-plane phase starts,
	// read only after.
	Loading map[string]*Gate
}

// PatchesDir is where the patches are staged on the nodes: named by their
// digest, so that a folder there holds exactly one set of patches.
func (s *State) PatchesDir() string {
	return path.Join(StagingRoot, "patches", s.Patches.Digest[:12])
}

// Ordered returns the nodes in the order the kubelets phase visits them:
// control-plane nodes (bootstrap first), then workers.
func (s *State) Ordered() []nodes.Node {
	return append(append([]nodes.Node{}, s.ControlPlanes...), s.Workers...)
}

// StagingDir is where the target's artifacts are staged on every node.
func (s *State) StagingDir() string {
	return path.Join(StagingRoot, s.Target)
}

// Staged returns the staging path of a binary.
func (s *State) Staged(binary string) string {
	return path.Join(s.StagingDir(), binary)
}

// StagedAll returns Staged of each of binaries.
func (s *State) StagedAll(binaries []string) []string {
	var paths []string
	for _, b := range binaries {
		paths = append(paths, s.Staged(b))
	}
	return paths
}

// APIRetries is how many times a one-shot request the API server failed
// transiently is tried again, after pauses of Options.APIBackoff, doubled
// each time: 31 s in all at the default APIBackoff of 1 s. That outlasts
// an API server's restart behind kind's load balancer and an etcd leader
// election, and still fails promptly when the API server is gone. A
// wait's polls do not retry (kube.Client.Once): the next poll does.
const APIRetries = 5

// Kube returns a kubectl client on the bootstrap control-plane node (or
// WithKubeOn's node), for one-shot requests: it retries those that fail
// transiently. A wait's condition asks it for Once.
func (c *Context) Kube() kube.Client {
	k := kube.Client{On: c.State.Bootstrap, Retries: APIRetries, Backoff: c.Options.APIBackoff, Logger: c.Logger, RetryForbidden: c.apiRestarts}
	if c.kubeOn != nil {
		k.On, k.Kubeconfig = c.kubeOn, c.kubeconfig
	}
	return k
}

// KubeOn is Kube's client running kubectl on node n instead, handed
// kubeconfig (the admin kubeconfig's content) when n lacks it.
func (c *Context) KubeOn(n nodes.Node, kubeconfig []byte) kube.Client {
	k := c.Kube()
	k.On, k.Kubeconfig = n, kubeconfig
	return k
}

// MovesKubelet reports whether the kubelet of the node named name is one
// the user chose to move (every node's unless --nodes chose some).
func (s *State) MovesKubelet(name string) bool {
	return s.Moving == nil || s.Moving[name]
}

// IsControlPlane reports whether n is a control-plane node.
func (s *State) IsControlPlane(n nodes.Node) bool {
	for _, cp := range s.ControlPlanes {
		if cp.String() == n.String() {
			return true
		}
	}
	return false
}
