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

package fakenode

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/kind/pkg/exec"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeprovider"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
)

// KindSandboxImage is the sandbox image of kind's containerd configuration,
// which kind's node-image builder imports in place of kubeadm's pause.
const KindSandboxImage = "registry.k8s.io/pause:3.10"

// NodeImage is a simulated kind node image: its files and the images in
// its containerd store, as kind's builder leaves them.
type NodeImage struct {
	// Arch is its platform's architecture.
	Arch string
	// Files by path: /kind/version, /usr/bin/kubeadm...
	Files map[string][]byte
	// Images in its containerd's k8s.io namespace.
	Images []string
	// Sandbox is its containerd configuration's sandbox image.
	Sandbox string
	// NoContainerd makes it an image without containerd: not a node image.
	NoContainerd bool
}

// NewNodeImage returns the node image kind's builder makes of release
// version for arch: its binaries and /kind/version, and kubeadm's images
// with the pause image replaced by kind's sandbox image, plus kind's CNI
// and storage images.
func NewNodeImage(version, arch string) *NodeImage {
	// kind's builder writes /kind/version without a newline
	img := &NodeImage{Arch: arch, Files: map[string][]byte{"/kind/version": []byte(version)}, Sandbox: KindSandboxImage}
	for _, name := range []string{"kubeadm", "kubelet", "kubectl"} {
		img.Files["/usr/bin/"+name] = Binary(name, version, arch)
	}
	for _, image := range KubeadmImages(version, ImageConfig{}) {
		if !strings.Contains(image, "/pause:") {
			img.Images = append(img.Images, image)
		}
	}
	img.Images = append(img.Images, KindSandboxImage,
		"docker.io/kindest/kindnetd:v20250512-df8de77b",
		"docker.io/kindest/local-path-provisioner:v20250214-acbabc1a",
		"docker.io/kindest/local-path-helper:v20241212-8ac705d0")
	return img
}

// container is a helper container of a node image: the image's files and
// those written in it since.
type container struct {
	image   *NodeImage
	labels  []string
	running bool
	written map[string][]byte
}

// file returns the container's file p.
func (c *container) file(p string) ([]byte, bool) {
	if b, ok := c.written[p]; ok {
		return b, true
	}
	b, ok := c.image.Files[p]
	return b, ok
}

// Provider plays the node provider's CLI on the host (docker image
// inspect, pull, run, exec, rm...) for the node-image source, with the
// messages Tool prints. Its commands are recorded in the cluster's Calls
// (Node "host") and fail or cancel like the nodes' (FailOn, CancelOn).
type Provider struct {
	cluster *Cluster
	// Tool is the provider's command it plays: docker (when empty), podman
	// or nerdctl, each with its own messages (Docker 20.10's and podman
	// 4.3.1's as they printed them on this project's machines, nerdctl's
	// as its source writes them). A command of another tool fails as a
	// missing executable would.
	Tool string
	// Images are on the host; Registry can be pulled.
	Images, Registry map[string]*NodeImage
	// CutCopies makes the next CutCopies `docker cp CONTAINER:PATH -` of
	// an image exported to /tmp/kind-upgrade/*.tar write only the first half
	// of the tar and exit 0, as a copy whose stream lost its end.
	CutCopies int
	// Containers by name.
	containers map[string]*container
}

// Provider returns the cluster's host provider CLI (made on first use).
func (c *Cluster) Provider() *Provider {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.provider == nil {
		c.provider = &Provider{cluster: c, Images: map[string]*NodeImage{}, Registry: map[string]*NodeImage{}, containers: map[string]*container{}}
	}
	return c.provider
}

// Containers lists the names of the containers that exist, sorted.
func (p *Provider) Containers() []string {
	p.cluster.mu.Lock()
	defer p.cluster.mu.Unlock()
	var names []string
	for name := range p.containers {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Command implements exec.Cmder.
func (p *Provider) Command(name string, args ...string) exec.Cmd {
	return p.CommandContext(context.Background(), name, args...)
}

// CommandContext implements exec.Cmder.
func (p *Provider) CommandContext(ctx context.Context, name string, args ...string) exec.Cmd {
	return &providerCmd{p: p, ctx: ctx, argv: append([]string{name}, args...)}
}

type providerCmd struct {
	p      *Provider
	ctx    context.Context
	argv   []string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

func (c *providerCmd) SetEnv(...string) exec.Cmd      { return c }
func (c *providerCmd) SetStdin(r io.Reader) exec.Cmd  { c.stdin = r; return c }
func (c *providerCmd) SetStdout(w io.Writer) exec.Cmd { c.stdout = w; return c }
func (c *providerCmd) SetStderr(w io.Writer) exec.Cmd { c.stderr = w; return c }

func (c *providerCmd) Run() error {
	cl := c.p.cluster
	cl.mu.Lock()
	call, fail := cl.startCall(Call{Node: "host", About: "host", Argv: c.argv})
	var out string
	code := 0
	switch {
	case fail:
		out, code = "injected failure", 125
	case c.ctx.Err() != nil:
		out, code = c.ctx.Err().Error(), 1
	case c.argv[0] != c.p.tool():
		out, code = "exec: \""+c.argv[0]+"\": executable file not found in $PATH (the provider is "+c.p.tool()+")", 127
	default:
		out, code = c.p.run(c.argv[1:])
	}
	call.Err = code != 0
	cl.Calls = append(cl.Calls, call)
	cl.mu.Unlock()
	if code != 0 {
		if c.stderr != nil {
			_, _ = io.WriteString(c.stderr, out)
		}
		return &exec.RunError{Command: c.argv, Output: []byte(out), Inner: &exitError{code: code}}
	}
	if c.stdout != nil {
		_, _ = io.WriteString(c.stdout, out)
	}
	return nil
}

// run simulates one provider command; the cluster is locked.
func (p *Provider) run(args []string) (string, int) {
	if len(args) == 0 {
		return "usage", 1
	}
	ref := args[len(args)-1]
	switch {
	case len(args) == 5 && args[0] == "image" && args[1] == "inspect" && args[2] == "--format":
		img := p.image(p.Images, ref)
		if img == nil {
			return p.say(noSuchImage, ref), p.code(noSuchImage)
		}
		return "linux/" + img.Arch + "\n", 0
	case len(args) == 2 && args[0] == "pull":
		img := p.image(p.Registry, ref)
		if img == nil {
			return p.say(pullFailed, ref), p.code(pullFailed)
		}
		p.Images[ref] = img
		return "Status: Downloaded newer image for " + ref + "\n", 0
	case len(args) == 5 && args[0] == "ps" && args[1] == "--all" && args[2] == "--quiet" && args[3] == "--filter":
		label := strings.TrimPrefix(args[4], "label=")
		var ids []string
		for name, c := range p.containers {
			if slices.Contains(c.labels, label) {
				ids = append(ids, name)
			}
		}
		sort.Strings(ids)
		return strings.Join(ids, "\n") + "\n", 0
	case len(args) >= 3 && args[0] == "rm" && args[1] == "--force":
		for _, name := range args[2:] {
			if p.containers[name] == nil {
				// --force ignores a missing one (exit 0; nerdctl logs
				// an error-level line)
				continue
			}
			delete(p.containers, name)
		}
		return strings.Join(args[2:], "\n") + "\n", 0
	case len(args) == 11 && args[0] == "run" && args[1] == "--detach" && args[2] == "--name" && args[4] == "--label" &&
		args[6] == "--network" && args[7] == "none" && args[8] == "--entrypoint" && args[9] == "containerd":
		name := args[3]
		if p.containers[name] != nil {
			return p.say(nameInUse, name), p.code(nameInUse)
		}
		img := p.image(p.Images, ref)
		if img == nil {
			return p.say(pullFailed, ref), p.code(pullFailed)
		}
		p.containers[name] = &container{image: img, labels: []string{args[5]}, running: !img.NoContainerd, written: map[string][]byte{}}
		if img.NoContainerd {
			return p.say(noEntrypoint, "containerd"), p.code(noEntrypoint)
		}
		return name + "\n", 0
	case len(args) == 3 && args[0] == "cp" && args[2] == "-":
		// a tar of the file, or of the folder's files, as docker cp writes
		name, src, _ := strings.Cut(args[1], ":")
		c := p.containers[name]
		if c == nil {
			return p.say(noSuchContainer, name), p.code(noSuchContainer)
		}
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		add := func(p string, b []byte) {
			_ = tw.WriteHeader(&tar.Header{Name: p, Mode: 0o755, Size: int64(len(b)), Typeflag: tar.TypeReg})
			_, _ = tw.Write(b)
		}
		if b, ok := c.file(src); ok {
			add(path.Base(src), b)
		} else {
			var names []string
			for f := range c.written {
				if strings.HasPrefix(f, src+"/") {
					names = append(names, f)
				}
			}
			if len(names) == 0 {
				return p.say(noSuchFile, src, name), p.code(noSuchFile)
			}
			sort.Strings(names)
			for _, f := range names {
				add(path.Base(src)+"/"+strings.TrimPrefix(f, src+"/"), c.written[f])
			}
		}
		_ = tw.Close()
		if p.CutCopies > 0 && strings.HasPrefix(src, "/tmp/kind-upgrade/") && strings.HasSuffix(src, ".tar") {
			p.CutCopies--
			return buf.String()[:buf.Len()/2], 0
		}
		return buf.String(), 0
	case len(args) == 4 && args[0] == "logs":
		return "level=info msg=\"containerd successfully booted\"\n", 0
	case len(args) >= 3 && args[0] == "exec":
		c := p.containers[args[1]]
		if c == nil {
			return p.say(noSuchContainer, args[1]), p.code(noSuchContainer)
		}
		if !c.running {
			return p.say(notRunning, args[1]), p.code(notRunning)
		}
		return c.exec(args[2:])
	}
	return "fake provider: unknown command " + strings.Join(args, " ") + "\n", 1
}

// exec simulates a command in a helper container.
func (c *container) exec(argv []string) (string, int) {
	img := c.image
	if len(argv) >= 4 && argv[0] == "sh" && argv[1] == "-c" {
		switch argv[3] {
		case nodeutils.ContainerdReadyScript.Name:
			return "", 0
		case nodeutils.NodeImageScript.Name:
			dir := argv[4]
			version, ok := c.file(argv[5])
			if !ok {
				return "cat: " + argv[5] + ": No such file or directory\n", 1
			}
			out := strings.TrimRight(string(version), "\n") + "\n"
			for _, f := range argv[6:] {
				content, ok := c.file(f)
				if !ok {
					return "stat: cannot statx '" + f + "': No such file or directory\n", 1
				}
				header := content[:min(64, len(content))]
				out += fmt.Sprintf("%d 755 %s\n", len(content), base64.StdEncoding.EncodeToString(header))
			}
			c.written[dir+"/describe"] = []byte(out)
			c.written[dir+"/images"] = []byte(c.imageList())
			c.written[dir+"/config"] = []byte(fmt.Sprintf("version = 3\n\n[plugins]\n  [plugins.'io.containerd.cri.v1.images']\n    snapshotter = 'overlayfs'\n    [plugins.'io.containerd.cri.v1.images'.pinned_images]\n      sandbox = '%s'\n", img.Sandbox))
			return "", 0
		}
	}
	switch {
	case len(argv) == 8 && argv[0] == "ctr" && argv[1] == "--namespace=k8s.io" && argv[2] == "images" && argv[3] == "export" && argv[4] == "--platform":
		file, ref := argv[6], argv[7]
		if !slices.Contains(img.Images, ref) {
			return "ctr: image \"" + ref + "\": not found\n", 1
		}
		arch := strings.TrimPrefix(argv[5], "linux/")
		// kind's builder fetched one platform: the index lists others
		// whose content is absent
		c.written[file] = OnePlatformArchive(arch, []string{otherArch(arch)}, ref)
		return "", 0
	case len(argv) == 3 && argv[0] == "rm" && argv[1] == "-f":
		delete(c.written, argv[2])
		return "", 0
	}
	return "sh: 1: " + argv[0] + ": not found\n", 127
}

// imageList is `ctr images list` of the container's image: each image
// also under its digest, as kind's builder's --digests leaves them.
func (c *container) imageList() string {
	out := "REF TYPE DIGEST SIZE PLATFORMS LABELS\n"
	for _, image := range c.image.Images {
		out += fmt.Sprintf("%s application/vnd.oci.image.index.v1+json sha256:%s 12.5 MiB linux/amd64,linux/arm64 io.cri-containerd.pinned=pinned\n", image, digest([]byte(image)))
		out += fmt.Sprintf("%s@sha256:%s application/vnd.oci.image.index.v1+json sha256:%s 12.5 MiB linux/amd64,linux/arm64 io.cri-containerd.pinned=pinned\n", strings.Split(image, ":")[0], digest([]byte(image)), digest([]byte(image)))
	}
	return out
}

// otherArch is a platform that is not arch.
func otherArch(arch string) string {
	if arch == "arm64" {
		return "amd64"
	}
	return "arm64"
}

// A message a provider's CLI prints.
type message int

const (
	noSuchImage message = iota
	pullFailed
	noSuchContainer
	nameInUse
	noEntrypoint
	noSuchFile
	notRunning
)

// wording is what each tool prints, and its exit code, for each message;
// %s are the image, container, file... the message names.
var wording = map[string]map[message]struct {
	text string
	code int
}{
	"docker": {
		noSuchImage:     {"Error response from daemon: no such image: %[1]s: No such image: %[1]s\n", 1},
		pullFailed:      {"Error response from daemon: Get \"https://registry-1.docker.io/v2/\": dial tcp: lookup registry-1.docker.io: no such host\n", 1},
		noSuchContainer: {"Error response from daemon: No such container: %s\n", 1},
		nameInUse:       {"docker: Error response from daemon: Conflict. The container name \"/%s\" is already in use by container \"456e0b7ae8ff\". You have to remove (or rename) that container to be able to reuse that name.\n", 125},
		noEntrypoint:    {"docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: \"%s\": executable file not found in $PATH: unknown.\n", 127},
		noSuchFile:      {"Error response from daemon: Could not find the file %s in container %s\n", 1},
		notRunning:      {"Error response from daemon: Container %s is not running\n", 1},
	},
	"podman": {
		noSuchImage:     {"Error: inspecting object: %[1]s: image not known\n", 125},
		pullFailed:      {"Trying to pull %[1]s...\nError: initializing source docker://%[1]s: pinging container registry registry.k8s.io: Get \"https://registry.k8s.io/v2/\": dial tcp: lookup registry.k8s.io on 10.255.255.53:53: no such host\n", 125},
		noSuchContainer: {"Error: container \"%s\" does not exist\n", 125},
		nameInUse:       {"Error: creating container storage: the container name \"%s\" is already in use by 84fbcc106122. You have to remove that container to be able to reuse that name: that name is already in use\n", 125},
		noEntrypoint:    {"Error: runc-nosysresource: time=\"2026-12-02T15:38:56Z\" level=error msg=\"runc create failed: unable to start container process: exec: \\\"%s\\\": executable file not found in $PATH\": OCI runtime attempted to invoke a command that was not found\n", 127},
		noSuchFile:      {"Error: \"%s\" could not be found on container %s: no such file or directory\n", 125},
		notRunning:      {"Error: can only create exec sessions on running containers: container state improper\n", 255},
	},
	"nerdctl": NerdctlWording,
}

// image is the image of images named ref, by the name the tool gives
// it: podman's store holds kind's node images as docker.io/...
// (nodeprovider.ImageName), and its commands get that name.
func (p *Provider) image(images map[string]*NodeImage, ref string) *NodeImage {
	if img := images[ref]; img != nil {
		return img
	}
	if p.tool() != "podman" {
		return nil
	}
	for name, img := range images {
		if nodeprovider.ImageName("podman", name) == ref {
			return img
		}
	}
	return nil
}

func (p *Provider) tool() string {
	if p.Tool == "" {
		return "docker"
	}
	return p.Tool
}

// say is the provider's text for m.
func (p *Provider) say(m message, args ...interface{}) string {
	text := wording[p.tool()][m].text
	if !strings.Contains(text, "%") {
		return text
	}
	return fmt.Sprintf(text, args...)
}

// code is the provider's exit code for m.
func (p *Provider) code(m message) int {
	return wording[p.tool()][m].code
}
