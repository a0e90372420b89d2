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

package staticpods

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/nodecapture"
)

const capturedNode = "prof-control-plane"

// staticPodsOf parses a capture and keeps the static control-plane pods of
// capturedNode.
func staticPodsOf(t *testing.T, name string) []kube.Pod {
	t.Helper()
	pods, err := kube.ParsePodList(nodecapture.Read(t, nodecapture.KubeletRestart, name))
	if err != nil {
		t.Fatal(err)
	}
	var static []kube.Pod
	for _, p := range pods {
		if p.NodeName == capturedNode && p.Component != "" {
			static = append(static, p)
		}
	}
	return static
}

// TestSameContainersOnARealKubeletRestart reads what the API server and the
// kubelet showed of a control-plane node's static pods while its restarted
// kubelet replaced them: only once both show the new containers Ready are
// they settled. Right after the restart the API server alone would have
// passed: it still showed the previous kubelet's containers Ready.
func TestSameContainersOnARealKubeletRestart(t *testing.T) {
	t.Parallel()
	staleAPI := staticPodsOf(t, "control-plane-pods-unsynced.json")
	if len(staleAPI) != 4 {
		t.Fatalf("%d static pods in the API server's capture, want 4", len(staleAPI))
	}
	for _, p := range staleAPI {
		if !p.Ready || len(p.ContainerIDs) != 1 || !strings.HasPrefix(p.ContainerIDs[0], "containerd://") {
			t.Fatalf("API server's %s right after the restart: %+v, want the previous kubelet's container Ready", p.Name, p)
		}
	}

	before, err := SameContainers(staleAPI, staticPodsOf(t, "kubelet-pods-before.json"), capturedNode)
	if err != nil {
		t.Fatalf("before the restart: %v", err)
	}
	for _, tc := range []struct {
		kubelet, want string
	}{
		{"kubelet-pods-unsynced.json", "does not run"},
		{"kubelet-pods-restarting.json", "is not Ready for the kubelet"},
		{"kubelet-pods-settled.json", "does not show the containers"},
	} {
		if _, err := SameContainers(staleAPI, staticPodsOf(t, tc.kubelet), capturedNode); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("API server right after the restart, kubelet %s: %v, want an error saying %q", tc.kubelet, err, tc.want)
		}
	}

	after, err := SameContainers(staticPodsOf(t, "control-plane-pods-settled.json"), staticPodsOf(t, "kubelet-pods-settled.json"), capturedNode)
	if err != nil {
		t.Fatalf("settled: %v", err)
	}
	if after == before || strings.Count(after, "containerd://") != 4 {
		t.Errorf("containers after the restart %q, before %q: want 4 new ones", after, before)
	}
}

// TestServingNeedsEtcdAndTheAPIServerReady reads the static pods a
// restarted kubelet had started but not yet found Ready: the next
// control-plane node's upgrade waits until etcd and the API server are
// Ready, while the controller-manager and the scheduler need only run;
// the full check waits for all four.
func TestServingNeedsEtcdAndTheAPIServerReady(t *testing.T) {
	t.Parallel()
	pods := staticPodsOf(t, "kubelet-pods-restarting.json")
	if len(pods) != 4 {
		t.Fatalf("the capture has %d static pods on %s, want 4", len(pods), capturedNode)
	}
	st := &actions.State{}
	images := map[string]string{}
	for _, p := range pods {
		st.Images = append(st.Images, p.Images[0])
		images[p.Component] = p.Images[0]
	}
	ctx := actions.NewContext(context.Background())
	ctx.State = st
	n := namedNode{name: capturedNode}
	check := func(serving bool) error {
		_, err := podsReady(ctx, n, images, pods, serving)
		return err
	}
	if err := check(true); err == nil || !strings.Contains(err.Error(), "not Ready") {
		t.Errorf("serving, nothing Ready yet: %v, want etcd or the API server not Ready", err)
	}
	for i := range pods {
		pods[i].Ready = servingComponents[pods[i].Component]
	}
	if err := check(true); err != nil {
		t.Errorf("serving, etcd and the API server Ready: %v", err)
	}
	if err := check(false); err == nil || !strings.Contains(err.Error(), "not Ready") {
		t.Errorf("all four, two not Ready: %v, want an error", err)
	}
	for i := range pods {
		if !servingComponents[pods[i].Component] {
			pods[i].Running = false
		}
	}
	if err := check(true); err == nil || !strings.Contains(err.Error(), "has not started") {
		t.Errorf("serving, the controller-manager and scheduler not started: %v, want an error", err)
	}
}

// namedNode is a node known only by its name: podsReady runs no command.
type namedNode struct {
	nodes.Node
	name string
}

func (n namedNode) String() string { return n.name }

// TestStartedServingOnARealKubeletRestart reads the kubelet's own view of
// a control-plane node's static pods while its restarted kubelet replaced
// them: the workers may start once it runs the new etcd and API server,
// 3 s after the restart, not Ready yet (they were 17 s later); not
// before the new kubelet has synced them.
func TestStartedServingOnARealKubeletRestart(t *testing.T) {
	t.Parallel()
	images := map[string]string{}
	for _, p := range staticPodsOf(t, "kubelet-pods-settled.json") {
		images[p.Component] = p.Images[0]
	}
	if len(images) != 4 {
		t.Fatalf("%d components in the capture, want 4", len(images))
	}
	if _, err := StartedServing(staticPodsOf(t, "kubelet-pods-unsynced.json"), images, capturedNode); err == nil || !strings.Contains(err.Error(), "does not run kube-apiserver") {
		t.Errorf("unsynced: %v, want an error saying the kubelet does not run the API server yet", err)
	}
	restarting := staticPodsOf(t, "kubelet-pods-restarting.json")
	started, err := StartedServing(restarting, images, capturedNode)
	if err != nil {
		t.Fatalf("restarting, not Ready: %v", err)
	}
	if strings.Count(started, "containerd://") != 2 {
		t.Errorf("restarting: %q, want etcd's and the API server's containers", started)
	}
	settled, err := StartedServing(staticPodsOf(t, "kubelet-pods-settled.json"), images, capturedNode)
	if err != nil || settled != started {
		t.Errorf("settled: %q, %v; want the same containers as restarting, %q", settled, err, started)
	}

	// what a real node shows otherwise: a container not started yet, and
	// a manifest the kubelet has not picked up
	for i, p := range restarting {
		if p.Component != "kube-apiserver" {
			continue
		}
		pending := append([]kube.Pod(nil), restarting...)
		pending[i].Running, pending[i].ContainerIDs = false, []string{""}
		if _, err := StartedServing(pending, images, capturedNode); err == nil || !strings.Contains(err.Error(), "kube-apiserver has not started") {
			t.Errorf("API server's container not started: %v, want an error", err)
		}
		newer := map[string]string{}
		for k, v := range images {
			newer[k] = v
		}
		newer["kube-apiserver"] = "registry.k8s.io/kube-apiserver:v9.9.9"
		if _, err := StartedServing(restarting, newer, capturedNode); err == nil || !strings.Contains(err.Error(), "manifest") {
			t.Errorf("an older API server than its manifest: %v, want an error", err)
		}
	}
	// only etcd and the API server count: the controller-manager and the
	// scheduler may still be starting
	without := map[string]string{"etcd": images["etcd"], "kube-apiserver": images["kube-apiserver"]}
	if got, err := StartedServing(restarting, without, capturedNode); err != nil || got != started {
		t.Errorf("etcd and the API server alone: %q, %v; want %q", got, err, started)
	}
}
