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

package actions

import (
	"fmt"
	"path"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/imageref"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/plan"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/nodeutils"
)

// ManifestsDir is where kubeadm keeps static pod manifests.
const ManifestsDir = "/etc/kubernetes/manifests"

// StaticPodImages returns, for each static pod manifest on n, the image it
// runs, keyed by component.
func (c *Context) StaticPodImages(n nodes.Node) (map[string]string, error) {
	images := map[string]string{}
	for _, component := range plan.ControlPlaneComponents {
		manifest := path.Join(ManifestsDir, component+".yaml")
		content, ok, err := nodeutils.ReadFile(c, n, manifest)
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
		images[component] = ""
		if len(pod.Images) > 0 {
			images[component] = pod.Images[0]
		}
	}
	if images["kube-apiserver"] == "" {
		return nil, errors.Errorf("node %q has no kube-apiserver static pod manifest", n)
	}
	return images, nil
}

// TargetImage returns the image kubeadm uses for component at the target.
func (s *State) TargetImage(component string) string {
	return plan.ComponentImage(s.Images, component)
}

// StaticPodsAtTarget reports whether every static pod manifest on n names
// the target's image; reason lists those that do not.
func (c *Context) StaticPodsAtTarget(n nodes.Node) (bool, string, error) {
	images, err := c.StaticPodImages(n)
	if err != nil {
		return false, "", err
	}
	var behind []string
	for _, component := range plan.ControlPlaneComponents {
		image, ok := images[component]
		if !ok {
			continue
		}
		if want := c.State.TargetImage(component); imageref.Normalize(image) != imageref.Normalize(want) {
			behind = append(behind, fmt.Sprintf("%s runs %s", component, image))
		}
	}
	return len(behind) == 0, strings.Join(behind, ", "), nil
}

// ControlPlanePodsReady returns nil when the static pods of n run the
// target's images and are Ready, as the API server sees them, else what is
// not yet so.
func (c *Context) ControlPlanePodsReady(n nodes.Node) error {
	images, err := c.StaticPodImages(n)
	if err != nil {
		return err
	}
	pods, err := c.Kube().ControlPlanePods(c)
	if err != nil {
		return err
	}
	for component := range images {
		want := imageref.Normalize(c.State.TargetImage(component))
		found := false
		for _, p := range pods {
			if p.NodeName != n.String() || p.Component != component {
				continue
			}
			found = true
			for _, image := range p.Images {
				if imageref.Normalize(image) != want {
					return errors.Errorf("%s on %s runs %s, not %s yet", component, n, image, want)
				}
			}
			if !p.Ready {
				return errors.Errorf("%s on %s is not Ready yet", component, n)
			}
		}
		if !found {
			return errors.Errorf("no %s pod on %s yet", component, n)
		}
	}
	return nil
}

// KubeadmIgnorePreflightErrors is the --ignore-preflight-errors value for
// kubeadm: checks that cannot pass in a container, plus the user's.
func (c *Context) KubeadmIgnorePreflightErrors() string {
	checks := []string{"SystemVerification", "Swap", "FileContent--proc-sys-net-bridge-bridge-nf-call-iptables"}
	seen := map[string]bool{}
	var out []string
	for _, check := range append(checks, c.Options.IgnorePreflightErrors...) {
		if strings.EqualFold(check, "all") {
			// kubeadm refuses "all" mixed with single checks
			return "--ignore-preflight-errors=all"
		}
		if check != "" && !seen[strings.ToLower(check)] {
			seen[strings.ToLower(check)] = true
			out = append(out, check)
		}
	}
	return "--ignore-preflight-errors=" + strings.Join(out, ",")
}

// KubeadmLock serializes kubeadm runs on a node: when an interrupted run
// left kubeadm running in the node (stopping the docker client does not
// stop the process it started), the next run waits for it instead of
// running a second kubeadm at the same time.
const KubeadmLock = StagingRoot + "/.kubeadm.lock"

// Kubeadm runs the staged kubeadm on n, holding KubeadmLock; its output is
// logged at V(3) and part of the error when it fails.
func (c *Context) Kubeadm(phase string, n nodes.Node, args ...string) error {
	argv := append([]string{KubeadmLock, c.State.Staged("kubeadm")}, args...)
	out, err := nodeutils.CombinedOutput(n.CommandContext(c, "flock", argv...))
	if err != nil {
		return errors.Wrapf(err, "kubeadm failed on node %q", n)
	}
	c.Logger.V(3).Infof("%s: %s: kubeadm output:\n%s", phase, n, out)
	return nil
}
