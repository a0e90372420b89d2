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

package nodeimage

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/exec"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeprovider"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts/elfarch"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/imageref"
)

// HelperLabel marks the helper containers Open starts; its value is the
// cluster's name.
const HelperLabel = "io.x-k8s.kind-upgrade.source"

// binDir is where kind's builder installs kubeadm, kubelet and kubectl.
const binDir = "/usr/bin/"

// readyTimeout bounds the wait for the helper's containerd.
const readyTimeout = 60 * time.Second

// Options say how Open reaches the image.
type Options struct {
	// Provider is the node provider's command: docker, podman or nerdctl
	// ("docker" when empty).
	Provider string
	// Cmder runs the provider's commands (exec.DefaultCmder when nil).
	Cmder exec.Cmder
	// Logger receives progress (a pull) and notes.
	Logger log.Logger
	// Cluster names the helper container and labels it.
	Cluster string
	// Arch is the GOARCH of the host the nodes run on (runtime.GOARCH
	// when empty).
	Arch string
	// Name is how messages name the image's choice ("--image" when
	// empty).
	Name string
}

// Image is a kind node image opened as the upgrade's source. Its methods
// are safe for concurrent use.
type Image struct {
	// ref is the image as the user named it, name as the provider's
	// commands get it (nodeprovider.ImageName)
	ref     string
	name    string
	opts    Options
	helper  string
	version string
	arch    string
	// sandbox is the sandbox (pause) image of the image's containerd
	// configuration, which kind's builder imports instead of kubeadm's.
	sandbox  string
	binaries map[string]*artifacts.Artifact
	archives []*artifacts.Artifact
	// paths maps each artifact to the file or image reference it streams.
	paths map[*artifacts.Artifact]string
	// exported counts the exports of each image, under mu.
	mu       sync.Mutex
	exported map[*artifacts.Artifact]int

	closeOnce sync.Once
	closeErr  error
}

// Open finds the node image ref (pulling it through the provider when it is
// not on this host, as kind create cluster does), checks that it is a kind
// node image for this host's architecture, starts its helper container and
// indexes the binaries and images the image holds. Close removes the
// helper; Open removes it itself when it fails.
func Open(ctx context.Context, ref string, opts Options) (*Image, error) {
	if opts.Provider == "" {
		opts.Provider = "docker"
	}
	if opts.Cmder == nil {
		opts.Cmder = exec.DefaultCmder
	}
	if opts.Logger == nil {
		opts.Logger = log.NoopLogger{}
	}
	if opts.Arch == "" {
		opts.Arch = runtime.GOARCH
	}
	if ref == "" {
		return nil, errors.Errorf("%s is empty: give a kind node image, e.g. kindest/node:v1.37.0", opts.name())
	}
	img := &Image{ref: ref, name: nodeprovider.ImageName(opts.Provider, ref), opts: opts, helper: helperName(opts.Cluster), paths: map[*artifacts.Artifact]string{}, exported: map[*artifacts.Artifact]int{}}
	if err := img.ensure(ctx); err != nil {
		return nil, err
	}
	if err := img.start(ctx); err != nil {
		_ = img.Close()
		return nil, err
	}
	if err := img.index(ctx); err != nil {
		_ = img.Close()
		return nil, err
	}
	return img, nil
}

// helperName is the name of a cluster's helper container.
func helperName(cluster string) string {
	return clusterOr(cluster) + "-upgrade-source"
}

// command runs the provider's command under ctx.
func (img *Image) command(ctx context.Context, args ...string) exec.Cmd {
	return img.opts.Cmder.CommandContext(ctx, img.opts.Provider, args...)
}

// output runs the provider's command and returns its stdout; its error
// includes what the command printed.
func (img *Image) output(ctx context.Context, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	err := img.command(ctx, args...).SetStdout(&stdout).SetStderr(&stderr).Run()
	if err != nil {
		if printed := strings.TrimSpace(stderr.String() + stdout.String()); printed != "" {
			return stdout.String(), errors.Wrapf(err, "%s", printed)
		}
		return stdout.String(), err
	}
	return stdout.String(), nil
}

// ensure makes the image present on the host, pulling it when it is not
// (kind create cluster's behaviour), and checks its platform.
func (img *Image) ensure(ctx context.Context) error {
	inspect := []string{"image", "inspect", "--format", "{{.Os}}/{{.Architecture}}", img.name}
	platform, err := img.output(ctx, inspect...)
	if err != nil {
		if ctx.Err() != nil {
			return errors.Wrapf(ctx.Err(), "cancelled while looking for %s", img.label())
		}
		start := time.Now()
		img.opts.Logger.V(0).Infof("Pulling %s: it is not on this host ...", img.label())
		stop := img.still("pulling "+img.label(), start)
		_, perr := img.output(ctx, "pull", img.name)
		stop()
		if perr != nil {
			if ctx.Err() != nil {
				return errors.Wrapf(ctx.Err(), "cancelled while pulling %s", img.label())
			}
			return errors.Errorf("%s is not on this host and pulling it failed: %v\nmake it available here (`%s pull %s` where its registry is reachable, or `%s load` of a saved copy, or `kind build node-image`), then run this command again", img.label(), perr, img.opts.Provider, img.name, img.opts.Provider)
		}
		img.opts.Logger.V(0).Infof("Pulled %s in %s", img.label(), time.Since(start).Round(100*time.Millisecond))
		if platform, err = img.output(ctx, inspect...); err != nil {
			return errors.Wrapf(err, "failed to inspect %s after pulling it", img.label())
		}
	}
	os, arch, _ := strings.Cut(strings.TrimSpace(platform), "/")
	if os != "linux" || arch != img.opts.Arch {
		return errors.Errorf("%s is built for %s but this host's kind nodes run linux/%s: %s", img.label(), strings.TrimSpace(platform), img.opts.Arch, img.ForArch(img.opts.Arch))
	}
	img.arch = arch
	return nil
}

// stillEvery is how often a long wait says it still waits.
const stillEvery = 30 * time.Second

// still logs, every stillEvery until the returned function is called,
// that what is still goes on and since when.
func (img *Image) still(what string, start time.Time) func() {
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(stillEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				img.opts.Logger.V(0).Infof("Still %s (%s)", what, time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() { close(done) }
}

// start removes a helper an earlier, killed run left for this cluster,
// runs a new one and waits until its containerd answers.
func (img *Image) start(ctx context.Context) error {
	label := HelperLabel + "=" + clusterOr(img.opts.Cluster)
	left, err := img.output(ctx, "ps", "--all", "--quiet", "--filter", "label="+label)
	if err != nil {
		return errors.Wrapf(err, "failed to list the containers labelled %s", label)
	}
	if ids := strings.Fields(left); len(ids) > 0 {
		img.opts.Logger.V(1).Infof("removing the helper container(s) %s an earlier run left", strings.Join(ids, ", "))
		if _, err := img.output(ctx, append([]string{"rm", "--force"}, ids...)...); err != nil {
			return errors.Wrapf(err, "failed to remove the helper container(s) an earlier run left (%s)", strings.Join(ids, ", "))
		}
	}
	// no network, no ports, no privileges: the helper only reads the
	// image's files and its containerd's content store
	_, err = img.output(ctx, "run", "--detach", "--name", img.helper, "--label", label,
		"--network", "none", "--entrypoint", "containerd", img.name)
	if err != nil {
		if ctx.Err() != nil {
			return errors.Wrapf(ctx.Err(), "cancelled while starting a helper container of %s", img.label())
		}
		if notFound(err) {
			return errors.Errorf("%s is not a kind node image: it has no containerd (%v); give an image `kind build node-image` made, or a kindest/node image", img.label(), err)
		}
		return errors.Wrapf(err, "failed to start a helper container of %s", img.label())
	}
	ready := nodeutils.ContainerdReadyScript.Argv(strconv.Itoa(int(readyTimeout.Seconds())), "/run/containerd/containerd.sock")
	if _, err := img.output(ctx, append([]string{"exec", img.helper}, ready...)...); err != nil {
		if ctx.Err() != nil {
			return errors.Wrapf(ctx.Err(), "cancelled while waiting for the helper container of %s", img.label())
		}
		logs, _ := img.output(context.Background(), "logs", "--tail", "20", img.helper)
		return errors.Wrapf(err, "the helper container %s of %s did not start its containerd; its last log lines:\n%s", img.helper, img.label(), strings.TrimSpace(logs))
	}
	return nil
}

// clusterOr is the cluster's name, "kind" when empty.
func clusterOr(cluster string) string {
	if cluster == "" {
		return "kind"
	}
	return cluster
}

// notFound reports whether a provider's error says an executable or file
// is missing.
func notFound(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "executable file not found") || strings.Contains(msg, "no such file or directory")
}

// noSuchContainer reports whether a provider's error says the container
// does not exist (docker: "No such container", podman: "no container with
// name or ID").
func noSuchContainer(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "no such container") || strings.Contains(msg, "no container with name")
}

// workDir is where, in the helper, the description and the exports are
// written for the provider's copy command to read.
const workDir = "/tmp/kind-upgrade"

// index reads the image's version, binaries, images and sandbox image:
// NodeImageScript writes them to files in the helper, which are read with
// the provider's copy command (a `docker exec`'s output can lose its last
// bytes: seen with Docker 20.10, 3 of 12 exports of an 80 MB image came
// out short).
func (img *Image) index(ctx context.Context) error {
	files := []string{"/kind/version"}
	for _, name := range artifacts.Binaries {
		files = append(files, binDir+name)
	}
	script := nodeutils.NodeImageScript.Argv(append([]string{workDir + "/index"}, files...)...)
	if _, err := img.output(ctx, append([]string{"exec", img.helper}, script...)...); err != nil {
		if notFound(err) {
			return errors.Errorf("%s is not a kind node image: %v; give an image `kind build node-image` made, or a kindest/node image", img.label(), err)
		}
		return errors.Wrapf(err, "failed to read %s", img.label())
	}
	read := map[string]string{}
	err := img.copyOut(ctx, workDir+"/index", func(hdr *tar.Header, r io.Reader) error {
		b, err := io.ReadAll(r)
		read[path.Base(hdr.Name)] = string(b)
		return err
	})
	if err != nil {
		return errors.Wrapf(err, "failed to read %s", img.label())
	}
	if err := img.parseFiles(read["describe"]); err != nil {
		return err
	}
	for _, im := range ParseImageList(read["images"]) {
		a := &artifacts.Artifact{
			Name: im.Ref,
			Path: img.ref + ":" + im.Ref,
			Size: im.Size,
			Kind: artifacts.KindImageArchive,
			Mode: 0o644,
			Arch: img.arch,
			// exported for the node's platform: the others' content, if
			// the index lists any, is not in the image (kind's builder
			// fetches one platform)
			Arches:  []string{img.arch},
			Partial: true,
			Images:  []artifacts.Image{{Ref: im.Ref, Target: imageref.StripArchSuffix(im.Ref)}},
		}
		img.archives = append(img.archives, a)
		img.paths[a] = im.Ref
	}
	if img.sandbox, err = SandboxImage(read["config"]); err != nil {
		return errors.Wrapf(err, "failed to read the containerd configuration of %s", img.label())
	}
	return nil
}

// copyOut streams the file or folder p of the helper with the provider's
// copy command (a tar of it) and calls fn for each regular file in it,
// with a reader valid until fn returns.
func (img *Image) copyOut(ctx context.Context, p string, fn func(hdr *tar.Header, r io.Reader) error) error {
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		err := img.command(ctx, "cp", img.helper+":"+p, "-").SetStdout(pw).SetStderr(&stderr).Run()
		if err != nil {
			if printed := strings.TrimSpace(stderr.String()); printed != "" {
				err = errors.Wrapf(err, "%s", printed)
			}
		}
		_ = pw.CloseWithError(err)
		done <- err
	}()
	fnErr := func() error {
		tr := tar.NewReader(pr)
		for {
			hdr, err := tr.Next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if hdr.Typeflag != tar.TypeReg {
				continue
			}
			if err := fn(hdr, tr); err != nil {
				return err
			}
		}
	}()
	// the rest, so that the copy ends; a reader fn left early unblocks it
	_ = pr.CloseWithError(errors.New("the reader stopped"))
	copyErr := <-done
	if fnErr != nil {
		return fnErr
	}
	return copyErr
}

// parseFiles reads NodeImageScript's output for the binaries.
func (img *Image) parseFiles(out string) error {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 1+len(artifacts.Binaries) {
		return errors.Errorf("failed to read %s: unexpected description %q", img.label(), out)
	}
	version := strings.TrimSpace(lines[0])
	if !strings.HasPrefix(version, "v") {
		return errors.Errorf("%s is not a kind node image: its /kind/version is %q, not a Kubernetes version", img.label(), version)
	}
	img.version = version
	img.binaries = map[string]*artifacts.Artifact{}
	for i, name := range artifacts.Binaries {
		fields := strings.Fields(lines[1+i])
		if len(fields) != 3 {
			return errors.Errorf("failed to read %s%s in %s: unexpected description %q", binDir, name, img.label(), lines[1+i])
		}
		size, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return errors.Wrapf(err, "failed to read the size of %s%s in %s", binDir, name, img.label())
		}
		mode, err := strconv.ParseUint(fields[1], 8, 32)
		if err != nil {
			return errors.Wrapf(err, "failed to read the mode of %s%s in %s", binDir, name, img.label())
		}
		header, err := base64.StdEncoding.DecodeString(fields[2])
		if err != nil {
			return errors.Wrapf(err, "failed to read %s%s in %s", binDir, name, img.label())
		}
		arch, err := elfarch.Read(bytes.NewReader(header))
		if err != nil {
			return errors.Wrapf(err, "failed to read %s%s in %s", binDir, name, img.label())
		}
		a := &artifacts.Artifact{
			Name: name,
			Path: img.ref + ":" + binDir + name,
			Size: size,
			Kind: artifacts.KindBinary,
			Mode: os.FileMode(mode).Perm(),
			Arch: arch,
		}
		img.binaries[name] = a
		img.paths[a] = binDir + name
	}
	return nil
}

// ListedImage is one line of `ctr images list`.
type ListedImage struct {
	Ref  string
	Size int64
}

// ParseImageList reads `ctr images list`: REF TYPE DIGEST SIZE (a number
// and a unit) PLATFORMS LABELS, skipping the header and the images named
// only by digest (kind's builder imports with --digests).
func ParseImageList(out string) []ListedImage {
	var list []ListedImage
	scanner := bufio.NewScanner(strings.NewReader(out))
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) < 5 || fields[0] == "REF" {
			continue
		}
		ref := fields[0]
		if strings.HasPrefix(ref, "sha256:") || strings.Contains(ref, "@sha256:") {
			continue
		}
		list = append(list, ListedImage{Ref: ref, Size: parseSize(fields[3], fields[4])})
	}
	return list
}

// parseSize reads ctr's human-readable size ("27.4", "MiB"); 0 when it
// cannot.
func parseSize(number, unit string) int64 {
	f, err := strconv.ParseFloat(number, 64)
	if err != nil {
		return 0
	}
	scale := map[string]float64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[unit]
	return int64(f * scale)
}

// SandboxImage returns the sandbox (pause) image of a containerd
// configuration from `containerd config dump` (versions 2 and 3/4), ""
// when it sets none.
func SandboxImage(config string) (string, error) {
	var cfg struct {
		Version int                               `toml:"version"`
		Plugins map[string]map[string]interface{} `toml:"plugins"`
	}
	if _, err := toml.Decode(config, &cfg); err != nil {
		return "", errors.Wrap(err, "failed to parse containerd configuration")
	}
	switch cfg.Version {
	case 2:
		s, _ := cfg.Plugins["io.containerd.grpc.v1.cri"]["sandbox_image"].(string)
		return s, nil
	case 3, 4:
		pinned, _ := cfg.Plugins["io.containerd.cri.v1.images"]["pinned_images"].(map[string]interface{})
		s, _ := pinned["sandbox"].(string)
		return s, nil
	}
	return "", errors.Errorf("unsupported containerd config version %d", cfg.Version)
}

// Name is the image as messages name it: "--image <ref>".
func (img *Image) Name() string {
	return img.label()
}

// Version is the image's /kind/version.
func (img *Image) Version() string {
	return img.version
}

// Binary returns kubeadm, kubelet or kubectl.
func (img *Image) Binary(name string) *artifacts.Artifact {
	return img.binaries[name]
}

// ArchiveFor returns the image's archive of target, or nil.
func (img *Image) ArchiveFor(target string) *artifacts.Artifact {
	return artifacts.FindArchive(img.archives, target)
}

// Lacks explains a missing pause image: kind's builder imports
// containerd's sandbox image in place of kubeadm's.
func (img *Image) Lacks(image string) string {
	if imageref.Component(image) == "pause" && img.sandbox != "" && imageref.Normalize(img.sandbox) != imageref.Normalize(image) {
		return fmt.Sprintf("kind's node-image builder keeps containerd's sandbox image, %s, in place of kubeadm's pause image", img.sandbox)
	}
	return ""
}

// ForArch names the image's variant for arch.
func (img *Image) ForArch(arch string) string {
	return fmt.Sprintf("use its linux/%s variant (`%s pull --platform linux/%s %s`)", arch, img.opts.Provider, arch, img.name)
}

// Describe names the image, its version and what it holds.
func (img *Image) Describe() (string, []string) {
	headline := fmt.Sprintf("Using kind node image %s: Kubernetes %s, linux/%s, %d image(s) in its containerd store", img.ref, img.version, img.arch, len(img.archives))
	details := []string{fmt.Sprintf("kubeadm, kubelet and kubectl from %s of %s (read through the helper container %s)", binDir, img.ref, img.helper)}
	for _, a := range img.archives {
		details = append(details, fmt.Sprintf("image %s (%d MiB)", a.Name, a.Size>>20))
	}
	if img.sandbox != "" {
		details = append(details, "containerd's sandbox image: "+img.sandbox)
	}
	return headline, details
}

// Walk streams the wanted artifacts, binaries first, one at a time: a
// binary with the provider's copy command, straight from the image's
// layer; an image exported for the host's platform by the helper's
// containerd to a file of the helper's container layer (the host's disk,
// one image at a time per walk), copied out the same way, then removed.
func (img *Image) Walk(ctx context.Context, want func(*artifacts.Artifact) bool, fn func(a *artifacts.Artifact, r io.Reader) error) error {
	var all []*artifacts.Artifact
	for _, name := range artifacts.Binaries {
		all = append(all, img.binaries[name])
	}
	all = append(all, img.archives...)
	for _, a := range all {
		if want != nil && !want(a) {
			continue
		}
		if ctx.Err() != nil {
			return errors.Wrapf(ctx.Err(), "cancelled before reading %s", a.Path)
		}
		var err error
		if a.Kind == artifacts.KindImageArchive {
			err = img.walkImage(ctx, a, fn)
		} else {
			err = img.walkFile(ctx, a, img.paths[a], fn)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// walkFile hands fn the content of the helper's file p, which is a's.
func (img *Image) walkFile(ctx context.Context, a *artifacts.Artifact, p string, fn func(a *artifacts.Artifact, r io.Reader) error) error {
	handed := false
	var fnErr error
	err := img.copyOut(ctx, p, func(hdr *tar.Header, r io.Reader) error {
		if handed {
			return nil
		}
		handed = true
		if a.Kind == artifacts.KindBinary && hdr.Size != a.Size {
			return errors.Errorf("%s changed after it was checked: run the command again", a.Path)
		}
		fnErr = fn(a, r)
		return fnErr
	})
	switch {
	case fnErr != nil:
		return fnErr
	case err != nil:
		return errors.Wrapf(err, "failed to read %s", a.Path)
	case !handed:
		return errors.Errorf("failed to read %s: the copy held no file", a.Path)
	}
	return nil
}

// exportFile names the n-th export of ref in the helper.
func exportFile(ref string, n int) string {
	name := strings.NewReplacer("/", "_", ":", "_", "@", "_").Replace(ref)
	return fmt.Sprintf("%s/%s-%d.tar", workDir, name, n)
}

// walkImage exports a's image in the helper and hands fn the archive.
// Walks for several nodes may export the same image at once: each export
// has its file.
func (img *Image) walkImage(ctx context.Context, a *artifacts.Artifact, fn func(a *artifacts.Artifact, r io.Reader) error) error {
	img.mu.Lock()
	img.exported[a]++
	file := exportFile(img.paths[a], img.exported[a])
	img.mu.Unlock()
	if _, err := img.output(ctx, "exec", img.helper, "ctr", "--namespace=k8s.io", "images", "export", "--platform", "linux/"+img.arch, file, img.paths[a]); err != nil {
		if ctx.Err() != nil {
			return errors.Wrapf(ctx.Err(), "cancelled while exporting %s", a.Path)
		}
		return errors.Wrapf(err, "failed to export %s", a.Path)
	}
	err := img.walkFile(ctx, a, file, fn)
	if ctx.Err() == nil {
		// a cancelled run leaves it to Close, which removes the helper
		if _, rmErr := img.output(ctx, "exec", img.helper, "rm", "-f", file); rmErr != nil && err == nil {
			err = errors.Wrapf(rmErr, "failed to remove %s in the helper container %s", file, img.helper)
		}
	}
	return err
}

// Close removes the helper container, with a context of its own: it also
// runs after Ctrl-C cancelled the upgrade's.
func (img *Image) Close() error {
	img.closeOnce.Do(func() {
		// also after a failed start: a run that could not start its
		// process leaves a created container
		if _, err := img.output(context.Background(), "rm", "--force", img.helper); err != nil && !noSuchContainer(err) {
			img.closeErr = errors.Wrapf(err, "failed to remove the helper container %s: remove it with `%s rm -f %s`", img.helper, img.opts.Provider, img.helper)
		}
	})
	return img.closeErr
}

// name is how messages name the image's choice.
func (o Options) name() string {
	if o.Name == "" {
		return "--image"
	}
	return o.Name
}

// label is the image as messages name it: "--image kindest/node:v1.37.0".
func (img *Image) label() string {
	return img.opts.name() + " " + img.ref
}
