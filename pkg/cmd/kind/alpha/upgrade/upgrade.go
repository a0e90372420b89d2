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

// Package upgrade implements `kind alpha upgrade`.
package upgrade

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cmd"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster"
	upgradecmd "github.com/kindupgrade/kind-upgrade/pkg/cmd"
)

// flagpole holds the flags: the upgrade's choices bind straight to
// cluster.UpgradeChoices, which Upgrade checks.
type flagpole struct {
	Name   string
	Output string
	cluster.UpgradeChoices
}

// NewCommand returns the `kind alpha upgrade` command.
func NewCommand(logger log.Logger, streams cmd.IOStreams) *cobra.Command {
	flags := &flagpole{UpgradeChoices: cluster.DefaultUpgradeChoices()}
	c := &cobra.Command{
		Args:  cobra.NoArgs,
		Use:   "upgrade",
		Short: "Upgrades a kind cluster in place to the Kubernetes version in --image-dir",
		Long:  longHelp(),
		Example: `  # upgrade the cluster "kind" to the release unpacked in ./kubernetes
  kind alpha upgrade --image-dir ./kubernetes/server/bin

  # show what would happen, change nothing
  kind alpha upgrade --name dev --image-dir ./kubernetes-server-linux-amd64.tar.gz --dry-run

  # upgrade to your own build, after make quick-release in ~/src/kubernetes
  kind alpha upgrade --image-dir ~/src/kubernetes

  # upgrade only the control plane (kubelets stay at the old version)
  kind alpha upgrade --image-dir ./v1.34.4 --skip-phases kubelets,verify --output json`,
		RunE: func(c *cobra.Command, args []string) error {
			if !c.Flags().Changed("name") {
				flags.Name = upgradecmd.DefaultClusterName()
			}
			return runE(logger, streams, flags)
		},
	}
	c.Flags().StringVarP(&flags.Name, "name", "n", kindcluster.DefaultName, "the cluster to upgrade; overrides KIND_CLUSTER_NAME")
	c.Flags().StringVar(&flags.ImageDir, "image-dir", "", "where the target version's kubeadm, kubelet, kubectl and image archives are (required; see the layouts above)")
	c.Flags().BoolVar(&flags.DryRun, "dry-run", false, "run the preflight checks and print the plan on stdout without changing anything")
	c.Flags().StringSliceVar(&flags.SkipPhases, "skip-phases", nil, "phases to skip, comma separated (see the list of phases above)")
	c.Flags().DurationVar(&flags.Wait, "wait", flags.Wait, "how long to wait for each node, its pods or a drain to become ready")
	c.Flags().StringSliceVar(&flags.IgnorePreflightErrors, "ignore-preflight-errors", nil, "kubeadm preflight checks whose errors become warnings, passed to kubeadm (SystemVerification, Swap and FileContent--proc-sys-net-bridge-bridge-nf-call-iptables always are)")
	c.Flags().BoolVar(&flags.Force, "force", false, "drain nodes even if they run pods that no controller recreates: those pods are deleted and lost (as kubectl drain --force)")
	c.Flags().IntVar(&flags.ParallelWorkers, "parallel-workers", flags.ParallelWorkers, "how many worker nodes to drain and upgrade at once (control-plane nodes are always upgraded one at a time; drains respect PodDisruptionBudgets)")
	c.Flags().StringVarP(&flags.Output, "output", "o", "text", `"text", or "json" for one JSON event per line on stdout (phase, node and step started/finished, duration, outcome)`)
	_ = c.MarkFlagRequired("image-dir")
	return c
}

func longHelp() string {
	var b strings.Builder
	b.WriteString(`Upgrades an existing kind cluster in place to the Kubernetes version of the
kubeadm found in --image-dir. Nothing is baked into node images and the kind
cluster config is not needed or changed.

--image-dir may be:
  - a release's kubernetes/server/bin (kubeadm, kubelet, kubectl, kube-*.tar),
  - one of its parent folders (*.tar archives directly in the given folder are
    used too: put etcd, CoreDNS and pause archives there),
  - a kubernetes-server-linux-<arch>.tar.gz, or a folder holding one (its
    binaries and archives are unpacked once into $TMPDIR for the run),
  - a Kubernetes source tree (or its _output) after make quick-release, or
    after make all and make quick-release-images: the binaries of
    _output/dockerized/bin/linux/<arch> or _output/local/bin/linux/<arch>,
    whichever kubeadm is newer, and the archives of
    _output/release-images/<arch> (the folders used are printed),
  - a flat folder of kubeadm, kubelet, kubectl and *.tar image archives.
Archives tagged <name>-<arch>:<tag>, as releases tag them, are retagged to
the <name>:<tag> kubeadm expects. Each node gets only the images its role
needs and does not have yet.

Phases, in order:
`)
	for _, p := range cluster.UpgradePhases() {
		fmt.Fprintf(&b, "  %-15s %s\n", p.Name, p.Description)
	}
	b.WriteString(`
Everything is checked before anything changes: a missing cluster, a stopped
node, a downgrade, a skipped minor version, binaries for another
architecture, a corrupt archive, an image kubeadm needs that is neither on
the nodes nor in --image-dir, or a host whose cgroups, swap or inotify limits
(counted over every kind node on it) would keep the new kubelets from
starting are refused with the reason and the fix. A kubelet that keeps
exiting after its restart stops the command at once, quoting its own error
line. When the cluster already runs the target version the command says so
and exits 0.

Every step looks at the nodes' real state and skips what is already done:
after a failure or an interruption, run the same command again to finish.
Workloads are drained (respecting PodDisruptionBudgets) before a node's
kubelet restarts, unless no other node can take them; etcd data and volumes
stay on the nodes. CNI and storage add-ons are not upgraded (kubeadm does
not either).

Progress goes to stderr, one line per step; results (the --dry-run plan,
--output json events) go to stdout.`)
	return b.String()
}

func runE(logger log.Logger, streams cmd.IOStreams, flags *flagpole) error {
	var json bool
	switch flags.Output {
	case "text", "":
	case "json":
		json = true
	default:
		return errors.Errorf("--output must be text or json, not %q", flags.Output)
	}
	// Ctrl-C stops the upgrade between commands; running the same command
	// again continues where it stopped
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	provider := kindcluster.NewProvider(
		kindcluster.ProviderWithLogger(logger),
		upgradecmd.ProviderOption(logger),
	)
	options := []cluster.UpgradeOption{
		cluster.UpgradeWithLogger(logger),
		cluster.UpgradeWithChoices(flags.UpgradeChoices),
		cluster.UpgradeWithOutput(streams.Out, json),
		cluster.UpgradeWithContext(ctx),
	}
	if err := cluster.Upgrade(provider, flags.Name, options...); err != nil {
		if ctx.Err() != nil {
			return errors.Wrapf(err, "interrupted while upgrading cluster %q: run the same command again to finish", flags.Name)
		}
		return errors.Wrapf(err, "failed to upgrade cluster %q", flags.Name)
	}
	return nil
}
