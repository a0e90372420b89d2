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

package nodeutils

import (
	"context"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/exec"
)

// AdminKubeconfig is the kubeconfig kubeadm writes on control-plane nodes.
const AdminKubeconfig = "/etc/kubernetes/admin.conf"

// Kubectl returns a command running the node's kubectl against the cluster
// with the admin kubeconfig. n must be a control-plane node.
func Kubectl(ctx context.Context, n nodes.Node, args ...string) exec.Cmd {
	return n.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig=" + AdminKubeconfig}, args...)...)
}
