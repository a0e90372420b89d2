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

package e2e

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
	"strings"
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster"
	"github.com/kindupgrade/kind-upgrade/test/e2e/etcdcheck"
	"github.com/kindupgrade/kind-upgrade/test/e2e/timeline"
)

// Environment the test needs; hack/e2e/run.sh sets all of it.
const (
	envKind        = "E2E_KIND"          // this repository's kind binary
	envNodeImage   = "E2E_NODE_IMAGE"    // node image at the old version
	envImageDir    = "E2E_IMAGE_DIR"     // --image-dir for the new version
	envCanaryTar   = "E2E_CANARY_TAR"    // docker-archive of the canary image
	envCanaryImage = "E2E_CANARY_IMAGE"  // its name
	envArtifacts   = "E2E_ARTIFACTS"     // where logs, junit and timings go
	envFrom        = "E2E_FROM"          // version the cluster starts at
	envTo          = "E2E_TO"            // version it is upgraded to
	envEtcd        = "E2E_ETCD_IMAGE"    // etcd image kubeadm lists for the new version
	envCoreDNS     = "E2E_COREDNS_IMAGE" // CoreDNS image kubeadm lists for the new version
	// optional
	envDowngrade    = "E2E_DOWNGRADE_IMAGE_DIR"     // binaries at the old version: a downgrade, refused
	envUnchanged    = "E2E_UNCHANGED_IMAGES"        // images both versions use (space separated)
	envSkippedMinor = "E2E_SKIPPED_MINOR_IMAGE_DIR" // binaries two minors ahead: refused
	// binaries one minor ahead of the target, v1.35 or later: on a cgroup
	// v1 host and a cluster created without failCgroupV1: false, refused
	envCgroupRefusal = "E2E_CGROUP_REFUSAL_IMAGE_DIR"
)

type harness struct {
	t         *testing.T
	kind      string
	name      string
	artifacts string
	suite     *junitSuite
	cp        string // control-plane node container (the bootstrap one)
	nodeCount int    // how many nodes the cluster has
	// timeout bounds each command (20 minutes when zero)
	timeout time.Duration
	log     *os.File
	// cgroupPatched is set when the cluster was created with the kubelet's
	// failCgroupV1: false
	cgroupPatched bool
}

// newHarness prepares a test of cluster name with nodeCount nodes: its
// artifacts folder and commands.log, and a cleanup that exports the logs
// if the test failed, writes the JUnit suite and deletes the cluster
// (unless E2E_KEEP_CLUSTER is set).
func newHarness(t *testing.T, name string, nodeCount int, suite string) *harness {
	h := &harness{
		t:         t,
		kind:      getenv(t, envKind),
		name:      name,
		artifacts: getenv(t, envArtifacts),
		cp:        name + "-control-plane",
		nodeCount: nodeCount,
		suite:     &junitSuite{name: suite, start: time.Now()},
	}
	if err := os.MkdirAll(h.artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	if h.log, err = os.Create(filepath.Join(h.artifacts, "commands.log")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if _, err := h.run(nil, h.kind, "export", "logs", filepath.Join(h.artifacts, "logs"), "--name", h.name); err != nil {
				t.Logf("failed to export logs: %v", err)
			}
		}
		if err := h.suite.write(h.artifacts); err != nil {
			t.Errorf("failed to write junit: %v", err)
		}
		if os.Getenv("E2E_KEEP_CLUSTER") == "" {
			if _, err := h.run(nil, h.kind, "delete", "cluster", "--name", h.name); err != nil {
				t.Errorf("failed to delete the cluster: %v", err)
			}
		}
		h.log.Close()
	})
	return h
}

func getenv(t *testing.T, key string) string {
	t.Helper()
	v := os.Getenv(key)
	if v == "" {
		t.Fatalf("%s is not set: run this test with `make e2e` (hack/e2e/run.sh)", key)
	}
	return v
}

// run runs a host command, logging it and its output to commands.log, and
// returns its stdout and stderr together.
func (h *harness) run(stdin []byte, name string, args ...string) (string, error) {
	return h.runSplit(true, stdin, name, args...)
}

// runStdout is run returning only stdout; stderr goes to commands.log.
func (h *harness) runStdout(name string, args ...string) (string, error) {
	return h.runSplit(false, nil, name, args...)
}

// runTimed is run without stdin, also returning each line of the output
// with the time it arrived.
func (h *harness) runTimed(name string, args ...string) (string, []timedLine, error) {
	clock := &lineClock{}
	out, err := h.runTo(clock, nil, nil, name, args...)
	return out, clock.lines, err
}

func (h *harness) runSplit(combined bool, stdin []byte, name string, args ...string) (string, error) {
	var errOut *bytes.Buffer // nil: stderr goes to stdout's buffer
	if !combined {
		errOut = &bytes.Buffer{}
	}
	return h.runTo(&bytes.Buffer{}, errOut, stdin, name, args...)
}

// runTo runs a host command with its stdout to out and its stderr to
// errOut (to out when nil), logging both to commands.log. It returns what
// out holds.
func (h *harness) runTo(out interface {
	io.Writer
	fmt.Stringer
}, errOut *bytes.Buffer, stdin []byte, name string, args ...string) (string, error) {
	timeout := h.timeout
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
	fmt.Fprintf(h.log, "$ %s %s  # %s, err=%v\n%s%s\n", name, strings.Join(args, " "), time.Since(start).Round(time.Millisecond), err, out.String(), errOut.String())
	if err != nil {
		return out.String(), fmt.Errorf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String(), nil
}

// kubectl runs kubectl on the control-plane node.
func (h *harness) kubectl(args ...string) (string, error) {
	return h.run(nil, "docker", append([]string{"exec", h.cp, "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf"}, args...)...)
}

func (h *harness) apply(manifest string) error {
	_, err := h.run([]byte(manifest), "docker", "exec", "-i", h.cp, "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf", "apply", "-f", "-")
	return err
}

// check runs a named check, records it in the JUnit suite and fails the
// test (but goes on) when it fails.
func (h *harness) check(name string, fn func() error) bool {
	h.t.Helper()
	start := time.Now()
	err := fn()
	h.suite.add(name, time.Since(start), err)
	if err != nil {
		h.t.Errorf("%s: %v", name, err)
		return false
	}
	h.t.Logf("ok: %s (%s)", name, time.Since(start).Round(time.Millisecond))
	return true
}

// must is check that stops the test on failure.
func (h *harness) must(name string, fn func() error) {
	h.t.Helper()
	if !h.check(name, fn) {
		h.t.FailNow()
	}
}

// eventually polls fn until it succeeds or timeout passes.
func eventually(timeout time.Duration, fn func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := fn()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(2 * time.Second)
	}
}

type nodeInfo struct {
	Name, Kubelet string
	Ready         bool
}

func (h *harness) nodes() ([]nodeInfo, error) {
	out, err := h.kubectl("get", "nodes", "-o", "json")
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
	var nodes []nodeInfo
	for _, it := range list.Items {
		n := nodeInfo{Name: it.Metadata.Name, Kubelet: it.Status.NodeInfo.KubeletVersion}
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

// kubeletsReadyAt checks there are h.nodeCount nodes, each Ready with its
// kubelet at version, and returns them.
func (h *harness) kubeletsReadyAt(version string) ([]nodeInfo, error) {
	nodes, err := h.nodes()
	if err != nil {
		return nil, err
	}
	if len(nodes) != h.nodeCount {
		return nil, fmt.Errorf("want %d nodes, got %d", h.nodeCount, len(nodes))
	}
	for _, n := range nodes {
		if !n.Ready || n.Kubelet != version {
			return nil, fmt.Errorf("node %s: Ready=%v kubelet %s, want Ready at %s", n.Name, n.Ready, n.Kubelet, version)
		}
	}
	return nodes, nil
}

// nodesReadyAt waits up to timeout until every node is Ready at version
// (allAt) and each of also passes. When they do not, the error names each
// node container that is not registered or not Ready and quotes the end of
// its kubelet's log, which says why.
func (h *harness) nodesReadyAt(version string, timeout time.Duration, also ...func() error) error {
	err := eventually(timeout, func() error {
		for _, check := range also {
			if err := check(); err != nil {
				return err
			}
		}
		return h.allAt(version)
	})
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w%s", err, h.unreadyKubeletLogs())
}

// unreadyKubeletLogs describes the cluster's node containers that are not
// registered with the API server or not Ready, each with the last lines of
// its kubelet's log; "" when there are none.
func (h *harness) unreadyKubeletLogs() string {
	out, err := h.run(nil, "docker", "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+h.name, "--format", `{{.Names}} {{.Label "io.x-k8s.kind.role"}}`)
	if err != nil {
		return "\n(the node containers could not be listed: " + err.Error() + ")"
	}
	registered := map[string]nodeInfo{}
	if list, err := h.nodes(); err == nil {
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
		journal, err := h.run(nil, "docker", "exec", name, "journalctl", "-u", "kubelet", "--no-pager", "-o", "cat", "-n", "15")
		if err != nil {
			fmt.Fprintf(&b, "; its kubelet's log could not be read: %v", err)
			continue
		}
		fmt.Fprintf(&b, "; the end of its kubelet's log:\n    %s", strings.ReplaceAll(strings.TrimSpace(journal), "\n", "\n    "))
	}
	return b.String()
}

// allAt checks every node is Ready at version (kubelet and /kind/version)
// and that there are h.nodeCount of them.
func (h *harness) allAt(version string) error {
	nodes, err := h.kubeletsReadyAt(version)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		out, err := h.run(nil, "docker", "exec", n.Name, "cat", "/kind/version")
		if err != nil {
			return err
		}
		if got := strings.TrimSpace(out); got != version {
			return fmt.Errorf("node %s: /kind/version is %q, want %s", n.Name, got, version)
		}
	}
	return nil
}

func (h *harness) serverVersion() (string, error) {
	out, err := h.kubectl("get", "--raw=/version")
	if err != nil {
		return "", err
	}
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	return v.GitVersion, json.Unmarshal([]byte(out), &v)
}

// exec runs the canary binary in the pv-canary pod.
func (h *harness) canary(args ...string) (string, error) {
	return h.kubectl(append([]string{"exec", "deploy/pv-canary", "--", "/canary"}, args...)...)
}

func (h *harness) versions(title string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n", title)
	if v, err := h.serverVersion(); err == nil {
		fmt.Fprintf(&b, "  API server %s\n", v)
	}
	nodes, _ := h.nodes()
	for _, n := range nodes {
		installed, _ := h.run(nil, "docker", "exec", n.Name, "cat", "/kind/version")
		fmt.Fprintf(&b, "  %-28s kubelet %-10s /kind/version %-10s Ready=%v\n", n.Name, n.Kubelet, strings.TrimSpace(installed), n.Ready)
	}
	return b.String()
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Errorf("failed to write %s: %v", name, err)
	}
}

// interruptedUpgrade starts `kind alpha upgrade --output json`, sends it
// SIGINT delay after the step stepID (cluster.UpgradeStep...) started, and
// checks that it stops with an error that says to run it again. It returns
// the events it printed.
func (h *harness) interruptedUpgrade(imageDir, stepID string, delay time.Duration) (string, error) {
	cmd := exec.Command(h.kind, "alpha", "upgrade", "--name", h.name, "--image-dir", imageDir, "--output", "json")
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
	fmt.Fprintf(h.log, "$ %s (interrupted %s after %s started)  # err=%v\n%s%s\n", strings.Join(cmd.Args, " "), delay, stepID, err, events.String(), stderr.String())
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

// deployCanaries loads the canary image into the cluster, applies manifest
// with its IMAGE and WORKER filled in, and waits for both canaries.
func (h *harness) deployCanaries(manifest, worker string) error {
	if _, err := h.run(nil, h.kind, "load", "image-archive", getenv(h.t, envCanaryTar), "--name", h.name); err != nil {
		return err
	}
	manifest = strings.ReplaceAll(manifest, "IMAGE", "docker.io/"+getenv(h.t, envCanaryImage))
	if err := h.apply(strings.ReplaceAll(manifest, "WORKER", worker)); err != nil {
		return err
	}
	_, err := h.kubectl("wait", "--for=condition=Available", "--timeout=180s", "deployment/canary", "deployment/pv-canary")
	return err
}

// writeEtcdKeys writes etcdKeysManifest(token) and reads it back.
func (h *harness) writeEtcdKeys(token string) error {
	if err := h.apply(etcdcheck.KeysManifest(token)); err != nil {
		return err
	}
	out, err := h.kubectl("get", "configmaps", "--namespace=e2e-etcd", "-o", "json")
	if err != nil {
		return err
	}
	return etcdcheck.CheckKeys(out, token)
}

// serverAt returns nil when the API server reports version.
func (h *harness) serverAt(version string) error {
	v, err := h.serverVersion()
	if err == nil && v != version {
		err = fmt.Errorf("the API server reports %s", v)
	}
	return err
}
