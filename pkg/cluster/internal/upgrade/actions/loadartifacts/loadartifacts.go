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

// Package loadartifacts implements the load-artifacts phase: it streams the
// target's binaries into a staging folder on every node and imports the
// image archives each node needs into its containerd, the control-plane
// nodes at once, then the workers at once while the control plane is
// upgraded.
package loadartifacts

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/kubelets"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/preflight"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/imageref"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/options"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/patches"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/plan"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/stepid"
)

// Phase is this phase's name.
const Phase = actions.PhaseLoadArtifacts

// PinnedLabel keeps the kubelet's image garbage collection away from an
// image.
const PinnedLabel = "io.cri-containerd.pinned=pinned"

type action struct{}

// NewAction returns the load-artifacts action.
func NewAction() actions.Action {
	return &action{}
}

// Execute loads the bootstrap control-plane node (every control-plane
// node when they are all re-applied) and waits for it. The other
// control-plane nodes, which the control-plane phase needs only at their
// own kubeadm upgrade node, minutes after kubeadm upgrade apply, are
// loaded beside it (ctx.Go), each behind a gate (State.Loading) that
// phase waits for; then the workers, which it does not need: their imports
// use the CPU while kubeadm mostly waits for static pods to restart. The
// kubelets phase waits for all of them before it touches a node.
// kubeadm upgrade apply's health check runs a Job of kubeadm's pause image
// on any schedulable node (control-plane nodes included: it tolerates
// their taint) and fails when it has not run within 15 s: a node loaded
// beside that lacks it (kind's node images hold their containerd's
// sandbox image instead) imports it first, beside the bootstrap node's
// loading. The bootstrap node is drained beside its loading too, from
// one of those nodes (kubelets.DrainAheadOn). When the control-plane phase
// is skipped there is nothing to overlap with: every node is loaded here.
func (a *action) Execute(ctx *actions.Context) error {
	st := ctx.State
	now, beside, later := st.ControlPlanes[:1], st.ControlPlanes[1:], st.Workers
	switch {
	case st.ControlPlaneOnly:
		// only the control-plane nodes run kubeadm, each re-applied
		now, beside, later = st.ControlPlanes, nil, nil
	case !st.UpgradesControlPlane:
		now, beside, later = st.Ordered(), nil, nil
	}
	// the images no source provides first, on every node that needs one:
	// a registry the nodes cannot reach stops the upgrade before anything
	// else changes
	all := append(append(append([]nodes.Node{}, now...), beside...), later...)
	if err := pullFirst(ctx, all); err != nil {
		return err
	}
	ahead, aheadStep, err := drainAhead(ctx)
	if err != nil {
		return err
	}
	fns := []func() error{func() error { return load(ctx, now, nil) }}
	for _, n := range append(append([]nodes.Node{}, beside...), later...) {
		step := healthCheckImageStep(ctx, n)
		drains := ahead != nil && n.String() == ahead.String()
		if step == nil && !drains {
			continue
		}
		fns = append(fns, func() error {
			if step != nil {
				if err := ctx.RunSteps(Phase, n.String(), []actions.Step{step}); err != nil {
					return err
				}
			}
			if !drains {
				return nil
			}
			// the bootstrap node's step, run from n
			return ctx.RunStepFor(Phase, st.Bootstrap.String(), aheadStep)
		})
	}
	if err := errors.AggregateConcurrent(fns); err != nil {
		return err
	}
	if len(beside)+len(later) == 0 {
		return nil
	}
	st.Loading = map[string]*actions.Gate{}
	for _, n := range beside {
		st.Loading[n.String()] = actions.NewGate()
	}
	ctx.Logger.V(1).Infof("%s: %s loaded while the control plane is upgraded", Phase, nodeList(append(append([]nodes.Node{}, beside...), later...)))
	ctx.Go(func() error {
		// the control-plane nodes first: the control-plane phase waits for
		// them
		if err := load(ctx, beside, st.Loading); err != nil {
			return err
		}
		return load(ctx, later, nil)
	})
	return nil
}

// aheadOn is the node that drains the bootstrap control-plane node
// beside its loading (kubelets.DrainAheadOn), nil for none. Only when the
// control-plane phase runs: the other nodes load beside it, and until then
// they are idle but for their pause image.
func aheadOn(st *actions.State) nodes.Node {
	if !st.UpgradesControlPlane || st.ControlPlaneOnly {
		return nil
	}
	return kubelets.DrainAheadOn(st)
}

// drainAhead returns aheadOn's node and the drain step it runs, nil when
// there is none.
func drainAhead(ctx *actions.Context) (nodes.Node, actions.Step, error) {
	on := aheadOn(ctx.State)
	if on == nil {
		return nil, nil, nil
	}
	kubeconfig, err := kubelets.AheadKubeconfig(ctx, on)
	if err != nil {
		return nil, nil, err
	}
	return on, kubelets.DrainAheadStep(ctx, on, kubeconfig), nil
}

// nodeList names list's nodes for a log line.
func nodeList(list []nodes.Node) string {
	names := make([]string, 0, len(list))
	for _, n := range list {
		names = append(names, n.String())
	}
	return strings.Join(names, ", ")
}

// healthCheckImageStep imports, on node n loaded beside the control-plane
// phase, the archive of kubeadm's pause image when n lacks it and the
// source has it (one no source has was pulled first), and takes that
// archive off the node's later import; nil when there is nothing to do.
func healthCheckImageStep(ctx *actions.Context, n nodes.Node) actions.Step {
	st := ctx.State
	pause := plan.ComponentImage(st.Images, "pause")
	info := st.Info[n.String()]
	if pause == "" || info == nil || info.Present[imageref.Normalize(pause)] {
		return nil
	}
	a := ctx.Source.ArchiveFor(pause)
	if a == nil || !slices.Contains(info.Load, a) {
		return nil
	}
	info.Load = slices.DeleteFunc(slices.Clone(info.Load), func(b *artifacts.Artifact) bool { return b == a })
	return actions.Task{
		ID:   stepid.LoadImportHealthCheck,
		Name: "importing kubeadm's pause image first (kubeadm upgrade apply's health check may run it here)",
		Run:  func() error { return importWith(ctx, n, []*artifacts.Artifact{a}, false) },
	}
}

// pullFirst pulls, in parallel on the nodes of list, the images no source
// provides that each needs (a node that needs none reports its pull step
// skipped), and waits for all of them. When any pull fails it returns one
// error naming every image a node could not pull, and the fixes.
func pullFirst(ctx *actions.Context, list []nodes.Node) error {
	var mu sync.Mutex
	var failed []string
	var fns []func() error
	for _, n := range list {
		fns = append(fns, func() error {
			err := ctx.RunSteps(Phase, n.String(), []actions.Step{pullStep(ctx, n)})
			if err != nil {
				mu.Lock()
				failed = append(failed, err.Error())
				mu.Unlock()
			}
			return nil
		})
	}
	_ = errors.AggregateConcurrent(fns)
	if ctx.Err() != nil {
		return errors.Wrap(ctx.Err(), "cancelled while the nodes pulled the images no source provides")
	}
	if len(failed) == 0 {
		return nil
	}
	sort.Strings(failed)
	return errors.Errorf("the nodes cannot pull images that no source provides:\n  %s\nNothing but pulls has changed yet. To fix: %s", strings.Join(failed, "\n  "), preflight.UnprovidedFix(ctx))
}

// load loads nodes in parallel and waits for all of them, so no node is
// still being changed when an error is returned. A node with a gate in
// gates opens it when its loading ends.
func load(ctx *actions.Context, list []nodes.Node, gates map[string]*actions.Gate) error {
	var fns []func() error
	for _, n := range list {
		fns = append(fns, func() error {
			err := ctx.RunSteps(Phase, n.String(), loadSteps(ctx, n))
			if g := gates[n.String()]; g != nil {
				if err != nil {
					g.Open(errors.Errorf("loading node %q failed", n))
				} else {
					g.Open(nil)
				}
			}
			return err
		})
	}
	return errors.AggregateConcurrent(fns)
}

// Steps are the steps of this phase on node n: its pulls, which run on
// every node before the rest, then its loading. A worker has none when
// only the control plane is re-applied.
func Steps(ctx *actions.Context, n nodes.Node) []actions.Step {
	st := ctx.State
	if st.ControlPlaneOnly && !st.IsControlPlane(n) {
		return nil
	}
	steps := []actions.Step{pullStep(ctx, n)}
	if on := aheadOn(st); on != nil && n.String() == st.Bootstrap.String() {
		steps = append(steps, kubelets.DrainAheadStep(ctx, on, nil))
	}
	return append(steps, loadSteps(ctx, n)...)
}

// pullStep pulls the images no source provides that n needs.
func pullStep(ctx *actions.Context, n nodes.Node) actions.Step {
	info := ctx.State.Info[n.String()]
	return actions.Task{
		ID:   stepid.LoadPull,
		Name: fmt.Sprintf("pulling %d image(s) from their registry", len(info.Pull)),
		Done: func() (bool, string, error) {
			if len(info.Pull) == 0 {
				return true, "no image to pull", nil
			}
			return false, "", nil
		},
		Run: func() error { return pullImages(ctx, n, info.Pull) },
	}
}

// loadSteps are the steps that load n once the pulls are done.
func loadSteps(ctx *actions.Context, n nodes.Node) []actions.Step {
	st := ctx.State
	info := st.Info[n.String()]
	steps := []actions.Step{
		actions.Todo[map[*artifacts.Artifact]bool]{
			ID:   stepid.LoadStage,
			Name: "staging kubeadm, kubelet and kubectl in " + st.StagingDir(),
			Find: func() (map[*artifacts.Artifact]bool, bool, string, error) {
				missing, err := unstaged(ctx, n)
				return missing, len(missing) == 0, "", err
			},
			Run: func(missing map[*artifacts.Artifact]bool) error { return stage(ctx, n, missing) },
		},
		actions.Task{
			ID:   stepid.LoadStagedVersions,
			Name: "checking the staged binaries' versions",
			Run:  func() error { return checkStaged(ctx, n) },
		},
	}
	if st.Patches != nil {
		steps = append(steps, patchesStep(ctx, n))
	}
	return append(steps,
		actions.Task{
			ID:   stepid.LoadImport,
			Name: fmt.Sprintf("importing %d image archive(s)", len(info.Load)),
			Done: func() (bool, string, error) {
				if len(info.Load) == 0 {
					return true, "every image is already on the node", nil
				}
				return false, "", nil
			},
			Run: func() error { return importImages(ctx, n, info.Load) },
		},
		actions.Task{
			// always: cheap, and an interrupted import may have left
			// images unpinned
			ID:   stepid.LoadPin,
			Name: "pinning the target's images",
			Run:  func() error { return pin(ctx, n, info.Needed) },
		},
	)
}

// patchesStep copies kubeadm's patches to n's State.PatchesDir: the
// files it lacks, each written under a temporary name and renamed (the
// folder is named by the patches' digest, so a file there is the right
// one).
func patchesStep(ctx *actions.Context, n nodes.Node) actions.Step {
	st := ctx.State
	return actions.Todo[[]patches.File]{
		ID:   stepid.LoadPatches,
		Name: "copying the kubeadm patches of " + st.Patches.Dir + " to " + st.PatchesDir(),
		Find: func() ([]patches.File, bool, string, error) {
			missing, err := MissingPatches(ctx, n)
			return missing, len(missing) == 0, "", err
		},
		Run: func(missing []patches.File) error {
			for _, f := range missing {
				if err := nodeutils.WriteFile(ctx, n, path.Join(st.PatchesDir(), f.Rel), 0o644, bytes.NewReader(f.Content)); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// MissingPatches returns the patch files not yet copied to n.
func MissingPatches(ctx *actions.Context, n nodes.Node) ([]patches.File, error) {
	st := ctx.State
	var paths []string
	for _, f := range st.Patches.Files {
		paths = append(paths, path.Join(st.PatchesDir(), f.Rel))
	}
	found, err := nodeutils.ExistAll(ctx, n, paths...)
	if err != nil {
		return nil, err
	}
	var missing []patches.File
	for i, f := range st.Patches.Files {
		if !found[i] {
			missing = append(missing, f)
		}
	}
	return missing, nil
}

// pullImages pulls images on n through its containerd (crictl: the CRI,
// with the node's registry configuration and proxy), each bounded by
// --wait; it tries them all and names every one that failed.
func pullImages(ctx *actions.Context, n nodes.Node, images []string) error {
	var failed []string
	for _, image := range images {
		ctx.Logger.V(0).Infof("Pulling %s on node %s: it is neither on the nodes nor in %s", image, n, ctx.Source.Name())
		waitCtx, cancel := context.WithTimeout(ctx, ctx.Options.Wait)
		out, err := actions.PullImage(waitCtx, n, image)
		timedOut := waitCtx.Err() != nil
		cancel()
		switch {
		case err == nil:
			continue
		case ctx.Err() != nil:
			return errors.Wrapf(err, "cancelled while pulling %s on node %q", image, n)
		case timedOut:
			out = fmt.Sprintf("no answer within %s (%s)", ctx.Options.Name(options.Wait), ctx.Options.Wait)
		}
		why := err.Error()
		if lines := strings.Split(strings.TrimSpace(out), "\n"); strings.TrimSpace(lines[len(lines)-1]) != "" {
			why = strings.TrimSpace(lines[len(lines)-1])
		}
		lacks := ""
		if l := ctx.Source.Lacks(image); l != "" {
			lacks = " (" + l + ")"
		}
		failed = append(failed, fmt.Sprintf("node %s cannot pull %s%s: %s", n, image, lacks, why))
	}
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "\n  "))
	}
	return nil
}

// pin keeps the kubelet's image garbage collection away from images, in
// one command.
func pin(ctx *actions.Context, n nodes.Node, images []string) error {
	if len(images) == 0 {
		return nil
	}
	var refs []string
	for _, image := range images {
		refs = append(refs, imageref.Normalize(image))
	}
	if err := nodeutils.PinScript.Command(ctx, n, append([]string{PinnedLabel}, refs...)...).Run(); err != nil {
		return errors.Wrapf(err, "failed to pin %s on node %q", strings.Join(refs, ", "), n)
	}
	return nil
}

// unstaged returns the binaries not yet staged on n. Staged files are
// written under a temporary name and renamed, so one that exists is whole.
func unstaged(ctx *actions.Context, n nodes.Node) (map[*artifacts.Artifact]bool, error) {
	found, err := nodeutils.ExistAll(ctx, n, ctx.State.StagedAll(artifacts.Binaries)...)
	if err != nil {
		return nil, err
	}
	missing := map[*artifacts.Artifact]bool{}
	for i, name := range artifacts.Binaries {
		if !found[i] {
			missing[ctx.Source.Binary(name)] = true
		}
	}
	return missing, nil
}

// stage streams the missing binaries into n's staging folder.
func stage(ctx *actions.Context, n nodes.Node, missing map[*artifacts.Artifact]bool) error {
	return ctx.Source.Walk(ctx,
		func(a *artifacts.Artifact) bool { return missing[a] },
		func(a *artifacts.Artifact, r io.Reader) error {
			ctx.Logger.V(1).Infof("%s: %s: streaming %s (%d MiB)", Phase, n, a.Path, a.Size>>20)
			return nodeutils.WriteFile(ctx, n, ctx.State.Staged(a.Name), 0o755, r)
		},
	)
}

// checkStaged refuses binaries whose versions differ from kubeadm's.
func checkStaged(ctx *actions.Context, n nodes.Node) error {
	st := ctx.State
	for _, c := range []struct {
		name string
		args []string
	}{
		{"kubelet", []string{"--version"}},
		{"kubectl", []string{"version", "--client"}},
	} {
		out, err := exec.Output(n.CommandContext(ctx, st.Staged(c.name), c.args...))
		if err != nil {
			return errors.Wrapf(err, "failed to run the staged %s on node %q", c.name, n)
		}
		got, err := plan.ParseBinaryVersion(string(out))
		if err != nil {
			return errors.Wrapf(err, "failed to read the version of %s in %s", c.name, ctx.Source.Name())
		}
		if got != st.Target {
			return errors.Errorf("%s in %s is %s but kubeadm is %s: the source must hold one Kubernetes release", c.name, ctx.Source.Name(), got, st.Target)
		}
	}
	return nil
}

// importImages streams archives into the node's containerd, then gives
// each image the name kubeadm expects. The import mirrors kind's
// nodeutils.LoadImageArchive, which cannot be used: it takes no context (so
// Ctrl-C could not stop an import) and reads containerd's configuration
// again for every archive.
func importImages(ctx *actions.Context, n nodes.Node, load []*artifacts.Artifact) error {
	return importWith(ctx, n, load, true)
}

// importWith is importImages; without probeLocal it imports through
// containerd's transfer service, as every ctr can, without asking ctr
// whether it has --local (for one small archive the difference is
// nothing).
func importWith(ctx *actions.Context, n nodes.Node, load []*artifacts.Artifact, probeLocal bool) error {
	out, err := exec.Output(n.CommandContext(ctx, "containerd", "config", "dump"))
	if err != nil {
		return errors.Wrapf(err, "failed to read containerd's configuration on node %q", n)
	}
	snapshotter, err := ParseSnapshotter(out)
	if err != nil {
		return errors.Wrapf(err, "failed to read containerd's configuration on node %q", n)
	}
	args := []string{"--namespace=k8s.io", "images", "import", "--digests", "--snapshotter=" + snapshotter}
	if probeLocal {
		help, err := exec.Output(n.CommandContext(ctx, "ctr", "--namespace=k8s.io", "images", "import", "--help"))
		if err != nil {
			return errors.Wrapf(err, "failed to run ctr on node %q", n)
		}
		if LocalImport(string(help)) {
			args = append(args, "--local")
		}
	}
	arch := ctx.State.Info[n.String()].Arch
	remaining := map[*artifacts.Artifact]bool{}
	for _, a := range load {
		remaining[a] = true
	}
	again := map[*artifacts.Artifact]bool{}
	for {
		// cut is the archive whose import got less than was sent to it
		var cut *artifacts.Artifact
		var sent int64
		err := ctx.Source.Walk(ctx,
			func(a *artifacts.Artifact) bool { return remaining[a] },
			func(a *artifacts.Artifact, r io.Reader) error {
				ctx.Logger.V(1).Infof("%s: %s: importing %s (%d MiB)", Phase, n, a.Path, a.Size>>20)
				in := &countingReader{r: r}
				cmd := n.CommandContext(ctx, "ctr", append(append(args, ImportPlatforms(a, arch)...), "-")...).SetStdin(in)
				if err := cmd.Run(); err != nil {
					if ctx.Err() != nil {
						return errors.Wrapf(err, "cancelled while importing %s on node %q", a.Path, n)
					}
					if in.err == io.ErrUnexpectedEOF && !again[a] {
						// the stream from the source ended early
						cut, sent = a, in.n
						return err
					}
					if in.err != nil {
						return errors.Wrapf(in.err, "failed to read %s from %s while importing it on node %q", a.Path, ctx.Source.Name(), n)
					}
					output := ""
					if runErr := exec.RunErrorForError(err); runErr != nil {
						output = string(runErr.Output)
					}
					if strings.Contains(output, "no space left on device") {
						return errors.Wrapf(err, "node %q ran out of disk space importing %s: free disk space where its /var/lib/containerd is (on the host, for kind's nodes: e.g. `%s system prune`) and run the same command again", n, a.Path, ctx.Options.Provider())
					}
					if in.eof && CutShort(output) && !again[a] {
						cut, sent = a, in.n
						return err
					}
					return errors.Wrapf(err, "failed to import %s on node %q: is the archive corrupt?", a.Path, n)
				}
				for _, img := range a.Images {
					ref, target := imageref.Normalize(img.Ref), imageref.Normalize(img.Target)
					if ref == target {
						continue
					}
					if err := n.CommandContext(ctx, "ctr", "--namespace=k8s.io", "images", "tag", "--force", ref, target).Run(); err != nil {
						return errors.Wrapf(err, "failed to tag %s as %s on node %q", ref, target, n)
					}
				}
				delete(remaining, a)
				return nil
			},
		)
		if err == nil || cut == nil {
			return err
		}
		// The stream lost its end: the node's ctr read less than was sent
		// into the provider's exec, or the stream from the source ended
		// early (seen once in CI on Docker 20.10, with archives streamed
		// from a node image). One more import of the same archive,
		// streamed anew, tells that from an archive that is short itself.
		again[cut] = true
		ctx.Logger.Warnf("%s: %s: the import of %s was cut short after %d bytes: importing it again", Phase, n, cut.Path, sent)
	}
}

// countingReader counts what is read through it and keeps the error of
// the reader under it, so that a failed import tells a source that failed
// from an import that did.
type countingReader struct {
	r   io.Reader
	n   int64
	eof bool
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	switch {
	case err == io.EOF:
		c.eof = true
	case err != nil:
		c.err = err
	}
	return n, err
}

// cutShort matches ctr's errors for an archive that ends too early:
// inside an entry, or between two, before the entries that describe the
// image (containerd's export writes index.json, manifest.json and
// oci-layout after the blobs).
var cutShort = regexp.MustCompile(`short read|unexpected EOF|unrecognized image format`)

// CutShort reports whether ctr's output says the archive it read ended
// too early (e.g. `ctr: failed to ingest "index.json": short read:
// expected 382 bytes but got 0: unexpected EOF`, or, cut before
// index.json, `ctr: unrecognized image format`, seen in CI on Docker 20.10
// importing an image streamed from a node image).
func CutShort(output string) bool {
	return cutShort.MatchString(output)
}

// ImportPlatforms are the platform flags of ctr images import for the
// archive a on a node of architecture arch: every platform, as kind's own
// `kind load` imports, unless the archive holds only some platforms of a
// multi-platform image (written for one platform: docker image save
// --platform, Docker 29's containerd image store, podman save), which ctr
// cannot import for all platforms; then the node's platform, which
// preflight checked is among those the archive holds.
func ImportPlatforms(a *artifacts.Artifact, arch string) []string {
	if a.Partial && arch != "" {
		return []string{"--platform", "linux/" + arch}
	}
	return []string{"--all-platforms"}
}

// localFlag is ctr's --local in `ctr images import --help`.
var localFlag = regexp.MustCompile(`(?m)^\s*--local\s`)

// LocalImport reports whether a node's ctr, from `ctr images import
// --help`, can import without containerd's transfer service (--local,
// containerd 2), which is faster on kind's nodes (the user guide's Speed
// section has the figures). kind's own `kind load` uses the transfer
// service.
func LocalImport(help string) bool {
	return localFlag.MatchString(help)
}

// ParseSnapshotter returns the snapshotter of containerd's CRI plugin from
// `containerd config dump` (config versions 2, 3 and 4). It mirrors kind's
// unexported parseSnapshotter in sigs.k8s.io/kind/pkg/cluster/nodeutils,
// which only its LoadImageArchive uses.
func ParseSnapshotter(config []byte) (string, error) {
	var cfg struct {
		Version int                               `toml:"version"`
		Plugins map[string]map[string]interface{} `toml:"plugins"`
	}
	if _, err := toml.Decode(string(config), &cfg); err != nil {
		return "", errors.Wrap(err, "failed to parse containerd configuration")
	}
	var s interface{}
	switch cfg.Version {
	case 2:
		if c, ok := cfg.Plugins["io.containerd.grpc.v1.cri"]["containerd"].(map[string]interface{}); ok {
			s = c["snapshotter"]
		}
	case 3, 4:
		s = cfg.Plugins["io.containerd.cri.v1.images"]["snapshotter"]
	default:
		return "", errors.Errorf("unsupported containerd config version %d", cfg.Version)
	}
	snapshotter, ok := s.(string)
	if !ok || snapshotter == "" {
		return "", errors.Errorf("no snapshotter in containerd config version %d", cfg.Version)
	}
	return snapshotter, nil
}
