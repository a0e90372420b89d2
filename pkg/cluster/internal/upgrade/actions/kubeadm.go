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
	"bytes"
	"context"
	"io"
	"strings"
	"sync"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/nudge"
)

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

// KubeadmUpgradeArgs are the flags of every `kubeadm upgrade apply` and
// `kubeadm upgrade node`: the preflight errors to ignore, the phases to
// skip (addon/kube-proxy when kube-proxy stays at its version) and the
// patches staged on the nodes.
func (c *Context) KubeadmUpgradeArgs() []string {
	args := []string{c.KubeadmIgnorePreflightErrors()}
	if c.State.LeavesKubeProxy {
		args = append(args, "--skip-phases="+KubeadmKubeProxyPhase)
	}
	if c.State.Patches != nil {
		args = append(args, "--patches="+c.State.PatchesDir())
	}
	return args
}

// KubeadmKubeProxyPhase is kubeadm's phase of `upgrade apply` and
// `upgrade node` that upgrades kube-proxy (phases of `upgrade apply` came
// with kubeadm v1.32).
const KubeadmKubeProxyPhase = "addon/kube-proxy"

// PullImage pulls image on n through its containerd (crictl: the CRI,
// with the node's registry configuration and proxy) under ctx; the output
// is crictl's, for the error.
func PullImage(ctx context.Context, n nodes.Node, image string) (string, error) {
	return nodeutils.CombinedOutput(n.CommandContext(ctx, "crictl", "pull", image))
}

// KubeadmLock serializes kubeadm runs on a node: when an interrupted run
// left kubeadm running in the node (stopping the docker client does not
// stop the process it started), the next run waits for it instead of
// running a second kubeadm at the same time.
const KubeadmLock = StagingRoot + "/.kubeadm.lock"

// Kubeadm runs the staged kubeadm on n, holding KubeadmLock; its output is
// logged at V(3) and part of the error when it fails. While it runs, its
// output goes through a nudge.Watcher: when kubeadm waits for the kubelet
// to restart a control-plane component, the kubelet is nudged to start
// the new pod as soon as the old one is gone.
func (c *Context) Kubeadm(phase string, n nodes.Node, args ...string) error {
	argv := append([]string{KubeadmLock, c.State.Staged("kubeadm")}, args...)
	var buf bytes.Buffer
	w := nudge.Start(c, n.String(), c.Kube().Once(), c.Logger)
	out := &lockedWriter{w: io.MultiWriter(&buf, w)}
	err := n.CommandContext(c, "flock", argv...).SetStdout(out).SetStderr(out).Run()
	w.Close()
	if err != nil {
		c.Logger.V(3).Infof("%s: %s: kubeadm failed, its output:\n%s", phase, n, buf.String())
		return errors.Wrapf(err, "kubeadm failed on node %q", n)
	}
	c.Logger.V(3).Infof("%s: %s: kubeadm output:\n%s", phase, n, buf.String())
	return nil
}

// lockedWriter serializes writes to w: a command's stdout and stderr may
// be written at once.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
