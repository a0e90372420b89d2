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
	"fmt"
	"strconv"
	"strings"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
)

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
	case nodeutils.KubectlAllScript.Name:
		return n.kubectlAll(params), 0
	case nodeutils.DFScript.Name:
		// a path not made yet is on its nearest existing ancestor's file
		// system: the fake's mount points always exist, so that is the
		// path's own
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

// kubectlAll answers nodeutils.KubectlAllScript: each request (its
// arguments, one a line) is a kubectl command simulated in turn, and the
// first that fails ends it, its output printed where the script prints a
// failed run's stderr.
func (n *Node) kubectlAll(requests []string) string {
	var b strings.Builder
	for _, request := range requests {
		out, code := n.runKubectl(adminKubeconfig, kubectlArgs(append([]string{"kubectl"}, strings.Split(request, "\n")...)), nil)
		if code == 0 {
			b.WriteString(out)
		}
		fmt.Fprintf(&b, "\n%s %d\n", nodeutils.KubectlExitMark, code)
		if code != 0 {
			b.WriteString(out + "\n")
			break
		}
	}
	return b.String()
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
