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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/constants"
	"sigs.k8s.io/kind/pkg/exec"
	"sigs.k8s.io/yaml"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/imageref"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
)

// cmd is a command against a simulated node.
type cmd struct {
	node   *Node
	ctx    context.Context
	argv   []string
	env    []string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

func (c *cmd) SetEnv(env ...string) exec.Cmd  { c.env = env; return c }
func (c *cmd) SetStdin(r io.Reader) exec.Cmd  { c.stdin = r; return c }
func (c *cmd) SetStdout(w io.Writer) exec.Cmd { c.stdout = w; return c }
func (c *cmd) SetStderr(w io.Writer) exec.Cmd { c.stderr = w; return c }

// exitError carries an exit code, like os/exec's.
type exitError struct{ code int }

func (e *exitError) Error() string { return "exit status " + strconv.Itoa(e.code) }
func (e *exitError) ExitCode() int { return e.code }

// Run simulates the command. It reads stdin before taking the cluster
// lock, like a real process would.
func (c *cmd) Run() error {
	var input []byte
	if c.stdin != nil {
		var err error
		if input, err = io.ReadAll(c.stdin); err != nil {
			return c.fail(1, "failed to read stdin: "+err.Error())
		}
	}
	cl := c.node.cluster
	cl.mu.Lock()
	call := Call{Node: c.node.Name, About: c.about(), Argv: c.argv}
	if c.stdin != nil {
		call.Stdin = digest(input)
	}
	call, fail := cl.startCall(call)
	var out string
	code := 0
	switch {
	case fail && cl.failAfterEffect:
		_, _ = c.node.run(c.argv, input)
		out, code = "injected failure after the command took effect", 1
	case fail:
		out, code = "injected failure", 125
	case c.ctx.Err() != nil:
		out, code = c.ctx.Err().Error(), 1
	case !c.node.Running:
		out, code = "Error response from daemon: container "+c.node.Name+" is not running", 1
	default:
		cl.checkSettled(call)
		out, code = c.node.run(c.argv, input)
	}
	call.Err = code != 0
	cl.Calls = append(cl.Calls, call)
	cl.mu.Unlock()
	if code != 0 {
		return c.fail(code, out)
	}
	if c.stdout != nil {
		_, _ = io.WriteString(c.stdout, out)
	}
	return nil
}

// startCall numbers and counts call, calls CancelOn's function when
// CancelOn picked it, and says whether FailOn picked it. The cluster is
// locked.
func (c *Cluster) startCall(call Call) (Call, bool) {
	c.seq++
	call.Seq = c.seq
	c.keyCounts[call.Key()]++
	if call.Key() == c.cancelKey && c.keyCounts[call.Key()] == c.cancelOccurrence {
		c.cancel()
	}
	return call, call.Key() == c.failKey && c.keyCounts[call.Key()] == c.failOccurrence
}

func (c *cmd) fail(code int, out string) error {
	if c.stderr != nil {
		_, _ = io.WriteString(c.stderr, out)
	}
	return &exec.RunError{Command: c.argv, Output: []byte(out), Inner: &exitError{code: code}}
}

// about returns the node a kubectl command acts on.
func (c *cmd) about() string {
	if c.argv[0] != "kubectl" {
		return c.node.Name
	}
	args := kubectlArgs(c.argv)
	switch {
	case len(args) >= 2 && args[0] == "drain":
		return args[1]
	case len(args) >= 3 && args[0] == "patch" && args[1] == "node":
		return args[2]
	}
	return c.node.Name
}

func kubectlArgs(argv []string) []string {
	var args []string
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "--kubeconfig=") || strings.HasPrefix(a, "--request-timeout=") {
			continue
		}
		args = append(args, a)
	}
	return args
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// staticPods are the components kubeadm runs as static pods: the fake's
// own list, not the workflow's.
var staticPods = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"}

func isStatic(component string) bool {
	return slices.Contains(staticPods, component)
}

func manifestPath(component string) string {
	return "/etc/kubernetes/manifests/" + component + ".yaml"
}

func manifest(component, image string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  containers:\n  - name: %s\n    image: %s\n", component, component, image)
}

// manifestImage returns the image of component's static pod manifest, ""
// when there is none.
func (n *Node) manifestImage(component string) string {
	f := n.Files[manifestPath(component)]
	if f == nil {
		return ""
	}
	pod, err := kube.ParsePod(f.Content)
	if err != nil || len(pod.Images) == 0 {
		return ""
	}
	return pod.Images[0]
}

// run simulates argv with the cluster lock held; it returns the output and
// exit code.
func (n *Node) run(argv []string, stdin []byte) (string, int) {
	if argv[0] == "flock" && len(argv) > 2 {
		// the fake runs one command at a time anyway
		argv = argv[2:]
	}
	name, args := argv[0], argv[1:]
	if strings.HasPrefix(name, "/") && name != "/usr/bin/kubectl" {
		return n.runBinary(name, args)
	}
	switch name {
	case "cat":
		if args[0] == "/proc/swaps" {
			out := "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
			if n.Swap {
				out += "/swapfile                               file\t\t4194300\t\t0\t\t-2\n"
			}
			return out, 0
		}
		f := n.Files[args[0]]
		if f == nil {
			return "cat: " + args[0] + ": No such file or directory", 1
		}
		return string(f.Content), 0
	case "uname":
		return n.Machine + "\n", 0
	case "stat":
		if strings.Join(args, " ") != "-f -c %T /sys/fs/cgroup" {
			return "fakenode: unsupported stat command", 127
		}
		if n.CgroupV1 {
			return "tmpfs\n", 0
		}
		return "cgroup2fs\n", 0
	case "mkdir":
		return "", 0
	case "cp":
		if args[0] == "/dev/stdin" {
			n.Files[args[1]] = &File{Content: stdin, Mode: 0o644}
			return "", 0
		}
		f := n.Files[args[0]]
		if f == nil {
			return "cp: cannot stat '" + args[0] + "': No such file or directory", 1
		}
		n.Files[args[1]] = &File{Content: append([]byte{}, f.Content...), Mode: f.Mode}
		return "", 0
	case "chmod":
		f := n.Files[args[1]]
		mode, err := strconv.ParseUint(args[0], 8, 32)
		if f == nil || err != nil {
			return "chmod: cannot access '" + args[1] + "'", 1
		}
		f.Mode = uint32(mode)
		return "", 0
	case "mv":
		src, dst := args[len(args)-2], args[len(args)-1]
		f := n.Files[src]
		if f == nil {
			return "mv: cannot stat '" + src + "'", 1
		}
		n.Files[dst] = f
		delete(n.Files, src)
		return "", 0
	case "ln":
		src, dst := args[len(args)-2], args[len(args)-1]
		f := n.Files[src]
		if f == nil {
			return "ln: failed to access '" + src + "'", 1
		}
		// a hard link: the same file under another name
		n.Files[dst] = f
		return "", 0
	case "sha256sum":
		var b strings.Builder
		for _, p := range args {
			f := n.Files[p]
			if f == nil {
				return "sha256sum: " + p + ": No such file or directory", 1
			}
			fmt.Fprintf(&b, "%s  %s\n", digest(f.Content), p)
		}
		return b.String(), 0
	case "df":
		// one file system for every path, as in a container without volumes
		out := "Filesystem 1024-blocks Used Available Capacity Mounted on\n"
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				out += fmt.Sprintf("overlay 100000000 1000 %d 1%% /\n", n.DiskFreeKB)
			}
		}
		return out, 0
	case "containerd":
		return "version = 2\n[plugins]\n  [plugins.\"io.containerd.grpc.v1.cri\"]\n    [plugins.\"io.containerd.grpc.v1.cri\".containerd]\n      snapshotter = \"overlayfs\"\n", 0
	case "sh":
		return n.runShell(args, stdin)
	case "ctr":
		return n.runCtr(args, stdin)
	case "crictl":
		return n.runCrictl(args)
	case "systemctl":
		return n.runSystemctl(args)
	case "kubectl", "/usr/bin/kubectl":
		return n.runKubectl(kubectlArgs(argv))
	case "kubelet", "kubeadm":
		return n.runBinary("/usr/bin/"+name, args)
	}
	return "fakenode: unsupported command: " + strings.Join(argv, " "), 127
}

// runShell supports the scripts the workflow runs: nodeutils' file
// scripts, pinning images, preflight's wait for the kubeadm lock and its
// kubeadm probe. A script's commands are simulated one by one, so it fails
// where its commands would.
func (n *Node) runShell(args []string, stdin []byte) (string, int) {
	if len(args) < 3 || args[0] != "-c" {
		return "fakenode: unsupported shell command", 127
	}
	// the script is recognised by its name ($0), and must be the
	// registered one: the fake simulates what that text does
	script, name, params := args[1], args[2], args[3:]
	registered, ok := nodeutils.ScriptNamed(name)
	if !ok || registered.Body != script {
		return "fakenode: unsupported shell script " + name, 127
	}
	switch name {
	case nodeutils.KubeadmBusyScript.Name:
		if n.Kubeadm != KubeadmNone {
			return "busy\n", 0
		}
		return "", 0
	case nodeutils.ExistsScript.Name:
		var b strings.Builder
		for _, p := range params {
			if n.Files[p] != nil {
				b.WriteString("yes\n")
			} else {
				b.WriteString("no\n")
			}
		}
		return b.String(), 0
	case nodeutils.ReadScript.Name:
		if f := n.Files[params[0]]; f != nil {
			return "yes\n" + string(f.Content), 0
		}
		return "no\n", 0
	case nodeutils.StreamScript.Name:
		return n.run([]string{"cp", "/dev/stdin", params[0]}, stdin)
	case nodeutils.FinishScript.Name:
		return n.sequence([]string{"chmod", params[0], params[1]}, []string{"mv", "-f", params[1], params[2]})
	case nodeutils.WriteStringScript.Name:
		dest, mode, content := params[0], params[1], params[2]
		n.Files[dest+".tmp"] = &File{Content: []byte(content), Mode: 0o644}
		return n.sequence([]string{"chmod", mode, dest + ".tmp"}, []string{"mv", "-f", dest + ".tmp", dest})
	case nodeutils.CompareScript.Name:
		var b strings.Builder
		for i := 0; i+1 < len(params); i += 2 {
			src, dest := n.Files[params[i]], n.Files[params[i+1]]
			switch {
			case src == nil:
				b.WriteString("missing\n")
			case dest == nil:
				b.WriteString("differ\n")
			case src == dest || bytes.Equal(src.Content, dest.Content):
				b.WriteString("same\n")
			default:
				b.WriteString("differ\n")
			}
		}
		return b.String(), 0
	case nodeutils.InstallScript.Name:
		for i := 0; i+1 < len(params); i += 2 {
			src, dest := params[i], params[i+1]
			if _, code := n.run([]string{"ln", "-f", src, dest + ".new"}, nil); code != 0 {
				if out, code := n.run([]string{"cp", src, dest + ".new"}, nil); code != 0 {
					return out, code
				}
			}
			steps := [][]string{{"chmod", "0755", dest + ".new"}}
			if n.Files[dest] != nil {
				steps = append(steps, []string{"ln", "-f", dest, dest + ".old"})
			}
			steps = append(steps, []string{"mv", "-f", dest + ".new", dest})
			if out, code := n.sequence(steps...); code != 0 {
				return out, code
			}
		}
		return "", 0
	case nodeutils.PinScript.Name:
		for _, ref := range params[1:] {
			if out, code := n.run([]string{"ctr", "--namespace=k8s.io", "images", "label", ref, params[0]}, nil); code != 0 {
				return out, code
			}
		}
		return "", 0
	case nodeutils.KubeadmWaitScript.Name:
		if n.Kubeadm == KubeadmStuck {
			return "", 1 // flock -w timed out
		}
		n.Kubeadm = KubeadmNone // it finished while flock waited
		return "", 0
	case nodeutils.InotifyScript.Name:
		return n.inotifyListing(), 0
	case nodeutils.UnitLogScript.Name:
		if params[0] != "kubelet" {
			return "", 0
		}
		lines, err := strconv.Atoi(params[1])
		if err != nil {
			return "tail: invalid number of lines", 1
		}
		log := n.kubeletLog
		if len(log) > lines {
			log = log[len(log)-lines:]
		}
		return strings.Join(log, "\n") + "\n", 0
	case nodeutils.DFScript.Name:
		// every path is on the container's one file system here, whatever
		// ancestor the script walks to
		return n.run(append([]string{"df", "-Pk"}, params...), nil)
	case nodeutils.KubeadmProbeScript.Name:
		kubeadm, version, ok := parseBinary(stdin)
		if !ok || kubeadm != "kubeadm" {
			return "exec format error", 126
		}
		if len(params) != 1 {
			return "fakenode: the probe takes the cluster's image settings as $1", 127
		}
		cfg, err := parseImagesConfig(params[0])
		if err != nil {
			return version + "\n" + err.Error(), 1
		}
		return version + "\n" + strings.Join(KubeadmImages(version, cfg), "\n") + "\n", 0
	}
	return "fakenode: script " + name + " is not simulated", 127
}

// sequence runs each command in turn until one fails, like a script under
// `set -e`.
func (n *Node) sequence(steps ...[]string) (string, int) {
	var b strings.Builder
	for _, argv := range steps {
		out, code := n.run(argv, nil)
		b.WriteString(out)
		if code != 0 {
			return b.String(), code
		}
	}
	return b.String(), 0
}

func (n *Node) runCtr(args []string, stdin []byte) (string, int) {
	if len(args) < 3 || args[0] != "--namespace=k8s.io" || args[1] != "images" {
		return "fakenode: unsupported ctr command", 127
	}
	switch args[2] {
	case "ls":
		var b strings.Builder
		for image := range n.Images {
			b.WriteString(image + "\n")
		}
		return b.String(), 0
	case "import":
		if slices.Contains(args, "--help") {
			help := "NAME:\n   ctr images import - Import images\n\nOPTIONS:\n   --all-platforms   Imports content for all platforms, false by default (default: false)\n"
			if !n.OldCtr {
				help += "   --local           Run import locally rather than through transfer API (default: false)\n"
			}
			return help, 0
		}
		if n.OldCtr && slices.Contains(args, "--local") {
			return "Incorrect Usage: flag provided but not defined: -local", 1
		}
		if n.cluster.CutImports > 0 {
			// containerd's words for the cut stream, as the CI run printed them
			n.cluster.CutImports--
			if n.cluster.CutAtAnEntry {
				return "ctr: unrecognized image format", 1
			}
			return `ctr: failed to ingest "index.json": short read: expected 382 bytes but got 0: unexpected EOF`, 1
		}
		content, err := readArchive(bytes.NewReader(stdin))
		if err != nil {
			return "ctr: failed to import: " + err.Error(), 1
		}
		// as containerd does: all platforms need every platform's content,
		// one platform needs that platform's
		if slices.Contains(args, "--all-platforms") {
			for digest := range content.missing {
				return "ctr: content digest " + digest + ": not found", 1
			}
		}
		if i := slices.Index(args, "--platform"); i >= 0 && i+1 < len(args) && len(content.arches)+len(content.missing) > 0 {
			if arch := strings.TrimPrefix(args[i+1], "linux/"); !content.arches[arch] {
				return "ctr: no match for platform in manifest: not found", 1
			}
		}
		for _, ref := range content.refs {
			n.Images[imageref.Normalize(ref)] = false
		}
		return "", 0
	case "tag":
		src, dst := args[len(args)-2], args[len(args)-1]
		pinned, ok := n.Images[src]
		if !ok {
			return "ctr: image " + src + ": not found", 1
		}
		n.Images[dst] = pinned
		return "", 0
	case "label":
		ref := args[3]
		if _, ok := n.Images[ref]; !ok {
			return "ctr: image " + ref + ": not found", 1
		}
		n.Images[ref] = true
		return "", 0
	}
	return "fakenode: unsupported ctr command", 127
}

func (n *Node) runSystemctl(args []string) (string, int) {
	if len(args) >= 2 && args[0] == "show" && args[1] == "kubelet" {
		var props []string
		for _, a := range args[2:] {
			if v, ok := strings.CutPrefix(a, "--property="); ok {
				props = append(props, strings.Split(v, ",")...)
			}
		}
		return n.systemctlShow(props), 0
	}
	if len(args) == 2 && args[0] == "restart" && args[1] == "kubelet" {
		_, version, ok := parseBinary(n.Files["/usr/bin/kubelet"].Content)
		if !ok {
			return "kubelet.service: main process exited", 1
		}
		// the old kubelet's inotify instances go with it
		if n.kubeletHolds {
			n.cluster.Host.release(n.Name, KubeletInotify)
			n.kubeletHolds = false
		}
		// systemd starts the new one and the restart succeeds even when
		// it exits at once: the node stays NotReady
		if n.refusesHost(version) {
			n.kubeletExited(version, hostRefused)
			return "", 0
		}
		if !n.cluster.Host.acquire(n.Name, KubeletInotify) {
			n.kubeletExited(version, inotifyFileSource, inotifyCAdvisor)
			return "", 0
		}
		n.kubeletHolds = true
		n.kubeletStarted(version)
		n.notReadyReads = n.cluster.Delays.NodeReads
		if n.NodeRole == constants.ControlPlaneNodeRoleValue {
			// the new kubelet restarts the static pods once more, once it
			// has synced them
			n.kubeletUnsynced = n.cluster.Delays.KubeletSyncReads
			if n.kubeletUnsynced == 0 {
				n.restartStaticPods()
			}
		}
		return "", 0
	}
	return "fakenode: unsupported systemctl command", 127
}

// runBinary runs a fake Kubernetes binary stored at p.
func (n *Node) runBinary(p string, args []string) (string, int) {
	f := n.Files[p]
	if f == nil {
		return "sh: " + p + ": not found", 127
	}
	name, version, ok := parseBinary(f.Content)
	if !ok || f.Mode&0o111 == 0 {
		return "permission denied", 126
	}
	switch name {
	case "kubelet":
		return "Kubernetes " + version + "\n", 0
	case "kubectl":
		return "Client Version: " + version + "\nKustomize Version: v5.7.1\n", 0
	case "kubeadm":
		return n.runKubeadm(version, args)
	}
	return "fakenode: unsupported binary " + name, 127
}

// runKubeadm simulates kubeadm upgrade apply / node at version.
func (n *Node) runKubeadm(version string, args []string) (string, int) {
	c := n.cluster
	if len(args) >= 2 && args[0] == "upgrade" {
		if !c.APIServerUp {
			return "couldn't create a Kubernetes client: connection refused", 1
		}
		isCP := n.NodeRole == constants.ControlPlaneNodeRoleValue
		// apply upgrades to its argument; node to the version of the
		// cluster's configuration, which apply set
		target := c.KubernetesVersion
		switch args[1] {
		case "apply":
			if len(args) < 3 || args[2] != version {
				return "kubeadm upgrade apply: the version argument does not match kubeadm " + version, 1
			}
			if minor(c.KubernetesVersion) != minor(version) && !nextMinor(c.KubernetesVersion, version) {
				return "Specified version to upgrade to " + version + " is too high", 1
			}
			if !isCP {
				return "kubeadm upgrade apply must run on a control-plane node", 1
			}
			target = version
		case "node":
			if olderMinor(version, target) {
				return "the kubeadm version " + version + " is older than the cluster's " + target, 1
			}
		default:
			return "unknown command", 1
		}
		images := KubeadmImages(target, c.ImageConfig)
		if isCP {
			for _, image := range images {
				// present is enough: kubeadm pulls only what is missing
				if _, ok := n.Images[imageref.Normalize(image)]; !ok {
					return "[preflight] Some fatal errors occurred:\n\t[ERROR ImagePull]: failed to pull image " + image, 1
				}
			}
			changed := false
			for _, image := range images {
				if component := imageref.Component(image); isStatic(component) && n.manifestImage(component) != image {
					n.Files[manifestPath(component)] = &File{Content: []byte(manifest(component, image)), Mode: 0o600}
					changed = true
				}
			}
			if changed {
				n.restartStaticPods()
			}
		}
		if args[1] == "apply" {
			c.KubernetesVersion = target
			c.KubeProxy = images[3]
			c.CoreDNS = images[4]
		}
		n.Files[kubeletConfigPath] = &File{Content: []byte(c.KubeletConfig), Mode: 0o644}
		return "[upgrade] SUCCESS!\n", 0
	}
	return "fakenode: unsupported kubeadm command", 127
}

// refusesHost reports whether a kubelet at version exits at start on n
// with the configuration kubeadm wrote there, as real kubelets do on a
// cgroup v1 host (from v1.35 unless failCgroupV1: false) or with swap on
// (unless failSwapOn: false).
func (n *Node) refusesHost(version string) bool {
	var cfg kube.KubeletConfiguration
	if f := n.Files[kubeletConfigPath]; f != nil {
		if err := yaml.Unmarshal(f.Content, &cfg); err != nil {
			return true
		}
	}
	if n.Swap && (cfg.FailSwapOn == nil || *cfg.FailSwapOn) {
		return true
	}
	v, err := strconv.Atoi(strings.SplitN(minor(version), ".", 2)[1])
	return n.CgroupV1 && err == nil && v >= 35 && (cfg.FailCgroupV1 == nil || *cfg.FailCgroupV1)
}

// restartStaticPods simulates the kubelet replacing n's static pods: they
// are not Ready for a while, and the API server is away while its own
// restarts.
func (n *Node) restartStaticPods() {
	n.generation++
	n.podsUnready = n.cluster.Delays.PodReads
	n.cluster.apiRefusals = n.cluster.Delays.APIRequests
	n.cluster.apiDenials = n.cluster.Delays.APIDenials
}

// readStaticPods counts a read of n's static pods: once its restarted
// kubelet has synced them, it replaces them.
func (n *Node) readStaticPods() {
	if n.kubeletUnsynced > 0 {
		n.kubeletUnsynced--
		if n.kubeletUnsynced == 0 {
			n.restartStaticPods()
		}
	}
}

// settling reports whether n's static pods are being replaced.
func (n *Node) settling() bool {
	return n.kubeletUnsynced > 0 || n.podsUnready > 0
}

// containerID is the ID of the container of component on n now.
func (n *Node) containerID(component string) string {
	return fmt.Sprintf("containerd://%s-%s-%d", component, n.Name, n.generation)
}

// checkSettled records call in Unsettled when it upgrades a node or its
// kubelet, or drains one, while another control-plane node's static pods
// are being replaced.
func (c *Cluster) checkSettled(call Call) {
	joined := strings.Join(call.Argv, " ")
	if call.Argv[0] == "kubectl" {
		joined = strings.Join(kubectlArgs(call.Argv), " ")
	}
	if !strings.Contains(joined, "kubeadm upgrade ") && !strings.HasPrefix(joined, "systemctl restart ") && !strings.HasPrefix(joined, "drain ") {
		return
	}
	for _, other := range c.Nodes {
		if other.Name != call.About && other.NodeRole == constants.ControlPlaneNodeRoleValue && other.settling() {
			c.Unsettled = append(c.Unsettled, fmt.Sprintf("%s while the static pods of %s were being replaced", call, other.Name))
		}
	}
}

// olderMinor reports whether a's minor version is older than b's.
func olderMinor(a, b string) bool {
	x, err1 := strconv.Atoi(strings.SplitN(minor(a), ".", 2)[1])
	y, err2 := strconv.Atoi(strings.SplitN(minor(b), ".", 2)[1])
	return err1 == nil && err2 == nil && x < y
}

func nextMinor(from, to string) bool {
	f, err1 := strconv.Atoi(strings.SplitN(minor(from), ".", 2)[1])
	t, err2 := strconv.Atoi(strings.SplitN(minor(to), ".", 2)[1])
	return err1 == nil && err2 == nil && t == f+1
}

// runKubectl simulates the API server through kubectl.
func (n *Node) runKubectl(args []string) (string, int) {
	c := n.cluster
	if n.Files["/etc/kubernetes/admin.conf"] == nil {
		return "error: stat /etc/kubernetes/admin.conf: no such file or directory", 1
	}
	if !c.APIServerUp {
		return apiRefused, 1
	}
	if c.apiRefusals > 0 {
		c.apiRefusals--
		return apiRefused, 1
	}
	joined := strings.Join(args, " ")
	if c.apiDenials > 0 {
		c.apiDenials--
		return apiDenied, 1
	}
	if c.RBACDenies != "" && strings.Contains(joined, c.RBACDenies) {
		return apiDenied, 1
	}
	if c.FlakyAPI && !c.flaked[joined] {
		if c.flaked == nil {
			c.flaked = map[string]bool{}
		}
		c.flaked[joined] = true
		if len(c.flaked)%2 == 0 {
			return "Error from server: etcdserver: leader changed", 1
		}
		return "Unable to connect to the server: EOF", 1
	}
	switch {
	case joined == "get nodes -o json":
		return toJSON(map[string]interface{}{"items": c.nodeObjects()}), 0
	case joined == "get pods --namespace=kube-system --selector=tier=control-plane -o json":
		return toJSON(map[string]interface{}{"items": c.staticPods()}), 0
	case joined == "get daemonsets,deployments --namespace=kube-system -o json":
		return toJSON(map[string]interface{}{"items": c.workloads()}), 0
	case joined == "get daemonsets,deployments --namespace=local-path-storage -o json":
		return toJSON(map[string]interface{}{"items": c.storageWorkloads()}), 0
	case joined == "get configmap kubeadm-config --namespace=kube-system -o jsonpath={.data.ClusterConfiguration}":
		return c.clusterConfiguration(), 0
	case joined == "get configmap kubelet-config --namespace=kube-system -o jsonpath={.data.kubelet}":
		return c.KubeletConfig, 0
	case joined == "get --raw=/readyz":
		return "ok", 0
	case strings.HasPrefix(joined, "get --raw=/api/v1/nodes/") && strings.HasSuffix(joined, "/proxy/pods"):
		return c.kubeletPods(strings.TrimSuffix(strings.TrimPrefix(joined, "get --raw=/api/v1/nodes/"), "/proxy/pods"))
	case joined == "get --raw=/version":
		return toJSON(map[string]string{"gitVersion": c.KubernetesVersion}), 0
	case joined == "get namespaces,pods --all-namespaces -o json":
		return toJSON(map[string]interface{}{"kind": "List", "items": append(c.namespaces(), c.pods()...)}), 0
	case len(args) >= 3 && args[0] == "wait" && args[1] == "--for=delete" && strings.HasPrefix(args[2], "pod/"):
		return c.waitDeleted(flagValue(args, "--namespace=")+"/"+strings.TrimPrefix(args[2], "pod/"), flagValue(args, "--timeout="))
	case len(args) >= 2 && args[0] == "drain":
		target := c.Node(args[1])
		if target == nil {
			return "Error from server (NotFound): nodes \"" + args[1] + "\" not found", 1
		}
		if blocked := c.PDBBlocked[target.Name]; len(blocked) > 0 {
			target.Unschedulable = true
			var b strings.Builder
			fmt.Fprintf(&b, "node/%s cordoned\n", target.Name)
			for _, pod := range blocked {
				namespace, name, _ := strings.Cut(pod, "/")
				fmt.Fprintf(&b, "error when evicting pods/%q -n %q (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.\n", name, namespace)
			}
			fmt.Fprintf(&b, "error: unable to drain node %q due to error: global timeout reached: %s, continuing command...\n", target.Name, flagValue(args, "--timeout="))
			return b.String(), 1
		}
		if bare := c.BarePods[target.Name]; len(bare) > 0 {
			if !slices.Contains(args, "--force") {
				// kubectl cordons first, then refuses
				target.Unschedulable = true
				return "node/" + target.Name + " cordoned\nerror: unable to drain node \"" + target.Name + "\" due to error: cannot delete Pods that declare no controller (use --force to override): " + strings.Join(bare, ", "), 1
			}
			delete(c.BarePods, target.Name)
		}
		if !target.Unschedulable {
			// a node drained before has no pods left to evict
			target.Evicted++
		}
		target.Unschedulable = true
		return "node/" + args[1] + " drained\n", 0
	case len(args) >= 3 && args[0] == "patch" && args[1] == "node":
		target := c.Node(args[2])
		if target == nil {
			return "Error from server (NotFound): nodes \"" + args[2] + "\" not found", 1
		}
		if flagValue(args, "--type=") != "merge" {
			return "fakenode: only --type=merge node patches are simulated: " + joined, 127
		}
		return mergePatchNode(target, flagValue(args, "--patch="))
	}
	return "fakenode: unsupported kubectl command: " + joined, 127
}

// mergePatchNode applies a JSON merge patch (RFC 7386) of a node's
// spec.unschedulable and metadata.annotations, the fields simulated here;
// any other field is refused so that a test cannot pass on a patch the
// fake ignores.
func mergePatchNode(target *Node, patch string) (string, int) {
	var p struct {
		Spec     map[string]*bool              `json:"spec"`
		Metadata map[string]map[string]*string `json:"metadata"`
	}
	dec := json.NewDecoder(strings.NewReader(patch))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return "error: unable to parse \"" + patch + "\": " + err.Error(), 1
	}
	for field, v := range p.Spec {
		if field != "unschedulable" {
			return "fakenode: spec." + field + " is not simulated", 127
		}
		target.Unschedulable = v != nil && *v
	}
	for field, values := range p.Metadata {
		if field != "annotations" {
			return "fakenode: metadata." + field + " is not simulated", 127
		}
		for k, v := range values {
			if v == nil {
				delete(target.Annotations, k)
			} else {
				target.Annotations[k] = *v
			}
		}
	}
	return "node/" + target.Name + " patched\n", 0
}

// apiRefused is what kubectl prints when no API server answers.
// apiDenied is what kubectl prints for a request RBAC denies.
const apiDenied = `Error from server (Forbidden): nodes is forbidden: User "kubernetes-admin" cannot list resource "nodes" in API group "" at the cluster scope`

const apiRefused = "The connection to the server kind-control-plane:6443 was refused - did you specify the right host or port?"

// flagValue returns the value of the first argument with prefix, "" if none.
func flagValue(args []string, prefix string) string {
	for _, a := range args {
		if strings.HasPrefix(a, prefix) {
			return strings.TrimPrefix(a, prefix)
		}
	}
	return ""
}

func toJSON(v interface{}) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func condition(t string, ok bool) map[string]string {
	status := "False"
	if ok {
		status = "True"
	}
	return map[string]string{"type": t, "status": status, "lastTransitionTime": "2026-01-01T00:00:00Z"}
}

func (c *Cluster) nodeObjects() []interface{} {
	var items []interface{}
	for _, n := range c.Nodes {
		n.systemdRestartsKubelet()
		var taints []interface{}
		if n.NoSchedule {
			taints = append(taints, map[string]string{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"})
		}
		version := n.KubeletVersion
		ready := n.Ready && n.KubeletVersion != ""
		if n.notReadyReads > 0 {
			n.notReadyReads--
			ready = false
		}
		items = append(items, map[string]interface{}{
			"metadata": map[string]interface{}{"name": n.Name, "annotations": n.Annotations},
			"spec":     map[string]interface{}{"unschedulable": n.Unschedulable, "taints": taints},
			"status": map[string]interface{}{
				"conditions": []interface{}{condition("Ready", ready)},
				"nodeInfo":   map[string]string{"kubeletVersion": version},
			},
		})
	}
	return items
}

func (c *Cluster) staticPods() []interface{} {
	var items []interface{}
	for _, n := range c.Nodes {
		// until the restarted kubelet syncs them, the API server shows the
		// previous kubelet's status
		stale := n.kubeletUnsynced > 0
		n.readStaticPods()
		ready := n.KubeletVersion != "" || stale
		if n.podsUnready > 0 && !stale {
			n.podsUnready--
			ready = false
		}
		items = append(items, n.staticPodObjects(true, ready)...)
	}
	return items
}

// staticPodObjects are n's static pods, Ready or not; without status, as
// a kubelet reports those it has not synced yet.
func (n *Node) staticPodObjects(withStatus, ready bool) []interface{} {
	var items []interface{}
	for _, component := range staticPods {
		image := n.manifestImage(component)
		if image == "" {
			continue
		}
		status := map[string]interface{}{}
		if withStatus {
			status = map[string]interface{}{
				"conditions":        []interface{}{condition("Ready", ready)},
				"containerStatuses": []interface{}{map[string]interface{}{"name": component, "ready": ready, "containerID": n.containerID(component)}},
			}
		}
		items = append(items, map[string]interface{}{
			"metadata": map[string]interface{}{"name": component + "-" + n.Name, "labels": map[string]string{"component": component, "tier": "control-plane"},
				"annotations": map[string]string{"kubernetes.io/config.source": "file"}},
			"spec":   map[string]interface{}{"nodeName": n.Name, "containers": []interface{}{map[string]string{"name": component, "image": image}}},
			"status": status,
		})
	}
	return items
}

// kubeletPods is what the kubelet of node answers on /pods: its static
// pods with its own status.
func (c *Cluster) kubeletPods(node string) (string, int) {
	n := c.Node(node)
	if n == nil {
		return "Error from server (NotFound): nodes \"" + node + "\" not found", 1
	}
	if n.KubeletVersion == "" {
		return "Error from server (ServiceUnavailable): error trying to reach service: dial tcp 172.18.0.9:10250: connect: connection refused", 1
	}
	synced := n.kubeletUnsynced == 0
	n.readStaticPods()
	return toJSON(map[string]interface{}{"kind": "PodList", "items": n.staticPodObjects(synced, n.podsUnready == 0)}), 0
}

// namespaces are those of the pods, as the API lists them.
func (c *Cluster) namespaces() []interface{} {
	names := map[string]bool{"default": true, "kube-system": true}
	for _, bare := range c.BarePods {
		for _, name := range bare {
			namespace, _, _ := strings.Cut(name, "/")
			names[namespace] = true
		}
	}
	var items []interface{}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		metadata := map[string]interface{}{"name": name}
		phase := "Active"
		if c.TerminatingNamespaces[name] {
			metadata["deletionTimestamp"] = "2026-12-02T10:53:22Z"
			phase = "Terminating"
		}
		items = append(items, map[string]interface{}{"kind": "Namespace", "metadata": metadata, "status": map[string]interface{}{"phase": phase}})
	}
	return items
}

// waitDeleted answers `kubectl wait --for=delete pod/...` for pod
// ("namespace/name"): a bare pod being deleted, or a helper pod of kind's
// storage provisioner while the provisioner runs (it deletes its helpers
// when they are done), is gone at the end of the wait; any other stays
// until the timeout.
func (c *Cluster) waitDeleted(pod, timeout string) (string, int) {
	namespace, name, _ := strings.Cut(pod, "/")
	for node, bare := range c.BarePods {
		i := slices.Index(bare, pod)
		if i < 0 {
			continue
		}
		helper := namespace == "local-path-storage" && strings.HasPrefix(name, "helper-pod-") && !c.StorageDown
		if !c.Deleting[pod] && !c.TerminatingNamespaces[namespace] && !helper {
			return "error: timed out waiting for the condition on pods/" + name + " (after " + timeout + ")", 1
		}
		c.BarePods[node] = slices.Delete(bare, i, i+1)
	}
	return "pod/" + name + " condition met", 0
}

// pods are the bare pods, plus one pod of a Deployment per schedulable
// node and the static pods' mirrors, as the API lists them.
func (c *Cluster) pods() []interface{} {
	var items []interface{}
	yes := true
	for _, n := range c.Nodes {
		for _, name := range c.BarePods[n.Name] {
			namespace, pod, _ := strings.Cut(name, "/")
			metadata := map[string]interface{}{"namespace": namespace, "name": pod}
			if c.Deleting[name] {
				metadata["deletionTimestamp"] = "2026-12-02T10:53:22Z"
			}
			items = append(items, map[string]interface{}{
				"kind":     "Pod",
				"metadata": metadata,
				"spec":     map[string]interface{}{"nodeName": n.Name},
				"status":   map[string]interface{}{"phase": "Running"},
			})
		}
		if !n.NoSchedule {
			items = append(items, map[string]interface{}{
				"kind": "Pod",
				"metadata": map[string]interface{}{"namespace": "default", "name": "app-" + n.Name,
					"ownerReferences": []interface{}{map[string]interface{}{"kind": "ReplicaSet", "controller": yes}}},
				"spec":   map[string]interface{}{"nodeName": n.Name},
				"status": map[string]interface{}{"phase": "Running"},
			})
		}
		for _, component := range staticPods {
			if n.manifestImage(component) == "" {
				continue
			}
			items = append(items, map[string]interface{}{
				"kind": "Pod",
				"metadata": map[string]interface{}{"namespace": "kube-system", "name": component + "-" + n.Name,
					"annotations":     map[string]string{"kubernetes.io/config.mirror": "x"},
					"ownerReferences": []interface{}{map[string]interface{}{"kind": "Node", "controller": yes}}},
				"spec":   map[string]interface{}{"nodeName": n.Name},
				"status": map[string]interface{}{"phase": "Running"},
			})
		}
	}
	return items
}

func (c *Cluster) workloads() []interface{} {
	nodes := int32(len(c.Nodes))
	two := int32(2)
	return []interface{}{
		map[string]interface{}{
			"kind":     "DaemonSet",
			"metadata": map[string]interface{}{"name": "kube-proxy", "generation": 2},
			"spec":     map[string]interface{}{"template": map[string]interface{}{"image": c.KubeProxy}},
			"status":   map[string]interface{}{"observedGeneration": 2, "desiredNumberScheduled": nodes, "updatedNumberScheduled": nodes, "numberAvailable": nodes},
		},
		map[string]interface{}{
			"kind":     "Deployment",
			"metadata": map[string]interface{}{"name": "coredns", "generation": 2},
			"spec":     map[string]interface{}{"replicas": two},
			"status":   map[string]interface{}{"observedGeneration": 2, "updatedReplicas": two, "availableReplicas": two},
		},
	}
}

// storageWorkloads are kind's default storage provisioner, which no upgrade
// step changes.
func (c *Cluster) storageWorkloads() []interface{} {
	one, available := int32(1), int32(1)
	if c.StorageDown {
		available = 0
	}
	return []interface{}{
		map[string]interface{}{
			"kind":     "Deployment",
			"metadata": map[string]interface{}{"name": "local-path-provisioner", "generation": 1},
			"spec":     map[string]interface{}{"replicas": one},
			"status":   map[string]interface{}{"observedGeneration": 1, "updatedReplicas": one, "availableReplicas": available},
		},
	}
}

// runCrictl simulates `crictl pull IMAGE` through the node's containerd:
// it succeeds for an image of the cluster's Registry and fails, as crictl
// fails on a node that cannot reach the registry, for any other.
func (n *Node) runCrictl(args []string) (string, int) {
	if len(args) != 2 || args[0] != "pull" {
		return "crictl: unknown command " + strings.Join(args, " "), 1
	}
	ref := imageref.Normalize(args[1])
	if !n.cluster.Registry[ref] {
		// what crictl prints on a kind node that reaches no registry
		host, rest, _ := strings.Cut(strings.TrimPrefix(ref, "docker.io/"), "/")
		repo, tag, _ := strings.Cut(rest, ":")
		why := fmt.Sprintf(`failed to pull and unpack image \"%s\": failed to resolve reference \"%s\": failed to do request: Head \"https://%s/v2/%s/manifests/%s\": dial tcp: lookup %s on 172.18.0.1:53: no such host`, ref, ref, host, repo, tag, host)
		return fmt.Sprintf("E1202 04:04:31.265326    1455 remote_image.go:250] \"PullImage from image service failed\" err=\"rpc error: code = Unknown desc = %s\" image=\"%s\"\n"+
			"time=\"2026-12-02T04:04:31Z\" level=fatal msg=\"pulling image: %s\"\n", why, ref, why), 1
	}
	n.Images[ref] = false
	return "Image is up to date for sha256:" + digest([]byte(ref)) + "\n", 0
}
