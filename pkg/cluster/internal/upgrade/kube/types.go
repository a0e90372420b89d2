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

package kube

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/yaml"
)

// Node is the part of a Node object the upgrade looks at.
type Node struct {
	Name           string
	KubeletVersion string
	Ready          bool
	Unschedulable  bool
	// NoSchedule is true when a NoSchedule or NoExecute taint keeps
	// ordinary pods off the node.
	NoSchedule  bool
	Annotations map[string]string
}

type nodeObject struct {
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Unschedulable bool `json:"unschedulable"`
		Taints        []struct {
			Key    string `json:"key"`
			Effect string `json:"effect"`
		} `json:"taints"`
	} `json:"spec"`
	Status struct {
		Conditions []condition `json:"conditions"`
		NodeInfo   struct {
			KubeletVersion string `json:"kubeletVersion"`
		} `json:"nodeInfo"`
	} `json:"status"`
}

type condition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
}

func isTrue(conditions []condition, t string) bool {
	for _, c := range conditions {
		if c.Type == t {
			return c.Status == "True"
		}
	}
	return false
}

func (o nodeObject) node() Node {
	n := Node{
		Name:           o.Metadata.Name,
		KubeletVersion: o.Status.NodeInfo.KubeletVersion,
		Ready:          isTrue(o.Status.Conditions, "Ready"),
		Unschedulable:  o.Spec.Unschedulable,
		Annotations:    o.Metadata.Annotations,
	}
	for _, t := range o.Spec.Taints {
		if t.Effect == "NoSchedule" || t.Effect == "NoExecute" {
			n.NoSchedule = true
		}
	}
	return n
}

// ParseNodeList parses `kubectl get nodes -o json`.
func ParseNodeList(b []byte) ([]Node, error) {
	var list struct {
		Items []nodeObject `json:"items"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, errors.Wrap(err, "failed to parse node list")
	}
	nodes := make([]Node, 0, len(list.Items))
	for _, item := range list.Items {
		nodes = append(nodes, item.node())
	}
	return nodes, nil
}

// Pod is the part of a Pod object the upgrade looks at.
type Pod struct {
	Namespace string
	Name      string
	NodeName  string
	// Component is the "component" label kubeadm puts on static pods.
	Component string
	Images    []string
	// Command is the first container's command followed by its args, as
	// a static pod manifest or its mirror gives them.
	Command []string
	Ready   bool
	// Running is true when the pod's status lists its containers and each
	// of them is running (started, not necessarily Ready yet).
	Running bool
	// ContainerIDs are the IDs of the containers the pod runs, as its
	// status reports them ("" for one not started yet).
	ContainerIDs []string
	// Unmanaged is true for a pod that `kubectl drain` deletes only with
	// --force: one no controller recreates (no owner reference with
	// controller: true), that is not a static pod's mirror and that has not
	// finished.
	Unmanaged bool
	// Deleting is true for a pod that is going away without anyone else's
	// help: it has a deletion timestamp, or its namespace is being deleted
	// (the namespace controller deletes the pod soon).
	Deleting bool
	// StorageHelper is true for a helper pod of kind's local-path
	// provisioner (namespace local-path-storage, named helper-pod-...): the
	// provisioner runs one on a node to create or delete a volume's
	// directory there, without a controller, and deletes it when it is done.
	StorageHelper bool
}

// GoesAway reports whether the pod leaves by itself soon: it is being
// deleted, or it is a storage helper its provisioner deletes when done.
func (p Pod) GoesAway() bool {
	return p.Deleting || p.StorageHelper
}

// kind's local-path provisioner (kind's default storage class) runs its
// helper pods in storageNamespace, named from storageHelperPrefix.
const (
	storageNamespace    = "local-path-storage"
	storageHelperPrefix = "helper-pod-"
)

// mirrorAnnotation marks the API server's mirror of a static pod.
const mirrorAnnotation = "kubernetes.io/config.mirror"

type podObject struct {
	// Kind is set in a list of several kinds (kubectl get namespaces,pods).
	Kind     string `json:"kind"`
	Metadata struct {
		Namespace         string            `json:"namespace"`
		DeletionTimestamp *string           `json:"deletionTimestamp"`
		Name              string            `json:"name"`
		Labels            map[string]string `json:"labels"`
		Annotations       map[string]string `json:"annotations"`
		OwnerReferences   []struct {
			Controller *bool `json:"controller"`
		} `json:"ownerReferences"`
	} `json:"metadata"`
	Spec struct {
		NodeName   string `json:"nodeName"`
		Containers []struct {
			Image   string   `json:"image"`
			Command []string `json:"command"`
			Args    []string `json:"args"`
		} `json:"containers"`
	} `json:"spec"`
	Status struct {
		Phase             string      `json:"phase"`
		Conditions        []condition `json:"conditions"`
		ContainerStatuses []struct {
			ContainerID string `json:"containerID"`
			State       struct {
				Running *struct{} `json:"running"`
			} `json:"state"`
		} `json:"containerStatuses"`
	} `json:"status"`
}

func (o podObject) pod() Pod {
	p := Pod{
		Namespace: o.Metadata.Namespace,
		Name:      o.Metadata.Name,
		NodeName:  o.Spec.NodeName,
		Component: o.Metadata.Labels["component"],
		Ready:     isTrue(o.Status.Conditions, "Ready"),
		Deleting:  o.Metadata.DeletionTimestamp != nil,
	}
	p.StorageHelper = p.Namespace == storageNamespace && strings.HasPrefix(p.Name, storageHelperPrefix)
	controlled := false
	for _, ref := range o.Metadata.OwnerReferences {
		controlled = controlled || (ref.Controller != nil && *ref.Controller)
	}
	_, mirror := o.Metadata.Annotations[mirrorAnnotation]
	finished := o.Status.Phase == "Succeeded" || o.Status.Phase == "Failed"
	p.Unmanaged = !controlled && !mirror && !finished
	for i, c := range o.Spec.Containers {
		p.Images = append(p.Images, c.Image)
		if i == 0 {
			p.Command = append(append([]string{}, c.Command...), c.Args...)
		}
	}
	p.Running = len(o.Status.ContainerStatuses) > 0
	for _, c := range o.Status.ContainerStatuses {
		p.ContainerIDs = append(p.ContainerIDs, c.ContainerID)
		p.Running = p.Running && c.State.Running != nil
	}
	return p
}

// ParsePodList parses `kubectl get pods -o json`, or the pods of
// `kubectl get namespaces,pods -o json`, where a pod of a namespace being
// deleted is Deleting.
func ParsePodList(b []byte) ([]Pod, error) {
	var list struct {
		Items []podObject `json:"items"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, errors.Wrap(err, "failed to parse pod list")
	}
	terminating := map[string]bool{}
	for _, item := range list.Items {
		if item.Kind == "Namespace" {
			terminating[item.Metadata.Name] = item.Metadata.DeletionTimestamp != nil || item.Status.Phase == "Terminating"
		}
	}
	pods := make([]Pod, 0, len(list.Items))
	for _, item := range list.Items {
		if item.Kind != "" && item.Kind != "Pod" {
			continue
		}
		p := item.pod()
		p.Deleting = p.Deleting || terminating[p.Namespace]
		pods = append(pods, p)
	}
	return pods, nil
}

// ParsePod parses a pod manifest in YAML or JSON, such as the static pod
// manifests kubeadm writes to /etc/kubernetes/manifests.
func ParsePod(b []byte) (Pod, error) {
	var o podObject
	if err := yaml.Unmarshal(b, &o); err != nil {
		return Pod{}, errors.Wrap(err, "failed to parse pod manifest")
	}
	return o.pod(), nil
}

// Workload is a DaemonSet or Deployment and whether it is fully rolled out
// and available.
type Workload struct {
	Kind      string
	Name      string
	Available bool
	// Detail says what is missing when not Available.
	Detail string
	// Images are the images of its pod template's containers.
	Images []string
}

// ParseWorkloads parses `kubectl get daemonsets,deployments -o json`.
func ParseWorkloads(b []byte) ([]Workload, error) {
	var list struct {
		Items []struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name       string `json:"name"`
				Generation int64  `json:"generation"`
			} `json:"metadata"`
			Spec struct {
				Replicas *int32 `json:"replicas"`
				Template struct {
					Spec struct {
						Containers []struct {
							Image string `json:"image"`
						} `json:"containers"`
					} `json:"spec"`
				} `json:"template"`
			} `json:"spec"`
			Status struct {
				ObservedGeneration     int64 `json:"observedGeneration"`
				DesiredNumberScheduled int32 `json:"desiredNumberScheduled"`
				UpdatedNumberScheduled int32 `json:"updatedNumberScheduled"`
				NumberAvailable        int32 `json:"numberAvailable"`
				UpdatedReplicas        int32 `json:"updatedReplicas"`
				AvailableReplicas      int32 `json:"availableReplicas"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, errors.Wrap(err, "failed to parse workload list")
	}
	var out []Workload
	for _, item := range list.Items {
		w := Workload{Kind: item.Kind, Name: item.Metadata.Name}
		for _, c := range item.Spec.Template.Spec.Containers {
			w.Images = append(w.Images, c.Image)
		}
		st := item.Status
		var want, updated, available int32
		switch item.Kind {
		case "DaemonSet":
			want, updated, available = st.DesiredNumberScheduled, st.UpdatedNumberScheduled, st.NumberAvailable
		case "Deployment":
			want = 1
			if item.Spec.Replicas != nil {
				want = *item.Spec.Replicas
			}
			updated, available = st.UpdatedReplicas, st.AvailableReplicas
		default:
			continue
		}
		w.Available = st.ObservedGeneration >= item.Metadata.Generation && updated >= want && available >= want
		if !w.Available {
			w.Detail = fmtDetail(want, updated, available)
		}
		out = append(out, w)
	}
	return out, nil
}

func fmtDetail(want, updated, available int32) string {
	return fmt.Sprintf("want %d, updated %d, available %d", want, updated, available)
}

// KubeProxyImage returns the image of the kube-proxy DaemonSet among
// workloads (kube-system's), "" when there is none (a cluster made with
// kind's kubeProxyMode: none).
func KubeProxyImage(workloads []Workload) string {
	for _, w := range workloads {
		if w.Kind == "DaemonSet" && w.Name == "kube-proxy" && len(w.Images) > 0 {
			return w.Images[0]
		}
	}
	return ""
}

// ClusterConfiguration is the part of kubeadm's ClusterConfiguration the
// upgrade looks at: the version, what decides kubeadm's images, and the
// extra arguments of the control-plane components.
type ClusterConfiguration struct {
	APIVersion        string    `json:"apiVersion"`
	KubernetesVersion string    `json:"kubernetesVersion"`
	ImageRepository   string    `json:"imageRepository"`
	Etcd              Etcd      `json:"etcd"`
	DNS               ImageMeta `json:"dns"`
	// APIServer, ControllerManager and Scheduler are the sections of
	// the same names.
	APIServer         ControlPlaneComponent `json:"apiServer"`
	ControllerManager ControlPlaneComponent `json:"controllerManager"`
	Scheduler         ControlPlaneComponent `json:"scheduler"`
}

// The ClusterConfiguration's sections of the control-plane components
// kubeadm renders with their extraArgs.
const (
	SectionAPIServer         = "apiServer"
	SectionControllerManager = "controllerManager"
	SectionScheduler         = "scheduler"
)

// Section returns the section named name (one of the Section constants),
// nil for another name.
func (c *ClusterConfiguration) Section(name string) *ControlPlaneComponent {
	switch name {
	case SectionAPIServer:
		return &c.APIServer
	case SectionControllerManager:
		return &c.ControllerManager
	case SectionScheduler:
		return &c.Scheduler
	}
	return nil
}

// ControlPlaneComponent is the part of a component's section the upgrade
// looks at.
type ControlPlaneComponent struct {
	ExtraArgs ExtraArgs `json:"extraArgs,omitempty"`
}

// Arg is one of a component's extra arguments: kubeadm renders it as
// --Name=Value in the component's command.
type Arg struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ExtraArgs are a component's extraArgs, in either of the shapes kubeadm
// has stored them in: a list of {name, value} (v1beta4 on) or a map of
// name to value (v1beta3, read in the order of the names).
type ExtraArgs []Arg

// UnmarshalJSON reads either shape; anything else is an error.
func (a *ExtraArgs) UnmarshalJSON(b []byte) error {
	var list []Arg
	if err := json.Unmarshal(b, &list); err == nil {
		*a = list
		return nil
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return errors.Errorf("extraArgs is neither a list of {name, value} nor a map of names to values: %s", b)
	}
	*a = nil
	for _, name := range sortedKeys(m) {
		*a = append(*a, Arg{Name: name, Value: m[name]})
	}
	return nil
}

// Get returns the value of the argument name and whether it is set; of an
// argument given twice, the last value (the one the component sees).
func (a ExtraArgs) Get(name string) (string, bool) {
	value, found := "", false
	for _, arg := range a {
		if arg.Name == name {
			value, found = arg.Value, true
		}
	}
	return value, found
}

// Etcd is a ClusterConfiguration's etcd section: Local is nil for an
// external etcd (which kind does not set up).
type Etcd struct {
	Local *ImageMeta `json:"local,omitempty"`
}

// ImageMeta is kubeadm's per-component image override (etcd.local and dns
// in a ClusterConfiguration), which a kind user sets with
// kubeadmConfigPatches.
type ImageMeta struct {
	ImageRepository string `json:"imageRepository,omitempty"`
	ImageTag        string `json:"imageTag,omitempty"`
}

// imagesConfig is the document ImagesConfig renders.
type imagesConfig struct {
	APIVersion      string     `json:"apiVersion"`
	Kind            string     `json:"kind"`
	ImageRepository string     `json:"imageRepository,omitempty"`
	Etcd            *Etcd      `json:"etcd,omitempty"`
	DNS             *ImageMeta `json:"dns,omitempty"`
}

// ImagesConfig returns a ClusterConfiguration document, in the cluster's
// own apiVersion, holding only the fields that decide which images kubeadm
// lists: the image repository and the etcd and CoreDNS overrides. It has
// no kubernetesVersion; the caller appends the target's. Given to
// `kubeadm config images list --config`, it makes the new kubeadm list the
// images its `upgrade apply` will use on this cluster, where the defaults
// would name an etcd or CoreDNS the cluster was told not to run.
func (c *ClusterConfiguration) ImagesConfig() ([]byte, error) {
	doc := imagesConfig{APIVersion: c.APIVersion, Kind: "ClusterConfiguration", ImageRepository: c.ImageRepository}
	if doc.APIVersion == "" {
		return nil, errors.New("kubeadm ClusterConfiguration has no apiVersion")
	}
	if l := c.Etcd.Local; l != nil && *l != (ImageMeta{}) {
		doc.Etcd = &Etcd{Local: l}
	}
	if c.DNS != (ImageMeta{}) {
		doc.DNS = &c.DNS
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return nil, errors.Wrap(err, "failed to write kubeadm ClusterConfiguration")
	}
	return b, nil
}

// ParseClusterConfiguration parses the ClusterConfiguration document stored
// in the kubeadm-config ConfigMap.
func ParseClusterConfiguration(b []byte) (*ClusterConfiguration, error) {
	cfg := &ClusterConfiguration{}
	if err := yaml.Unmarshal(b, cfg); err != nil {
		return nil, errors.Wrap(err, "failed to parse kubeadm ClusterConfiguration")
	}
	if cfg.KubernetesVersion == "" {
		return nil, errors.New("kubeadm ClusterConfiguration has no kubernetesVersion")
	}
	return cfg, nil
}

// KubeletConfiguration holds the fields of the cluster's kubelet
// configuration (the kubelet-config ConfigMap, which kubeadm writes to
// every node's /var/lib/kubelet/config.yaml when it upgrades it) that
// decide whether a kubelet accepts its host. A nil field is unset: the
// kubelet's default applies.
type KubeletConfiguration struct {
	FailCgroupV1 *bool `json:"failCgroupV1,omitempty"`
	FailSwapOn   *bool `json:"failSwapOn,omitempty"`
}

// ParseKubeletConfiguration parses the KubeletConfiguration document stored
// in the kubelet-config ConfigMap.
func ParseKubeletConfiguration(b []byte) (*KubeletConfiguration, error) {
	cfg := &KubeletConfiguration{}
	if err := yaml.Unmarshal(b, cfg); err != nil {
		return nil, errors.Wrap(err, "failed to parse the KubeletConfiguration")
	}
	return cfg, nil
}
