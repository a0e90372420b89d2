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

package main

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/internal/lab/kindtest"
	"github.com/kindupgrade/kind-upgrade/internal/lab/timeline"
)

func TestHandPhases(t *testing.T) {
	t.Parallel()
	order, times, err := handPhases("loading\nBENCH phase=load-artifacts seconds=41.250\nnode/x drained\nBENCH phase=control-plane seconds=150.004\nBENCH phase=kubelets seconds=60.000\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, ","); got != "load-artifacts,control-plane,kubelets" {
		t.Errorf("order %s", got)
	}
	if times["control-plane"] != 150.004 {
		t.Errorf("control-plane %v", times["control-plane"])
	}
	if _, _, err := handPhases("nothing\n"); err == nil {
		t.Error("output without BENCH lines parsed")
	}
}

func TestStatsOf(t *testing.T) {
	t.Parallel()
	if got := statsOf([]float64{3, 1, 2}); got != (stats{Median: 2, Min: 1, Max: 3, N: 3}) {
		t.Errorf("odd: %+v", got)
	}
	if got := statsOf([]float64{4, 1, 2, 3}); got.Median != 2.5 {
		t.Errorf("even: %+v", got)
	}
	if got := statsOf(nil).String(); got != "-" {
		t.Errorf("empty: %q", got)
	}
}

func TestBenchReport(t *testing.T) {
	t.Parallel()
	upgrades := []benchSize{{Workers: 1, Runs: []benchRun{
		{Method: methodTool, Round: 1, Total: 200, Apply: 140, Phases: map[string]float64{"preflight": 2, "control-plane": 150}, Split: map[string]float64{timeline.KubernetesWork: 170, timeline.LoadingWork: 20, timeline.OverheadWork: 10, timeline.SettleMargin: 5, timeline.PollLatency: 1},
			Overhead: map[string]float64{"preflight: checking nodes": 1, "kubelets: uncordoning": 4},
			Waits:    map[string]waitSum{"kubelets/wait-ready": {Polls: 10, Noticed: 0.8}, "control-plane/wait-pods": {Polls: 1}}},
		{Method: methodHand, Round: 1, Total: 250, Apply: 150, Phases: map[string]float64{"load-artifacts": 40, "control-plane": 160},
			KubeadmApply: []part{{kubeadmBefore, 5}, {"etcd", 70}, {kubeadmAfter, 4}, {kubeadmTotal, 150}}},
		{Method: methodTool, Round: 2, Total: 220, Apply: 150, Phases: map[string]float64{"preflight": 3, "control-plane": 160}, Split: map[string]float64{timeline.KubernetesWork: 180, timeline.LoadingWork: 20, timeline.OverheadWork: 20, timeline.SettleMargin: 5, timeline.PollLatency: 2},
			Overhead: map[string]float64{"preflight: checking nodes": 3},
			Waits:    map[string]waitSum{"kubelets/wait-ready": {Polls: 14, Noticed: 1.2}}},
		{Method: methodHand, Round: 2, Total: 230, Apply: 140, Phases: map[string]float64{"load-artifacts": 42, "control-plane": 150},
			KubeadmApply: []part{{kubeadmBefore, 6}, {"etcd", 40}, {"kube-apiserver", 50}, {kubeadmAfter, 5}, {kubeadmTotal, 140}}},
		{Method: methodHand, Round: 3, Total: 10, Apply: 1, Phases: map[string]float64{"load-artifacts": 9}, Failed: "hand-upgrade.sh: exit status 1",
			KubeadmApply: []part{{"etcd", 1}}},
	}}}
	loads := []benchSize{{Workers: 3, Runs: []benchRun{
		{Method: methodTool, Round: 1, Total: 30, Phases: map[string]float64{"load-artifacts": 27}},
		{Method: methodKindLoad, Round: 1, Total: 40, Phases: map[string]float64{"load": 40}},
	}}}
	sources := []benchSize{{Workers: 1, Runs: []benchRun{
		{Method: methodImageDir, Round: 1, Total: 100, Phases: map[string]float64{"load-artifacts": 10}},
		{Method: methodImage, Round: 1, Total: 105, Phases: map[string]float64{"load-artifacts": 14}},
		{Method: methodImage, Round: 2, Total: 109, Phases: map[string]float64{"load-artifacts": 16}},
		{Method: methodImageDir, Round: 2, Total: 98, Phases: map[string]float64{"load-artifacts": 11}},
	}}}
	got := benchReport(map[string]string{"cores": "2", "memory": "23 GiB", "docker": "20.10.24", "cgroup": "v1"}, "v1.36.3", "v1.37.2", 2, upgrades, loads, sources)
	for _, want := range []string{
		"Measured on 2 cores, 23 GiB, Docker 20.10.24, cgroup v1; v1.36.3 → v1.37.2; 2 round(s)",
		"| 1 control plane + 1 worker(s) | control-plane | 155.0 (150.0–160.0) | 155.0 (150.0–160.0) |",
		"| 1 control plane + 1 worker(s) | load-artifacts | - | 41.0 (40.0–42.0) |",
		"| 1 control plane + 1 worker(s) | **total** | **210.0 (200.0–220.0)** | **240.0 (230.0–250.0)** |",
		// the time around the command both methods run, the failed run
		// left out
		"| 1 control plane + 1 worker(s) | total minus `kubeadm upgrade apply` | 65.0 (60.0–70.0) | 95.0 (90.0–100.0) |",
		"| 1 control plane + 1 worker(s) | 0.88 |",
		"| 1 control plane + 1 worker(s) | 175.0 (170.0–180.0) | 20.0 (20.0–20.0) | 15.0 (10.0–20.0) | 5.0 (5.0–5.0) | 1.5 (1.0–2.0) | 7.1% | 4.8% |",
		// each wait step in the upgrade's order; a run without it counts 0
		"| 1 control plane + 1 worker(s) | `control-plane/wait-pods` | 0.5 (0.0–1.0) | 0.0 (0.0–0.0) |\n| 1 control plane + 1 worker(s) | `kubelets/wait-ready` | 12.0 (10.0–14.0) | 1.0 (0.8–1.2) |",
		// a run without a step counts it as 0 s
		"| 1 control plane + 1 worker(s) | kubelets: uncordoning | 2.0 (0.0–4.0) |\n| 1 control plane + 1 worker(s) | preflight: checking nodes | 2.0 (1.0–3.0) |",
		"| 4 | 30.0 (30.0–30.0) | 27.0 (27.0–27.0) | 40.0 (40.0–40.0) | 0.75 |",
		// kubeadm's parts in the order they ran, a failed run left out
		"| 1 control plane + 1 worker(s) | " + kubeadmBefore + " | 5.5 (5.0–6.0) |\n| 1 control plane + 1 worker(s) | etcd | 55.0 (40.0–70.0) |\n" +
			"| 1 control plane + 1 worker(s) | kube-apiserver | 50.0 (50.0–50.0) |\n" +
			"| 1 control plane + 1 worker(s) | " + kubeadmAfter + " | 4.5 (4.0–5.0) |\n| 1 control plane + 1 worker(s) | " + kubeadmTotal + " | 145.0 (140.0–150.0) |\n",
		// the source benchmark: each source's phases and the ratio
		"| 1 control plane + 1 worker(s) | load-artifacts | 10.5 (10.0–11.0) | 15.0 (14.0–16.0) |",
		"| 1 control plane + 1 worker(s) | **total** | **99.0 (98.0–100.0)** | **107.0 (105.0–109.0)** |",
		"| 1 control plane + 1 worker(s) | 1.08 |",
		// the failed run is named and left out of the medians above
		"Failed, left out of the figures: 1 control plane + 1 worker(s), round 3, hand-typed: hand-upgrade.sh: exit status 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
}

// realApply is the output of a hand-run `kubeadm upgrade apply v1.37.2
// --yes` on a kind cluster at v1.36.3 (1 control plane + 1 worker, this
// project's e2e node image, 2026-11-30), each line with the seconds after
// the first at which it arrived; kubeadm's verbose log lines are left out.
const realApply = `0.000 [upgrade] Reading configuration from the "kubeadm-config" ConfigMap in namespace "kube-system"...
0.022 [upgrade/preflight] Running preflight checks
0.257 [upgrade] Running cluster health checks
5.164 [upgrade/preflight] You have chosen to upgrade the cluster version to "v1.37.2"
5.258 [upgrade/control-plane] Upgrading your static Pod-hosted control plane to version "v1.37.2" (timeout: 5m0s)...
5.266 [upgrade/staticpods] Writing new Static Pod manifests to "/etc/kubernetes/tmp/kubeadm-upgraded-manifests2457497653"
5.453 [upgrade/staticpods] Preparing for "etcd" upgrade
5.655 [upgrade/staticpods] Waiting for the kubelet to restart the component
77.687 [apiclient] Found 1 Pods for label selector component=etcd
78.145 [upgrade/staticpods] Component "etcd" upgraded successfully!
78.173 [upgrade/etcd] Waiting for etcd to become available
78.176 [upgrade/staticpods] Preparing for "kube-apiserver" upgrade
78.445 [upgrade/staticpods] Waiting for the kubelet to restart the component
124.949 [apiclient] Found 1 Pods for label selector component=kube-apiserver
133.952 [upgrade/staticpods] Component "kube-apiserver" upgraded successfully!
133.954 [upgrade/staticpods] Preparing for "kube-controller-manager" upgrade
146.991 [apiclient] Found 1 Pods for label selector component=kube-controller-manager
147.493 [upgrade/staticpods] Component "kube-controller-manager" upgraded successfully!
147.495 [upgrade/staticpods] Preparing for "kube-scheduler" upgrade
161.161 [apiclient] Found 1 Pods for label selector component=kube-scheduler
161.163 [upgrade/staticpods] Component "kube-scheduler" upgraded successfully!
161.447 [upgrade/control-plane] The control plane instance for this node was successfully upgraded!
165.097 [addons] Applied essential addon: CoreDNS
166.269 [addons] Applied essential addon: kube-proxy
166.274 [upgrade] SUCCESS! A control plane node of your cluster was upgraded to "v1.37.2".
166.279 [upgrade] Now please proceed with upgrading the rest of the nodes by following the right order.
`

// timed turns "<seconds> <text>" lines into timedLines.
func timed(t *testing.T, text string) []kindtest.TimedLine {
	t.Helper()
	t0 := time.Date(2026, 11, 30, 17, 48, 21, 0, time.UTC)
	var out []kindtest.TimedLine
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		at, rest, _ := strings.Cut(l, " ")
		var s float64
		if _, err := fmt.Sscan(at, &s); err != nil {
			t.Fatalf("bad line %q: %v", l, err)
		}
		out = append(out, kindtest.TimedLine{At: t0.Add(time.Duration(s * float64(time.Second))), Text: rest})
	}
	return out
}

func TestKubeadmApplyParts(t *testing.T) {
	t.Parallel()
	// what the hand-typed script prints before kubeadm runs
	before := "0.000 Image: \"registry.k8s.io/kube-proxy-amd64:v1.37.2\" with ID \"sha256:1\" not yet present on node \"b-worker\", loading...\n0.000 [kubelet-start] not kubeadm apply\n"
	got, err := kubeadmApplyParts(timed(t, before+realApply))
	if err != nil {
		t.Fatal(err)
	}
	want := []part{
		{kubeadmBefore, 5.453}, {"etcd", 72.692}, {"kube-apiserver", 55.776},
		{"kube-controller-manager", 13.539}, {"kube-scheduler", 13.668},
		{kubeadmAfter, 5.111}, {kubeadmTotal, 166.274},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i].Name != want[i].Name || math.Abs(got[i].Seconds-want[i].Seconds) > 0.0005 {
			t.Errorf("part %d: got %v, want %v", i, got[i], want[i])
		}
	}

	// a component kubeadm leaves alone has no part
	skipped := strings.Replace(realApply,
		"5.453 [upgrade/staticpods] Preparing for \"etcd\" upgrade\n",
		"5.453 [upgrade/staticpods] Preparing for \"etcd\" upgrade\n5.460 [upgrade/staticpods] Current and new manifests of etcd are equal, skipping upgrade\n", 1)
	skipped = regexpLine("Component \"etcd\" upgraded successfully").ReplaceAllString(skipped, "")
	got, err = kubeadmApplyParts(timed(t, skipped))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range got {
		if p.Name == "etcd" {
			t.Errorf("etcd was skipped but has a part: %v", got)
		}
	}

	for name, text := range map[string]string{
		"interrupted":    regexpLine(`SUCCESS!`).ReplaceAllString(realApply, ""),
		"no kubeadm":     before,
		"done unstarted": regexpLine(`Preparing for "kube-scheduler"`).ReplaceAllString(realApply, ""),
	} {
		if got, err := kubeadmApplyParts(timed(t, text)); err == nil {
			t.Errorf("%s: got %v, want an error", name, got)
		}
	}
}

func regexpLine(s string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^[0-9.]+ .*` + regexp.QuoteMeta(s) + `.*\n`)
}

// TestApplySeconds: the kubeadm upgrade apply step's time is read from an
// upgrade's events, other steps left out; an upgrade without it has none.
func TestApplySeconds(t *testing.T) {
	t.Parallel()
	step := func(at, event, id string) string {
		return `{"schema":"v1","time":"2026-12-07T04:00:` + at + `Z","kind":"step","event":"` + event + `","phase":"control-plane","node":"kind-control-plane","stepID":"` + id + `","step":"x"}` + "\n"
	}
	out := step("00.0", "started", "control-plane/kubeadm-upgrade-apply") + step("42.5", "finished", "control-plane/kubeadm-upgrade-apply") +
		step("43.0", "started", "control-plane/wait") + step("50.0", "finished", "control-plane/wait")
	for _, tc := range []struct {
		out  string
		want float64
	}{{out, 42.5}, {step("43.0", "started", "control-plane/wait") + step("50.0", "finished", "control-plane/wait"), 0}} {
		events, err := timeline.Parse(tc.out)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := applySeconds(events); err != nil || got != tc.want {
			t.Errorf("applySeconds = %v, %v; want %v", got, err, tc.want)
		}
	}
}

// TestBaselineReport: with -baseline's runs the upgrade tables get a
// column for them, and the steps are compared one by one.
func TestBaselineReport(t *testing.T) {
	t.Parallel()
	upgrades := []benchSize{{Workers: 1, Runs: []benchRun{
		{Method: methodBaseline, Round: 1, Total: 220, Apply: 150, Phases: map[string]float64{"control-plane": 160},
			Steps: map[string]float64{"kubelets/drain": 6, "control-plane/kubeadm-upgrade-apply": 150, "preflight/nodes": 0.2}},
		{Method: methodTool, Round: 1, Total: 200, Apply: 152, Phases: map[string]float64{"control-plane": 158},
			Steps: map[string]float64{"kubelets/drain": 2, "control-plane/kubeadm-upgrade-apply": 152, "preflight/nodes": 0.1}},
		{Method: methodHand, Round: 1, Total: 230, Apply: 140, Phases: map[string]float64{"control-plane": 150}},
	}}}
	got := benchReport(map[string]string{"cores": "2"}, "v1.36.3", "v1.37.2", 1, upgrades, nil, nil)
	for _, want := range []string{
		"| cluster | phase | baseline | kind alpha upgrade | hand-typed |",
		"| 1 control plane + 1 worker(s) | control-plane | 160.0 (160.0–160.0) | 158.0 (158.0–158.0) | 150.0 (150.0–150.0) |",
		"| 1 control plane + 1 worker(s) | total minus `kubeadm upgrade apply` | 70.0 (70.0–70.0) | 48.0 (48.0–48.0) | 90.0 (90.0–90.0) |",
		// in the upgrade's order; a step under 0.5 s in both left out
		"| 1 control plane + 1 worker(s) | `control-plane/kubeadm-upgrade-apply` | 150.0 (150.0–150.0) | 152.0 (152.0–152.0) | +2.0 |\n" +
			"| 1 control plane + 1 worker(s) | `kubelets/drain` | 6.0 (6.0–6.0) | 2.0 (2.0–2.0) | -4.0 |\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "preflight/nodes") {
		t.Errorf("a step under 0.5 s is in the report:\n%s", got)
	}
}

func TestUpgradeMethodsRotate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		round    int
		baseline bool
		want     string
	}{
		{1, false, methodTool + ", " + methodHand},
		{2, false, methodHand + ", " + methodTool},
		{3, false, methodTool + ", " + methodHand},
		{1, true, methodTool + ", " + methodHand + ", " + methodBaseline},
		{2, true, methodHand + ", " + methodBaseline + ", " + methodTool},
		{3, true, methodBaseline + ", " + methodTool + ", " + methodHand},
		{4, true, methodTool + ", " + methodHand + ", " + methodBaseline},
	} {
		if got := strings.Join(upgradeMethods(tc.round, tc.baseline), ", "); got != tc.want {
			t.Errorf("round %d (baseline %v): %s, want %s", tc.round, tc.baseline, got, tc.want)
		}
	}
}
