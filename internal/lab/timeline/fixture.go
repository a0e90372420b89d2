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

package timeline

import (
	"time"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster"
)

// Fixtures for the unit tests of this package and of the others that read
// upgrades' events (probe, faultchain, the benchmark): an upgrade of 3
// control planes and 2 workers as the tool runs it, and ways to change it.

// The fixture cluster's nodes, and when its upgrade starts.
var (
	// FixtureControlPlanes are its control-plane nodes, the bootstrap one first
	FixtureControlPlanes = []string{"ha-control-plane", "ha-control-plane2", "ha-control-plane3"}
	// FixtureWorkers are its workers
	FixtureWorkers = []string{"ha-worker", "ha-worker2"}
	// FixtureStart is when its upgrade starts
	FixtureStart = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
)

// Recorder writes the events of an upgrade, one second apart unless told.
type Recorder struct {
	now    time.Time
	events []Event
}

// The fixtures' other steps.
var (
	stepPreflightNodes      = StepID("preflight/nodes")
	stepApply               = StepID("control-plane/kubeadm-upgrade-apply")
	stepControlPlaneNode    = StepID("control-plane/kubeadm-upgrade-node")
	stepControlPlaneWait    = StepID("control-plane/wait-pods")
	stepKubeletsUpgradeNode = StepID("kubelets/kubeadm-upgrade-node")
	stepInstall             = StepID("kubelets/install")
	stepWaitReady           = StepID("kubelets/wait-ready")
	stepWaitSettled         = StepID("kubelets/wait-settled")
	stepWaitPrevious        = StepID("kubelets/wait-previous-settled")
	stepWriteVersion        = StepID("kubelets/write-version")
)

// displayed are the steps' display texts as the tool shows them.
var displayed = map[cluster.UpgradeStepID]string{
	stepPreflightNodes:      "checking nodes",
	stepApply:               "kubeadm upgrade apply v1.37.2",
	stepControlPlaneNode:    "kubeadm upgrade node",
	stepControlPlaneWait:    "waiting for the control-plane pods to run v1.37.2 and be Ready",
	stepKubeletsUpgradeNode: "kubeadm upgrade node",
	StepDrain:               "draining",
	StepDrainBootstrap:      "draining, from " + FixtureControlPlanes[1] + ", beside the loading (its kubelet is upgraded later)",
	stepInstall:             "installing kubeadm, kubelet and kubectl v1.37.2",
	StepRestart:             "restarting the kubelet",
	stepWaitReady:           "waiting for the node to be Ready at v1.37.2",
	stepWaitSettled:         "waiting for the control-plane pods and /readyz",
	stepWaitPrevious:        "waiting for the control-plane pods of the previous node to settle",
	StepUncordon:            "uncordoning",
	stepWriteVersion:        "writing /kind/version",
}

// Emit adds an event; stepID is "" for events that are not a step's.
func (tl *Recorder) Emit(kind, ev, phase, node string, stepID cluster.UpgradeStepID, outcome string) {
	tl.now = tl.now.Add(time.Second)
	tl.events = append(tl.events, Event{Time: tl.now, Kind: kind, Event: ev, Phase: phase, Node: node, StepID: stepID, Step: displayed[stepID], Outcome: outcome})
}

// Step adds a step of node in phase that started and finished
// successfully.
func (tl *Recorder) Step(phase, node string, step cluster.UpgradeStepID) {
	tl.Emit("step", "started", phase, node, step, "")
	tl.Emit("step", "finished", phase, node, step, "success")
}

// Steps adds node's work in phase: the node started, each step started
// and finished successfully, the node finished.
func (tl *Recorder) Steps(phase, node string, steps ...cluster.UpgradeStepID) {
	tl.Emit("node", "started", phase, node, "", "")
	for _, s := range steps {
		tl.Step(phase, node, s)
	}
	tl.Emit("node", "finished", phase, node, "", "success")
}

// FixtureUpgrade is the events of an upgrade of 3 control planes and 2
// workers as the tool runs it: load-artifacts on every node at once, the
// rest one node at a time.
func FixtureUpgrade() []Event {
	tl := &Recorder{now: FixtureStart}
	all := append(append([]string{}, FixtureControlPlanes...), FixtureWorkers...)
	tl.Emit("upgrade", "started", "", "", "", "")
	tl.Emit("phase", "started", "preflight", "", "", "")
	tl.Emit("step", "started", "preflight", "", stepPreflightNodes, "")
	tl.Emit("step", "finished", "preflight", "", stepPreflightNodes, "success")
	tl.Emit("phase", "finished", "preflight", "", "", "success")
	tl.Emit("phase", "started", "load-artifacts", "", "", "")
	for _, n := range all {
		tl.Emit("node", "started", "load-artifacts", n, "", "")
	}
	// the bootstrap node is drained beside its loading
	tl.Emit("step", "started", "load-artifacts", FixtureControlPlanes[0], StepDrainBootstrap, "")
	tl.Emit("step", "finished", "load-artifacts", FixtureControlPlanes[0], StepDrainBootstrap, "success")
	for _, n := range all {
		tl.Emit("node", "finished", "load-artifacts", n, "", "success")
	}
	tl.Emit("phase", "finished", "load-artifacts", "", "", "success")
	tl.Emit("phase", "started", PhaseControlPlane, "", "", "")
	tl.Steps(PhaseControlPlane, FixtureControlPlanes[0], stepApply, stepControlPlaneWait)
	for _, n := range FixtureControlPlanes[1:] {
		tl.Steps(PhaseControlPlane, n, stepControlPlaneNode, stepControlPlaneWait)
	}
	tl.Emit("phase", "finished", PhaseControlPlane, "", "", "success")
	tl.Emit("phase", "started", PhaseKubelets, "", "", "")
	// each control-plane node settles beside the next one's drain and
	// install, which waits for it before its kubelet restart
	for i, n := range FixtureControlPlanes {
		tl.Emit("node", "started", PhaseKubelets, n, "", "")
		tl.Step(PhaseKubelets, n, StepDrain)
		tl.Step(PhaseKubelets, n, stepInstall)
		if i > 0 {
			prev := FixtureControlPlanes[i-1]
			tl.Emit("step", "started", PhaseKubelets, n, stepWaitPrevious, "")
			tl.Emit("step", "finished", PhaseKubelets, prev, stepWaitSettled, "success")
			tl.Emit("step", "finished", PhaseKubelets, n, stepWaitPrevious, "success")
		}
		for _, s := range []cluster.UpgradeStepID{StepRestart, stepWaitReady, StepUncordon, stepWriteVersion} {
			tl.Step(PhaseKubelets, n, s)
		}
		tl.Emit("node", "finished", PhaseKubelets, n, "", "success")
		tl.Emit("step", "started", PhaseKubelets, n, stepWaitSettled, "")
	}
	tl.Emit("step", "finished", PhaseKubelets, FixtureControlPlanes[len(FixtureControlPlanes)-1], stepWaitSettled, "success")
	for _, n := range FixtureWorkers {
		tl.Steps(PhaseKubelets, n, stepKubeletsUpgradeNode, StepDrain, stepInstall, StepRestart,
			stepWaitReady, StepUncordon, stepWriteVersion)
	}
	tl.Emit("phase", "finished", PhaseKubelets, "", "", "success")
	tl.Emit("phase", "started", "verify", "", "", "")
	tl.Emit("phase", "finished", "verify", "", "", "success")
	tl.Emit("upgrade", "finished", "", "", "", "success")
	return tl.events
}

// Edit changes the spans keep matches.
func Edit(spans []Span, keep func(Span) bool, change func(*Span)) []Span {
	for i := range spans {
		if keep(spans[i]) {
			change(&spans[i])
		}
	}
	return spans
}

// Drop returns spans without those keep selects.
func Drop(spans []Span, keep func(Span) bool) []Span {
	var out []Span
	for _, s := range spans {
		if !keep(s) {
			out = append(out, s)
		}
	}
	return out
}

// NodeIn selects the node span of node in phase.
func NodeIn(phase, node string) func(Span) bool {
	return func(s Span) bool { return s.Kind == "node" && s.Phase == phase && s.Node == node }
}

// StepOn selects the spans of step on node.
func StepOn(node string, step cluster.UpgradeStepID) func(Span) bool {
	return func(s Span) bool {
		return s.Kind == "step" && s.Node == node && s.StepID == step
	}
}
