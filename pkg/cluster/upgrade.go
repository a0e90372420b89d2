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
	osexec "os/exec"
	"path"
	"reflect"
	"strings"
	"time"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	kindcmd "sigs.k8s.io/kind/pkg/cmd"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/options"
)

// DefaultUpgradeWait is how long the upgrade waits, by default, for each
// node or its pods to become ready.
const DefaultUpgradeWait = options.DefaultWait

// UpgradeChoices are the choices of one upgrade: the fields the
// UpgradeWith... options set one by one, and what `kind alpha upgrade`'s
// flags bind to. Start from DefaultUpgradeChoices; Upgrade checks them,
// once, before it looks at the cluster. ClusterName and ProviderCommand
// are Upgrade's to set.
//
// Alpha: fields may be added.
type UpgradeChoices = options.Upgrade

// DefaultUpgradeChoices returns the choices of an upgrade nobody changed
// anything of: wait DefaultUpgradeWait, one worker at a time.
func DefaultUpgradeChoices() UpgradeChoices {
	return options.Defaults()
}

// UpgradeWithChoices sets every choice at once, as the command does from
// its flags; options after it change single ones.
func UpgradeWithChoices(c UpgradeChoices) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.Upgrade = c
		return nil
	})
}

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
// the image's images. This or UpgradeWithImage is required.
func UpgradeWithImageDir(dir string) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.ImageDir = dir
		return nil
	})
}

// UpgradeWithImage sets a kind node image (e.g. kindest/node:v1.37.0, or
// one `kind build node-image` made) as the target: its Kubernetes version,
// kubeadm, kubelet and kubectl, and the images in its containerd store. An
// image that is not on the host is pulled through the node provider, as
// kind create cluster pulls its node image. This or UpgradeWithImageDir is
// required.
func UpgradeWithImage(image string) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.Image = image
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

// UpgradeWithSkipPhases skips the named phases (see UpgradePhases).
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

// UpgradePhase describes a phase of Upgrade.
type UpgradePhase struct {
	Name        string
	Description string
	// Skippable is false for phases UpgradeWithSkipPhases refuses.
	Skippable bool
}

// UpgradePhases lists Upgrade's phases in the order they run.
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
// cluster, a node, the target (--image, --image-dir) or the version skew is not right. Every step
// looks at the nodes' real state and skips what is done, so calling Upgrade
// again after a failure or an interruption continues where it stopped.
// When the cluster already runs the target version Upgrade returns nil.
//
// Alpha: this API may change.
func Upgrade(p *kindcluster.Provider, name string, with ...UpgradeOption) error {
	opts := upgrade.Options{Upgrade: options.Defaults()}
	for _, o := range with {
		if err := o.apply(&opts); err != nil {
			return err
		}
	}
	opts.ClusterName = name
	// user input first, before asking the container runtime anything
	opts.Cluster = upgrade.KnownNodes{}
	if err := upgrade.Validate(opts); err != nil {
		return err
	}
	// Mirrors kind's internal cli.StatusForLogger, which kind's commands
	// use to animate their status lines: it is not exported, so kind's
	// exported cmd.ColorEnabled tells the same thing (kind's CLI logger on
	// a smart terminal), and that logger, from cmd.NewLogger, writes to
	// stderr.
	if opts.Logger != nil && kindcmd.ColorEnabled(opts.Logger) {
		opts.Spinner = os.Stderr
	}
	clusters, err := p.List()
	if err != nil {
		return errors.Wrap(err, "failed to list clusters")
	}
	found := false
	for _, c := range clusters {
		found = found || c == name
	}
	if !found {
		return errors.Errorf("cluster %q not found: `kind get clusters` lists the clusters there are; pass --name or set KIND_CLUSTER_NAME", name)
	}
	nodes, err := p.ListInternalNodes(name)
	if err != nil {
		return errors.Wrapf(err, "failed to list the nodes of cluster %q", name)
	}
	// the provider p really is, which a caller of this API may have chosen
	// with kind's ProviderWith... options: the node-image source runs its
	// helper with it, and the fixes errors suggest name it
	if len(nodes) > 0 {
		opts.ProviderCommand = providerCommand(nodes[0])
	} else {
		opts.ProviderCommand = detectedProviderCommand()
	}
	// the other clusters' nodes share the host's limits with this one's,
	// and so do those of the host's other providers (rootful Docker and
	// podman side by side: each node's root is the host's root)
	known := upgrade.KnownNodes{Cluster: nodes}
	known.Others = append(known.Others, clusterNodes(p, clusters, name)...)
	for _, other := range otherProviders(opts.ProviderCommand) {
		otherClusters, err := other.List()
		if err != nil {
			// a provider that answers -v but cannot list: nothing to count
			continue
		}
		known.Others = append(known.Others, clusterNodes(other, otherClusters, "")...)
	}
	opts.Cluster = known
	return upgrade.Run(opts)
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

// kindProviders are kind's node providers in the order kind detects them,
// each with its command, what its `-v` starts with, and kind's option.
var kindProviders = []struct {
	command, says string
	option        func() kindcluster.ProviderOption
}{
	{"docker", "Docker version", kindcluster.ProviderWithDocker},
	{"nerdctl", "nerdctl version", func() kindcluster.ProviderOption { return kindcluster.ProviderWithNerdctl("nerdctl") }},
	{"finch", "finch version", func() kindcluster.ProviderOption { return kindcluster.ProviderWithNerdctl("finch") }},
	{"podman", "podman version", kindcluster.ProviderWithPodman},
}

// otherProviders are kind's providers for the node providers other than
// current whose CLI on this host says it is that tool (kind's own test).
func otherProviders(current string) []*kindcluster.Provider {
	var ps []*kindcluster.Provider
	for _, c := range kindProviders {
		if c.command != current && saysItIs(c.command, c.says) {
			ps = append(ps, kindcluster.NewProvider(c.option()))
		}
	}
	return ps
}

// providerCommand names the command of the node provider whose node n
// is: kind's providers live in packages named after them (docker, podman,
// nerdctl); nerdctl's command is nerdctl, finch or nerdctl.lima, as
// KIND_EXPERIMENTAL_PROVIDER or kind's detection chose it.
func providerCommand(n nodes.Node) string {
	t := reflect.TypeOf(n)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch path.Base(t.PkgPath()) {
	case "docker":
		return "docker"
	case "podman":
		return "podman"
	case "nerdctl":
		if c := detectedProviderCommand(); c == "finch" || c == "nerdctl.lima" {
			return c
		}
		return "nerdctl"
	}
	return detectedProviderCommand()
}

// detectedProviderCommand names the command of the node provider kind
// picks when it is not told which: KIND_EXPERIMENTAL_PROVIDER when it names
// one, else the first of docker, nerdctl (or finch) and podman whose `-v`
// says it is that tool, as kind's own detection does; docker when none
// does.
func detectedProviderCommand() string {
	switch p := os.Getenv("KIND_EXPERIMENTAL_PROVIDER"); p {
	case "docker", "podman", "nerdctl", "finch", "nerdctl.lima":
		return p
	}
	for _, c := range kindProviders {
		if saysItIs(c.command, c.says) {
			return c.command
		}
	}
	return "docker"
}

// saysItIs reports whether `command -v` prints one line starting with says.
func saysItIs(command, says string) bool {
	out, err := osexec.Command(command, "-v").Output()
	if err != nil {
		return false
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return len(lines) == 1 && strings.HasPrefix(lines[0], says)
}
