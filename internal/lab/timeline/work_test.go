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
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	at := func(s float64) string {
		return t0.Add(time.Duration(s * float64(time.Second))).Format(time.RFC3339Nano)
	}
	var lines []string
	// add adds a span of a step (id "<phase>/<step>") or, with id "", of
	// the whole upgrade
	add := func(id cluster.UpgradeStepID, node, text string, start, end float64) {
		kind := "step"
		phase, _, _ := strings.Cut(string(id), "/")
		if id == "" {
			kind = "upgrade"
		}
		lines = append(lines,
			fmt.Sprintf(`{"time":%q,"kind":%q,"event":"started","phase":%q,"node":%q,"stepID":%q,"step":%q}`, at(start), kind, phase, node, id, text),
			fmt.Sprintf(`{"time":%q,"kind":%q,"event":"finished","phase":%q,"node":%q,"stepID":%q,"step":%q,"outcome":"success"}`, at(end), kind, phase, node, id, text))
	}
	add("", "", "", 0, 100)
	add(StepID("preflight/nodes"), "", "checking nodes", 0, 2)
	// two nodes import at once: 2..12 and 4..10 are 10 s of loading
	add(StepID("load-artifacts/import"), "a", "importing 3 image archive(s)", 2, 12)
	add(StepID("load-artifacts/import"), "b", "importing 1 image archive(s)", 4, 10)
	// kubeadm 12..62, a node's wait overlapping it 60..70: 58 s
	add(StepID("control-plane/kubeadm-upgrade-apply"), "a", "kubeadm upgrade apply v1.37.2", 12, 62)
	add(StepID("kubelets/wait-ready"), "b", "waiting for the node to be Ready at v1.37.2", 60, 70)
	// a wait with its 2 s settle margin: 70..85 is 13 s of Kubernetes
	add(StepID("kubelets/wait-settled"), "a", "waiting for the control-plane pods and /readyz", 70, 85)
	// loading overlapping Kubernetes work counts as Kubernetes work
	add(StepID("load-artifacts/stage"), "c", "staging kubeadm, kubelet and kubectl in /kind/upgrade/v1.37.2", 61, 63)
	add(StepID("kubelets/uncordon"), "a", "uncordoning", 85, 86)
	// the wait for the new etcd and API server has the same margin: 86..88
	// is Kubernetes work
	add(StepID("kubelets/wait-serving"), "a", "waiting for the new etcd and API server and /readyz", 86, 90)
	// the node's wait noticed Ready within 1.5 s of its last poll that
	// found it not yet so: 68.5..70 counts as polling, overhead
	for i, l := range lines {
		if strings.Contains(l, `"finished"`) && strings.Contains(l, `"kubelets/wait-ready"`) {
			lines[i] = strings.TrimSuffix(l, "}") + `,"wait":{"polls":12,"noticedWithinSeconds":1.5}}`
		}
	}
	events, err := Parse(strings.Join(lines, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	split, wall, err := Split(events)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{KubernetesWork: 71.5, LoadingWork: 10, OverheadWork: 18.5, SettleMargin: 4, PollLatency: 1.5}
	for k, v := range want {
		if math.Abs(split[k]-v) > 1e-6 {
			t.Errorf("%s: %.3f s, want %.1f", k, split[k], v)
		}
	}
	if wall != 100 {
		t.Errorf("wall %.3f, want 100", wall)
	}
	steps, err := OverheadSteps(events)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || steps["preflight: checking nodes"] != 2 || steps["kubelets: uncordoning"] != 1 {
		t.Errorf("overhead steps %v", steps)
	}
	totals, err := Steps(events)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[cluster.UpgradeStepID]StepTotal{}
	for _, s := range totals {
		byID[s.StepID] = s
	}
	if len(totals) != 8 || totals[0].StepID != StepID("preflight/nodes") {
		t.Errorf("steps %+v, want 8 in the order they first started", totals)
	}
	// two imports, 2..12 and 4..10: 16 s of work, 10 s of wall time
	if got := byID[StepID("load-artifacts/import")]; got.Runs != 2 || got.Nodes != 2 || got.Sum != 16 || got.Wall != 10 || got.Longest != 10 || got.Work != LoadingWork {
		t.Errorf("imports %+v", got)
	}
	text, err := StepsText(events)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(text), "\n")
	if got := byID[StepID("kubelets/wait-ready")]; got.Polls != 12 || got.Noticed != 1.5 {
		t.Errorf("the node's wait %+v, want 12 polls, noticed within 1.5 s", got)
	}
	if !strings.HasPrefix(rows[0], "wall time 100.0 s: Kubernetes' work 71.5 s, loading 10.0 s, the tool's overhead 18.5 s (of which settle margins 4.0 s, noticing waited-for conditions at most 1.5 s)") {
		t.Errorf("first line %q", rows[0])
	}
	// the longest by wall time first: kubeadm upgrade apply's 50 s
	if len(rows) != 11 || !strings.HasPrefix(rows[2], "control-plane/kubeadm-upgrade-apply ") || !strings.Contains(text, "    12       1.5\n") {
		t.Errorf("table:\n%s", text)
	}
	if _, err := StepsText(events[:len(events)-1]); err == nil {
		t.Error("the events of a killed run (a step never finished) were summed")
	}
}
