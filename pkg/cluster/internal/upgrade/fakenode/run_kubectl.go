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
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// adminKubeconfig is where kubeadm writes the admin kubeconfig on
// control-plane nodes.
const adminKubeconfig = "/etc/kubernetes/admin.conf"

// runKubectl simulates the API server through kubectl, run with the
// kubeconfig at kubeconfig: the node's admin kubeconfig, or /dev/stdin,
// which must then hand it the cluster's (the one on its control-plane
// nodes).
func (n *Node) runKubectl(kubeconfig string, args []string, stdin []byte) (string, int) {
	c := n.cluster
	switch {
	case kubeconfig == "/dev/stdin" && len(stdin) == 0:
		// an empty kubeconfig: kubectl's defaults
		return "The connection to the server localhost:8080 was refused - did you specify the right host or port?", 1
	case kubeconfig == "/dev/stdin" && !c.isAdminKubeconfig(stdin):
		return "error: error loading config file \"/dev/stdin\": couldn't get version/kind; json parse error: invalid character looking for beginning of value", 1
	case kubeconfig != "/dev/stdin" && n.Files[kubeconfig] == nil:
		return "error: stat " + kubeconfig + ": no such file or directory", 1
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
		return toJSON(c.versionInfo()), 0
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
		if slow := c.Lameduck[target.Name]; len(slow) > 0 {
			delete(c.Lameduck, target.Name)
			if timeout, err := time.ParseDuration(flagValue(args, "--timeout=")); err == nil && timeout < LameduckFor {
				target.Unschedulable = true
				target.Evicted++
				return lameduckOutput(target.Name, slow), 1
			}
		}
		if !target.Unschedulable {
			// a node drained before has no pods left to evict
			target.Evicted++
		}
		target.Unschedulable = true
		return "node/" + args[1] + " drained\n", 0
	case len(args) == 6 && args[0] == "get" && args[1] == "pod" && args[3] == "--namespace=kube-system" && args[4] == "-o" && args[5] == `jsonpath={.metadata.annotations.kubernetes\.io/config\.mirror}`:
		n, component := c.mirrorPod(args[2])
		if n == nil {
			return "Error from server (NotFound): pods \"" + args[2] + "\" not found", 1
		}
		return n.mirrorHash(component), 0
	case len(args) >= 3 && args[0] == "patch" && args[1] == "pod":
		n, component := c.mirrorPod(args[2])
		if n == nil {
			return "Error from server (NotFound): pods \"" + args[2] + "\" not found", 1
		}
		if flagValue(args, "--namespace=") != "kube-system" || flagValue(args, "--type=") != "json" {
			return "fakenode: only JSON patches of kube-system's mirror pods are simulated: " + joined, 127
		}
		return n.jsonPatchMirrorPod(component, flagValue(args, "--patch="))
	case len(args) >= 3 && args[0] == "patch" && args[1] == "configmap":
		if args[2] != "kubeadm-config" || flagValue(args, "--namespace=") != "kube-system" || flagValue(args, "--type=") != "merge" {
			return "fakenode: only merge patches of kube-system/kubeadm-config are simulated: " + joined, 127
		}
		var patch struct {
			Data map[string]string `json:"data"`
		}
		dec := json.NewDecoder(strings.NewReader(flagValue(args, "--patch=")))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&patch); err != nil {
			return "error: unable to parse the patch: " + err.Error(), 1
		}
		doc, ok := patch.Data["ClusterConfiguration"]
		if !ok || len(patch.Data) != 1 {
			return "fakenode: only the ClusterConfiguration key of kubeadm-config is simulated: " + joined, 127
		}
		return c.setClusterConfiguration(doc)
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

// lameduckOutput is what kubectl drain prints when its --timeout runs out
// while the evicted pods (namespace/name) of node are still going.
func lameduckOutput(node string, pods []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "node/%s cordoned\n", node)
	var errs []string
	for _, pod := range pods {
		namespace, name, _ := strings.Cut(pod, "/")
		fmt.Fprintf(&b, "evicting pod %s/%s\n", namespace, name)
		errs = append(errs, fmt.Sprintf("error when waiting for pod %q in namespace %q to terminate: context deadline exceeded", name, namespace))
	}
	agg := errs[0]
	if len(errs) > 1 {
		agg = "[" + strings.Join(errs, ", ") + "]"
	}
	fmt.Fprintf(&b, "There are pending pods in node %q when an error occurred: %s\n", node, agg)
	fmt.Fprintf(&b, "error: unable to drain node %q due to error: %s, continuing command...\n", node, agg)
	fmt.Fprintf(&b, "There are pending nodes to be drained:\n %s\nerror: %s\n", node, agg)
	return b.String()
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

// isAdminKubeconfig reports whether content is the admin kubeconfig of
// c's control-plane nodes.
func (c *Cluster) isAdminKubeconfig(content []byte) bool {
	for _, n := range c.Nodes {
		if f := n.Files[adminKubeconfig]; f != nil && string(f.Content) == string(content) {
			return true
		}
	}
	return false
}
