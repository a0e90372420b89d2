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
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cmd"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster"
	upgradecmd "github.com/kindupgrade/kind-upgrade/pkg/cmd"
)

// flagpole holds the flags.
type flagpole struct {
	Name                  string
	Output                string
	Images                []string
	ImageDirs             []string
	PullPolicy            string
	DryRun                bool
	SkipPhases            []string
	Wait                  time.Duration
	IgnorePreflightErrors []string
	Force                 bool
	ParallelWorkers       int
	EmulatedVersion       string
	ForwardCompatible     bool
	Patches               string
	Nodes                 []string
}

// NewCommand returns the `kind alpha upgrade` command.
func NewCommand(logger log.Logger, streams cmd.IOStreams) *cobra.Command {
	flags := &flagpole{}
	c := &cobra.Command{
		Args:  cobra.NoArgs,
		Use:   "upgrade",
		Short: "Upgrades a kind cluster in place to the Kubernetes version of --image or --image-dir",
		Long:  longHelp(),
		Example: `  kind create cluster --image kindest/node:v1.36.4@sha256:099e049362a1526b2db71494e1947aae99bd16290d7c895f2b7ea312e3cbfaed
  kind alpha upgrade --image kindest/node:v1.37.0@sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5
  kind alpha upgrade --name dev --image-dir ./kubernetes-server-linux-amd64.tar.gz --dry-run
  kind alpha upgrade --image-dir ./v1.37.0 --emulated-version 1.36 --skip-phases kubelets,control-plane/kube-proxy
  kind alpha upgrade --image-dir ./v1.35.4 --image-dir ./v1.36.3 --image-dir ./v1.37.2`,
		RunE: func(c *cobra.Command, args []string) error {
			if !c.Flags().Changed("name") {
				flags.Name = upgradecmd.DefaultClusterName()
			}
			var forwardCompatible *bool
			if c.Flags().Changed("emulation-forward-compatible") {
				forwardCompatible = &flags.ForwardCompatible
			}
			return runE(logger, streams, flags, forwardCompatible)
		},
	}
	c.Flags().StringVarP(&flags.Name, "name", "n", kindcluster.DefaultName, "the cluster to upgrade; overrides KIND_CLUSTER_NAME")
	c.Flags().StringArrayVar(&flags.Images, "image", nil, "a kind node image of the target version (pulled if not on the host); repeated: a chain of targets, one minor apart")
	c.Flags().StringArrayVar(&flags.ImageDirs, "image-dir", nil, "the target's binaries and image archives: a release folder or tarball, a build tree, or a folder of *.tar archives (with --image: archives it lacks); repeated: a chain of targets")
	c.Flags().StringVar(&flags.PullPolicy, "image-pull-policy", cluster.ImagePullIfNotPresent, `"IfNotPresent": the nodes pull images no source has; "Never"`)
	c.Flags().BoolVar(&flags.DryRun, "dry-run", false, "check everything and print the plan on stdout; changes nothing")
	c.Flags().StringSliceVar(&flags.SkipPhases, "skip-phases", nil, "phases to skip, comma separated (kubelets: the control plane only; control-plane/kube-proxy: kube-proxy stays)")
	c.Flags().StringVar(&flags.EmulatedVersion, "emulated-version", "", `the version the control plane emulates, e.g. 1.36 (kubeadm's extraArgs; kept until changed); "none" removes it`)
	c.Flags().BoolVar(&flags.ForwardCompatible, "emulation-forward-compatible", false, "kube-apiserver's --emulation-forward-compatible while it emulates an older version (v1.33+); unset: kept")
	c.Flags().StringVar(&flags.Patches, "patches", "", "a folder of kubeadm patches for every kubeadm upgrade apply/node (give it on every run)")
	c.Flags().StringSliceVar(&flags.Nodes, "nodes", nil, "the nodes whose kubelets move, comma separated: names, or the roles control-plane and worker (default: all); the others stay, up to 3 minors behind")
	c.Flags().DurationVar(&flags.Wait, "wait", cluster.DefaultUpgradeWait, "how long to wait for each node, its pods or a drain")
	c.Flags().StringSliceVar(&flags.IgnorePreflightErrors, "ignore-preflight-errors", nil, "more kubeadm preflight checks to ignore")
	c.Flags().BoolVar(&flags.Force, "force", false, "drain pods no controller recreates (they are lost)")
	c.Flags().IntVar(&flags.ParallelWorkers, "parallel-workers", 1, "worker nodes to upgrade at once")
	c.Flags().StringVarP(&flags.Output, "output", "o", "text", `"text", or "json": one event per line on stdout`)
	return c
}

func longHelp() string {
	var names, parts []string
	for _, p := range cluster.UpgradePhases() {
		if strings.Contains(p.Name, "/") {
			parts = append(parts, p.Name)
		} else {
			names = append(names, p.Name)
		}
	}
	return `Upgrades a kind cluster in place to the Kubernetes version of --image or
--image-dir, one node at a time. Nothing changes until every check passes; after
a failure or Ctrl-C, the same command finishes. Guide: site/content/docs/user/upgrade.md
At the version the cluster runs, a new --emulated-version re-applies the control plane.
Repeat --image (or --image-dir) for a chain: the control plane steps through each
target, the kubelets move once, at the last (earlier only when the skew policy says).
Phases: ` + strings.Join(names, ", ") + " (--skip-phases also takes " + strings.Join(parts, ", ") + ")"
}

func runE(logger log.Logger, streams cmd.IOStreams, flags *flagpole, forwardCompatible *bool) error {
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
		cluster.UpgradeWithFlagNames(),
		cluster.UpgradeWithImagePullPolicy(flags.PullPolicy),
		cluster.UpgradeWithDryRun(flags.DryRun),
		cluster.UpgradeWithSkipPhases(flags.SkipPhases...),
		cluster.UpgradeWithWaitForReady(flags.Wait),
		cluster.UpgradeWithIgnorePreflightErrors(flags.IgnorePreflightErrors...),
		cluster.UpgradeWithForce(flags.Force),
		cluster.UpgradeWithParallelWorkers(flags.ParallelWorkers),
		cluster.UpgradeWithEmulatedVersion(flags.EmulatedVersion),
		cluster.UpgradeWithPatches(flags.Patches),
		cluster.UpgradeWithNodes(flags.Nodes...),
		cluster.UpgradeWithOutput(streams.Out, json),
		cluster.UpgradeWithContext(ctx),
	}
	// a chain repeats one of the two: the images first, then the folders,
	// which the run refuses when both are repeated
	for _, image := range flags.Images {
		options = append(options, cluster.UpgradeWithImage(image))
	}
	for _, dir := range flags.ImageDirs {
		options = append(options, cluster.UpgradeWithImageDir(dir))
	}
	if forwardCompatible != nil {
		options = append(options, cluster.UpgradeWithEmulationForwardCompatible(*forwardCompatible))
	}
	if err := cluster.Upgrade(provider, flags.Name, options...); err != nil {
		if ctx.Err() != nil {
			return errors.Wrapf(err, "interrupted while upgrading cluster %q: run the same command again to finish", flags.Name)
		}
		return errors.Wrapf(err, "failed to upgrade cluster %q", flags.Name)
	}
	return nil
}
