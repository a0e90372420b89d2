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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/constants"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
)

// staticPods are the components kubeadm runs as static pods: the fake's
// own list, not the workflow's.
var staticPods = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"}

func isStatic(component string) bool {
	return slices.Contains(staticPods, component)
}

func manifestPath(component string) string {
	return "/etc/kubernetes/manifests/" + component + ".yaml"
}

// manifest is the static pod manifest of component running image, with
// args (its section's extraArgs) rendered as kubeadm renders them: each
// --name=value after the command's own flags.
func manifest(component, image string, args []Arg) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  containers:\n  - name: %s\n    image: %s\n    command:\n    - %s\n", component, component, image, component)
	for _, a := range args {
		fmt.Fprintf(&b, "    - %q\n", "--"+a.Name+"="+a.Value)
	}
	return b.String()
}

// manifestCommand returns the command of component's static pod
// manifest, nil when there is none.
func (n *Node) manifestCommand(component string) []string {
	f := n.Files[manifestPath(component)]
	if f == nil {
		return nil
	}
	pod, err := kube.ParsePod(f.Content)
	if err != nil {
		return nil
	}
	return pod.Command
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
// are being replaced. A drain is recorded only with fewer than three
// control-plane nodes: with three or more, etcd keeps its quorum and kind's
// load balancer an API server while one node's static pods are replaced,
// and a drain needs no more. A worker's upgrade needs etcd and the API
// server alone: it is recorded only until the other node's kubelet has
// replaced them and the API server answers again.
func (c *Cluster) checkSettled(call Call) {
	joined := strings.Join(call.Argv, " ")
	if call.Argv[0] == "kubectl" {
		joined = strings.Join(kubectlArgs(call.Argv), " ")
	}
	drain := strings.HasPrefix(joined, "drain ")
	if drain && c.controlPlaneCount() >= 3 {
		return
	}
	if !strings.Contains(joined, "kubeadm upgrade ") && !strings.HasPrefix(joined, "systemctl restart ") && !drain {
		return
	}
	worker := false
	if about := c.Node(call.About); about != nil && about.NodeRole != constants.ControlPlaneNodeRoleValue {
		worker = true
	}
	for _, other := range c.Nodes {
		if other.Name == call.About || other.NodeRole != constants.ControlPlaneNodeRoleValue {
			continue
		}
		if worker && other.kubeletUnsynced == 0 && c.apiRefusals == 0 {
			// its etcd and API server run, only not Ready yet
			continue
		}
		if other.settling() {
			c.Unsettled = append(c.Unsettled, fmt.Sprintf("%s while the static pods of %s were being replaced", call, other.Name))
		}
	}
}

// controlPlaneCount is how many control-plane nodes c has.
func (c *Cluster) controlPlaneCount() int {
	count := 0
	for _, n := range c.Nodes {
		if n.NodeRole == constants.ControlPlaneNodeRoleValue {
			count++
		}
	}
	return count
}

// mirrorHash is the static pod hash the kubelet gives component's mirror
// pod: here, of its manifest's content.
func (n *Node) mirrorHash(component string) string {
	f := n.Files[manifestPath(component)]
	if f == nil {
		return ""
	}
	sum := sha256.Sum256(f.Content)
	return hex.EncodeToString(sum[:16])
}

// mirrorPod returns the node and component of the mirror pod named name,
// nil when there is none.
func (c *Cluster) mirrorPod(name string) (*Node, string) {
	for _, n := range c.Nodes {
		for _, component := range staticPods {
			if name == component+"-"+n.Name && n.Files[manifestPath(component)] != nil {
				return n, component
			}
		}
	}
	return nil, ""
}

// jsonPatchMirrorPod applies a JSON patch (RFC 6902) of component's
// mirror pod's annotations: "test" of kube.MirrorAnnotation, which fails
// as the API server fails it, and "add" of kube.NudgedAnnotation, the
// only things simulated; anything else is refused so that a test cannot
// pass on a patch the fake ignores.
func (n *Node) jsonPatchMirrorPod(component, patch string) (string, int) {
	var ops []struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value string `json:"value"`
	}
	if err := json.Unmarshal([]byte(patch), &ops); err != nil {
		return "error: unable to parse \"" + patch + "\": " + err.Error(), 1
	}
	const annotations = "/metadata/annotations/"
	mirror := annotations + "kubernetes.io~1config.mirror"
	nudged := annotations + strings.ReplaceAll(kube.NudgedAnnotation, "/", "~1")
	var set *string
	for _, op := range ops {
		switch {
		case op.Op == "test" && op.Path == mirror:
			if op.Value != n.mirrorHash(component) {
				return "The request is invalid: the server rejected our request due to an error in our request", 1
			}
		case op.Op == "add" && op.Path == nudged:
			set = &op.Value
		default:
			return "fakenode: only the test of " + mirror + " and the add of " + nudged + " are simulated: " + patch, 127
		}
	}
	if set != nil {
		if n.Nudged == nil {
			n.Nudged = map[string]string{}
		}
		n.Nudged[component] = *set
	}
	return "pod/" + component + "-" + n.Name + " patched\n", 0
}
