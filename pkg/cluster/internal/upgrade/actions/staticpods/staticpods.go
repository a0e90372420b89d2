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

// Package staticpods checks a control-plane node's static pods: that they
// run the target's images, are Ready, and that the node's kubelet has
// taken them over. The control-plane, kubelets and verify phases share it.
package staticpods

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/emulation"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/imageref"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/plan"
)

// manifestsDir is where kubeadm keeps static pod manifests.
const manifestsDir = "/etc/kubernetes/manifests"

// staticPodImages returns, for each static pod manifest on n, the image it
// runs, keyed by component.
func staticPodImages(ctx *actions.Context, n nodes.Node) (map[string]string, error) {
	manifests, err := staticPodManifests(ctx, n)
	if err != nil {
		return nil, err
	}
	images := map[string]string{}
	for component, pod := range manifests {
		images[component] = ""
		if len(pod.Images) > 0 {
			images[component] = pod.Images[0]
		}
	}
	return images, nil
}

// staticPodManifests returns the static pod manifests on n, keyed by
// component.
func staticPodManifests(ctx *actions.Context, n nodes.Node) (map[string]kube.Pod, error) {
	manifests := map[string]kube.Pod{}
	for _, component := range plan.ControlPlaneComponents {
		manifest := path.Join(manifestsDir, component+".yaml")
		content, ok, err := nodeutils.ReadFile(ctx, n, manifest)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		pod, err := kube.ParsePod([]byte(content))
		if err != nil {
			return nil, errors.Wrapf(err, "failed to read %s on node %q", manifest, n)
		}
		manifests[component] = pod
	}
	if pod, ok := manifests["kube-apiserver"]; !ok || len(pod.Images) == 0 || pod.Images[0] == "" {
		return nil, errors.Errorf("node %q has no kube-apiserver static pod manifest", n)
	}
	return manifests, nil
}

// targetImage returns the image kubeadm uses for component at the target.
func targetImage(ctx *actions.Context, component string) string {
	return plan.ComponentImage(ctx.State.Images, component)
}

// AtTarget reports whether every static pod manifest on n names the
// target's image and, when the emulation is managed
// (State.EmulationManaged), runs with the arguments of State.Emulation;
// reason lists those that do not.
func AtTarget(ctx *actions.Context, n nodes.Node) (bool, string, error) {
	manifests, err := staticPodManifests(ctx, n)
	if err != nil {
		return false, "", err
	}
	var behind []string
	for _, component := range plan.ControlPlaneComponents {
		pod, ok := manifests[component]
		if !ok {
			continue
		}
		image := ""
		if len(pod.Images) > 0 {
			image = pod.Images[0]
		}
		if want := targetImage(ctx, component); imageref.Normalize(image) != imageref.Normalize(want) {
			behind = append(behind, fmt.Sprintf("%s runs %s", component, image))
			continue
		}
		if why := commandMismatch(ctx, component, pod.Command); why != "" {
			behind = append(behind, why)
		}
	}
	return len(behind) == 0, strings.Join(behind, ", "), nil
}

// commandMismatch says how a component's command differs from the
// emulation the upgrade leaves, "" when it does not or the emulation is
// not managed.
func commandMismatch(ctx *actions.Context, component string, command []string) string {
	if !ctx.State.EmulationManaged {
		return ""
	}
	return emulation.Mismatch(ctx.State.Emulation, component, command)
}

// servingComponents are the static pods a control-plane node must have
// Ready before the next control-plane node's upgrade: etcd (its quorum)
// and the API server (kind's load balancer sends requests to it). The
// controller-manager and the scheduler elect one leader among the nodes:
// the others' keep it, so theirs need only have started; their Ready is
// waited for once every control-plane node is upgraded, and in verify.
var servingComponents = map[string]bool{"etcd": true, "kube-apiserver": true}

// podsReady returns n's static pods among pods (as the API server lists
// them) when they run the target's images of the manifests' components
// (images) and are Ready (with serving, only servingComponents must be
// Ready and the others running), else what is not yet so.
func podsReady(ctx *actions.Context, n nodes.Node, images map[string]string, pods []kube.Pod, serving bool) ([]kube.Pod, error) {
	var checked []kube.Pod
	for _, component := range plan.ControlPlaneComponents {
		if _, ok := images[component]; !ok {
			continue
		}
		want := imageref.Normalize(targetImage(ctx, component))
		found := false
		for _, p := range pods {
			if p.NodeName != n.String() || p.Component != component {
				continue
			}
			found = true
			for _, image := range p.Images {
				if imageref.Normalize(image) != want {
					return nil, errors.Errorf("%s on %s runs %s, not %s yet", component, n, image, want)
				}
			}
			if why := commandMismatch(ctx, component, p.Command); why != "" {
				return nil, errors.Errorf("%s on %s yet", why, n)
			}
			switch {
			case serving && !servingComponents[component]:
				if !p.Running {
					return nil, errors.Errorf("%s on %s has not started yet", component, n)
				}
			case !p.Ready:
				return nil, errors.Errorf("%s on %s is not Ready yet", component, n)
			}
			checked = append(checked, p)
		}
		if !found {
			return nil, errors.Errorf("no %s pod on %s yet", component, n)
		}
	}
	return checked, nil
}

// SameContainers returns the container IDs of the static pods api (as the
// API server shows them) when the kubelet's own view of them (kubelet, its
// /pods) has each of them Ready with the same containers; else which is
// not so. Right after a kubelet restart the API server still shows what
// the previous kubelet reported, while the new kubelet reports a static
// pod only once it has synced it, and so has decided whether to restart
// its containers.
func SameContainers(api, kubelet []kube.Pod, node string) (string, error) {
	var ids []string
	for _, p := range api {
		var own *kube.Pod
		for i := range kubelet {
			if kubelet[i].Name == p.Name {
				own = &kubelet[i]
			}
		}
		switch {
		case own == nil:
			return "", errors.Errorf("the kubelet on %s does not run %s yet", node, p.Name)
		case !own.Ready:
			return "", errors.Errorf("%s is not Ready for the kubelet on %s yet", p.Name, node)
		case strings.Join(own.ContainerIDs, ",") != strings.Join(p.ContainerIDs, ","):
			return "", errors.Errorf("the API server does not show the containers the kubelet on %s runs for %s yet", node, p.Name)
		}
		for _, id := range own.ContainerIDs {
			if id == "" {
				return "", errors.Errorf("%s has a container not started yet on %s", p.Name, node)
			}
		}
		ids = append(ids, own.ContainerIDs...)
	}
	sort.Strings(ids)
	return strings.Join(ids, ","), nil
}

// StartedServing returns the container IDs of etcd and the API server
// (servingComponents) as the kubelet on node shows them in its own view
// (kubelet, its /pods), when it runs each of those the node has a manifest
// for (images, by component) at the manifest's image with every container
// started; else what is not yet so. Ready is not asked for: a restarted
// kubelet finds its new static pods Ready only at their startup probes'
// first success, 10 to 20 s after they start, well after the API server
// answers.
func StartedServing(kubelet []kube.Pod, images map[string]string, node string) (string, error) {
	var ids []string
	for _, component := range plan.ControlPlaneComponents {
		image, ok := images[component]
		if !ok || !servingComponents[component] {
			continue
		}
		var own *kube.Pod
		for i := range kubelet {
			if kubelet[i].Component == component {
				own = &kubelet[i]
			}
		}
		switch {
		case own == nil:
			return "", errors.Errorf("the kubelet on %s does not run %s yet", node, component)
		case len(own.Images) == 0 || imageref.Normalize(own.Images[0]) != imageref.Normalize(image):
			return "", errors.Errorf("the kubelet on %s does not run %s's manifest yet", node, component)
		case !own.Running:
			return "", errors.Errorf("%s has not started on %s yet", component, node)
		}
		for _, id := range own.ContainerIDs {
			if id == "" {
				return "", errors.Errorf("%s has a container not started yet on %s", component, node)
			}
		}
		ids = append(ids, own.ContainerIDs...)
	}
	sort.Strings(ids)
	return strings.Join(ids, ","), nil
}

// Reader reads a control-plane node's static pods for a wait's polls:
// its manifests once, at the first poll that reads them (only kubeadm
// writes them, and no wait runs beside a kubeadm), then, at each poll, the
// API server's answers in one command on the bootstrap node, each request
// tried once (kube.Client.Once): the next poll is the next try.
type Reader struct {
	node nodes.Node
	// images are the manifests' images by component, nil until read
	images map[string]string
}

// NewReader returns a Reader of n's static pods.
func NewReader(n nodes.Node) *Reader {
	return &Reader{node: n}
}

// manifests returns the images of n's static pod manifests, read at the
// first call that succeeds.
func (r *Reader) manifests(ctx *actions.Context) (map[string]string, error) {
	if r.images == nil {
		images, err := staticPodImages(ctx, r.node)
		if err != nil {
			return nil, err
		}
		r.images = images
	}
	return r.images, nil
}

// WaitReady waits until n's static pods run the target and are
// Ready, and the API server answers /readyz. Errors on the way (the API
// server restarting, the node authorizer catching up) are waited out.
func WaitReady(ctx *actions.Context, n nodes.Node) error {
	r := NewReader(n)
	return ctx.WaitOn(n.String(), "the control-plane pods on "+n.String(), func(ctx *actions.Context) (bool, error) {
		err := r.Check(ctx)
		return err == nil, err
	})
}

// WaitServing waits until n's static pods run the target, its etcd and
// API server are Ready, its controller-manager and scheduler have
// started, and the API server answers /readyz: what the next
// control-plane node's upgrade needs (see servingComponents). Errors on
// the way are waited out.
func WaitServing(ctx *actions.Context, n nodes.Node) error {
	r := NewReader(n)
	return ctx.WaitOn(n.String(), "the etcd and API server on "+n.String(), func(ctx *actions.Context) (bool, error) {
		err := r.check(ctx, true)
		return err == nil, err
	})
}

// Check returns nil when the node's static pods run the target and are
// Ready and the API server answers /readyz, else what is not yet so.
func (r *Reader) Check(ctx *actions.Context) error {
	return r.check(ctx, false)
}

// check is Check, or with serving what WaitServing waits for.
func (r *Reader) check(ctx *actions.Context, serving bool) error {
	images, err := r.manifests(ctx)
	if err != nil {
		return err
	}
	var api []kube.Pod
	errs := ctx.Kube().Once().ReadAll(ctx, kube.ReadControlPlanePods(&api), kube.ReadReadyz())
	if errs[0] != nil {
		return errs[0]
	}
	if _, err := podsReady(ctx, r.node, images, api, serving); err != nil {
		return err
	}
	return errs[1]
}

// KubeletTookOver returns the container IDs of the node's static pods
// when Check passes and the kubelet now running on the node reports the
// same containers Ready (SameContainers), else what is not yet so.
func (r *Reader) KubeletTookOver(ctx *actions.Context) (string, error) {
	images, err := r.manifests(ctx)
	if err != nil {
		return "", err
	}
	var api, own []kube.Pod
	errs := ctx.Kube().Once().ReadAll(ctx, kube.ReadControlPlanePods(&api), kube.ReadReadyz(), kube.ReadKubeletPods(r.node.String(), &own))
	if errs[0] != nil {
		return "", errs[0]
	}
	checked, err := podsReady(ctx, r.node, images, api, false)
	if err != nil {
		return "", err
	}
	for _, err := range errs[1:] {
		if err != nil {
			return "", err
		}
	}
	return SameContainers(checked, own, r.node.String())
}

// KubeletServes returns the container IDs of the node's etcd and API
// server when the kubelet now running on the node runs them
// (StartedServing) and the API server answers /readyz, else what is not
// yet so.
func (r *Reader) KubeletServes(ctx *actions.Context) (string, error) {
	images, err := r.manifests(ctx)
	if err != nil {
		return "", err
	}
	var own []kube.Pod
	errs := ctx.Kube().Once().ReadAll(ctx, kube.ReadKubeletPods(r.node.String(), &own), kube.ReadReadyz())
	for _, err := range errs {
		if err != nil {
			return "", err
		}
	}
	return StartedServing(own, images, r.node.String())
}
