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

// Package preflight implements the preflight phase: it inspects the
// cluster and --image-dir, applies the version-skew policy and plans what
// every node needs, without changing anything.
package preflight

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/constants"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	kindnodeutils "sigs.k8s.io/kind/pkg/cluster/nodeutils"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/Masterminds/semver/v3"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeprovider"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/staticpods"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/emulation"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/options"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/patches"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/plan"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/source"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/stepid"
)

// Phase is this phase's name.
const Phase = actions.PhasePreflight

type action struct{}

// NewAction returns the preflight action.
func NewAction() actions.Action {
	return &action{}
}

// Execute runs every check and fills ctx.State. It changes nothing on the
// nodes: kubeadm is run from a temporary folder that is removed afterwards.
func (a *action) Execute(ctx *actions.Context) error {
	st := &actions.State{
		Info:                 map[string]*actions.NodeInfo{},
		UpgradesControlPlane: !ctx.Options.Skips(actions.PhaseControlPlane),
		UpgradesKubelets:     !ctx.Options.Skips(actions.PhaseKubelets) && (ctx.Hop == nil || ctx.Hop.Ahead || ctx.Hop.KubeletsAt == ""),
		LeavesKubeProxy:      ctx.Options.Skips(actions.PhaseKubeProxy),
	}
	if ctx.Hop != nil && !ctx.Hop.Ahead {
		st.KubeletsAt = ctx.Hop.KubeletsAt
	}
	ctx.State = st
	// what the later phases take from ctx itself: the nodes and the source
	if err := ctx.RunChecks(Phase, []actions.Check{
		{ID: stepid.PreflightNodes, Name: "checking nodes", Run: checkNodes},
		{ID: stepid.PreflightSource, Name: "opening " + sourceName(ctx.Options), Run: openSource},
	}, nil); err != nil {
		return err
	}
	// a rerun may start right after an API server restarted
	ctx = ctx.AfterAPIRestarts()
	return ctx.RunChecks(Phase, []actions.Check{
		{ID: stepid.PreflightBinaries, Name: "checking the target's binaries", Run: checkBinaries},
		{ID: stepid.PreflightKubeadmLock, Name: "waiting for kubeadm left running by an interrupted run", Run: waitForKubeadm},
		{ID: stepid.PreflightCluster, Name: "checking the cluster", Run: checkCluster},
		{ID: stepid.PreflightProbe, Name: "running the target's kubeadm", Run: probeKubeadm},
		{ID: stepid.PreflightConfig, Name: "checking the kubeadm configuration and patches to apply", Run: checkConfig},
		{ID: stepid.PreflightSkew, Name: "checking version skew", Run: checkVersions},
		{ID: stepid.PreflightHost, Name: "checking the host", Run: checkHost},
		{ID: stepid.PreflightDrains, Name: "checking pods on the nodes to drain", Run: checkDrains},
		{ID: stepid.PreflightImages, Name: "checking images", Run: checkImages},
		{ID: stepid.PreflightDisk, Name: "checking disk space", Run: checkDisk},
		{ID: stepid.PreflightPhases, Name: "checking the phases to run", Run: checkSkips},
	}, func() bool { return st.NothingToDo })
}

// sourceName names what the target is read from, before it is opened.
func sourceName(o actions.Options) string {
	switch {
	case o.Image != "" && o.ImageDir != "":
		return "the node image " + o.Image + " and the archives of " + o.ImageDir
	case o.Image != "":
		return "the node image " + o.Image
	}
	return o.ImageDir
}

// openSource opens the target (pulling a node image the host lacks,
// starting its helper container, unpacking a release tarball) into
// ctx.Source, and says what it is read from.
func openSource(ctx *actions.Context) error {
	src, err := source.Open(ctx, source.Options{
		Image:    ctx.Options.Image,
		ImageDir: ctx.Options.ImageDir,
		// a release tarball is decompressed once, not once per node and
		// step; a dry run reads it as it goes
		Unpack:   !ctx.Options.DryRun,
		Provider: ctx.Options.Provider(),
		Cmder:    ctx.HostCmder,
		Cluster:  ctx.Options.ClusterName,
		Logger:   ctx.Logger,
		// messages name the choices as the caller knows them
		ImageName:    ctx.Options.Name(options.Image),
		ImageDirName: ctx.Options.Name(options.ImageDir),
	})
	if err != nil {
		return err
	}
	ctx.Source = src
	// what the target is read from (which build of a source tree, which
	// node image) matters most: say it always
	headline, details := src.Describe()
	if headline != "" {
		ctx.Logger.V(0).Info(headline)
	}
	for _, line := range details {
		ctx.Logger.V(1).Info(line)
	}
	return nil
}

// checkNodes finds the cluster and each node's role, and checks that every
// node answers.
func checkNodes(ctx *actions.Context) error {
	st := ctx.State
	if ctx.Cluster != nil {
		found, err := ctx.Cluster.Nodes()
		if err != nil {
			return err
		}
		ctx.Nodes, ctx.Neighbours = found, ctx.Cluster.Neighbours()
	}
	if len(ctx.Nodes) == 0 {
		return errors.New("the cluster has no nodes")
	}
	bootstrap, err := kindnodeutils.BootstrapControlPlaneNode(ctx.Nodes)
	if err != nil {
		return errors.Wrap(err, "failed to find the bootstrap control-plane node")
	}
	st.Bootstrap = bootstrap
	st.ControlPlanes = []nodes.Node{bootstrap}
	sorted := append([]nodes.Node{}, ctx.Nodes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].String() < sorted[j].String() })
	for _, n := range sorted {
		role, err := n.Role()
		if err != nil {
			return errors.Wrapf(err, "failed to get the role of node %q", n)
		}
		st.Info[n.String()] = &actions.NodeInfo{Role: role}
		switch {
		case n.String() == bootstrap.String():
		case role == constants.ControlPlaneNodeRoleValue:
			st.ControlPlanes = append(st.ControlPlanes, n)
		default:
			st.Workers = append(st.Workers, n)
		}
	}
	if err := chooseNodes(ctx); err != nil {
		return err
	}
	return actions.OnNodes(sorted, func(_ int, n nodes.Node) error {
		info := st.Info[n.String()]
		installed, err := exec.Output(n.CommandContext(ctx, "cat", "/kind/version"))
		if err != nil {
			return errors.Wrapf(err, "node %q does not answer: is its container running? (start it with `%s start %s`, then run this command again)", n, ctx.Options.Provider(), n)
		}
		if info.Installed, err = plan.ParseVersion(string(installed)); err != nil {
			return errors.Wrapf(err, "failed to read /kind/version on node %q", n)
		}
		machine, err := exec.Output(n.CommandContext(ctx, "uname", "-m"))
		if err != nil {
			return errors.Wrapf(err, "failed to get the architecture of node %q", n)
		}
		info.Arch = GoArch(strings.TrimSpace(string(machine)))
		return nil
	})
}

// chooseNodes reads --nodes: the nodes whose kubelets move, named or by
// role.
func chooseNodes(ctx *actions.Context) error {
	st := ctx.State
	if len(ctx.Options.Nodes) == 0 {
		return nil
	}
	st.Moving = map[string]bool{}
	var names []string
	for _, n := range ctx.Nodes {
		names = append(names, n.String())
	}
	sort.Strings(names)
	for _, chosen := range ctx.Options.Nodes {
		matched := false
		for _, name := range names {
			if name == chosen || st.Info[name].Role == chosen {
				st.Moving[name], matched = true, true
			}
		}
		if !matched {
			return errors.Errorf("%s %s names no node of cluster %q: give node names (%s) or the roles %s and %s", ctx.Options.Name(options.Nodes), chosen, ctx.Options.ClusterName, strings.Join(names, ", "), constants.ControlPlaneNodeRoleValue, constants.WorkerNodeRoleValue)
		}
	}
	return nil
}

// GoArch maps `uname -m` to Go's architecture names, which ELF binaries are
// described with.
func GoArch(machine string) string {
	switch machine {
	case "x86_64", "amd64":
		return "amd64"
	case "aarch64", "arm64":
		return "arm64"
	case "armv7l", "armv6l", "armhf", "arm":
		return "arm"
	case "i386", "i686":
		return "386"
	}
	return machine
}

// waitForKubeadm waits until no kubeadm started by an earlier, interrupted
// run still runs on any node: the API server may be restarting under it,
// or a worker's kubelet configuration being rewritten. The nodes are
// looked at, and waited for, all at once: the whole wait is bounded by
// --wait, whatever the number of nodes.
func waitForKubeadm(ctx *actions.Context) error {
	deadline := time.Now().Add(ctx.Options.Wait)
	busy := make([]bool, len(ctx.Nodes))
	if err := actions.OnNodes(ctx.Nodes, func(i int, n nodes.Node) error {
		out, err := exec.Output(nodeutils.KubeadmBusyScript.Command(ctx, n, actions.KubeadmLock))
		if err != nil {
			return errors.Wrapf(err, "failed to look for a running kubeadm on node %q", n)
		}
		busy[i] = strings.TrimSpace(string(out)) == "busy"
		return nil
	}); err != nil {
		return err
	}
	var waitFor []nodes.Node
	left := time.Until(deadline).Round(time.Second)
	if left < time.Second {
		left = time.Second
	}
	for i, n := range ctx.Nodes {
		if busy[i] {
			ctx.Logger.V(0).Infof("A kubeadm started by an earlier run still runs on node %s: waiting up to %s for it to finish", n, left)
			waitFor = append(waitFor, n)
		}
	}
	return actions.OnNodes(waitFor, func(_ int, n nodes.Node) error {
		if err := nodeutils.KubeadmWaitScript.Command(ctx, n, actions.KubeadmLock, fmt.Sprint(int(left.Seconds()))).Run(); err != nil {
			if ctx.Err() != nil {
				return errors.Wrapf(ctx.Err(), "cancelled while waiting for the kubeadm an earlier run started on node %q", n)
			}
			return errors.Wrapf(err, "a kubeadm started by an earlier run still runs on node %q after %s (%s): wait for it to finish, then run the same command again", n, ctx.Options.Name(options.Wait), ctx.Options.Wait)
		}
		return nil
	})
}

// checkBinaries checks that kubeadm, kubelet and kubectl are built for the
// nodes' architecture.
func checkBinaries(ctx *actions.Context) error {
	for _, name := range artifacts.Binaries {
		a := ctx.Source.Binary(name)
		if a.Arch == "" {
			return errors.Errorf("%s in %s (%s) is not a Linux binary", name, ctx.Source.Name(), a.Path)
		}
		for _, n := range ctx.Nodes {
			if arch := ctx.State.Info[n.String()].Arch; arch != a.Arch {
				return errors.Errorf("%s in %s (%s) is built for %s but node %q is %s: %s", name, ctx.Source.Name(), a.Path, a.Arch, n, arch, ctx.Source.ForArch(arch))
			}
		}
	}
	return nil
}

// checkCluster reads the cluster's configuration and nodes from the API.
func checkCluster(ctx *actions.Context) error {
	st := ctx.State
	client := ctx.Kube()
	cfg, err := client.ClusterConfiguration(ctx)
	if err != nil {
		return errors.Wrap(err, "failed to read the cluster's kubeadm configuration: is the API server up?")
	}
	st.ClusterConfig = cfg
	from, err := plan.ParseVersion(cfg.KubernetesVersion)
	if err != nil {
		return err
	}
	st.From = "v" + from.String()
	workloads, err := client.Workloads(ctx, "kube-system")
	if err != nil {
		return errors.Wrap(err, "failed to read kube-proxy's version")
	}
	st.KubeProxy = plan.ImageVersion(kube.KubeProxyImage(workloads))
	registered, err := readyNodes(ctx)
	if err != nil {
		return err
	}
	st.Registered = registered
	byName := map[string]kube.Node{}
	for _, n := range registered {
		byName[n.Name] = n
	}
	for _, n := range ctx.Nodes {
		kn, ok := byName[n.String()]
		if !ok {
			return errors.Errorf("node %q is not registered with the API server", n)
		}
		if !kn.Ready {
			return errors.Errorf("node %q is not Ready: fix it (see `kubectl describe node %s`) before upgrading", n, n)
		}
		kv, err := plan.ParseVersion(kn.KubeletVersion)
		if err != nil {
			return errors.Wrapf(err, "failed to read the kubelet version of node %q", n)
		}
		st.Info[n.String()].Kubelet = kv
	}
	return nil
}

// notReadyGrace is how long preflight gives a NotReady node to become
// Ready before it refuses: a kubelet that just restarted (one an
// interrupted run restarted, say) reports NotReady for a few seconds, and
// the node controller marks a silent kubelet NotReady only after 40 s.
const notReadyGrace = 40 * time.Second

// readyNodes lists the cluster's nodes, waiting up to notReadyGrace (at
// most --wait) while one of kind's nodes is NotReady.
func readyNodes(ctx *actions.Context) ([]kube.Node, error) {
	registered, err := ctx.Kube().Nodes(ctx)
	if err != nil {
		return nil, errors.Wrap(err, "failed to list the cluster's nodes")
	}
	notReady := func(list []kube.Node) []string {
		var names []string
		for _, kn := range list {
			for _, n := range ctx.Nodes {
				if kn.Name == n.String() && !kn.Ready {
					names = append(names, kn.Name)
				}
			}
		}
		return names
	}
	waiting := notReady(registered)
	if len(waiting) == 0 {
		return registered, nil
	}
	grace := min(notReadyGrace, ctx.Options.Wait)
	ctx.Logger.V(0).Infof("Node(s) %s not Ready: waiting up to %s for them", strings.Join(waiting, ", "), grace)
	_ = nodeutils.WaitFor(ctx, ctx.Options.PollInterval, grace, "the nodes to be Ready", func(deadline context.Context) (bool, error) {
		list, err := ctx.Kube().Once().Nodes(deadline)
		if err != nil {
			return false, err
		}
		registered = list
		return len(notReady(list)) == 0, nil
	})
	if ctx.Err() != nil {
		return nil, errors.Wrap(ctx.Err(), "cancelled while waiting for the nodes to be Ready")
	}
	return registered, nil
}

// probeKubeadm runs the new kubeadm on the bootstrap node to learn the
// target version and the images its upgrade uses on this cluster: an etcd
// or CoreDNS repository or tag set by kubeadmConfigPatches is followed, as
// `kubeadm upgrade apply` follows it.
func probeKubeadm(ctx *actions.Context) error {
	st := ctx.State
	config, err := st.ClusterConfig.ImagesConfig()
	if err != nil {
		return err
	}
	var out []byte
	err = ctx.Source.Walk(ctx,
		func(a *artifacts.Artifact) bool { return a == ctx.Source.Binary("kubeadm") },
		func(_ *artifacts.Artifact, r io.Reader) error {
			var err error
			out, err = exec.Output(nodeutils.KubeadmProbeScript.Command(ctx, st.Bootstrap, string(config)).SetStdin(r))
			return err
		},
	)
	if err != nil {
		if ctx.Err() != nil {
			return errors.Wrapf(err, "cancelled while running kubeadm from %s on node %q", ctx.Source.Name(), st.Bootstrap)
		}
		printed := string(out)
		if runErr := exec.RunErrorForError(err); runErr != nil {
			printed = string(runErr.Output)
		}
		if v, _, _ := strings.Cut(printed, "\n"); strings.HasPrefix(v, "v") {
			// it ran: `config images list` refused the cluster's settings
			return errors.Wrapf(err, "kubeadm %s from %s failed to list its images for this cluster's kubeadm configuration (kubeadm-config ConfigMap in kube-system): see its output", v, ctx.Source.Name())
		}
		return errors.Wrapf(err, "failed to run kubeadm from %s on node %q: is it a working kubeadm for this architecture?", ctx.Source.Name(), st.Bootstrap)
	}
	target, images, err := ParseProbe(string(out))
	if err != nil {
		return errors.Wrapf(err, "failed to read what kubeadm from %s printed", ctx.Source.Name())
	}
	if said := ctx.Source.Version(); said != "" && said != "v"+target.String() {
		return errors.Errorf("%s says it holds Kubernetes %s but its kubeadm is v%s: it is not one Kubernetes release", ctx.Source.Name(), said, target)
	}
	st.TargetVersion = target
	st.Target = "v" + target.String()
	st.Images = images
	return nil
}

// ParseProbe parses probeScript's output: kubeadm's version, then one image
// per line.
func ParseProbe(out string) (target *semver.Version, images []string, err error) {
	scanner := bufio.NewScanner(strings.NewReader(out))
	first := true
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" {
			continue
		}
		if first {
			first = false
			if target, err = plan.ParseVersion(line); err != nil {
				return nil, nil, errors.Wrap(err, "failed to read the version of kubeadm")
			}
			continue
		}
		images = append(images, line)
	}
	if target == nil {
		return nil, nil, errors.New("kubeadm printed no version")
	}
	if len(images) == 0 {
		return nil, nil, errors.New("kubeadm listed no images")
	}
	return target, images, nil
}

// checkVersions applies the version-skew policy.
func checkVersions(ctx *actions.Context) error {
	st := ctx.State
	if ctx.Hop != nil && ctx.Hop.Ahead {
		return checkHopAhead(ctx)
	}
	current := plan.ClusterVersions{
		Kubelets:  map[string]*semver.Version{},
		Installed: map[string]*semver.Version{},
	}
	var err error
	if current.ControlPlane, err = plan.ParseVersion(st.From); err != nil {
		return err
	}
	for name, info := range st.Info {
		if !st.MovesKubelet(name) {
			continue
		}
		current.Kubelets[name] = info.Kubelet
		current.Installed[name] = info.Installed
	}
	current.KubeProxy, current.LeavesKubeProxy = st.KubeProxy, st.LeavesKubeProxy
	decision, err := plan.Decide(st.TargetVersion, current)
	if err != nil {
		return err
	}
	for _, n := range st.Ordered() {
		if st.MovesKubelet(n.String()) {
			continue
		}
		if err := plan.CheckKubeletStays(n.String(), st.Info[n.String()].Kubelet, st.TargetVersion); err != nil {
			return errors.Wrapf(err, "%s leaves it out", ctx.Options.Name(options.Nodes))
		}
	}
	if st.LeavesKubeProxy && st.UpgradesControlPlane {
		if err := plan.CheckKubeProxy(st.TargetVersion, st.KubeProxy); err != nil {
			return errors.Wrapf(err, "%s %s", ctx.Options.Name(options.SkipPhases), actions.PhaseKubeProxy)
		}
	}
	if decision != plan.NothingToDo {
		return nil
	}
	if !st.UpgradesControlPlane {
		// nothing else would re-apply it
		st.NothingToDo = true
		return nil
	}
	// every node runs the target: is the control plane's emulation to
	// change, or has a run that changed it not re-applied every node yet?
	changed, err := emulationToApply(ctx)
	if err != nil || !changed {
		st.NothingToDo = err == nil
		return err
	}
	st.ControlPlaneOnly = true
	st.UpgradesKubelets = false
	return nil
}

// checkHopAhead is the version check of a chain's hop looked at before
// any hop runs: the chain's plan applies the skew policy to the whole
// chain (plan.Chain); here the hop is marked passed when the control
// plane already runs a later version, and its kube-proxy, when it is left
// behind, is checked against the hop's target.
func checkHopAhead(ctx *actions.Context) error {
	st := ctx.State
	now, err := plan.ParseVersion(st.From)
	if err != nil {
		return err
	}
	st.Passed = st.TargetVersion.LessThan(now)
	if from := ctx.Hop.From; from != nil && now.LessThan(from) {
		// when the hop runs, the one before it is done
		st.From = "v" + from.String()
	}
	if st.LeavesKubeProxy && st.UpgradesControlPlane && !st.Passed {
		if err := plan.CheckKubeProxy(st.TargetVersion, st.KubeProxy); err != nil {
			return errors.Wrapf(err, "%s %s", ctx.Options.Name(options.SkipPhases), actions.PhaseKubeProxy)
		}
	}
	return nil
}

// emulationToApply reports whether the control plane is to be re-applied
// for its emulation: the kubeadm configuration is to change, or a
// control-plane node's static pods do not run with the emulation it sets
// (a run that changed it was interrupted). Without --patches, which may
// set these flags themselves, static pods that emulate while the
// configuration sets no emulation count too: an interrupted run that
// removed it.
func emulationToApply(ctx *actions.Context) (bool, error) {
	st := ctx.State
	if len(st.ConfigChanges) > 0 {
		return true, nil
	}
	if !st.EmulationManaged {
		if ctx.Options.Patches != "" {
			return false, nil
		}
		// should the pods emulate, the control plane is re-applied
		// without: the Done checks then look at the flags
		st.EmulationManaged = true
	}
	behind := make([]string, len(st.ControlPlanes))
	if err := actions.OnNodes(st.ControlPlanes, func(i int, n nodes.Node) error {
		done, reason, err := staticpods.AtTarget(ctx, n)
		if err == nil && !done {
			behind[i] = n.String() + ": " + reason
		}
		return err
	}); err != nil {
		return false, err
	}
	for _, why := range behind {
		if why != "" {
			ctx.Logger.V(1).Infof("the control plane is re-applied for its emulation: %s", why)
			return true, nil
		}
	}
	return false, nil
}

// checkConfig decides the emulation arguments the upgrade leaves in
// kubeadm's configuration and refuses those the target's binaries would
// refuse; and reads --patches as the target's kubeadm will.
func checkConfig(ctx *actions.Context) error {
	st := ctx.State
	choice := ctx.Options.Emulation()
	st.EmulationNow = emulation.FromConfig(st.ClusterConfig)
	st.Emulation = emulation.Desired(st.EmulationNow, choice, st.TargetVersion)
	st.EmulationManaged = choice.Asked() || !st.EmulationNow.Empty() || !st.Emulation.Empty()
	origin := func(name string) string {
		switch {
		case name == emulation.EmulatedVersion && choice.Version != "":
			return ctx.Options.Name(options.EmulatedVersion) + " " + choice.Version
		case name == emulation.ForwardCompatible && choice.ForwardCompatible != nil:
			return fmt.Sprintf("%s=%v", ctx.Options.Name(options.EmulationForwardCompatible), *choice.ForwardCompatible)
		}
		return "the cluster's kubeadm configuration (kubeadm-config ConfigMap in kube-system)"
	}
	if err := emulation.Check(st.Emulation, st.TargetVersion, origin); err != nil {
		if choice.Version == "" {
			// the cluster's own emulation: the fix is a new one
			return errors.Errorf("%v; set another with %s, or remove it with %s=%s", err, ctx.Options.Name(options.EmulatedVersion), ctx.Options.Name(options.EmulatedVersion), emulation.None)
		}
		return err
	}
	st.ConfigChanges = emulation.Changes(st.EmulationNow, st.Emulation)
	if len(st.ConfigChanges) > 0 && !st.UpgradesControlPlane {
		return errors.Errorf("%s changes the kubeadm configuration of the control plane, which the %s phase applies: do not skip it", ctx.Options.Name(options.EmulatedVersion), actions.PhaseControlPlane)
	}
	if ctx.Options.Patches != "" {
		set, err := patches.Read(ctx.Options.Patches, st.TargetVersion, ctx.Options.Name(options.Patches))
		if err != nil {
			return err
		}
		for _, ignored := range set.Ignored {
			ctx.Logger.Warnf("%s: kubeadm %s ignores %s", ctx.Options.Name(options.Patches), st.Target, ignored)
		}
		st.Patches = set
	}
	return nil
}

// checkImages lists each node's images and plans which archives it needs;
// every image kubeadm needs must be on the node or in --image-dir.
func checkImages(ctx *actions.Context) error {
	st := ctx.State
	if err := actions.OnNodes(ctx.Nodes, func(_ int, n nodes.Node) error {
		lines, err := exec.OutputLines(n.CommandContext(ctx, "ctr", "--namespace=k8s.io", "images", "ls", "--quiet"))
		if err != nil {
			return errors.Wrapf(err, "failed to list images on node %q", n)
		}
		st.Info[n.String()].Present = plan.ImageSet(lines)
		return nil
	}); err != nil {
		return err
	}
	var problems []string
	// the images no source provides, with the nodes that need them
	unprovided := map[string][]nodes.Node{}
	var unprovidedOrder []string
	for _, n := range ctx.Nodes {
		info := st.Info[n.String()]
		info.Needed = plan.NeededOn(st.Images, info.Role)
		info.Load, info.Pull = nil, nil
		seen := map[*artifacts.Artifact]bool{}
		for _, image := range plan.Missing(info.Needed, info.Present) {
			a := ctx.Source.ArchiveFor(image)
			if a == nil {
				if unprovided[image] == nil {
					unprovidedOrder = append(unprovidedOrder, image)
				}
				unprovided[image] = append(unprovided[image], n)
				continue
			}
			if !seen[a] {
				seen[a] = true
				info.Load = append(info.Load, a)
			}
		}
	}
	problems = append(problems, planPulls(ctx, unprovidedOrder, unprovided)...)
	for _, n := range ctx.Nodes {
		info := st.Info[n.String()]
		for _, a := range info.Load {
			switch {
			case a.Partial && !slices.Contains(a.Arches, info.Arch):
				// what the import will see: it imports the node's platform
				// only, which must be there
				problems = append(problems, fmt.Sprintf("%s holds only %s of its multi-platform image (the other platforms' content is not in it) but node %s is linux/%s: save it for that platform (%#q)", a.Path, platformList(a.Arches), n, info.Arch, nodeprovider.SaveCommand(ctx.Options.Provider(), info.Arch)))
			case a.Arch != "" && a.Arch != info.Arch:
				problems = append(problems, fmt.Sprintf("%s is built for %s but node %s is %s", a.Path, a.Arch, n, info.Arch))
			}
		}
	}
	if len(problems) > 0 {
		fix := addArchives(ctx)
		if len(unprovided) > 0 {
			fix = UnprovidedFix(ctx)
		}
		return errors.Errorf("images kubeadm %s needs are neither on the nodes nor in %s for the nodes' architecture:\n  %s\n%s", st.Target, ctx.Source.Name(), strings.Join(problems, "\n  "), fix)
	}
	return nil
}

// planPulls decides, for each image no source provides, whether the
// nodes that need it pull it: with pulls allowed, each such node pulls it
// at the start of load-artifacts, before anything else changes (preflight
// changes nothing, so it does not pull; a dry run says what would be
// pulled). It returns a problem per node and image that cannot be had.
func planPulls(ctx *actions.Context, order []string, needing map[string][]nodes.Node) []string {
	st := ctx.State
	var problems []string
	for _, image := range order {
		for _, n := range needing[image] {
			if !ctx.Options.MayPull() {
				lacks := ""
				if why := ctx.Source.Lacks(image); why != "" {
					lacks = ": " + why
				}
				problems = append(problems, fmt.Sprintf("%s (needed on %s)%s; %s %s: the nodes may not pull it", image, n, lacks, ctx.Options.Name(options.PullPolicy), options.PullNever))
				continue
			}
			info := st.Info[n.String()]
			info.Pull = append(info.Pull, image)
		}
	}
	return problems
}

// UnprovidedFix is the fix for images no source provides and the nodes
// cannot or may not pull: archives of them, or pulls that work.
func UnprovidedFix(ctx *actions.Context) string {
	if ctx.Options.MayPull() {
		return addArchives(ctx) + ", or let the nodes reach the images' registry (kind passes HTTP_PROXY, HTTPS_PROXY and NO_PROXY from its environment to the nodes it creates)"
	}
	return addArchives(ctx) + ", or let the nodes pull them (" + ctx.Options.Name(options.PullPolicy) + " " + options.PullIfNotPresent + " on nodes that reach their registry)"
}

// addArchives is the fix for images no source provides: archives of them
// in --image-dir, which with --image adds to the image's images.
func addArchives(ctx *actions.Context) string {
	save := nodeprovider.SaveCommand(ctx.Options.Provider(), nodesArch(ctx))
	if ctx.Options.Image != "" && ctx.Options.ImageDir == "" {
		return fmt.Sprintf("save an archive of each in a folder and add it as %[1]s (with %[2]s, %[1]s adds its archives to the image's images; e.g. %#[3]q)", ctx.Options.Name(options.ImageDir), ctx.Options.Name(options.Image), save)
	}
	return fmt.Sprintf("add an archive of each to %s (e.g. %#q)", ctx.Options.Name(options.ImageDir), save)
}

// nodesArch is the nodes' architecture, "" when preflight did not read it.
func nodesArch(ctx *actions.Context) string {
	for _, n := range ctx.Nodes {
		if info := ctx.State.Info[n.String()]; info.Arch != "" {
			return info.Arch
		}
	}
	return ""
}

// platformList is "linux/amd64 and linux/arm64" for [amd64 arm64].
func platformList(arches []string) string {
	var named []string
	for _, a := range arches {
		if a == "" {
			a = "an unnamed architecture"
		} else {
			a = "linux/" + a
		}
		named = append(named, a)
	}
	if len(named) == 0 {
		return "no platform"
	}
	return strings.Join(named, " and ")
}

// checkDisk checks that the nodes have room for what they will receive, on
// the file systems it goes to: the binaries to actions.StagingRoot (and
// /usr/bin, with the replaced ones kept), the images to containerd's
// /var/lib/containerd (a volume of its own on kind's nodes). A path that
// does not exist yet is on its nearest existing ancestor's file system.
// What goes to the same file system adds up, across nodes too: kind's
// nodes keep their volumes and layers on the host's disk, and load the
// images all at once.
func checkDisk(ctx *actions.Context) error {
	st := ctx.State
	var binaries int64
	for _, name := range artifacts.Binaries {
		binaries += ctx.Source.Binary(name).Size
	}
	paths := []string{actions.StagingRoot, "/var/lib/containerd"}
	type use struct {
		node, path string
		fs         FileSystem
		need       int64
	}
	uses := make([][]use, len(ctx.Nodes))
	if err := actions.OnNodes(ctx.Nodes, func(i int, n nodes.Node) error {
		var archives int64
		for _, a := range st.Info[n.String()].Load {
			archives += a.Size
		}
		// staged, installed and the replaced ones kept; archives are
		// streamed in and unpacked, twice their size at most
		need := []int64{3 * binaries, 2 * archives}
		out, err := exec.Output(nodeutils.DFScript.Command(ctx, n, paths...))
		if err != nil {
			return errors.Wrapf(err, "failed to check free disk space on node %q", n)
		}
		fss, err := ParseDF(string(out))
		if err == nil && len(fss) != len(paths) {
			err = errors.Errorf("df listed %d file systems for %d paths", len(fss), len(paths))
		}
		if err != nil {
			return errors.Wrapf(err, "failed to check free disk space on node %q", n)
		}
		for j, fs := range fss {
			uses[i] = append(uses[i], use{node: n.String(), path: paths[j], fs: fs, need: need[j]})
		}
		return nil
	}); err != nil {
		return err
	}
	// the same file system: the same size. A kind node's root is an overlay
	// and its /var a volume, with different device names, but both are the
	// host's disk and report its figures (testdata/nodes/v1.36.3/df-layout.txt);
	// two disks of one size are counted as one, which can only refuse more
	need := map[string]int64{}
	users := map[string][]string{}
	key := func(u use) string { return strconv.FormatInt(u.fs.Size, 10) }
	for _, node := range uses {
		for _, u := range node {
			need[key(u)] += u.need
			users[key(u)] = append(users[key(u)], u.node+":"+u.path)
		}
	}
	if hop := ctx.Hop; hop != nil && hop.Ahead {
		// a chain stages every hop's target: the earlier hops' need adds
		// to this one's, and this one's to the later ones'
		if st.Passed {
			return nil
		}
		for k := range need {
			need[k] += hop.DiskPlanned[k]
			hop.DiskPlanned[k] = need[k]
		}
	}
	for _, node := range uses {
		for _, u := range node {
			if k := key(u); u.fs.Available < need[k] {
				return errors.Errorf("node %q has %d MiB free in %s (file system %s), which holds %s, but the upgrade needs about %d MiB there: free disk space (e.g. `%s system prune`) and run again", u.node, u.fs.Available>>20, u.path, u.fs.Mount, strings.Join(users[k], ", "), need[k]>>20, ctx.Options.Provider())
			}
		}
	}
	return nil
}

// FileSystem is one line of `df -Pk`.
type FileSystem struct {
	Device string
	// Size and Available are in bytes.
	Size, Available int64
	Mount           string
}

// ParseDF parses `df -Pk` output: one file system per path asked, in order.
func ParseDF(out string) ([]FileSystem, error) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "Filesystem") {
		return nil, errors.Errorf("unexpected df output %q", out)
	}
	var fss []FileSystem
	for _, line := range lines[1:] {
		fields := strings.Fields(line)
		if len(fields) < 6 {
			return nil, errors.Errorf("unexpected df output %q", out)
		}
		size, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return nil, errors.Wrapf(err, "unexpected df output %q", out)
		}
		kb, err := strconv.ParseInt(fields[3], 10, 64)
		if err != nil {
			return nil, errors.Wrapf(err, "unexpected df output %q", out)
		}
		// the mount point is the rest of the line: it may hold spaces
		mount := strings.Join(fields[5:], " ")
		fss = append(fss, FileSystem{Device: fields[0], Size: size << 10, Available: kb << 10, Mount: mount})
	}
	return fss, nil
}

// kubeadmPhasesSince is the first kubeadm whose `upgrade apply` has
// phases (and --skip-phases).
var kubeadmPhasesSince = semver.MustParse("1.32.0-0")

// checkSkips refuses --skip-phases that would break the version-skew policy
// or leave a phase without what an earlier one provides.
func checkSkips(ctx *actions.Context) error {
	st := ctx.State
	if !st.UpgradesControlPlane && st.UpgradesKubelets && st.From != st.Target {
		return errors.Errorf("%s %s would upgrade kubelets while the control plane still runs %s, but a kubelet must never be newer than the API server: skip %s too, or upgrade the control plane first", ctx.Options.Name(options.SkipPhases), actions.PhaseControlPlane, st.From, actions.PhaseKubelets)
	}
	if st.LeavesKubeProxy && st.UpgradesControlPlane && st.TargetVersion.LessThan(kubeadmPhasesSince) {
		return errors.Errorf("%s %s: kubeadm %s cannot skip its %s phase (kubeadm upgrade apply has phases from v1.32 on)", ctx.Options.Name(options.SkipPhases), actions.PhaseKubeProxy, st.Target, actions.KubeadmKubeProxyPhase)
	}
	if !ctx.Options.Skips(actions.PhaseLoadArtifacts) || (!st.UpgradesControlPlane && !st.UpgradesKubelets) {
		return nil
	}
	// the nodes are looked at all at once, then judged one after another:
	// the first node with a problem, a failed look included, is the one
	// named (each look's error is returned in its node's turn)
	paths := st.StagedAll(artifacts.Binaries)
	if st.Patches != nil {
		for _, f := range st.Patches.Files {
			paths = append(paths, path.Join(st.PatchesDir(), f.Rel))
		}
	}
	loaded := ctx.Nodes
	if st.ControlPlaneOnly {
		loaded = st.ControlPlanes
	}
	found := make([][]bool, len(loaded))
	lookErrs := make([]error, len(loaded))
	_ = actions.OnNodes(loaded, func(i int, n nodes.Node) error {
		found[i], lookErrs[i] = nodeutils.ExistAll(ctx, n, paths...)
		return lookErrs[i]
	})
	for i, n := range loaded {
		if load := st.Info[n.String()].Load; len(load) > 0 {
			return errors.Errorf("%s %s: node %q still lacks the images of %s: run the %s phase", ctx.Options.Name(options.SkipPhases), actions.PhaseLoadArtifacts, n, load[0].Name, actions.PhaseLoadArtifacts)
		}
		if lookErrs[i] != nil {
			return lookErrs[i]
		}
		for j, p := range paths {
			if !found[i][j] {
				return errors.Errorf("%s %s: %s is not staged on node %q: run the %s phase", ctx.Options.Name(options.SkipPhases), actions.PhaseLoadArtifacts, p, n, actions.PhaseLoadArtifacts)
			}
		}
	}
	return nil
}
