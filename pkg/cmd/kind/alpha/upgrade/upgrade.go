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
		Short: "Upgrades a kind cluster in place to the Kubernetes version of --image or --image-dir",
		Long:  longHelp(),
		Example: `  # upgrade the cluster "kind" to the Kubernetes version of a node image
  kind create cluster --image kindest/node:v1.36.3 && kind alpha upgrade --image kindest/node:v1.37.2

  # the same offline: the image, plus the archives it lacks (kubeadm's pause)
  kind alpha upgrade --image kindest/node:v1.37.2 --image-dir ./extra-archives

  # upgrade the cluster "kind" to the release unpacked in ./kubernetes
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
	c.Flags().StringVar(&flags.Image, "image", "", "a kind node image of the target version, as for kind create cluster --image (pulled when not on the host); with --image-dir, that folder's *.tar archives add to its images")
	c.Flags().StringVar(&flags.ImageDir, "image-dir", "", "where the target version's kubeadm, kubelet, kubectl and image archives are (see the layouts above); --image or --image-dir is required")
	c.Flags().StringVar(&flags.PullPolicy, "image-pull-policy", cluster.ImagePullIfNotPresent, `whether the nodes may pull, from their registry, an image kubeadm needs that is neither on them nor in --image or --image-dir: "IfNotPresent" (preflight pulls it on one node to prove they can) or "Never"`)
	c.Flags().BoolVar(&flags.DryRun, "dry-run", false, "run the preflight checks and print the plan on stdout without changing anything")
	c.Flags().StringSliceVar(&flags.SkipPhases, "skip-phases", nil, "phases to skip, comma separated (see the list of phases above)")
	c.Flags().DurationVar(&flags.Wait, "wait", flags.Wait, "how long to wait for each node, its pods or a drain to become ready")
	c.Flags().StringSliceVar(&flags.IgnorePreflightErrors, "ignore-preflight-errors", nil, "kubeadm preflight checks whose errors become warnings, passed to kubeadm (SystemVerification, Swap and FileContent--proc-sys-net-bridge-bridge-nf-call-iptables always are)")
	c.Flags().BoolVar(&flags.Force, "force", false, "drain nodes even if they run pods that no controller recreates: those pods are deleted and lost (as kubectl drain --force)")
	c.Flags().IntVar(&flags.ParallelWorkers, "parallel-workers", flags.ParallelWorkers, "how many worker nodes to drain and upgrade at once (control-plane nodes are always upgraded one at a time; drains respect PodDisruptionBudgets)")
	c.Flags().StringVarP(&flags.Output, "output", "o", "text", `"text", or "json" for one JSON event per line on stdout (phase, node and step started/finished, duration, outcome)`)
	return c
}

func longHelp() string {
	var b strings.Builder
	b.WriteString(`Upgrades an existing kind cluster in place to the Kubernetes version of the
kubeadm in --image or --image-dir. The nodes keep their containers and
images; the kind cluster config is not needed or changed.

--image is a kind node image (kindest/node:<version>, or one kind build
node-image made), named as for kind create cluster --image and pulled through
the provider when it is not on the host. Its /usr/bin/kubeadm, kubelet and
kubectl and the images of its containerd store go to the nodes through a
short-lived helper container of the image (no network, removed at the end):
the binaries streamed with the provider's copy command, each image exported
by the image's containerd to a file in the helper and streamed from there. kind's builder keeps containerd's sandbox image in place of
kubeadm's pause image: when the nodes lack that too, they pull it from its
registry if they can, or add its archive with --image-dir, whose *.tar
archives then add to the image's.

An image kubeadm needs that is neither on the nodes nor in the source is
pulled by the nodes' containerd from its registry (--image-pull-policy
IfNotPresent, the default): preflight pulls it on the first node that needs
it, which proves the nodes can (even in a --dry-run, which leaves it there),
and refuses with both fixes when they cannot; the other nodes pull it while
loading. --image-pull-policy Never forbids pulls.

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
the nodes nor in the image or --image-dir, or a host whose cgroups, swap or inotify limits
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
