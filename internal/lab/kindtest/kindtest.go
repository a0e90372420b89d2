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

// Package kindtest drives a kind cluster for the e2e tests (test/e2e) and
// the benchmark (hack/bench): host commands logged to commands.log, the
// cluster created from the offline artifacts' manifest, checks reported as
// subtests, the cluster deleted at the end.
package kindtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/internal/lab/etcdcheck"
	"github.com/kindupgrade/kind-upgrade/internal/lab/manifest"
	"github.com/kindupgrade/kind-upgrade/internal/lab/timeline"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster"
)

// T is what a Cluster needs of the test (or program) that drives it:
// *testing.T has it all, and hack/bench's program implements it. When it
// also runs subtests (*testing.T does), each Check is one, so that the
// test's JUnit (written by gotestsum) has a test case per check.
type T interface {
	Helper()
	Log(args ...any)
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	FailNow()
	Failed() bool
	Cleanup(func())
}

// subtests is the part of *testing.T that runs a named subtest.
type subtests interface {
	Run(name string, f func(t *testing.T)) bool
}

// Options say which cluster a Cluster drives and with what.
type Options struct {
	// Kind is the kind binary (this repository's, with `kind alpha upgrade`)
	Kind string
	// Name is the cluster's name, NodeCount how many nodes it has
	Name      string
	NodeCount int
	// Artifacts is the folder for commands.log, reports and, on failure,
	// `kind export logs`
	Artifacts string
	// Manifest is the offline artifacts' manifest
	Manifest *manifest.Manifest
	// KeepCluster leaves the cluster behind at the end (to look at it)
	KeepCluster bool
	// Provider is the node provider's command: KIND_EXPERIMENTAL_PROVIDER
	// (podman...) or docker when empty; kind's commands get that variable
	// from the test's environment
	Provider string
}

// Cluster drives one kind cluster for a test: it runs and logs host
// commands, creates the cluster, checks it and deletes it at the end.
type Cluster struct {
	t T
	// Kind, Name, Artifacts and Manifest are the Options'
	Kind      string
	Name      string
	Artifacts string
	Manifest  *manifest.Manifest
	// CP is the control-plane node container (the bootstrap one)
	CP string
	// NodeCount is how many nodes the cluster has
	NodeCount int
	// Timeout bounds each command (20 minutes when zero)
	Timeout time.Duration
	// CommandLog is commands.log: every command and its output
	CommandLog *os.File
	// CgroupPatched is set when the cluster was created with the kubelet's
	// failCgroupV1: false
	CgroupPatched bool
	// CreateEnv is added to kind create cluster's environment (a proxy
	// for the nodes, the network kind puts them on)
	CreateEnv []string
	// Provider is the node provider's command (docker, podman), which runs
	// every host command on the nodes
	Provider string
}

// New prepares the cluster of opts for t: its artifacts folder and
// commands.log, and a cleanup that exports the logs if t failed and
// deletes the cluster (unless opts.KeepCluster).
func New(t T, opts Options) *Cluster {
	t.Helper()
	h := &Cluster{
		t:         t,
		Kind:      opts.Kind,
		Name:      opts.Name,
		Artifacts: opts.Artifacts,
		Manifest:  opts.Manifest,
		CP:        opts.Name + "-control-plane",
		NodeCount: opts.NodeCount,
		Provider:  opts.Provider,
	}
	if h.Provider == "" {
		h.Provider = ProviderFromEnv()
	}
	if _, err := os.Stat(h.Kind); err != nil {
		t.Fatalf("the kind binary: %v (make build writes bin/kind)", err)
	}
	if err := os.MkdirAll(h.Artifacts, 0o755); err != nil {
		t.Fatalf("%v", err)
	}
	var err error
	if h.CommandLog, err = os.Create(filepath.Join(h.Artifacts, "commands.log")); err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if _, err := h.Run(nil, h.Kind, "export", "logs", filepath.Join(h.Artifacts, "logs"), "--name", h.Name); err != nil {
				t.Logf("failed to export logs: %v", err)
			}
		}
		if !opts.KeepCluster {
			if _, err := h.Run(nil, h.Kind, "delete", "cluster", "--name", h.Name); err != nil {
				t.Errorf("failed to delete the cluster: %v", err)
			}
		}
		h.CommandLog.Close()
	})
	return h
}

// Run runs a host command, logging it and its output to commands.log, and
// returns its stdout and stderr together.
func (h *Cluster) Run(stdin []byte, name string, args ...string) (string, error) {
	return h.runSplit(true, stdin, name, args...)
}

// RunStdout is run returning only stdout; stderr goes to commands.log.
func (h *Cluster) RunStdout(name string, args ...string) (string, error) {
	return h.runSplit(false, nil, name, args...)
}

// RunTimed is run without stdin, also returning each line of the output
// with the time it arrived.
func (h *Cluster) RunTimed(name string, args ...string) (string, []TimedLine, error) {
	clock := &LineClock{}
	out, err := h.RunTo(clock, nil, nil, name, args...)
	return out, clock.lines, err
}

func (h *Cluster) runSplit(combined bool, stdin []byte, name string, args ...string) (string, error) {
	var errOut *bytes.Buffer // nil: stderr goes to stdout's buffer
	if !combined {
		errOut = &bytes.Buffer{}
	}
	return h.RunTo(&bytes.Buffer{}, errOut, stdin, name, args...)
}

// RunTo runs a host command with its stdout to out and its stderr to
// errOut (to out when nil), logging both to commands.log. It returns what
// out holds.
func (h *Cluster) RunTo(out interface {
	io.Writer
	fmt.Stringer
}, errOut *bytes.Buffer, stdin []byte, name string, args ...string) (string, error) {
	timeout := h.Timeout
	if timeout == 0 {
		timeout = 20 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if errOut == nil {
		errOut = &bytes.Buffer{}
	} else {
		cmd.Stderr = errOut
	}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	start := time.Now()
	err := cmd.Run()
	fmt.Fprintf(h.CommandLog, "$ %s %s  # %s, err=%v\n%s%s\n", name, strings.Join(args, " "), time.Since(start).Round(time.Millisecond), err, out.String(), errOut.String())
	if err != nil {
		return out.String(), fmt.Errorf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String(), nil
}

// Kubectl runs kubectl on the control-plane node.
func (h *Cluster) Kubectl(args ...string) (string, error) {
	return h.Run(nil, h.Provider, append([]string{"exec", h.CP, "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf"}, args...)...)
}

// Apply applies manifest with kubectl on the control-plane node.
func (h *Cluster) Apply(manifest string) error {
	_, err := h.Run([]byte(manifest), h.Provider, "exec", "-i", h.CP, "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf", "apply", "-f", "-")
	return err
}

// Check runs a named check and fails the test (but goes on) when it fails.
// Under a *testing.T the check is a subtest of that name.
func (h *Cluster) Check(name string, fn func() error) bool {
	h.t.Helper()
	if st, ok := h.t.(subtests); ok {
		return st.Run(name, func(t *testing.T) {
			t.Helper()
			start := time.Now()
			if err := fn(); err != nil {
				t.Error(err)
				return
			}
			t.Logf("ok: %s (%s)", name, time.Since(start).Round(time.Millisecond))
		})
	}
	start := time.Now()
	if err := fn(); err != nil {
		h.t.Errorf("%s: %v", name, err)
		return false
	}
	h.t.Logf("ok: %s (%s)", name, time.Since(start).Round(time.Millisecond))
	return true
}

// Record reports something that already happened as a check named name:
// failed when err is not nil, with output (figures, a report) in its log.
func (h *Cluster) Record(name string, took time.Duration, err error, output string) {
	h.t.Helper()
	report := func(t T) {
		if output != "" {
			t.Log(output)
		}
		if err != nil {
			t.Errorf("%s: after %s: %v", name, took.Round(time.Millisecond), err)
		}
	}
	if st, ok := h.t.(subtests); ok {
		st.Run(name, func(t *testing.T) { report(t) })
		return
	}
	report(h.t)
}

// Must is Check that stops the test on failure.
func (h *Cluster) Must(name string, fn func() error) {
	h.t.Helper()
	if !h.Check(name, fn) {
		h.t.FailNow()
	}
}

// Eventually polls fn until it succeeds or timeout passes.
func Eventually(timeout time.Duration, fn func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := fn()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(2 * time.Second)
	}
}

// NodeInfo is a node as the API server reports it.
type NodeInfo struct {
	Name, Kubelet string
	Ready         bool
}

// Nodes lists the cluster's nodes, sorted by name.
func (h *Cluster) Nodes() ([]NodeInfo, error) {
	out, err := h.Kubectl("get", "nodes", "-o", "json")
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []struct {
			Metadata struct{ Name string } `json:"metadata"`
			Status   struct {
				Conditions []struct{ Type, Status string } `json:"conditions"`
				NodeInfo   struct {
					KubeletVersion string `json:"kubeletVersion"`
				} `json:"nodeInfo"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, err
	}
	var nodes []NodeInfo
	for _, it := range list.Items {
		n := NodeInfo{Name: it.Metadata.Name, Kubelet: it.Status.NodeInfo.KubeletVersion}
		for _, c := range it.Status.Conditions {
			if c.Type == "Ready" {
				n.Ready = c.Status == "True"
			}
		}
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	return nodes, nil
}

// KubeletsReadyAt checks there are h.NodeCount nodes, each Ready with its
// kubelet at version, and returns them.
func (h *Cluster) KubeletsReadyAt(version string) ([]NodeInfo, error) {
	nodes, err := h.Nodes()
	if err != nil {
		return nil, err
	}
	if len(nodes) != h.NodeCount {
		return nil, fmt.Errorf("want %d nodes, got %d", h.NodeCount, len(nodes))
	}
	for _, n := range nodes {
		if !n.Ready || n.Kubelet != version {
			return nil, fmt.Errorf("node %s: Ready=%v kubelet %s, want Ready at %s", n.Name, n.Ready, n.Kubelet, version)
		}
	}
	return nodes, nil
}

// NodesReadyAt waits up to timeout until every node is Ready at version
// (allAt) and each of also passes. When they do not, the error names each
// node container that is not registered or not Ready and quotes the end of
// its kubelet's log, which says why.
func (h *Cluster) NodesReadyAt(version string, timeout time.Duration, also ...func() error) error {
	err := Eventually(timeout, func() error {
		for _, check := range also {
			if err := check(); err != nil {
				return err
			}
		}
		return h.AllAt(version)
	})
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w%s", err, h.UnreadyKubeletLogs())
}

// UnreadyKubeletLogs describes the cluster's node containers that are not
// registered with the API server or not Ready, each with the last lines of
// its kubelet's log; "" when there are none.
func (h *Cluster) UnreadyKubeletLogs() string {
	out, err := h.Run(nil, h.Provider, "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+h.Name, "--format", `{{.Names}} {{.Label "io.x-k8s.kind.role"}}`)
	if err != nil {
		return "\n(the node containers could not be listed: " + err.Error() + ")"
	}
	registered := map[string]NodeInfo{}
	if list, err := h.Nodes(); err == nil {
		for _, n := range list {
			registered[n.Name] = n
		}
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, role, _ := strings.Cut(line, " ")
		if name == "" || role == "external-load-balancer" {
			continue
		}
		n, ok := registered[name]
		switch {
		case !ok:
			fmt.Fprintf(&b, "\nnode %s is not registered with the API server", name)
		case !n.Ready:
			fmt.Fprintf(&b, "\nnode %s is not Ready (kubelet %s)", name, n.Kubelet)
		default:
			continue
		}
		journal, err := h.Run(nil, h.Provider, "exec", name, "journalctl", "-u", "kubelet", "--no-pager", "-o", "cat", "-n", "15")
		if err != nil {
			fmt.Fprintf(&b, "; its kubelet's log could not be read: %v", err)
			continue
		}
		fmt.Fprintf(&b, "; the end of its kubelet's log:\n    %s", strings.ReplaceAll(strings.TrimSpace(journal), "\n", "\n    "))
	}
	return b.String()
}

// AllAt checks every node is Ready at version (kubelet and /kind/version)
// and that there are h.NodeCount of them.
func (h *Cluster) AllAt(version string) error {
	nodes, err := h.KubeletsReadyAt(version)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		out, err := h.Run(nil, h.Provider, "exec", n.Name, "cat", "/kind/version")
		if err != nil {
			return err
		}
		if got := strings.TrimSpace(out); got != version {
			return fmt.Errorf("node %s: /kind/version is %q, want %s", n.Name, got, version)
		}
	}
	return nil
}

// ServerVersion is the gitVersion the API server reports.
func (h *Cluster) ServerVersion() (string, error) {
	out, err := h.Kubectl("get", "--raw=/version")
	if err != nil {
		return "", err
	}
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	return v.GitVersion, json.Unmarshal([]byte(out), &v)
}

// Canary runs the canary binary in the pv-canary pod.
func (h *Cluster) Canary(args ...string) (string, error) {
	return h.Kubectl(append([]string{"exec", "deploy/pv-canary", "--", "/canary"}, args...)...)
}

// Versions describes, under title, the API server's and every node's
// versions and readiness.
func (h *Cluster) Versions(title string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n", title)
	if v, err := h.ServerVersion(); err == nil {
		fmt.Fprintf(&b, "  API server %s\n", v)
	}
	nodes, _ := h.Nodes()
	for _, n := range nodes {
		installed, _ := h.Run(nil, h.Provider, "exec", n.Name, "cat", "/kind/version")
		fmt.Fprintf(&b, "  %-28s kubelet %-10s /kind/version %-10s Ready=%v\n", n.Name, n.Kubelet, strings.TrimSpace(installed), n.Ready)
	}
	return b.String()
}

// WriteFile writes content to dir/name, failing t (but going on) when it
// cannot.
func WriteFile(t T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Errorf("failed to write %s: %v", name, err)
	}
}

// InterruptedUpgrade starts `kind alpha upgrade --output json` from the
// target source (its flags: --image-dir DIR, --image IMAGE...), sends it
// SIGINT delay after the step stepID started, and checks that it stops
// with an error that says to run it again. It returns the events it
// printed.
func (h *Cluster) InterruptedUpgrade(source []string, stepID cluster.UpgradeStepID, delay time.Duration) (string, error) {
	cmd := exec.Command(h.Kind, append(append([]string{"alpha", "upgrade", "--name", h.Name}, source...), "--output", "json")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	var events strings.Builder
	interrupted := false
	scanner := bufio.NewScanner(stdout)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		events.WriteString(line + "\n")
		var ev timeline.Event
		if json.Unmarshal([]byte(line), &ev) == nil && !interrupted &&
			ev.Kind == cluster.UpgradeEventKindStep && ev.Event == cluster.UpgradeEventStarted && ev.StepID == stepID {
			interrupted = true
			time.AfterFunc(delay, func() { _ = cmd.Process.Signal(os.Interrupt) })
		}
	}
	err = cmd.Wait()
	fmt.Fprintf(h.CommandLog, "$ %s (interrupted %s after %s started)  # err=%v\n%s%s\n", strings.Join(cmd.Args, " "), delay, stepID, err, events.String(), stderr.String())
	switch {
	case !interrupted:
		return events.String(), fmt.Errorf("no step %s started:\n%s", stepID, stderr.String())
	case err == nil:
		return events.String(), fmt.Errorf("the upgrade finished before the interrupt reached it")
	case !strings.Contains(stderr.String(), "run the same command again"):
		return events.String(), fmt.Errorf("the interrupted upgrade did not say how to continue:\n%s", stderr.String())
	}
	return events.String(), nil
}

// DeployCanaries loads the canary image into the cluster, applies manifest
// with its IMAGE and WORKER filled in, and waits for both canaries.
func (h *Cluster) DeployCanaries(manifest, worker string) error {
	if _, err := h.Run(nil, h.Kind, "load", "image-archive", h.Manifest.CanaryArchive, "--name", h.Name); err != nil {
		return err
	}
	manifest = strings.ReplaceAll(manifest, "IMAGE", "docker.io/"+h.Manifest.CanaryImage)
	if err := h.Apply(strings.ReplaceAll(manifest, "WORKER", worker)); err != nil {
		return err
	}
	_, err := h.Kubectl("wait", "--for=condition=Available", "--timeout=180s", "deployment/canary", "deployment/pv-canary")
	return err
}

// WriteEtcdKeys writes etcdKeysManifest(token) and reads it back.
func (h *Cluster) WriteEtcdKeys(token string) error {
	if err := h.Apply(etcdcheck.KeysManifest(token)); err != nil {
		return err
	}
	out, err := h.Kubectl("get", "configmaps", "--namespace=e2e-etcd", "-o", "json")
	if err != nil {
		return err
	}
	return etcdcheck.CheckKeys(out, token)
}

// ServerAt returns nil when the API server reports version.
func (h *Cluster) ServerAt(version string) error {
	v, err := h.ServerVersion()
	if err == nil && v != version {
		err = fmt.Errorf("the API server reports %s", v)
	}
	return err
}

// CgroupV1Patch is what a kind user adds on a cgroup v1 host: from v1.35
// the kubelet refuses cgroup v1 unless its configuration allows it.
const CgroupV1Patch = `kind: KubeletConfiguration
failCgroupV1: false
`

// WithPatch returns the kind config with patch added to its
// kubeadmConfigPatches, which must be its last key when it has them.
func WithPatch(config, patch string) string {
	if !strings.Contains(config, "\nkubeadmConfigPatches:\n") {
		config += "kubeadmConfigPatches:\n"
	}
	config += "- |\n"
	for _, line := range strings.SplitAfter(strings.TrimSuffix(patch, "\n"), "\n") {
		config += "  " + line
	}
	return config + "\n"
}

// ProviderFromEnv is the node provider's command KIND_EXPERIMENTAL_PROVIDER
// names, docker when it names none.
func ProviderFromEnv() string {
	if p := os.Getenv("KIND_EXPERIMENTAL_PROVIDER"); p != "" {
		return p
	}
	return "docker"
}

// CgroupV1Host reports whether the provider runs on a cgroup v1 host.
func (h *Cluster) CgroupV1Host() (bool, error) {
	format := "{{.CgroupVersion}}" // docker: "1"
	if h.Provider == "podman" {
		format = "{{.Host.CgroupsVersion}}" // "v1"
	}
	out, err := h.Run(nil, h.Provider, "info", "--format", format)
	if err != nil {
		return false, err
	}
	return strings.TrimPrefix(strings.TrimSpace(out), "v") == "1", nil
}

// ConfigForHost returns config, with CgroupV1Patch on a cgroup v1 host
// when the cluster starts at v1.35 or later (kubelets before v1.35 run on
// cgroup v1 as they are, and a kind user has no reason to add it).
func (h *Cluster) ConfigForHost(config, from string) (string, error) {
	v1, err := h.CgroupV1Host()
	if err != nil {
		return "", err
	}
	if v1 && MinorOf(from) >= 35 {
		h.t.Log("cgroup v1 host: the cluster's kubelets get failCgroupV1: false")
		h.CgroupPatched = true
		return WithPatch(config, CgroupV1Patch), nil
	}
	return config, nil
}

// MinorOf returns 37 for "v1.37.2", -1 when it cannot tell.
func MinorOf(version string) int {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 {
		return -1
	}
	m, err := strconv.Atoi(parts[1])
	if err != nil {
		return -1
	}
	return m
}

// CreateCluster deletes a cluster of the same name left by an interrupted
// run, then creates the cluster at the node image's version from config
// (with CgroupV1Patch on a cgroup v1 host), which it keeps in the
// artifacts. It returns how long `kind create cluster` took.
func (h *Cluster) CreateCluster(from, config string) time.Duration {
	h.t.Helper()
	h.Must("delete a leftover cluster", func() error {
		_, err := h.Run(nil, h.Kind, "delete", "cluster", "--name", h.Name)
		return err
	})
	var took time.Duration
	h.Must("create a cluster at "+from, func() error {
		config, err := h.ConfigForHost(config, from)
		if err != nil {
			return err
		}
		WriteFile(h.t, h.Artifacts, "kind-config.yaml", config)
		start := time.Now()
		args := []string{h.Kind, "create", "cluster", "--name", h.Name, "--image", h.Manifest.NodeImage, "--config", "-"}
		if len(h.CreateEnv) > 0 {
			args = append(append([]string{"env"}, h.CreateEnv...), args...)
		}
		err = retryPortRace(createAttempts, h.t.Logf, func() error {
			start = time.Now()
			_, err := h.Run([]byte(config), args[0], args[1:]...)
			return err
		})
		took = time.Since(start)
		return err
	})
	return took
}

// createAttempts bounds how often CreateCluster runs kind create cluster
// when it loses kind's host port race.
const createAttempts = 3

// retryPortRace runs create up to attempts times while it fails with
// Docker's "port is already allocated". kind picks each control-plane
// node's host port for the API server by opening and closing a listener
// while it plans the nodes concurrently, so two nodes of a cluster with
// several control planes can be given the same port; kind then removes the
// nodes it made, and creating the cluster again picks new ports. Any other
// error is returned at once.
func retryPortRace(attempts int, logf func(format string, args ...any), create func() error) error {
	var err error
	for i := 1; i <= attempts; i++ {
		if err = create(); err == nil || !strings.Contains(err.Error(), "port is already allocated") {
			return err
		}
		if i < attempts {
			logf("kind create cluster, attempt %d of %d: two nodes were given the same host port (kind picks them concurrently); creating the cluster again", i, attempts)
		}
	}
	return err
}

// TimedLine is a line of a command's output and when it arrived.
type TimedLine struct {
	At   time.Time
	Text string
}

// LineClock is an io.Writer that keeps what is written and notes when each
// line arrived.
type LineClock struct {
	all     bytes.Buffer
	partial []byte
	lines   []TimedLine
}

func (c *LineClock) String() string { return c.all.String() }

// Lines are the complete lines written so far, each with when it arrived.
func (c *LineClock) Lines() []TimedLine { return c.lines }

func (c *LineClock) Write(p []byte) (int, error) {
	now := time.Now()
	c.all.Write(p)
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		c.lines = append(c.lines, TimedLine{At: now, Text: string(c.partial[:i])})
		c.partial = c.partial[i+1:]
	}
}
