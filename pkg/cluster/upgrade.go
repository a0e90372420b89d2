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
	"time"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"
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
// its parent folders, a kubernetes-server-linux-<arch>.tar.gz, or a flat
// folder of binaries and *.tar archives. Required.
func UpgradeWithImageDir(dir string) UpgradeOption {
	return upgradeOptionAdapter(func(o *upgrade.Options) error {
		o.ImageDir = dir
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
// of the kubeadm given with UpgradeWithImageDir.
//
// It checks everything first and refuses, changing nothing, when the
// cluster, a node, --image-dir or the version skew is not right. Every step
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
	opts.ClusterName, opts.ProviderCommand = name, providerCommand()
	// user input first, before asking the container runtime anything
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
	// the other clusters' nodes share the host's limits with this one's
	for _, c := range clusters {
		if c == name {
			continue
		}
		others, err := p.ListInternalNodes(c)
		if err != nil {
			// a cluster being deleted: it holds nothing for long
			continue
		}
		opts.Neighbours = append(opts.Neighbours, others...)
	}
	return upgrade.Run(nodes, opts)
}

// providerCommand names the command of the node provider kind picks, for
// the fixes errors suggest: KIND_EXPERIMENTAL_PROVIDER when set (its values
// are the commands: podman, nerdctl, finch...), else the first of docker,
// nerdctl and podman on the PATH, in the order kind detects them.
func providerCommand() string {
	if p := os.Getenv("KIND_EXPERIMENTAL_PROVIDER"); p != "" {
		return p
	}
	for _, c := range []string{"docker", "nerdctl", "podman"} {
		if _, err := osexec.LookPath(c); err == nil {
			return c
		}
	}
	return "docker"
}
