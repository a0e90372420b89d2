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
	"context"
	"encoding/json"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/exec"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
)

// Client runs kubectl on a control-plane node (On) with the admin kubeconfig.
type Client struct {
	On nodes.Node
	// Retries is how many times a request that failed transiently (see
	// Transient) is tried again; Backoff is the first pause before that,
	// doubled after each try. The zero Client does not retry.
	Retries int
	Backoff time.Duration
	// RetryForbidden retries RBAC denials too (Forbidden), as transient:
	// for requests right after an API server restarted.
	RetryForbidden bool
	// Logger, when set, says at V(1) when a request is tried again.
	Logger log.Logger
}

// output runs kubectl with args and returns its stdout. An error quotes
// kubectl's output.
func (c Client) output(ctx context.Context, args ...string) ([]byte, error) {
	backoff := c.Backoff
	for try := 1; ; try++ {
		// a request that hangs while an API server restarts must not stall a wait
		out, err := exec.Output(nodeutils.Kubectl(ctx, c.On, append([]string{"--request-timeout=30s"}, args...)...))
		if err == nil {
			return out, nil
		}
		msg := err.Error()
		if runErr := exec.RunErrorForError(err); runErr != nil {
			msg = message(runErr.Output)
		}
		what := "kubectl " + strings.Join(args, " ")
		retry := Transient(msg) || (c.RetryForbidden && Forbidden(msg))
		if !retry || try > c.Retries || ctx.Err() != nil {
			if try > 1 {
				return nil, errors.Wrapf(err, "failed to run %s after %d tries: %s", what, try, msg)
			}
			return nil, errors.Wrapf(err, "failed to run %s: %s", what, msg)
		}
		if c.Logger != nil {
			c.Logger.V(1).Infof("%s: %s; trying again in %s", what, msg, backoff)
		}
		select {
		case <-ctx.Done():
			return nil, errors.Wrapf(ctx.Err(), "cancelled while retrying %s after: %s", what, msg)
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

// Run runs kubectl with args, discarding its output unless it fails.
func (c Client) Run(ctx context.Context, args ...string) error {
	_, err := c.output(ctx, args...)
	return err
}

// Nodes lists the cluster's nodes.
func (c Client) Nodes(ctx context.Context) ([]Node, error) {
	out, err := c.output(ctx, "get", "nodes", "-o", "json")
	if err != nil {
		return nil, err
	}
	return ParseNodeList(out)
}

// Node returns the named node.
func (c Client) Node(ctx context.Context, name string) (Node, error) {
	list, err := c.Nodes(ctx)
	if err != nil {
		return Node{}, err
	}
	for _, n := range list {
		if n.Name == name {
			return n, nil
		}
	}
	return Node{}, errors.Errorf("node %q is not registered with the API server", name)
}

// ControlPlanePods lists kubeadm's static control-plane pods.
func (c Client) ControlPlanePods(ctx context.Context) ([]Pod, error) {
	out, err := c.output(ctx, "get", "pods", "--namespace=kube-system", "--selector=tier=control-plane", "-o", "json")
	if err != nil {
		return nil, err
	}
	return ParsePodList(out)
}

// KubeletPods lists the pods the kubelet of node runs, as that kubelet
// itself sees them (its /pods, through the API server). A static pod's
// status there is the running kubelet's own: a kubelet that has just
// started has none until it has synced the pod (the API server keeps
// showing the previous kubelet's status until then).
func (c Client) KubeletPods(ctx context.Context, node string) ([]Pod, error) {
	out, err := c.output(ctx, "get", "--raw=/api/v1/nodes/"+node+"/proxy/pods")
	if err != nil {
		return nil, err
	}
	return ParsePodList(out)
}

// Pods lists the pods of every namespace, those of a namespace being
// deleted as Deleting (one request lists both).
func (c Client) Pods(ctx context.Context) ([]Pod, error) {
	out, err := c.output(ctx, "get", "namespaces,pods", "--all-namespaces", "-o", "json")
	if err != nil {
		return nil, err
	}
	return ParsePodList(out)
}

// Workloads lists the DaemonSets and Deployments of namespace.
func (c Client) Workloads(ctx context.Context, namespace string) ([]Workload, error) {
	out, err := c.output(ctx, "get", "daemonsets,deployments", "--namespace="+namespace, "-o", "json")
	if err != nil {
		return nil, err
	}
	return ParseWorkloads(out)
}

// ClusterConfiguration reads kubeadm's ClusterConfiguration from the
// kubeadm-config ConfigMap.
func (c Client) ClusterConfiguration(ctx context.Context) (*ClusterConfiguration, error) {
	out, err := c.output(ctx, "get", "configmap", "kubeadm-config", "--namespace=kube-system", "-o", "jsonpath={.data.ClusterConfiguration}")
	if err != nil {
		return nil, err
	}
	return ParseClusterConfiguration(out)
}

// Readyz returns nil when the API server's /readyz answers ok.
func (c Client) Readyz(ctx context.Context) error {
	out, err := c.output(ctx, "get", "--raw=/readyz")
	if err != nil {
		return err
	}
	if strings.TrimSpace(string(out)) != "ok" {
		return errors.Errorf("API server /readyz answered %q", strings.TrimSpace(string(out)))
	}
	return nil
}

// ServerVersion returns the API server's gitVersion.
func (c Client) ServerVersion(ctx context.Context) (string, error) {
	out, err := c.output(ctx, "get", "--raw=/version")
	if err != nil {
		return "", err
	}
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return "", errors.Wrap(err, "failed to parse API server version")
	}
	return v.GitVersion, nil
}

// KubeletConfiguration reads the cluster's KubeletConfiguration from the
// kubelet-config ConfigMap.
func (c Client) KubeletConfiguration(ctx context.Context) (*KubeletConfiguration, error) {
	out, err := c.output(ctx, "get", "configmap", KubeletConfigMap, "--namespace=kube-system", "-o", "jsonpath={.data.kubelet}")
	if err != nil {
		return nil, err
	}
	return ParseKubeletConfiguration(out)
}

// KubeletConfigMap is the kube-system ConfigMap kubeadm keeps the cluster's
// KubeletConfiguration in.
const KubeletConfigMap = "kubelet-config"
