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

package cluster

import (
	"context"
	"io"
	"os"
	"time"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	kindcmd "sigs.k8s.io/kind/pkg/cmd"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeprovider"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/options"
)

// DefaultUpgradeWait is how long the upgrade waits, by default, for each
// node or its pods to become ready.
const DefaultUpgradeWait = options.DefaultWait

// UpgradeOption configures Upgrade.
type UpgradeOption interface {
	apply(*upgrade.Options) error
}

type upgradeOptionAdapter func(*upgrade.Options) error

func (f upgradeOptionAdapter) apply(o *upgrade.Options) error { return f(o) }

// UpgradeWithImageDir sets where the target version's kubeadm, kubelet,
// kubectl and image archives are: a release's kubernetes/server/bin, one of
// its parent folders, a kubernetes-server-linux-<arch>.tar.gz, a Kubernetes
// source tree after a build, or a flat folder of binaries and *.tar
// archives. With UpgradeWithImage, a folder of *.tar archives that adds to
// the image's images. This or UpgradeWithImage is required. Given more
// than once (without UpgradeWithImage), the folders are a chain of
// targets, in order, each one minor version above the one before: the
// control plane is upgraded to each in turn, the kubelets once, to the
// last (earlier only when a kubelet would otherwise fall more than 3 minor
// versions behind); kubeadm and kubectl move with the control plane.
// Every target is checked before anything changes.
func UpgradeWithImageDir(dir string) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.AddTarget("", dir)
		return nil
	})
}

// UpgradeWithImage sets a kind node image (e.g. kindest/node:v1.37.0, or
// one `kind build node-image` made) as the target: its Kubernetes version,
// kubeadm, kubelet and kubectl, and the images in its containerd store. An
// image that is not on the host is pulled through the node provider, as
// kind create cluster pulls its node image. This or UpgradeWithImageDir is
// required. Given more than once (without UpgradeWithImageDir), the images
// are a chain of targets, as for UpgradeWithImageDir.
func UpgradeWithImage(image string) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.AddTarget(image, "")
		return nil
	})
}

// The image pull policies of UpgradeWithImagePullPolicy (and of the
// command's --image-pull-policy), spelled as Kubernetes' imagePullPolicy.
const (
	// ImagePullIfNotPresent lets the nodes pull, from their registry, an
	// image kubeadm needs that is neither on them nor in the source; the
	// default.
	ImagePullIfNotPresent = options.PullIfNotPresent
	// ImagePullNever forbids pulls: every image must be on the nodes or in
	// the source.
	ImagePullNever = options.PullNever
)

// UpgradeWithImagePullPolicy sets whether the nodes may pull what no
// source provides: ImagePullIfNotPresent (preflight pulls such an image on
// the first node that needs it, which proves the nodes can, and refuses
// when they cannot) or ImagePullNever.
func UpgradeWithImagePullPolicy(policy string) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.PullPolicy = policy
		return nil
	})
}

// UpgradeWithDryRun makes Upgrade check everything and write the plan to
// the output writer without changing the cluster.
func UpgradeWithDryRun(dryRun bool) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.DryRun = dryRun
		return nil
	})
}

// UpgradeWithSkipPhases skips the named phases (see UpgradePhases), or
// parts of them: "control-plane/kube-proxy" leaves kube-proxy at its
// version (kubeadm's addon/kube-proxy phase is skipped; kube-proxy may be
// up to 3 minor versions older than the API server).
func UpgradeWithSkipPhases(phases ...string) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.SkipPhases = append(o.SkipPhases, phases...)
		return nil
	})
}

// UpgradeWithWaitForReady bounds each wait for a node or its pods to
// become ready (DefaultUpgradeWait if unset).
func UpgradeWithWaitForReady(d time.Duration) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.Wait = d
		return nil
	})
}

// UpgradeWithIgnorePreflightErrors adds kubeadm preflight checks whose
// errors are shown as warnings (kubeadm's --ignore-preflight-errors).
func UpgradeWithIgnorePreflightErrors(checks ...string) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.IgnorePreflightErrors = append(o.IgnorePreflightErrors, checks...)
		return nil
	})
}

// UpgradeWithParallelWorkers sets how many worker nodes the kubelets phase
// drains and upgrades at once (default 1: one after another). kubeadm's
// upgrade procedure allows workers "one at a time, or a few nodes at a
// time"; drains still go through the eviction API, so PodDisruptionBudgets
// hold. Control-plane nodes are always upgraded one at a time.
func UpgradeWithParallelWorkers(n int) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.ParallelWorkers = n
		return nil
	})
}

// UpgradeWithForce lets drains delete pods that no controller recreates
// (bare pods), as kubectl drain --force does; they are lost. Without it,
// Upgrade refuses to start while a node it would drain runs such a pod.
func UpgradeWithForce(force bool) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.Force = force
		return nil
	})
}

// UpgradeEmulationNone is the UpgradeWithEmulatedVersion (and
// --emulated-version) that removes the emulation.
const UpgradeEmulationNone = options.EmulationNone

// UpgradeWithEmulatedVersion makes kube-apiserver, kube-controller-manager
// and kube-scheduler emulate version ("1.36": the target's minor version
// or up to 3 before it, never below 1.31), or emulate none with
// UpgradeEmulationNone. It goes through kubeadm's own configuration: the
// extraArgs of the ClusterConfiguration in the kubeadm-config ConfigMap,
// which every later kubeadm upgrade keeps; other fields are left as they
// are. Preflight refuses a version the target's binaries refuse. On a
// cluster that already runs the target, a changed emulation re-applies the
// control plane with kubeadm at the same version, node by node; the
// kubelets are left alone. Unset (or ""), the cluster's emulation is kept.
func UpgradeWithEmulatedVersion(version string) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.EmulatedVersion = version
		return nil
	})
}

// UpgradeWithEmulationForwardCompatible sets (true) or removes (false)
// kube-apiserver's --emulation-forward-compatible, which it accepts from
// v1.33 while it emulates an older version, through kubeadm's
// configuration as UpgradeWithEmulatedVersion does. Unset, the cluster's
// is kept while the emulation stays older than the target, and removed
// with the emulation.
func UpgradeWithEmulationForwardCompatible(on bool) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.EmulationForwardCompatible = &on
		return nil
	})
}

// UpgradeWithPatches hands kubeadm a folder of patches (kubeadm's
// --patches, as kubeadm and kinder accept it) for every kubeadm upgrade
// apply and node of the upgrade: files named
// <target>[suffix][+json|+merge|+strategic].{json,yaml}, target one of
// etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
// kubeletconfiguration, corednsdeployment, and from v1.37
// kubeproxydaemonset. They are copied to the nodes first. Preflight
// refuses a folder kubeadm would read no patch from, or would refuse.
// kubeadm keeps no patches: give them to every upgrade that renders the
// control plane.
func UpgradeWithPatches(dir string) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.Patches = dir
		return nil
	})
}

// UpgradeHookPoint is where an upgrade is when it runs the hook given
// with UpgradeWithHook: after a phase (Phase set, Node empty), after a
// node of the control-plane or kubelets phase (both set), or after a whole
// target (both empty); Hop is the target's 1-based position in a chain (1
// for a single target) and Target its version.
type UpgradeHookPoint = actions.HookPoint

// UpgradeWithHook runs hook, blocking, after each phase that ran, after
// each node of the control-plane and kubelets phases, and after each
// target of a chain (and the single target otherwise): for example to
// check a workload between the control plane and the kubelets. An error
// stops the upgrade there as a failure; running the same upgrade again
// continues from there, running the hook again at the points it passes.
// With several workers upgraded at once, the hook may run for them
// concurrently. A dry run runs no hook.
func UpgradeWithHook(hook func(UpgradeHookPoint) error) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.Hook = hook
		return nil
	})
}

// UpgradeWithNodes chooses the nodes whose kubelets the kubelets phase
// moves: node names, or the roles "control-plane" and "worker". The other
// nodes' kubelets stay at their version, which the version-skew policy
// must allow (a kubelet at most 3 minor versions older than the API
// server); preflight refuses otherwise, naming the node. Unset, every
// node's kubelet moves. Moving the others later is the same upgrade run
// again with them chosen.
func UpgradeWithNodes(nodes ...string) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.Nodes = append(o.Nodes, nodes...)
		return nil
	})
}

// UpgradeWithLogger sets the logger status lines and logs go to. When it is
// kind's CLI logger on a terminal (sigs.k8s.io/kind/pkg/cmd.NewLogger, on
// stderr), the running step is animated there as kind's own commands do;
// the logger itself is not changed.
func UpgradeWithLogger(logger log.Logger) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.Logger = logger
		return nil
	})
}

// UpgradeWithOutput sets where results go (the dry-run plan, JSON events),
// and whether they are JSON: one event per line.
func UpgradeWithOutput(w io.Writer, json bool) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.Out = w
		o.JSON = json
		return nil
	})
}

// UpgradeWithContext sets a context whose cancellation stops the upgrade;
// running the same upgrade again continues where it stopped.
func UpgradeWithContext(ctx context.Context) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.Context = ctx
		return nil
	})
}

// UpgradeWithNodeProvider names the node provider of the kind Provider
// given to Upgrade by its command: "docker", "podman", "nerdctl", "finch"
// or "nerdctl.lima". Messages name its commands (`podman pull ...`) and a
// node image given with UpgradeWithImage is read through it. Name it when
// you chose the provider with kind's ProviderWith... options: without it,
// Upgrade picks the one kind would detect (KIND_EXPERIMENTAL_PROVIDER, else
// the first of docker, nerdctl, finch and podman whose CLI answers `-v` as
// itself), running each CLI once per process.
func UpgradeWithNodeProvider(command string) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		if err := nodeprovider.Check(command); err != nil {
			return errors.Wrap(err, "UpgradeWithNodeProvider")
		}
		o.ProviderCommand = command
		return nil
	})
}

// UpgradeWithFlagNames makes Upgrade's messages name the flags of
// `kind alpha upgrade` (--image-dir) instead of this package's options
// (UpgradeWithImageDir), for a command built on Upgrade whose flags are
// the same.
func UpgradeWithFlagNames() UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.GoNames = false
		return nil
	})
}

// UpgradePhase describes a phase of Upgrade.
type UpgradePhase struct {
	Name        string
	Description string
	// Skippable is false for phases UpgradeWithSkipPhases refuses.
	Skippable bool
}

// UpgradePhases lists Upgrade's phases in the order they run, each
// followed by its parts ("<phase>/<part>") UpgradeWithSkipPhases also
// names.
func UpgradePhases() []UpgradePhase {
	var out []UpgradePhase
	for _, p := range upgrade.Phases() {
		out = append(out, UpgradePhase{Name: p.Name, Description: p.Description, Skippable: p.Skippable})
	}
	return out
}

// Upgrade upgrades the kind cluster name in place to the Kubernetes version
// of the kubeadm given with UpgradeWithImage or UpgradeWithImageDir.
//
// It checks everything first and refuses, changing nothing, when the
// cluster, a node, the target or the version skew is not right. Every step
// looks at the nodes' real state and skips what is done, so calling Upgrade
// again after a failure or an interruption continues where it stopped.
// When the cluster already runs the target version Upgrade returns nil.
//
// Alpha: this API may change.
func Upgrade(p *kindcluster.Provider, name string, with ...UpgradeOption) error {
	opts := upgrade.Options{Upgrade: options.Defaults()}
	// messages name what a Go caller set: its options
	opts.GoNames = true
	for _, o := range with {
		if err := o.apply(&opts); err != nil {
			return err
		}
	}
	opts.ClusterName = name
	if opts.ProviderCommand == "" {
		opts.ProviderCommand = host.Detect(os.Getenv(nodeprovider.Env))
	}
	// Mirrors kind's internal cli.StatusForLogger, which kind's commands
	// use to animate their status lines: it is not exported, so kind's
	// exported cmd.ColorEnabled tells the same thing (kind's CLI logger on
	// a smart terminal), and that logger, from cmd.NewLogger, writes to
	// stderr.
	if opts.Logger != nil && kindcmd.ColorEnabled(opts.Logger) {
		opts.Spinner = os.Stderr
	}
	naming := "the name given to Upgrade"
	if !opts.GoNames {
		naming = "pass --name or set KIND_CLUSTER_NAME"
	}
	opts.Cluster = &kindCluster{provider: p, name: name, command: opts.ProviderCommand, naming: naming}
	return upgrade.Run(opts)
}

// host is what this process knows of the host's providers.
var host = nodeprovider.DefaultHost

// kindCluster finds a kind cluster's nodes through kind's Provider, and
// the nodes of every other kind cluster on the host.
type kindCluster struct {
	provider *kindcluster.Provider
	name     string
	// command is the provider's command
	command string
	// naming says how the caller names the cluster
	naming string
	// clusters are the provider's clusters, as Nodes listed them
	clusters []string
}

// Nodes returns the cluster's nodes, refusing a cluster that does not
// exist.
func (k *kindCluster) Nodes() ([]nodes.Node, error) {
	clusters, err := k.provider.List()
	if err != nil {
		return nil, errors.Wrap(err, "failed to list clusters")
	}
	k.clusters = clusters
	found := false
	for _, c := range clusters {
		found = found || c == k.name
	}
	if !found {
		return nil, errors.Errorf("cluster %q not found (node provider %s): `kind get clusters` lists the clusters there are (%s)", k.name, k.command, k.naming)
	}
	ns, err := k.provider.ListInternalNodes(k.name)
	if err != nil {
		return nil, errors.Wrapf(err, "failed to list the nodes of cluster %q", k.name)
	}
	return ns, nil
}

// Neighbours returns the nodes of the provider's other clusters and of
// every cluster of the host's other providers (rootful Docker and podman
// side by side: each node's root is the host's root), which share the
// host's limits with this cluster's.
func (k *kindCluster) Neighbours() []nodes.Node {
	all := clusterNodes(k.provider, k.clusters, k.name)
	for _, other := range host.Others(k.command) {
		otherClusters, err := other.List()
		if err != nil {
			// a provider that answers -v but cannot list: nothing to count
			continue
		}
		all = append(all, clusterNodes(other, otherClusters, "")...)
	}
	return all
}

// clusterNodes lists the nodes of clusters, but for the cluster except; a
// cluster being deleted holds nothing for long and is left out.
func clusterNodes(p *kindcluster.Provider, clusters []string, except string) []nodes.Node {
	var all []nodes.Node
	for _, c := range clusters {
		if c == except {
			continue
		}
		if ns, err := p.ListInternalNodes(c); err == nil {
			all = append(all, ns...)
		}
	}
	return all
}
