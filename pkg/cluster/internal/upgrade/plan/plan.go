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

package plan

import (
	"fmt"
	"io"
	"strings"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/emulation"
)

// Plan is what an upgrade will do, printed by --dry-run.
type Plan struct {
	// From is the control plane's current Kubernetes version.
	From string `json:"from"`
	// To is the target Kubernetes version.
	To string `json:"to"`
	// Source is where the target comes from, as the flags name it:
	// "--image kindest/node:v1.37.2", "--image-dir /tmp/v1.37.2".
	Source string `json:"source,omitempty"`
	// Images are the images kubeadm needs for the target.
	Images []string `json:"images"`
	// Nodes in the order the upgrade visits them.
	Nodes []Node `json:"nodes"`
	// SkippedPhases are the phases --skip-phases leaves out.
	SkippedPhases []string `json:"skippedPhases,omitempty"`
	// KubeadmConfig are the changes of kubeadm's configuration (the
	// ClusterConfiguration of the kubeadm-config ConfigMap) the upgrade
	// makes before kubeadm renders the control plane.
	KubeadmConfig []emulation.Change `json:"kubeadmConfig,omitempty"`
	// ControlPlaneOnly is true when the nodes already run the target and
	// only the control plane is re-applied, at the same version.
	ControlPlaneOnly bool `json:"controlPlaneOnly,omitempty"`
	// Patches are kubeadm's patches, nil for none.
	Patches *Patches `json:"patches,omitempty"`
	// Hop and Hops are, in a chain of targets, this target's 1-based
	// position and the chain's length; 0 for a single target.
	Hop  int `json:"hop,omitempty"`
	Hops int `json:"hops,omitempty"`
	// KubeletsAt is, in a chain whose kubelets do not move at this
	// target, the target at which they do.
	KubeletsAt string `json:"kubeletsAt,omitempty"`
}

// Patches are the kubeadm patches handed to kubeadm.
type Patches struct {
	// Dir is the folder on the host, NodeDir where they are staged on
	// the nodes (kubeadm's --patches).
	Dir     string `json:"dir"`
	NodeDir string `json:"nodeDir"`
	// Files are the files kubeadm reads, in its order.
	Files []string `json:"files"`
}

// Node is the plan for one node.
type Node struct {
	Name string `json:"name"`
	Role string `json:"role"`
	// Bootstrap is true for the control-plane node `kubeadm upgrade apply`
	// runs on.
	Bootstrap bool   `json:"bootstrap,omitempty"`
	From      string `json:"from"`
	To        string `json:"to"`
	// Load are the image archives this node gets from the source: file
	// names of --image-dir, image references of --image.
	Load []string `json:"load,omitempty"`
	// Pull are the images the node pulls from their registry: no source
	// provides them.
	Pull []string `json:"pull,omitempty"`
	// Steps are "<phase>: <step>" in execution order.
	Steps []string `json:"steps"`
}

// WriteText prints the plan for people.
func (p *Plan) WriteText(w io.Writer) error {
	var b strings.Builder
	title := "Upgrade plan"
	if p.Hops > 0 {
		title = fmt.Sprintf("Upgrade plan, target %d of %d", p.Hop, p.Hops)
	}
	if p.ControlPlaneOnly {
		fmt.Fprintf(&b, "%s: %s -> %s (the same version: the control plane is re-applied for its new kubeadm configuration)\n", title, p.From, p.To)
	} else {
		fmt.Fprintf(&b, "%s: %s -> %s\n", title, p.From, p.To)
	}
	if p.KubeletsAt != "" {
		fmt.Fprintf(&b, "Kubelets: left as they are, they move at %s\n", p.KubeletsAt)
	}
	if p.Source != "" {
		fmt.Fprintf(&b, "Source: %s\n", p.Source)
	}
	if len(p.SkippedPhases) > 0 {
		fmt.Fprintf(&b, "Skipped phases: %s\n", strings.Join(p.SkippedPhases, ", "))
	}
	for _, c := range p.KubeadmConfig {
		fmt.Fprintf(&b, "kubeadm configuration: %s\n", c)
	}
	if p.Patches != nil {
		fmt.Fprintf(&b, "kubeadm patches: %s, staged as %s: %s\n", p.Patches.Dir, p.Patches.NodeDir, strings.Join(p.Patches.Files, ", "))
	}
	fmt.Fprintf(&b, "Images kubeadm %s needs:\n", p.To)
	for _, image := range p.Images {
		fmt.Fprintf(&b, "  %s\n", image)
	}
	for _, n := range p.Nodes {
		role := n.Role
		if n.Bootstrap {
			role += ", bootstrap"
		}
		fmt.Fprintf(&b, "\nNode %s (%s): %s -> %s\n", n.Name, role, n.From, n.To)
		if len(n.Load) > 0 {
			fmt.Fprintf(&b, "  loads: %s\n", strings.Join(n.Load, ", "))
		}
		if len(n.Pull) > 0 {
			fmt.Fprintf(&b, "  pulls: %s\n", strings.Join(n.Pull, ", "))
		}
		for i, step := range n.Steps {
			fmt.Fprintf(&b, "  %2d. %s\n", i+1, step)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
