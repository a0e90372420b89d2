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

package cluster_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster"
)

// TestUpgradeStepIDsArePinned pins the step identifiers, the machine
// contract of --output json: renaming, adding or removing one must change
// this list (and the user guide's table) on purpose.
func TestUpgradeStepIDsArePinned(t *testing.T) {
	t.Parallel()
	want := []string{
		"preflight/nodes", "preflight/source", "preflight/binaries", "preflight/kubeadm-lock", "preflight/cluster",
		"preflight/kubeadm-probe", "preflight/kubeadm-config", "preflight/version-skew", "preflight/host", "preflight/drains",
		"preflight/images", "preflight/disk", "preflight/phases",
		"load-artifacts/stage", "load-artifacts/staged-versions", "load-artifacts/patches", "load-artifacts/import-health-check-image", "load-artifacts/drain-bootstrap", "load-artifacts/import", "load-artifacts/pull", "load-artifacts/pin",
		"control-plane/kubeadm-config", "control-plane/kubeadm-upgrade-apply", "control-plane/wait-loaded", "control-plane/kubeadm-upgrade-node", "control-plane/wait-pods",
		"control-plane/install-kubeadm-kubectl",
		"kubelets/kubeadm-upgrade-node", "kubelets/drain", "kubelets/install", "kubelets/kubelet-flags", "kubelets/wait-previous-settled", "kubelets/restart",
		"kubelets/wait-ready", "kubelets/wait-settled", "kubelets/wait-serving", "kubelets/uncordon", "kubelets/write-version",
		"verify/server-version", "verify/control-plane-pods", "verify/nodes", "verify/workloads",
		"hook/caller",
	}
	var got []string
	for _, id := range cluster.UpgradeStepIDs() {
		got = append(got, string(id))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("UpgradeStepIDs() =\n%q\nwant\n%q", got, want)
	}
	phases := map[string]bool{}
	for _, p := range cluster.UpgradePhases() {
		phases[p.Name] = true
	}
	for _, id := range want {
		if id == string(cluster.UpgradeStepCallerHook) {
			// a Go caller's hook runs after any phase, node or target
			continue
		}
		if phase, _, _ := strings.Cut(id, "/"); !phases[phase] {
			t.Errorf("step %s names no phase", id)
		}
	}
}

// TestUpgradeEventJSON pins the JSON field names of an event.
func TestUpgradeEventJSON(t *testing.T) {
	t.Parallel()
	line := `{"schema":"v1","time":"2026-12-01T21:00:00Z","kind":"step","event":"finished","phase":"kubelets","node":"kind-worker","stepID":"kubelets/drain","step":"draining","outcome":"success","durationSeconds":4.2}`
	var ev cluster.UpgradeEvent
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		t.Fatal(err)
	}
	drain, err := cluster.ParseUpgradeStepID("kubelets/drain")
	if err != nil {
		t.Fatal(err)
	}
	if ev.Schema != "v1" || ev.Kind != cluster.UpgradeEventKindStep || ev.Event != cluster.UpgradeEventFinished || ev.StepID != drain ||
		ev.Outcome != cluster.UpgradeOutcomeSuccess || ev.Node != "kind-worker" || ev.DurationSeconds != 4.2 {
		t.Errorf("decoded %+v", ev)
	}
	out, err := json.Marshal(ev)
	if err != nil || string(out) != line {
		t.Errorf("encoded %s, %v; want %s", out, err, line)
	}
}

// TestParseUpgradeStepID: every listed identifier parses to itself; a name
// that is no step's (a phase, display text, a typo) is refused.
func TestParseUpgradeStepID(t *testing.T) {
	t.Parallel()
	for _, id := range cluster.UpgradeStepIDs() {
		if got, err := cluster.ParseUpgradeStepID(string(id)); err != nil || got != id {
			t.Errorf("ParseUpgradeStepID(%q) = %q, %v", id, got, err)
		}
	}
	for _, name := range []string{"", "kubelets", "draining", "kubelets/drains", "kubelets/drain ", "KUBELETS/DRAIN"} {
		if got, err := cluster.ParseUpgradeStepID(name); err == nil {
			t.Errorf("ParseUpgradeStepID(%q) = %q, want an error", name, got)
		}
	}
}
