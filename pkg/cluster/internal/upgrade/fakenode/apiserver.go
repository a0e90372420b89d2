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
	"maps"
	"slices"
	"strings"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
)

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
				"conditions": []interface{}{condition("Ready", ready)},
				"containerStatuses": []interface{}{map[string]interface{}{"name": component, "ready": ready, "containerID": n.containerID(component),
					// started; Ready once its probes pass, as a real one
					"state": map[string]interface{}{"running": map[string]interface{}{}}}},
			}
		}
		items = append(items, map[string]interface{}{
			"metadata": map[string]interface{}{"name": component + "-" + n.Name, "labels": map[string]string{"component": component, "tier": "control-plane"},
				"annotations": map[string]string{"kubernetes.io/config.source": "file", kube.MirrorAnnotation: n.mirrorHash(component)}},
			"spec":   map[string]interface{}{"nodeName": n.Name, "containers": []interface{}{map[string]interface{}{"name": component, "image": image, "command": n.manifestCommand(component)}}},
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

// versionInfo is the API server's /version: its version and, as a real
// one reports it, the version it emulates (its own minor version when its
// command sets none), read from the first control-plane node's manifest.
func (c *Cluster) versionInfo() map[string]string {
	own := minor(c.KubernetesVersion)
	major, minorVersion, _ := strings.Cut(own, ".")
	info := map[string]string{"gitVersion": c.KubernetesVersion, "major": major, "minor": minorVersion, "emulationMajor": major, "emulationMinor": minorVersion}
	for _, n := range c.Nodes {
		if n.manifestImage("kube-apiserver") == "" {
			continue
		}
		for _, arg := range n.manifestCommand("kube-apiserver") {
			if v, ok := strings.CutPrefix(arg, "--emulated-version="); ok && v != "" {
				info["emulationMajor"], info["emulationMinor"], _ = strings.Cut(strings.TrimPrefix(v, "kube="), ".")
			}
		}
		break
	}
	return info
}

func (c *Cluster) workloads() []interface{} {
	nodes := int32(len(c.Nodes))
	two := int32(2)
	return []interface{}{
		map[string]interface{}{
			"kind":     "DaemonSet",
			"metadata": map[string]interface{}{"name": "kube-proxy", "generation": 2},
			"spec":     map[string]interface{}{"template": map[string]interface{}{"spec": map[string]interface{}{"containers": []interface{}{map[string]string{"name": "kube-proxy", "image": c.KubeProxy}}}}},
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
