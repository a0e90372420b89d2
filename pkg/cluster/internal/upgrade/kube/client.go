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
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/exec"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
)

// Client runs kubectl on a control-plane node (On) with the admin kubeconfig,
// or on any node with Kubeconfig.
type Client struct {
	On nodes.Node
	// Kubeconfig, when set, is the admin kubeconfig's content, handed to
	// kubectl on its stdin (nodeutils.KubectlWith): for a node On that
	// lacks it. ReadAll refuses it.
	Kubeconfig []byte
	// Retries is how many times a request that failed transiently (see
	// Transient) is tried again; Backoff is the first pause before that,
	// doubled after each try. The zero Client does not retry.
	Retries int
	Backoff time.Duration
	// RetryForbidden retries RBAC denials too (Forbidden), as transient:
	// for requests right after an API server restarted.
	RetryForbidden bool
	// RequestTimeout bounds each request (kubectl's --request-timeout);
	// DefaultRequestTimeout when zero.
	RequestTimeout time.Duration
	// Logger, when set, says at V(1) when a request is tried again.
	Logger log.Logger
}

// DefaultRequestTimeout bounds a request of a Client that sets no
// RequestTimeout: a request that hangs while an API server restarts must
// not stall the command that made it.
const DefaultRequestTimeout = 30 * time.Second

// PollRequestTimeout bounds each request of a Client made by Once: a wait
// that asks again every moment is better served by a request that gives up
// soon than by one that hangs.
const PollRequestTimeout = 5 * time.Second

// Once returns c making each request a single time, bounded by
// PollRequestTimeout: the client for a wait's polls, whose next poll, a
// moment later, is the next try. Retrying inside a poll would only delay
// what the wait sees: the end of an outage would be seen when the
// retries' pauses ran out, not at the next poll.
func (c Client) Once() Client {
	c.Retries = 0
	c.RequestTimeout = PollRequestTimeout
	return c
}

// argv is kubectl's arguments for a request of args, with the request
// timeout.
func (c Client) argv(args []string) []string {
	timeout := c.RequestTimeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	return append([]string{"--request-timeout=" + timeout.String()}, args...)
}

// output runs kubectl with args and returns its stdout. An error quotes
// kubectl's output.
func (c Client) output(ctx context.Context, args ...string) ([]byte, error) {
	var out []byte
	what := "kubectl " + strings.Join(args, " ")
	err := c.try(ctx, func() (string, string, error) {
		var err error
		out, err = exec.Output(nodeutils.KubectlWith(ctx, c.On, c.Kubeconfig, c.argv(args)...))
		if err != nil {
			return what, runMessage(err), err
		}
		return "", "", nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// runMessage is what a failed command printed, as an error quotes it.
func runMessage(err error) string {
	if runErr := exec.RunErrorForError(err); runErr != nil {
		return message(runErr.Output)
	}
	return err.Error()
}

// try runs attempt, and again as Retries and Backoff allow while it fails
// transiently. attempt returns what it ran (for the error), kubectl's
// message ("" when the error says it all) and the error.
func (c Client) try(ctx context.Context, attempt func() (what, msg string, err error)) error {
	backoff := c.Backoff
	for try := 1; ; try++ {
		what, msg, err := attempt()
		if err == nil {
			return nil
		}
		retry := Transient(msg) || (c.RetryForbidden && Forbidden(msg))
		if !retry || try > c.Retries || ctx.Err() != nil {
			if try > 1 {
				what = fmt.Sprintf("%s after %d tries", what, try)
			}
			if msg == "" {
				return errors.Wrapf(err, "failed to run %s", what)
			}
			return errors.Wrapf(err, "failed to run %s: %s", what, msg)
		}
		if c.Logger != nil {
			c.Logger.V(1).Infof("%s: %s; trying again in %s", what, msg, backoff)
		}
		select {
		case <-ctx.Done():
			return errors.Wrapf(ctx.Err(), "cancelled while retrying %s after: %s", what, msg)
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

// A Read is a request whose answer is read into the caller's variables,
// for ReadAll; the Read functions below make them.
type Read struct {
	args  []string
	parse func(out []byte) error
}

// read makes r alone.
func (c Client) read(ctx context.Context, r Read) error {
	out, err := c.output(ctx, r.args...)
	if err != nil {
		return err
	}
	return r.parse(out)
}

// ReadAll makes reads, in order, in one command on the node (a poll's
// reads: one command instead of one per read), and returns the error of
// each: nil when it was made and its answer read into its variables. The
// first request that fails ends the command: its error is that of every
// read from it on (those after it were not made). A command that failed
// as a whole fails every read. Like a single request, the command is tried
// again while it fails transiently, as Retries allow.
func (c Client) ReadAll(ctx context.Context, reads ...Read) []error {
	requests := make([][]string, len(reads))
	var names []string
	for i, r := range reads {
		requests[i] = c.argv(r.args)
		names = append(names, "kubectl "+strings.Join(r.args, " "))
	}
	var answers []nodeutils.KubectlAnswer
	// failed is the first read that failed, len(reads) when none did
	failed := len(reads)
	err := c.try(ctx, func() (string, string, error) {
		failed = 0
		all := strings.Join(names, ", then ")
		if c.Kubeconfig != nil {
			// the script runs kubectl once per read, and stdin is read once
			return all, "", errors.Errorf("reads sent together need the admin kubeconfig on node %q", c.On)
		}
		cmd, err := nodeutils.KubectlAll(ctx, c.On, requests...)
		if err != nil {
			return all, "", err
		}
		out, err := exec.Output(cmd)
		if err != nil {
			return all, runMessage(err), err
		}
		if answers, err = nodeutils.ParseKubectlAll(out, len(requests)); err != nil {
			return all, "", err
		}
		for i, a := range answers {
			if a.ExitCode != 0 {
				failed = i
				return names[i], message(a.Output), &exec.RunError{
					Command: append([]string{"kubectl", "--kubeconfig=" + nodeutils.AdminKubeconfig}, requests[i]...),
					Output:  a.Output,
					Inner:   errors.Errorf("exit status %d", a.ExitCode),
				}
			}
		}
		failed = len(reads)
		return "", "", nil
	})
	errs := make([]error, len(reads))
	for i, r := range reads {
		if i >= failed {
			errs[i] = err
			continue
		}
		errs[i] = r.parse(answers[i].Output)
	}
	return errs
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
	var pods []Pod
	err := c.read(ctx, ReadControlPlanePods(&pods))
	return pods, err
}

// ReadControlPlanePods reads what ControlPlanePods returns into pods.
func ReadControlPlanePods(pods *[]Pod) Read {
	return Read{
		args:  []string{"get", "pods", "--namespace=kube-system", "--selector=tier=control-plane", "-o", "json"},
		parse: podsInto(pods),
	}
}

// KubeletPods lists the pods the kubelet of node runs, as that kubelet
// itself sees them (its /pods, through the API server). A static pod's
// status there is the running kubelet's own: a kubelet that has just
// started has none until it has synced the pod (the API server keeps
// showing the previous kubelet's status until then).
func (c Client) KubeletPods(ctx context.Context, node string) ([]Pod, error) {
	var pods []Pod
	err := c.read(ctx, ReadKubeletPods(node, &pods))
	return pods, err
}

// ReadKubeletPods reads what KubeletPods returns into pods.
func ReadKubeletPods(node string, pods *[]Pod) Read {
	return Read{args: []string{"get", "--raw=/api/v1/nodes/" + node + "/proxy/pods"}, parse: podsInto(pods)}
}

// podsInto parses a pod list into pods.
func podsInto(pods *[]Pod) func([]byte) error {
	return func(out []byte) error {
		list, err := ParsePodList(out)
		*pods = list
		return err
	}
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
	var list []Workload
	err := c.read(ctx, ReadWorkloads(namespace, &list))
	return list, err
}

// ReadWorkloads reads what Workloads returns into list.
func ReadWorkloads(namespace string, list *[]Workload) Read {
	return Read{
		args: []string{"get", "daemonsets,deployments", "--namespace=" + namespace, "-o", "json"},
		parse: func(out []byte) error {
			ws, err := ParseWorkloads(out)
			*list = ws
			return err
		},
	}
}

// ClusterConfiguration reads kubeadm's ClusterConfiguration from the
// kubeadm-config ConfigMap.
func (c Client) ClusterConfiguration(ctx context.Context) (*ClusterConfiguration, error) {
	out, err := c.ClusterConfigurationDocument(ctx)
	if err != nil {
		return nil, err
	}
	return ParseClusterConfiguration(out)
}

// KubeadmConfigMap is the kube-system ConfigMap kubeadm keeps the cluster's
// ClusterConfiguration in: `kubeadm upgrade apply` and `kubeadm upgrade
// node` render the control plane from it.
const KubeadmConfigMap = "kubeadm-config"

// ClusterConfigurationDocument returns the ClusterConfiguration document of
// the kubeadm-config ConfigMap as it is stored (YAML).
func (c Client) ClusterConfigurationDocument(ctx context.Context) ([]byte, error) {
	return c.output(ctx, "get", "configmap", KubeadmConfigMap, "--namespace=kube-system", "-o", "jsonpath={.data.ClusterConfiguration}")
}

// SetClusterConfiguration replaces the ClusterConfiguration document of
// the kubeadm-config ConfigMap with doc, leaving its other keys, in one
// merge patch: making it again changes nothing more.
func (c Client) SetClusterConfiguration(ctx context.Context, doc []byte) error {
	patch, err := json.Marshal(map[string]interface{}{"data": map[string]string{"ClusterConfiguration": string(doc)}})
	if err != nil {
		return errors.Wrap(err, "failed to write the kubeadm-config patch")
	}
	return c.Run(ctx, "patch", "configmap", KubeadmConfigMap, "--namespace=kube-system", "--type=merge", "--patch="+string(patch))
}

// Readyz returns nil when the API server's /readyz answers ok.
func (c Client) Readyz(ctx context.Context) error {
	return c.read(ctx, ReadReadyz())
}

// ReadReadyz reads /readyz: its error is Readyz's.
func ReadReadyz() Read {
	return Read{
		args: []string{"get", "--raw=/readyz"},
		parse: func(out []byte) error {
			if strings.TrimSpace(string(out)) != "ok" {
				return errors.Errorf("API server /readyz answered %q", strings.TrimSpace(string(out)))
			}
			return nil
		},
	}
}

// ServerVersion returns what the API server's /version says.
func (c Client) ServerVersion(ctx context.Context) (VersionInfo, error) {
	out, err := c.output(ctx, "get", "--raw=/version")
	if err != nil {
		return VersionInfo{}, err
	}
	return ParseVersionInfo(out)
}

// VersionInfo is the part of an API server's /version the upgrade looks
// at.
type VersionInfo struct {
	// GitVersion is the binary's version, e.g. "v1.36.3".
	GitVersion string `json:"gitVersion"`
	// EmulationMajor and EmulationMinor are the version it emulates
	// (--emulated-version): its own minor version when it emulates none;
	// empty from an API server older than compatibility versions.
	EmulationMajor string `json:"emulationMajor"`
	EmulationMinor string `json:"emulationMinor"`
}

// Emulation returns the emulated version as "1.35", "" when /version did
// not say.
func (v VersionInfo) Emulation() string {
	if v.EmulationMajor == "" || v.EmulationMinor == "" {
		return ""
	}
	return v.EmulationMajor + "." + v.EmulationMinor
}

// ParseVersionInfo parses an API server's /version.
func ParseVersionInfo(b []byte) (VersionInfo, error) {
	var v VersionInfo
	if err := json.Unmarshal(b, &v); err != nil {
		return VersionInfo{}, errors.Wrap(err, "failed to parse API server version")
	}
	return v, nil
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

// MirrorAnnotation is the annotation the kubelet puts on a static pod's
// mirror pod: the static pod's hash, which changes with its manifest.
const MirrorAnnotation = "kubernetes.io/config.mirror"

// NudgedAnnotation is the annotation NudgeMirrorPod sets.
const NudgedAnnotation = "kind-upgrade.x-k8s.io/nudged"

// MirrorPodHash returns the static pod hash (MirrorAnnotation) of the
// mirror pod named name in kube-system, "" when it has none.
func (c Client) MirrorPodHash(ctx context.Context, name string) (string, error) {
	out, err := c.output(ctx, "get", "pod", name, "--namespace=kube-system", `-o`, `jsonpath={.metadata.annotations.kubernetes\.io/config\.mirror}`)
	return strings.TrimSpace(string(out)), err
}

// NudgeMirrorPod sets NudgedAnnotation to value on the mirror pod named
// name in kube-system, only while it is the mirror of the static pod of
// hash (a JSON patch whose test fails once the kubelet replaced it). Any
// change of a mirror pod makes its kubelet sync the static pod of that
// name at once.
func (c Client) NudgeMirrorPod(ctx context.Context, name, hash, value string) error {
	patch, err := json.Marshal([]map[string]string{
		{"op": "test", "path": "/metadata/annotations/" + jsonPointerEscape(MirrorAnnotation), "value": hash},
		{"op": "add", "path": "/metadata/annotations/" + jsonPointerEscape(NudgedAnnotation), "value": value},
	})
	if err != nil {
		return err
	}
	return c.Run(ctx, "patch", "pod", name, "--namespace=kube-system", "--type=json", "--patch="+string(patch))
}

// jsonPointerEscape escapes s as one token of a JSON pointer (RFC 6901).
func jsonPointerEscape(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
