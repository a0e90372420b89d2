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

// Package options holds the user's choices for one upgrade: the one type
// the command's flags, the public Go options and the workflow's phases all
// read and write.
package options

import (
	"os"
	"time"

	"sigs.k8s.io/kind/pkg/errors"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/emulation"
)

// DefaultWait is how long the upgrade waits, by default, for each node or
// its pods to become ready.
const DefaultWait = 5 * time.Minute

// DefaultSettle is how long the new kubelet of a control-plane node must
// show the same containers Ready before the next node is touched: two of
// the kubelet's 1 s relists, so that a container it stops right after its
// first sync is seen gone.
const DefaultSettle = 2 * time.Second

// DefaultPollInterval is how often a wait looks again, by default: each
// look is one try (see kube.Client.Once), so this is also how late a wait
// may notice that what it waits for has happened.
const DefaultPollInterval = 500 * time.Millisecond

// DefaultAPIBackoff is the first pause, by default, before a one-shot API
// request that failed transiently is tried again; it doubles after each
// try.
const DefaultAPIBackoff = time.Second

// Upgrade are the choices of one upgrade.
type Upgrade struct {
	// ClusterName is the cluster's kind name, for the commands a message
	// tells the user to run.
	ClusterName string
	// ProviderCommand is the node provider's command (docker, podman,
	// nerdctl...), for the fixes errors suggest; see Provider.
	ProviderCommand string
	// Image is a kind node image holding the target (--image); with
	// ImageDir, the folder adds image archives to the image's.
	Image string
	// ImageDir is where the target's binaries and image archives are
	// (--image-dir).
	ImageDir string
	// Then are the later targets of a chain, in order (--image or
	// --image-dir repeated): each one minor version above the one before.
	// A chain names its targets one way, all images or all folders.
	Then []Hop
	// PullPolicy says whether the nodes may pull, from their registry, an
	// image kubeadm needs that is neither on them nor in the source:
	// PullIfNotPresent (the default, also for "") or PullNever.
	PullPolicy string
	// DryRun checks everything and prints the plan, changing nothing.
	DryRun bool
	// SkipPhases are the phases not to run.
	SkipPhases []string
	// Wait bounds each wait for a node, its pods or a drain.
	Wait time.Duration
	// IgnorePreflightErrors are added to kubeadm's --ignore-preflight-errors.
	IgnorePreflightErrors []string
	// Force lets drains delete pods that no controller recreates, as
	// kubectl drain --force does.
	Force bool
	// ParallelWorkers is how many workers the kubelets phase drains and
	// upgrades at once.
	ParallelWorkers int
	// Settle is how long the new kubelet of a control-plane node must
	// show the same static pod containers Ready (checked on two polls at
	// least this far apart) after its restart.
	Settle time.Duration
	// PollInterval is how often waits look again.
	PollInterval time.Duration
	// APIBackoff is the first pause before a one-shot API request (not a
	// wait's poll, which the next poll tries again) that failed
	// transiently is tried again; it doubles after each try.
	APIBackoff time.Duration
	// EmulatedVersion is the version the control plane is to emulate
	// (--emulated-version): "" keeps the cluster's, EmulationNone removes
	// it, else a minor version, "1.35".
	EmulatedVersion string
	// EmulationForwardCompatible is kube-apiserver's
	// --emulation-forward-compatible: nil keeps the cluster's.
	EmulationForwardCompatible *bool
	// Patches is a folder of kubeadm patches handed to kubeadm (--patches).
	Patches string
	// Nodes are the nodes whose kubelets move (--nodes): node names, or
	// the roles control-plane and worker; empty for every node. The
	// others stay at their version, as far as the skew policy allows.
	Nodes []string
	// GoNames makes messages name the Go API's options
	// (UpgradeWithImageDir) rather than the command's flags (--image-dir).
	GoNames bool
}

// Hop is one target of a chain: a node image or a folder.
type Hop struct {
	Image, ImageDir string
}

// Hops are the targets in order: the first (Image and ImageDir), then
// Then.
func (o Upgrade) Hops() []Hop {
	return append([]Hop{{Image: o.Image, ImageDir: o.ImageDir}}, o.Then...)
}

// AddTarget adds a target given as an image or a folder: the first sets
// Image or ImageDir, a repeated one starts or extends a chain.
func (o *Upgrade) AddTarget(image, imageDir string) {
	switch {
	case image == "" && imageDir == "":
	case image != "" && o.Image == "" && len(o.Then) == 0:
		o.Image = image
	case imageDir != "" && o.ImageDir == "" && len(o.Then) == 0:
		o.ImageDir = imageDir
	default:
		o.Then = append(o.Then, Hop{Image: image, ImageDir: imageDir})
	}
}

// ForHop returns the choices of a chain's hop h: its target, no chain.
func (o Upgrade) ForHop(h Hop) Upgrade {
	o.Image, o.ImageDir, o.Then = h.Image, h.ImageDir, nil
	return o
}

// Choice is one of the user's choices, as messages name it.
type Choice int

// The choices messages name.
const (
	Image Choice = iota
	ImageDir
	PullPolicy
	SkipPhases
	Wait
	Force
	ParallelWorkers
	EmulatedVersion
	EmulationForwardCompatible
	Patches
	Nodes
)

// names are each choice's flag and Go option.
var names = map[Choice][2]string{
	Image:                      {"--image", "UpgradeWithImage"},
	ImageDir:                   {"--image-dir", "UpgradeWithImageDir"},
	PullPolicy:                 {"--image-pull-policy", "UpgradeWithImagePullPolicy"},
	SkipPhases:                 {"--skip-phases", "UpgradeWithSkipPhases"},
	Wait:                       {"--wait", "UpgradeWithWaitForReady"},
	Force:                      {"--force", "UpgradeWithForce"},
	ParallelWorkers:            {"--parallel-workers", "UpgradeWithParallelWorkers"},
	EmulatedVersion:            {"--emulated-version", "UpgradeWithEmulatedVersion"},
	EmulationForwardCompatible: {"--emulation-forward-compatible", "UpgradeWithEmulationForwardCompatible"},
	Patches:                    {"--patches", "UpgradeWithPatches"},
	Nodes:                      {"--nodes", "UpgradeWithNodes"},
}

// EmulationNone is the EmulatedVersion that removes the emulation.
const EmulationNone = emulation.None

// Emulation is what the user asked of the emulation.
func (o Upgrade) Emulation() emulation.Choice {
	return emulation.Choice{Version: o.EmulatedVersion, ForwardCompatible: o.EmulationForwardCompatible}
}

// Name is how messages name choice c: the command's flag, or with GoNames
// the Go API's option.
func (o Upgrade) Name(c Choice) string {
	if o.GoNames {
		return names[c][1]
	}
	return names[c][0]
}

// The pull policies, spelled as kubeadm's and Kubernetes' imagePullPolicy.
const (
	PullIfNotPresent = "IfNotPresent"
	PullNever        = "Never"
)

// MayPull reports whether the nodes may pull what the source lacks.
func (o Upgrade) MayPull() bool {
	return o.PullPolicy != PullNever
}

// Defaults returns the choices of a run nobody changed anything of.
func Defaults() Upgrade {
	return Upgrade{Wait: DefaultWait, ParallelWorkers: 1, Settle: DefaultSettle, PollInterval: DefaultPollInterval, APIBackoff: DefaultAPIBackoff}
}

// Validate checks the choices that need no cluster, once, before anything
// is asked of the nodes: phase names are the workflow's to check.
func (o Upgrade) Validate() error {
	if o.Wait <= 0 {
		return errors.Errorf("the wait for readiness must be positive, not %s", o.Wait)
	}
	if o.ParallelWorkers < 1 {
		return errors.Errorf("the number of workers to upgrade at once must be at least 1, not %d", o.ParallelWorkers)
	}
	switch o.PullPolicy {
	case "", PullIfNotPresent, PullNever:
	default:
		return errors.Errorf("%s must be %s or %s, not %q", o.Name(PullPolicy), PullIfNotPresent, PullNever, o.PullPolicy)
	}
	if err := emulation.CheckChoice(o.Emulation(), o.Name(EmulatedVersion), o.Name(EmulationForwardCompatible)); err != nil {
		return err
	}
	if o.Patches != "" {
		if info, err := os.Stat(o.Patches); err != nil {
			return errors.Wrapf(err, "%s %s cannot be read", o.Name(Patches), o.Patches)
		} else if !info.IsDir() {
			return errors.Errorf("%s %s is not a folder: kubeadm reads patches from a folder", o.Name(Patches), o.Patches)
		}
	}
	if len(o.Then) > 0 {
		return o.validateChain()
	}
	return o.validateTarget()
}

// validateChain checks a chain's targets: all given one way, each as a
// single target is checked.
func (o Upgrade) validateChain() error {
	if o.Image != "" && o.ImageDir != "" {
		return errors.Errorf("a chain of targets repeats %s or %s, one of them: %s with %s adds archives to one image, which a chain does not do", o.Name(Image), o.Name(ImageDir), o.Name(Image), o.Name(ImageDir))
	}
	for i, h := range o.Hops() {
		if (h.Image != "") != (o.Image != "") || (h.Image != "" && h.ImageDir != "") {
			return errors.Errorf("a chain of targets repeats %s or %s, one of them, not both (target %d of %d differs)", o.Name(Image), o.Name(ImageDir), i+1, len(o.Hops()))
		}
		if err := o.ForHop(h).validateTarget(); err != nil {
			return errors.Wrapf(err, "target %d of %d", i+1, len(o.Hops()))
		}
	}
	return nil
}

// validateTarget checks Image and ImageDir.
func (o Upgrade) validateTarget() error {
	if o.ImageDir == "" && o.Image == "" {
		return errors.Errorf("%s or %s is required: a kind node image of the target Kubernetes version (e.g. kindest/node:v1.37.0), or a folder (or release tarball) holding its kubeadm, kubelet, kubectl and images", o.Name(Image), o.Name(ImageDir))
	}
	if o.ImageDir == "" {
		return nil
	}
	if _, err := os.Stat(o.ImageDir); os.IsNotExist(err) && o.Image != "" {
		return errors.Errorf("%s %s does not exist: with %s, give a folder of image archives (*.tar) to add to the image's images", o.Name(ImageDir), o.ImageDir, o.Name(Image))
	} else if os.IsNotExist(err) {
		return errors.Errorf("%s %s does not exist: give the folder (or release tarball) holding the target Kubernetes version's kubeadm, kubelet, kubectl and images", o.Name(ImageDir), o.ImageDir)
	} else if err != nil {
		return errors.Wrapf(err, "cannot read %s", o.Name(ImageDir))
	}
	return nil
}

// Skips reports whether phase is among SkipPhases.
func (o Upgrade) Skips(phase string) bool {
	for _, p := range o.SkipPhases {
		if p == phase {
			return true
		}
	}
	return false
}

// Provider returns the node provider's command (docker, podman, nerdctl...)
// for the commands a message tells the user to run.
func (o Upgrade) Provider() string {
	if o.ProviderCommand == "" {
		return "docker"
	}
	return o.ProviderCommand
}
