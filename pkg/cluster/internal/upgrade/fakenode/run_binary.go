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
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/constants"
	"sigs.k8s.io/yaml"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/imageref"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
)

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

// lackingHealthCheckImage returns the first running, schedulable node
// without the pause image kubeadm version lists, "" when there is none.
func (c *Cluster) lackingHealthCheckImage(version string) string {
	var pause string
	for _, image := range KubeadmImages(version, c.ImageConfig) {
		if strings.Contains(image, "/pause:") {
			pause = image
		}
	}
	for _, n := range c.Nodes {
		if _, ok := n.Images[imageref.Normalize(pause)]; !ok && n.Running && !n.Unschedulable {
			return n.Name
		}
	}
	return ""
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
			if lacking := c.lackingHealthCheckImage(version); lacking != "" {
				// its health check's Job runs kubeadm's pause image on
				// whichever schedulable node the scheduler picks, control-plane
				// nodes included (it tolerates their taint), and gives up after
				// 15 s: any such node without the image (no registry) can fail it
				return "[upgrade/health] FATAL: [preflight] Some fatal errors occurred:\n\t[ERROR CreateJob]: Job \"upgrade-health-check\" in the namespace \"kube-system\" did not complete in 15s: no condition of type Complete (its pod on " + lacking + " could not pull its image)", 1
			}
			target = version
		case "node":
			if olderMinor(version, target) {
				return "the kubeadm version " + version + " is older than the cluster's " + target, 1
			}
		default:
			return "unknown command", 1
		}
		skipKubeProxy, patches := false, ""
		for _, arg := range args[2:] {
			if phases, ok := strings.CutPrefix(arg, "--skip-phases="); ok {
				skipKubeProxy = slices.Contains(strings.Split(phases, ","), "addon/kube-proxy")
				if args[1] == "apply" && olderMinor(version, "v1.32.0") {
					return "unknown flag: --skip-phases", 1
				}
			}
			if dir, ok := strings.CutPrefix(arg, "--patches="); ok {
				patches = dir
			}
		}
		if patches != "" && !n.hasFilesUnder(patches) {
			return "could not list patch files for path \"" + patches + "\": lstat " + patches + ": no such file or directory", 1
		}
		images := KubeadmImages(target, c.ImageConfig)
		if isCP {
			for _, image := range images {
				// present is enough: kubeadm pulls only what is missing
				if _, ok := n.Images[imageref.Normalize(image)]; !ok {
					return "[preflight] Some fatal errors occurred:\n\t[ERROR ImagePull]: failed to pull image " + image, 1
				}
			}
			// kubeadm renders each manifest and replaces those that differ
			changed := false
			for _, image := range images {
				component := imageref.Component(image)
				if !isStatic(component) {
					continue
				}
				want := manifest(component, image, c.ExtraArgs[sectionOf(component)])
				if f := n.Files[manifestPath(component)]; f == nil || string(f.Content) != want {
					n.Files[manifestPath(component)] = &File{Content: []byte(want), Mode: 0o600}
					changed = true
				}
			}
			if changed {
				n.restartStaticPods()
			}
			// the add-ons, once every control-plane node runs this one's
			// kube-apiserver
			if c.controlPlaneAt(n.manifestImage("kube-apiserver")) {
				c.CoreDNS = images[4]
				if !skipKubeProxy {
					c.KubeProxy = images[3]
				}
			}
		}
		if args[1] == "apply" {
			c.KubernetesVersion = target
		}
		n.Files[kubeletConfigPath] = &File{Content: []byte(c.KubeletConfig), Mode: 0o644}
		if minor(version) == "1.35" {
			// kubeadm v1.35's post-upgrade phase, its only one
			n.dropKubeletFlag(PodInfraFlag)
		}
		return "[upgrade] SUCCESS!\n", 0
	}
	return "fakenode: unsupported kubeadm command", 127
}

// controlPlaneAt reports whether every control-plane node's kube-apiserver
// runs image, as kubeadm's addon phase requires before it upgrades the
// add-ons.
func (c *Cluster) controlPlaneAt(image string) bool {
	for _, n := range c.Nodes {
		if n.NodeRole == constants.ControlPlaneNodeRoleValue && n.manifestImage("kube-apiserver") != image {
			return false
		}
	}
	return true
}

// hasFilesUnder reports whether n has a file under the folder dir.
func (n *Node) hasFilesUnder(dir string) bool {
	for p := range n.Files {
		if strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/") {
			return true
		}
	}
	return false
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

// dropKubeletFlag removes flag from the node's kubeadm flags file.
func (n *Node) dropKubeletFlag(flag string) {
	f := n.Files[KubeadmFlagsPath]
	if f == nil {
		return
	}
	content := regexp.MustCompile(flag+`=\S* ?`).ReplaceAllString(string(f.Content), "")
	n.Files[KubeadmFlagsPath] = &File{Content: []byte(content), Mode: f.Mode}
}

// refusedFlag returns the line a kubelet at version logs when it exits at
// start on a flag of the kubeadm flags file it no longer has, or "".
func (n *Node) refusedFlag(version string) string {
	f := n.Files[KubeadmFlagsPath]
	if f == nil || olderMinor(version, "v1.35.0") || !strings.Contains(string(f.Content), PodInfraFlag+"=") {
		return ""
	}
	return `E1206 22:46:24.157258   12630 run.go:72] "command failed" err="failed to parse kubelet flag: unknown flag: ` + PodInfraFlag + `"`
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
