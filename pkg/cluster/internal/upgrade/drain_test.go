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

package upgrade_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/kubelets"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/fakenode"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/report"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/stepid"
)

// TestFakeDrainRefusesBarePods shows the fake drains as kubectl does: a pod
// without a controller stops the drain unless --force deletes it.
func TestFakeDrainRefusesBarePods(t *testing.T) {
	t.Parallel()
	c := fakenode.NewCluster("kind", from, 1, 2)
	c.BarePods = map[string][]string{"kind-worker": {"default/bare"}}
	cp := c.Nodes[0]
	err := cp.Command("kubectl", "--kubeconfig=/etc/kubernetes/admin.conf", "drain", "kind-worker", "--ignore-daemonsets").Run()
	if err == nil || !strings.Contains(err.Error(), "exit status 1") {
		t.Fatalf("drain with a bare pod: %v, want exit status 1", err)
	}
	if err := cp.Command("kubectl", "--kubeconfig=/etc/kubernetes/admin.conf", "drain", "kind-worker", "--ignore-daemonsets", "--force").Run(); err != nil {
		t.Fatalf("drain --force: %v", err)
	}
	if len(c.BarePods["kind-worker"]) != 0 {
		t.Errorf("drain --force left %v", c.BarePods)
	}
}

// TestBarePodsRefusedUnlessForced: a pod no controller recreates on a node
// the upgrade drains is named in preflight, before anything changes;
// --force lets the drain delete it.
func TestBarePodsRefusedUnlessForced(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2, fakenode.Flat)
	e.cluster.BarePods = map[string][]string{"kind-worker2": {"default/debug"}}
	snapshotUnchanged(t, e, func() {
		_, err := e.run(nil)
		if err == nil {
			t.Fatal("the upgrade was not refused")
		}
		for _, want := range []string{"default/debug on kind-worker2", "--force"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
		}
	})
	if _, err := e.run(func(o *upgrade.Options) { o.Force = true }); err != nil {
		t.Fatalf("upgrade with Force: %v\ncalls:\n%s", err, dump(e.cluster.Calls))
	}
	assertUpgraded(t, e.cluster)
	if len(e.cluster.BarePods["kind-worker2"]) != 0 {
		t.Errorf("the drain did not delete the bare pod: %v", e.cluster.BarePods)
	}
}

// TestBarePodsBeingDeletedAreWaitedFor: a pod no controller recreates
// that goes away by itself (being deleted, itself or with its namespace, as
// right after a test suite's namespaces are deleted; or a helper kind's
// local-path provisioner runs to delete a released volume's directory, and
// deletes when done) does not stop the upgrade: kubectl drain refuses it,
// so the drain waits for it to be gone and drains again. A bare pod that
// stays is still named in preflight, alone.
func TestBarePodsBeingDeletedAreWaitedFor(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2, fakenode.Flat)
	helper := "local-path-storage/helper-pod-delete-pvc-1790e837-ef65-4a0f-885c-13f502492525"
	e.cluster.BarePods = map[string][]string{"kind-worker2": {"default/stopping", "suite-ns/left", helper}}
	e.cluster.Deleting = map[string]bool{"default/stopping": true}
	e.cluster.TerminatingNamespaces = map[string]bool{"suite-ns": true}
	mustUpgrade(t, e)
	assertUpgraded(t, e.cluster)
	if len(e.cluster.BarePods["kind-worker2"]) != 0 {
		t.Errorf("pods being deleted are left: %v", e.cluster.BarePods)
	}
	waits := 0
	for _, call := range e.cluster.Calls {
		if strings.Contains(strings.Join(call.Argv, " "), "wait --for=delete pod/") {
			waits++
		}
	}
	if waits != 3 {
		t.Errorf("%d waits for a deletion, want 3:\n%s", waits, dump(e.cluster.Calls))
	}

	e = newEnv(t, 1, 2, fakenode.Flat)
	e.cluster.BarePods = map[string][]string{"kind-worker": {"default/stopping", "default/debug", helper}}
	e.cluster.Deleting = map[string]bool{"default/stopping": true}
	snapshotUnchanged(t, e, func() {
		_, err := e.run(nil)
		if err == nil || !strings.Contains(err.Error(), "default/debug on kind-worker") || strings.Contains(err.Error(), "stopping") || strings.Contains(err.Error(), "helper-pod") {
			t.Errorf("got %v, want a refusal naming default/debug alone", err)
		}
	})
}

// TestBarePodsWhereNothingIsDrained: a bare pod on a node whose drain is
// skipped (no other node can take its pods) keeps running and does not
// stop the upgrade; neither does one with the kubelets phase skipped.
func TestBarePodsWhereNothingIsDrained(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 1, fakenode.Flat)
	e.cluster.BarePods = map[string][]string{"kind-worker": {"default/debug"}}
	mustUpgrade(t, e)
	assertUpgraded(t, e.cluster)
	if len(e.cluster.BarePods["kind-worker"]) != 1 {
		t.Errorf("the bare pod is gone: %v", e.cluster.BarePods)
	}

	e = newEnv(t, 1, 2, fakenode.Flat)
	e.cluster.BarePods = map[string][]string{"kind-worker": {"default/debug"}}
	if _, err := e.run(func(o *upgrade.Options) { o.SkipPhases = []string{"kubelets", "verify"} }); err != nil {
		t.Fatalf("control plane only, with a bare pod on a worker: %v", err)
	}
}

// TestDrainBlockedByAPodDisruptionBudget: a drain that a budget blocks
// until kubectl's --timeout fails the run with what to do; once the budget
// allows it, the same command finishes and uncordons the node.
func TestDrainBlockedByAPodDisruptionBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2, fakenode.Flat)
	e.cluster.PDBBlocked = map[string][]string{"kind-worker": {"default/app-0"}}
	_, err := e.run(nil)
	if err == nil {
		t.Fatal("the upgrade did not fail")
	}
	for _, want := range []string{`a PodDisruptionBudget keeps node "kind-worker" from being drained`, "run the same command again", `error when evicting pods/"app-0" -n "default"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if w := e.cluster.Node("kind-worker"); !w.Unschedulable {
		t.Error("the blocked node is not cordoned")
	}
	e.cluster.PDBBlocked = nil
	mustUpgrade(t, e)
	assertUpgraded(t, e.cluster)
}

// TestUserCordonedNodeStaysCordoned: a node the user cordoned is drained
// and upgraded but left cordoned; the nodes the upgrade cordoned are
// uncordoned and lose its annotation, and the user's own annotations stay.
// (Three workers, so that each node has another one to take its pods.)
func TestUserCordonedNodeStaysCordoned(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 3, fakenode.Flat)
	e.cluster.Node("kind-worker").Unschedulable = true
	for _, n := range e.cluster.Nodes {
		n.Annotations["example.com/owner"] = "team-a"
	}
	mustUpgrade(t, e)
	for _, n := range e.cluster.Nodes {
		if want := n.Name == "kind-worker"; n.Unschedulable != want {
			t.Errorf("node %s: cordoned=%v, want %v", n.Name, n.Unschedulable, want)
		}
		if _, ok := n.Annotations[actions.DrainedAnnotation]; ok {
			t.Errorf("node %s keeps %s", n.Name, actions.DrainedAnnotation)
		}
		if n.Annotations["example.com/owner"] != "team-a" {
			t.Errorf("node %s lost the user's annotation: %v", n.Name, n.Annotations)
		}
	}
	drained := map[string]bool{}
	for _, call := range e.cluster.Calls {
		if call.Argv[0] == "kubectl" && strings.Contains(strings.Join(call.Argv, " "), " drain ") {
			drained[call.About] = true
		}
	}
	for _, n := range e.cluster.Nodes {
		if !drained[n.Name] {
			t.Errorf("node %s was not drained", n.Name)
		}
	}
}

// TestBootstrapDrainedBesideItsLoading: with one control-plane node and a
// worker, the worker drains the control-plane node while it loads, its
// kubectl handed the admin kubeconfig on stdin (a worker has none), before
// kubeadm upgrade apply; the kubelets phase's drain finds nothing left to
// evict, and the node is uncordoned at the end. When the kubelets phase is skipped, nothing
// drains it.
func TestBootstrapDrainedBesideItsLoading(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 1, fakenode.Flat)
	// CoreDNS takes seconds to go once evicted: the early drain does not
	// wait for it, the kubelets phase's does
	e.cluster.Lameduck = map[string][]string{"kind-control-plane": {"kube-system/coredns-1"}}
	rec, err := e.run(func(o *upgrade.Options) { o.Wait = time.Minute })
	if err != nil {
		t.Fatal(err)
	}
	assertUpgraded(t, e.cluster)
	var drains []int
	applyAt := -1
	for i, c := range e.cluster.Calls {
		argv := strings.Join(c.Argv, " ")
		switch {
		case strings.Contains(argv, "kubeadm upgrade apply") && applyAt < 0:
			applyAt = i
		case c.Argv[0] == "kubectl" && strings.Contains(argv, " drain kind-control-plane "):
			drains = append(drains, i)
		}
	}
	if len(drains) != 2 || applyAt < 0 || drains[0] > applyAt || drains[1] < applyAt {
		t.Fatalf("the control-plane node was drained at calls %v, kubeadm upgrade apply at call %d: want one drain before it and one after", drains, applyAt)
	}
	early, late := e.cluster.Calls[drains[0]], e.cluster.Calls[drains[1]]
	if argv := strings.Join(early.Argv, " "); early.Node != "kind-worker" || !strings.Contains(argv, "--kubeconfig=/dev/stdin") || !strings.Contains(argv, "--timeout="+kubelets.EvictionsWait.String()) {
		t.Errorf("the control-plane node was first drained by %s, want from kind-worker with the kubeconfig on stdin, given up after %s", early, kubelets.EvictionsWait)
	}
	if !early.Err {
		t.Error("the early drain waited for CoreDNS to go")
	}
	if argv := strings.Join(late.Argv, " "); late.Err || !strings.Contains(argv, "--timeout="+time.Minute.String()) {
		t.Errorf("the kubelets phase's drain was %s (err %v), want a whole drain", late, late.Err)
	}
	outcomes := map[string]string{}
	for _, ev := range rec.events {
		if ev.Event.Event == report.EventFinished && ev.Node == "kind-control-plane" && ev.StepID != "" {
			outcomes[string(ev.StepID)] = ev.Outcome + " " + ev.Message
		}
	}
	if got := outcomes[string(stepid.LoadDrainBootstrap)]; got != report.OutcomeSuccess+" " {
		t.Errorf("%s of kind-control-plane: %q, want a success", stepid.LoadDrainBootstrap, got)
	}
	if got := outcomes[string(stepid.KubeletsDrain)]; got != report.OutcomeSuccess+" " {
		t.Errorf("%s of kind-control-plane: %q, want a success", stepid.KubeletsDrain, got)
	}

	for _, n := range e.cluster.Nodes {
		if n.Unschedulable {
			t.Errorf("node %s is left cordoned", n.Name)
		}
	}

	skip := newEnv(t, 1, 1, fakenode.Flat)
	if _, err := skip.run(func(o *upgrade.Options) { o.SkipPhases = []string{actions.PhaseKubelets} }); err != nil {
		t.Fatal(err)
	}
	for _, c := range skip.cluster.Calls {
		if c.Argv[0] == "kubectl" && strings.Contains(strings.Join(c.Argv, " "), " drain ") {
			t.Errorf("with the kubelets phase skipped, a node was drained: %s", c)
		}
	}
	if skip.cluster.Node("kind-control-plane").Unschedulable {
		t.Error("with the kubelets phase skipped, the control-plane node is left cordoned")
	}
}

// TestSettleBesideTheNextDrain: with three control-plane nodes, a node's
// settle runs beside the next node's drain, which runs kubectl on that
// node (the bootstrap node's reads the settle); the next node's kubelet
// restarts only once the settle is over, and no node is drained while
// another is cordoned. With two control-plane nodes (etcd's quorum needs
// both) or a caller's hook, each node settles before the next is touched.
// The last control-plane node's settle runs beside the workers, which
// start once its etcd and API server run (kubelets/wait-serving) and run
// their kubectl on themselves; not with a hook.
func TestSettleBesideTheNextDrain(t *testing.T) {
	t.Parallel()
	const settle = 300 * time.Millisecond
	for _, tc := range []struct {
		name          string
		controlPlanes int
		hook          bool
		beside        bool
	}{
		{name: "three control-plane nodes", controlPlanes: 3, beside: true},
		{name: "two control-plane nodes", controlPlanes: 2},
		{name: "one control-plane node", controlPlanes: 1},
		{name: "three, with a hook", controlPlanes: 3, hook: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.controlPlanes, 1, fakenode.Flat)
			rec, err := e.run(func(o *upgrade.Options) {
				o.Settle = settle
				if tc.hook {
					o.Hook = func(actions.HookPoint) error { return nil }
				}
			})
			if err != nil {
				t.Fatalf("upgrade failed: %v", err)
			}
			assertUpgraded(t, e.cluster)
			// when each step of a node started and finished, in event order
			at := map[string]int{}
			for i, ev := range rec.events {
				if ev.Kind == report.KindStep && ev.Phase == actions.PhaseKubelets {
					at[ev.Node+" "+string(ev.StepID)+" "+ev.Event.Event] = i
				}
			}
			cps := e.cluster.KindNodes()[:tc.controlPlanes]
			for i := 1; i < len(cps); i++ {
				prev, n := cps[i-1].String(), cps[i].String()
				settled, ok := at[prev+" "+string(stepid.KubeletsWaitSettled)+" finished"]
				drain := at[n+" "+string(stepid.KubeletsDrain)+" started"]
				if !ok {
					t.Fatalf("no settle of %s", prev)
				}
				if restart := at[n+" "+string(stepid.KubeletsRestart)+" started"]; restart < settled {
					t.Errorf("%s's kubelet restarted before %s's pods settled", n, prev)
				}
				if uncordoned := at[prev+" "+string(stepid.KubeletsUncordon)+" finished"]; drain < uncordoned {
					t.Errorf("%s was drained before %s was uncordoned", n, prev)
				}
				if got := drain < settled; got != tc.beside {
					t.Errorf("%s's drain started before %s's pods settled: %v, want %v", n, prev, got, tc.beside)
				}
			}
			last := cps[len(cps)-1].String()
			settled, ok := at[last+" "+string(stepid.KubeletsWaitSettled)+" finished"]
			if !ok {
				t.Fatalf("no settle of %s", last)
			}
			serving, served := at[last+" "+string(stepid.KubeletsWaitServing)+" finished"]
			if served == tc.hook {
				t.Errorf("%s waited for its etcd and API server alone: %v, want %v", last, served, !tc.hook)
			}
			worker := at["kind-worker "+string(stepid.KubeletsUpgradeNode)+" started"]
			if got := worker < settled; got == tc.hook {
				t.Errorf("the worker started before %s's pods settled: %v, want %v", last, got, !tc.hook)
			}
			if served && worker < serving {
				t.Errorf("the worker started before %s's etcd and API server ran", last)
			}
			if uncordon := at[last+" "+string(stepid.KubeletsUncordon)+" started"]; served && uncordon < serving {
				t.Errorf("%s was uncordoned before its etcd and API server ran", last)
			}
			if uncordoned := at[last+" "+string(stepid.KubeletsUncordon)+" finished"]; at["kind-worker "+string(stepid.KubeletsDrain)+" started"] < uncordoned {
				t.Errorf("the worker was drained before %s was uncordoned", last)
			}
			for _, c := range e.cluster.Calls {
				argv := strings.Join(c.Argv, " ")
				if c.Argv[0] != "kubectl" || !strings.Contains(argv, " drain ") || c.About == "kind-control-plane" {
					continue
				}
				want := "kind-control-plane"
				if (tc.beside && c.About != "kind-worker") || (!tc.hook && c.About == "kind-worker") {
					want = c.About
				}
				if c.Node != want {
					t.Errorf("%s ran on %s, want on %s", argv, c.Node, want)
				}
			}
		})
	}
}
