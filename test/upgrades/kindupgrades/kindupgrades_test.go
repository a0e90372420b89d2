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

package kindupgrades

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/kubernetes/test/e2e/upgrades"
	"k8s.io/kubernetes/test/utils/junit"
)

// a dry run's output as `kind alpha upgrade --dry-run --output json`
// prints it for a 1+2 cluster whose control plane is upgraded already
// (the events before the plan are cut)
const nodeDryRun = `{"time":"2026-12-02T07:01:02.1Z","kind":"upgrade","event":"started"}
{"time":"2026-12-02T07:01:04.2Z","kind":"plan","event":"info","plan":{"from":"v1.37.2","to":"v1.37.2","source":"--image kind-upgrade-e2e/node:v1.37.2","images":["registry.k8s.io/kube-proxy:v1.37.2"],"nodes":[{"name":"x-control-plane","role":"control-plane","bootstrap":true,"from":"v1.36.3","to":"v1.37.2","steps":["kubelets: draining"]},{"name":"x-worker","role":"worker","from":"v1.36.3","to":"v1.37.2","steps":["kubelets: draining"]}]}}
{"time":"2026-12-02T07:01:04.3Z","kind":"upgrade","event":"finished","outcome":"skipped","durationSeconds":2.2,"message":"dry run"}
`

const doneDryRun = `{"time":"2026-12-02T07:01:02.1Z","kind":"upgrade","event":"started"}
{"time":"2026-12-02T07:01:03.1Z","kind":"upgrade","event":"finished","outcome":"skipped","message":"every node runs v1.37.2 already: nothing to do"}
`

func TestParseType(t *testing.T) {
	for _, want := range Types {
		got, err := ParseType(string(want))
		if err != nil || got != want {
			t.Errorf("ParseType(%q) = %q, %v", want, got, err)
		}
	}
	if _, err := ParseType("etcd"); err == nil || !strings.Contains(err.Error(), "master, node or cluster") {
		t.Errorf("ParseType(etcd) = %v, want the valid types named", err)
	}
	if Master.UpgradeType() != upgrades.MasterUpgrade || Node.UpgradeType() != upgrades.NodeUpgrade || Cluster.UpgradeType() != upgrades.ClusterUpgrade {
		t.Error("the types map to the wrong upstream UpgradeType")
	}
}

func TestCommandArgs(t *testing.T) {
	u := Upgrade{Cluster: "x", Type: Master, Args: []string{"--image-dir", "/tmp/v1.37.2", "-v", "1"}}
	want := []string{"alpha", "upgrade", "--name", "x", "--skip-phases", "kubelets", "--image-dir", "/tmp/v1.37.2", "-v", "1", "--output", "json", "--dry-run"}
	if got := u.CommandArgs(true); !reflect.DeepEqual(got, want) {
		t.Errorf("CommandArgs(true) = %q, want %q", got, want)
	}
	u = Upgrade{Type: Node, Args: []string{"--image", "n:1"}}
	want = []string{"alpha", "upgrade", "--name", "kind", "--image", "n:1", "--output", "json"}
	if got := u.CommandArgs(false); !reflect.DeepEqual(got, want) {
		t.Errorf("CommandArgs(false) = %q, want %q", got, want)
	}
}

func TestValidate(t *testing.T) {
	for _, args := range [][]string{{"--name", "y"}, {"--skip-phases=kubelets"}, {"-o", "text"}, {"--dry-run"}} {
		err := Upgrade{Type: Cluster, Args: args}.Validate()
		if err == nil || !strings.Contains(err.Error(), "must not set") {
			t.Errorf("Validate with %q = %v, want a refusal", args, err)
		}
	}
	if err := (Upgrade{Type: "both"}).Validate(); err == nil {
		t.Error("Validate accepted an unknown type")
	}
	if err := (Upgrade{Type: Cluster, Args: []string{"--image-dir", "/d", "--wait", "10m"}}).Validate(); err != nil {
		t.Errorf("Validate refused valid args: %v", err)
	}
}

func TestPlanAndContext(t *testing.T) {
	evs, err := ParseEvents([]byte(nodeDryRun))
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanOf(evs)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Context(Node, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{c.Versions[0].Version.String(), c.Versions[1].Version.String()}; !reflect.DeepEqual(got, []string{"1.36.3", "1.37.2"}) {
		t.Errorf("node upgrade context = %q, want the kubelets' version then the target", got)
	}
	for _, typ := range []Type{Master, Cluster} {
		if _, err := Context(typ, p); err == nil || !strings.Contains(err.Error(), "at v1.37.2 already") {
			t.Errorf("Context(%s) of an upgraded control plane = %v, want nothing to do", typ, err)
		}
	}
	p.From = "v1.36.3"
	if _, err := Context(Node, p); err == nil || !strings.Contains(err.Error(), "run the master upgrade before") {
		t.Errorf("Context(node) before the master upgrade = %v, want a refusal", err)
	}
	c, err = Context(Master, p)
	if err != nil || c.Versions[0].Version.String() != "1.36.3" {
		t.Errorf("Context(master) = %v, %v", c, err)
	}

	evs, err = ParseEvents([]byte(doneDryRun))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PlanOf(evs); err == nil || !strings.Contains(err.Error(), "nothing to do") {
		t.Errorf("PlanOf of an upgraded cluster = %v, want kind's reason", err)
	}
	if _, err := ParseEvents([]byte("Upgrade plan: v1 -> v2\n")); err == nil {
		t.Error("ParseEvents accepted text output")
	}
}

// fakeKind writes a kind binary that prints out, writes errOut to
// stderr and exits with code; on SIGINT it says so and exits 130.
func fakeKind(t *testing.T, out, errOut string, code int, wait bool) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{"out": out, "err": errOut} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := "#!/bin/sh\necho \"$@\" >" + dir + "/args\ntrap 'echo interrupted >&2; exit 130' INT\ncat " + dir + "/out\ncat " + dir + "/err >&2\n"
	if wait {
		script += "while :; do sleep 0.1; done\n"
	}
	script += "exit " + strconv.Itoa(code) + "\n"
	bin := filepath.Join(dir, "kind")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestRun(t *testing.T) {
	ctx := context.Background()
	var events, status strings.Builder
	u := Upgrade{Cluster: "x", Type: Node, Kind: fakeKind(t, nodeDryRun, " ✓ preflight\n", 0, false)}
	evs, err := u.Run(ctx, true, &events, &status)
	if err != nil || len(evs) != 3 {
		t.Fatalf("Run = %d events, %v", len(evs), err)
	}
	if events.String() != nodeDryRun || status.String() != " ✓ preflight\n" {
		t.Errorf("Run passed on events %q and status %q", events.String(), status.String())
	}

	u.Kind = fakeKind(t, "", " ✗ preflight\nERROR: failed to upgrade cluster \"x\": preflight: no such node\n", 1, false)
	_, err = u.Run(ctx, false, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `ERROR: failed to upgrade cluster "x": preflight: no such node`) || !strings.Contains(err.Error(), "alpha upgrade --name x") {
		t.Errorf("a failed upgrade's error = %v, want the command and kind's last line", err)
	}

	// at -v 1 kind adds a stack trace after its message: the message is
	// the error, every line of it
	u.Kind = fakeKind(t, "", " ✗ preflight\nERROR: failed to upgrade cluster \"x\": preflight: pods:\n  default/debug on x-worker\ndelete them first\nStack Trace: \nsigs.k8s.io/kind/pkg/errors.Errorf\n\truntime/asm_amd64.s:1771\n", 1, false)
	_, err = u.Run(ctx, false, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "default/debug on x-worker\ndelete them first") || strings.Contains(err.Error(), "asm_amd64") {
		t.Errorf("a failed upgrade's error at -v 1 = %v, want kind's whole message without the stack trace", err)
	}

	u.Kind = fakeKind(t, "", "", 0, true)
	ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	status.Reset()
	_, err = u.Run(ctx, false, io.Discard, &status)
	if err == nil || !strings.Contains(status.String(), "interrupted") {
		t.Errorf("a cancelled upgrade = %v with %q, want kind interrupted as by Ctrl-C", err, status.String())
	}

	u = Upgrade{Type: Node, Args: []string{"--name", "y"}}
	if _, err := u.Run(context.Background(), false, io.Discard, io.Discard); err == nil {
		t.Error("Run ran an invalid upgrade")
	}
}

type setupFails struct{}

func (*setupFails) Name() string { return "fails" }
func (*setupFails) Setup(context.Context, *framework.Framework) {
	panic("boom")
}
func (*setupFails) Test(context.Context, *framework.Framework, <-chan struct{}, upgrades.UpgradeType) {
}
func (*setupFails) Teardown(context.Context, *framework.Framework) {}

type skips struct{ setupFails }

func (*skips) Skip(upgrades.UpgradeContext) bool { return true }

func TestRecorder(t *testing.T) {
	suite := &junit.TestSuite{TestCases: []*junit.TestCase{{Name: "fails"}, {Name: "other"}}}
	r := &recorder{suite: suite}
	wrapped := r.wrap([]upgrades.Test{&setupFails{}, &skips{}})
	if wrapped[0].Name() != "fails" {
		t.Errorf("the wrapped test is named %q", wrapped[0].Name())
	}
	if _, ok := wrapped[0].(upgrades.Skippable); ok {
		t.Error("a test without Skip got one")
	}
	if s, ok := wrapped[1].(upgrades.Skippable); !ok || !s.Skip(upgrades.UpgradeContext{}) {
		t.Error("a test's Skip was lost")
	}
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("the failure did not go on: %v", p)
			}
		}()
		wrapped[0].Setup(context.Background(), nil)
	}()
	if f := suite.TestCases[0].Failures; len(f) != 1 || !strings.Contains(f[0].Message, "failed in Setup: boom") {
		t.Errorf("recorded %v, want the Setup failure", f)
	}
	if len(suite.TestCases[1].Failures) != 0 {
		t.Error("another test's case got the failure")
	}
}

func TestFocus(t *testing.T) {
	described = []string{"my operator (across) an upgrade"}
	var c types.SuiteConfig
	Focus(&c)
	if len(c.FocusStrings) != 1 || c.FocusStrings[0] != `my operator \(across\) an upgrade` {
		t.Errorf("Focus = %q, want the Describe text, quoted", c.FocusStrings)
	}
	c = types.SuiteConfig{LabelFilter: "Slow"}
	Focus(&c)
	if len(c.FocusStrings) != 0 {
		t.Errorf("Focus overrode a label filter: %q", c.FocusStrings)
	}
}

// chainDryRun is the plan events of a dry run of a chain of two targets:
// one plan per target, each with its hop.
const chainDryRun = `{"schema":"v1","time":"2026-12-03T21:00:00Z","kind":"plan","event":"info","hop":1,"plan":{"from":"v1.35.4","to":"v1.36.3","nodes":[{"name":"kind-control-plane","from":"v1.35.4","to":"v1.35.4"}],"hop":1,"hops":2,"kubeletsAt":"target 2 of 2 (v1.37.2)"}}
{"schema":"v1","time":"2026-12-03T21:00:01Z","kind":"plan","event":"info","hop":2,"plan":{"from":"v1.36.3","to":"v1.37.2","nodes":[{"name":"kind-control-plane","from":"v1.35.4","to":"v1.37.2"}],"hop":2,"hops":2}}
`

func TestPlanOfAChainGoesFromTheFirstToTheLast(t *testing.T) {
	evs, err := ParseEvents([]byte(chainDryRun))
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanOf(evs)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Context(Cluster, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{c.Versions[0].Version.String(), c.Versions[1].Version.String()}; !reflect.DeepEqual(got, []string{"1.35.4", "1.37.2"}) {
		t.Errorf("chain upgrade context = %q, want the control plane's version then the last target", got)
	}
}
