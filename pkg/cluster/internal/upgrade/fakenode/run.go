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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"

	"sigs.k8s.io/kind/pkg/exec"
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
		return n.runDF(args)
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
		kubeconfig := adminKubeconfig
		for _, a := range args {
			if strings.HasPrefix(a, "--kubeconfig=") {
				kubeconfig = strings.TrimPrefix(a, "--kubeconfig=")
			}
		}
		return n.runKubectl(kubeconfig, kubectlArgs(argv), stdin)
	case "kubelet", "kubeadm":
		return n.runBinary("/usr/bin/"+name, args)
	}
	return "fakenode: unsupported command: " + strings.Join(argv, " "), 127
}
