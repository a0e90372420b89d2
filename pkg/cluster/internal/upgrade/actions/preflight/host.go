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

package preflight

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/Masterminds/semver/v3"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
)

// cgroupV1RefusedFrom is the first kubelet minor version that refuses to
// start on a cgroup v1 host unless its configuration sets failCgroupV1:
// false.
var cgroupV1RefusedFrom = semver.MustParse("1.35.0")

// checkHost refuses a target whose kubelet would refuse the nodes' host:
// kubeadm writes the cluster's kubelet configuration to every node it
// upgrades, and a kubelet that refuses its host leaves the node NotReady
// half-way through the upgrade. So does a kubelet that finds the host's
// inotify limits exhausted (checkInotify).
func checkHost(ctx *actions.Context) error {
	if err := checkInotify(ctx); err != nil {
		return err
	}
	st := ctx.State
	if err := actions.OnNodes(ctx.Nodes, func(_ int, n nodes.Node) error {
		info := st.Info[n.String()]
		fs, err := exec.Output(n.CommandContext(ctx, "stat", "-f", "-c", "%T", "/sys/fs/cgroup"))
		if err != nil {
			return errors.Wrapf(err, "failed to read the cgroup file system of node %q", n)
		}
		info.CgroupV1 = IsCgroupV1(string(fs))
		swaps, err := exec.Output(n.CommandContext(ctx, "cat", "/proc/swaps"))
		if err != nil {
			return errors.Wrapf(err, "failed to read /proc/swaps on node %q", n)
		}
		info.Swap = HasSwap(string(swaps))
		return nil
	}); err != nil {
		return err
	}
	var cgroupV1, swap []string
	for _, n := range st.Ordered() {
		info := st.Info[n.String()]
		if info.CgroupV1 {
			cgroupV1 = append(cgroupV1, n.String())
		}
		if info.Swap {
			swap = append(swap, n.String())
		}
	}
	if len(cgroupV1) == 0 && len(swap) == 0 {
		return nil
	}
	cfg, err := ctx.Kube().KubeletConfiguration(ctx)
	if err != nil {
		return errors.Wrap(err, "failed to read the cluster's kubelet configuration")
	}
	return HostRefusal(st.TargetVersion, cfg, cgroupV1, swap, ctx.Options.ClusterName)
}

// IsCgroupV1 reports whether `stat -f -c %T /sys/fs/cgroup` printed the
// file system of a cgroup v1 (or hybrid) host rather than cgroup2fs.
func IsCgroupV1(fsType string) bool {
	return strings.TrimSpace(fsType) != "cgroup2fs"
}

// HasSwap reports whether /proc/swaps lists an active swap area.
func HasSwap(procSwaps string) bool {
	lines := strings.Split(strings.TrimSpace(procSwaps), "\n")
	return len(lines) > 1
}

// HostRefusal returns the error for a kubelet at target that would refuse
// hosts with the given cgroup v1 and swap nodes under cfg, nil when it
// would start.
func HostRefusal(target *semver.Version, cfg *kube.KubeletConfiguration, cgroupV1, swap []string, clusterName string) error {
	if clusterName == "" {
		clusterName = "kind"
	}
	edit := fmt.Sprintf("kubectl --context kind-%s --namespace kube-system edit configmap %s", clusterName, kube.KubeletConfigMap)
	var problems []string
	failCgroupV1 := cfg.FailCgroupV1 == nil || *cfg.FailCgroupV1
	if len(cgroupV1) > 0 && failCgroupV1 && !target.LessThan(cgroupV1RefusedFrom) {
		problems = append(problems, fmt.Sprintf(
			"the kubelet refuses cgroup v1 hosts from Kubernetes v%d.%d on unless its configuration sets failCgroupV1: false, and node(s) %s run on cgroup v1 while this cluster's kubelet configuration does not set it: "+
				"move the host to cgroup v2, or allow cgroup v1 by adding the line `failCgroupV1: false` to the kubelet key of the ConfigMap (`%s`; kubeadm copies it to every node it upgrades)",
			cgroupV1RefusedFrom.Major(), cgroupV1RefusedFrom.Minor(), strings.Join(cgroupV1, ", "), edit))
	}
	if len(swap) > 0 && (cfg.FailSwapOn == nil || *cfg.FailSwapOn) {
		problems = append(problems, fmt.Sprintf(
			"the kubelet refuses to start where swap is on unless its configuration sets failSwapOn: false, and node(s) %s see active swap while this cluster's kubelet configuration does not set it: "+
				"turn swap off on the host (`swapoff -a`), or add the line `failSwapOn: false` to the kubelet key of the ConfigMap (`%s`)",
			strings.Join(swap, ", "), edit))
	}
	if len(problems) == 0 {
		return nil
	}
	return errors.Errorf("kubelet v%s would not start on this cluster's nodes, which would leave them NotReady half-way through the upgrade:\n  %s\nthen run this command again", target, strings.Join(problems, "\n  "))
}
