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
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/fakenode"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/options"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/report"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/stepid"
)

func on() *bool { b := true; return &b }

// emulating are the options of a run that asks for version's emulation
// (and kube-apiserver's forward compatibility when fc).
func emulating(version string, fc bool) func(*upgrade.Options) {
	return func(o *upgrade.Options) {
		o.EmulatedVersion = version
		if fc {
			o.EmulationForwardCompatible = on()
		}
	}
}

// wantEmulation checks the cluster's kubeadm configuration and every
// control-plane node's manifests: the three components emulate version
// ("" for none), kube-apiserver forward compatible when fc.
func wantEmulation(t *testing.T, c *fakenode.Cluster, version string, fc bool) {
	t.Helper()
	var want map[string][]fakenode.Arg
	if version != "" {
		want = map[string][]fakenode.Arg{
			"apiServer":         {{Name: "emulated-version", Value: version}},
			"controllerManager": {{Name: "emulated-version", Value: version}},
			"scheduler":         {{Name: "emulated-version", Value: version}},
		}
		if fc {
			want["apiServer"] = append(want["apiServer"], fakenode.Arg{Name: "emulation-forward-compatible", Value: "true"})
		}
	}
	got := map[string][]fakenode.Arg{}
	for section, args := range c.ExtraArgs {
		if len(args) > 0 {
			got[section] = args
		}
	}
	if len(want) == 0 && len(got) == 0 {
		got, want = nil, nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("kubeadm's extraArgs %v, want %v", got, want)
	}
	for _, n := range c.Nodes {
		for _, component := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
			f := n.Files["/etc/kubernetes/manifests/"+component+".yaml"]
			if f == nil {
				continue
			}
			manifest := string(f.Content)
			has := strings.Contains(manifest, "--emulated-version="+version+`"`)
			if version == "" {
				has = !strings.Contains(manifest, "--emulated-version")
			}
			if !has {
				t.Errorf("%s on %s does not emulate %q:\n%s", component, n.Name, version, manifest)
			}
			if hasFC := strings.Contains(manifest, "--emulation-forward-compatible=true"); hasFC != (fc && component == "kube-apiserver") {
				t.Errorf("%s on %s: forward compatible %v, want %v", component, n.Name, hasFC, fc && component == "kube-apiserver")
			}
		}
	}
}

// closing is the upgrade's closing line.
func closing(rec *recorder) string {
	var last string
	for _, ev := range rec.events {
		if ev.Kind == report.KindUpgrade && ev.Event.Event == report.EventInfo {
			last = ev.Message
		}
	}
	return last
}

// nothingToDo runs the upgrade with modify and checks it changes nothing
// and says so.
func nothingToDo(t *testing.T, e *env, modify func(*upgrade.Options)) {
	t.Helper()
	snapshotUnchanged(t, e, func() {
		rec, err := e.run(modify)
		if err != nil {
			t.Fatalf("the run failed: %v", err)
		}
		if got := closing(rec); !strings.Contains(got, "nothing to do") {
			t.Errorf("the run did not say there is nothing to do: %q", got)
		}
	})
}

func mustRun(t *testing.T, e *env, modify func(*upgrade.Options)) *recorder {
	t.Helper()
	start := len(e.cluster.Calls)
	rec, err := e.run(modify)
	if err != nil {
		t.Fatalf("the run failed: %v\ncalls:\n%s", err, dump(e.calls(start)))
	}
	return rec
}

// TestUpgradeWithEmulation: the control plane is upgraded and emulates the
// version asked, through kubeadm's configuration, written before kubeadm
// upgrade apply; the same command again has nothing to do, and neither has
// one that leaves the emulation as it is.
func TestUpgradeWithEmulation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, 1, fakenode.Flat)
	rec := mustRun(t, e, emulating("1.33", true))
	assertUpgraded(t, e.cluster)
	wantEmulation(t, e.cluster, "1.33", true)
	configAt, applyAt := -1, -1
	for _, c := range e.cluster.Calls {
		argv := strings.Join(c.Argv, " ")
		switch {
		case strings.Contains(argv, "patch configmap kubeadm-config") && !c.Err:
			configAt = c.Seq
		case strings.Contains(argv, "kubeadm upgrade apply") && applyAt < 0:
			applyAt = c.Seq
		}
	}
	if configAt < 0 || applyAt < configAt {
		t.Errorf("kubeadm's configuration written at %d, kubeadm upgrade apply at %d: want it written first", configAt, applyAt)
	}
	if got := closing(rec); !strings.Contains(got, "Upgraded the cluster from v1.33.13 to v1.34.4. kubeadm configuration: apiServer, controllerManager, scheduler extraArgs emulated-version=1.33 (was: none). kubeadm configuration: apiServer extraArgs emulation-forward-compatible=true (was: none).") {
		t.Errorf("closing line %q", got)
	}
	nothingToDo(t, e, emulating("1.33", true))
	nothingToDo(t, e, nil)
}

// TestEmulationBump: at the version the cluster runs, another emulation
// re-applies the control plane with kubeadm, one control-plane node at a
// time with the waits between them, and nothing else: no worker, no
// kubelet, no drain.
func TestEmulationBump(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, 1, fakenode.Flat)
	mustRun(t, e, emulating("1.33", true))
	for _, step := range []struct {
		version string
		fc      bool
		closing string
	}{
		// the binary's own version: forward compatibility goes
		{"1.34", false, "Re-applied the control plane at v1.34.4 for its new emulation (the kubelets already ran it). kubeadm configuration: apiServer, controllerManager, scheduler extraArgs emulated-version=1.34 (was: 1.33). kubeadm configuration: apiServer extraArgs emulation-forward-compatible removed (was: true)."},
		{options.EmulationNone, false, "Re-applied the control plane at v1.34.4 for its new emulation (the kubelets already ran it). kubeadm configuration: apiServer, controllerManager, scheduler extraArgs emulated-version removed (was: 1.34)."},
	} {
		t.Run(step.version, func(t *testing.T) {
			start := len(e.cluster.Calls)
			rec := mustRun(t, e, emulating(step.version, step.fc))
			assertUpgraded(t, e.cluster)
			wantEmulation(t, e.cluster, strings.TrimPrefix(step.version, options.EmulationNone), step.fc)
			if got := closing(rec); got != step.closing {
				t.Errorf("closing line\n%s\nwant\n%s", got, step.closing)
			}
			var kubeadm []string
			for _, c := range e.calls(start) {
				argv := strings.Join(c.Argv, " ")
				if strings.Contains(argv, "kubeadm upgrade") {
					kubeadm = append(kubeadm, c.Node+" "+strings.Join(c.Argv[3:5], " "))
				}
				if c.Node == "kind-worker" && mutating(c) {
					t.Errorf("the bump changed the worker: %s", c)
				}
				if argv == "systemctl restart kubelet" || strings.Contains(argv, " drain ") || installs(c) {
					t.Errorf("the bump touched a kubelet: %s", c)
				}
			}
			if got, want := strings.Join(kubeadm, ", "), "kind-control-plane upgrade apply, kind-control-plane2 upgrade node"; got != want {
				t.Errorf("kubeadm ran %s, want %s", got, want)
			}
			waits := 0
			for _, ev := range rec.events {
				if ev.StepID == stepid.ControlPlaneWait && ev.Event.Event == report.EventFinished && ev.Outcome == report.OutcomeSuccess {
					waits++
				}
				if ev.Kind == report.KindPhase && ev.Phase == "kubelets" && ev.Event.Event == report.EventFinished &&
					(ev.Outcome != report.OutcomeSkipped || ev.Message != "every kubelet already runs v1.34.4") {
					t.Errorf("the kubelets phase finished %s (%s), want skipped: every kubelet already runs v1.34.4", ev.Outcome, ev.Message)
				}
			}
			if waits != 2 {
				t.Errorf("%d control-plane nodes waited for, want 2", waits)
			}
			// done: the same command has nothing left to do
			nothingToDo(t, e, emulating(step.version, step.fc))
		})
	}
	nothingToDo(t, e, nil)
}

// TestEmulationBumpOfAClusterCreatedEmulating: a cluster kind created with
// kubeadmConfigPatches that set the emulation (the map style of kubeadm's
// v1beta3 configuration) has it raised and removed, the configuration's
// shape kept.
func TestEmulationBumpOfAClusterCreatedEmulating(t *testing.T) {
	t.Parallel()
	dir, err := fakenode.WriteRelease(t.TempDir(), from, "amd64", fakenode.Flat)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, imageDir: dir, cluster: fakenode.NewCluster("kind", from, 1, 1).CreatedWith(map[string][]fakenode.Arg{
		"apiServer":         {{Name: "emulated-version", Value: "1.32"}, {Name: "v", Value: "4"}},
		"controllerManager": {{Name: "emulated-version", Value: "1.32"}},
		"scheduler":         {{Name: "emulated-version", Value: "1.32"}},
	})}
	e.cluster.ConfigAPIVersion = "kubeadm.k8s.io/v1beta3"
	// the cluster's own emulation is kept: nothing to do
	nothingToDo(t, e, nil)
	mustRun(t, e, emulating("1.33", false))
	if got := e.cluster.ExtraArgs["apiServer"]; !reflect.DeepEqual(got, []fakenode.Arg{{Name: "emulated-version", Value: "1.33"}, {Name: "v", Value: "4"}}) {
		t.Errorf("apiServer's extraArgs %v, want the emulation raised and -v kept", got)
	}
	mustRun(t, e, emulating(options.EmulationNone, false))
	if got := e.cluster.ExtraArgs["apiServer"]; !reflect.DeepEqual(got, []fakenode.Arg{{Name: "v", Value: "4"}}) {
		t.Errorf("apiServer's extraArgs %v, want only -v left", got)
	}
	if args := e.cluster.ExtraArgs["scheduler"]; len(args) != 0 {
		t.Errorf("scheduler's extraArgs %v, want none", args)
	}
}

// TestTheClustersEmulationIsChecked: an emulation the cluster's kubeadm
// configuration has, which the target refuses, is refused before anything
// changes, with the fix; a new one passes.
func TestTheClustersEmulationIsChecked(t *testing.T) {
	t.Parallel()
	dir, err := fakenode.WriteRelease(t.TempDir(), "v1.37.2", "amd64", fakenode.Flat)
	if err != nil {
		t.Fatal(err)
	}
	emulating133 := map[string][]fakenode.Arg{
		"apiServer":         {{Name: "emulated-version", Value: "1.33"}},
		"controllerManager": {{Name: "emulated-version", Value: "1.33"}},
		"scheduler":         {{Name: "emulated-version", Value: "1.33"}},
	}
	e := &env{t: t, imageDir: dir, cluster: fakenode.NewCluster("kind", "v1.36.3", 1, 1).CreatedWith(emulating133)}
	snapshotUnchanged(t, e, func() {
		_, err := e.run(nil)
		want := "the cluster's kubeadm configuration (kubeadm-config ConfigMap in kube-system): kube-apiserver v1.37.2 refuses --emulated-version=1.33: the allowed range is 1.34..1.37 (the target's minor version and the 3 before it, never below 1.31); set another with --emulated-version, or remove it with --emulated-version=none"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one containing %q", err, want)
		}
	})
	mustRun(t, e, emulating("1.36", false))
	wantEmulation(t, e.cluster, "1.36", false)
}

// TestEmulationBumpResumes: a bump stopped after kubeadm's configuration
// was written is finished by the same command, and by the command without
// the flag (the static pods still emulate what the configuration no
// longer says).
func TestEmulationBumpResumes(t *testing.T) {
	t.Parallel()
	for _, rerun := range []func(*upgrade.Options){emulating(options.EmulationNone, false), nil} {
		e := newEnv(t, 2, 1, fakenode.Flat)
		mustRun(t, e, emulating("1.33", false))
		start := len(e.cluster.Calls)
		var node fakenode.Call
		for _, c := range e.cluster.Calls {
			if c.Node == "kind-control-plane2" && strings.Contains(strings.Join(c.Argv, " "), "kubeadm upgrade node") {
				node = c
			}
		}
		e.cluster.FailOn(node, 2)
		if _, err := e.run(emulating(options.EmulationNone, false)); err == nil {
			t.Fatalf("the bump survived its failure:\n%s", dump(e.calls(start)))
		}
		mustRun(t, e, rerun)
		wantEmulation(t, e.cluster, "", false)
		nothingToDo(t, e, nil)
	}
}

// TestEmulationBumpAfterAFailureAnywhere injects a failure into every
// command of a bump in turn, before it takes effect and after; the same
// command again finishes it, reaching the same state, without repeating
// finished work.
func TestEmulationBumpAfterAFailureAnywhere(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) *env {
		e := newEnv(t, 2, 1, fakenode.Flat)
		mustRun(t, e, emulating("1.33", true))
		return e
	}
	bump := emulating("1.34", false)
	clean := setup(t)
	start := len(clean.cluster.Calls)
	mustRun(t, clean, bump)
	want := clean.cluster.Snapshot()
	calls := clean.calls(start)
	for i := range 2 * len(calls) {
		afterEffect := i >= len(calls)
		failed := calls[i%len(calls)]
		if afterEffect && !mutating(failed) {
			continue
		}
		occurrence := 0
		for _, c := range clean.cluster.Calls[:start+i%len(calls)+1] {
			if c.Key() == failed.Key() {
				occurrence++
			}
		}
		t.Run(fmt.Sprintf("%03d %s #%d after effect %v", i%len(calls)+1, failed, occurrence, afterEffect), func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			n0 := len(e.cluster.Calls)
			if afterEffect {
				e.cluster.FailAfterEffect(failed, occurrence)
			} else {
				e.cluster.FailOn(failed, occurrence)
			}
			rec1, err := e.run(bump)
			if err == nil {
				if got := e.cluster.Snapshot(); got != want {
					t.Fatalf("the run survived the failure but ended elsewhere:\n%s\nwant:\n%s", got, want)
				}
				return
			}
			n1 := len(e.cluster.Calls)
			if _, err := e.run(bump); err != nil {
				t.Fatalf("the rerun failed: %v\ncalls:\n%s", err, dump(e.calls(n1)))
			}
			if got := e.cluster.Snapshot(); got != want {
				t.Fatalf("the rerun ended elsewhere:\n%s\nwant:\n%s", got, want)
			}
			noRepeatedWork(t, e, rec1, n0, n1)
		})
	}
}

// TestLeaveTheNodesBehind: binaries at N emulating N-1, kubelets and
// kube-proxy at N-1 is one command; the next one, without the skips,
// upgrades kube-proxy (kubeadm on the last control-plane node) and the
// kubelets, and keeps the emulation.
func TestLeaveTheNodesBehind(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, 1, fakenode.Flat)
	oldProxy := e.cluster.KubeProxy
	rec := mustRun(t, e, func(o *upgrade.Options) {
		o.EmulatedVersion = "1.33"
		o.SkipPhases = []string{"kubelets", "control-plane/kube-proxy"}
	})
	c := e.cluster
	if c.KubernetesVersion != target || c.KubeProxy != oldProxy {
		t.Errorf("control plane %s, kube-proxy %s; want %s and kube-proxy left at %s", c.KubernetesVersion, c.KubeProxy, target, oldProxy)
	}
	if !strings.Contains(c.CoreDNS, "v1.12.1") {
		t.Errorf("CoreDNS %s, want it upgraded", c.CoreDNS)
	}
	wantEmulation(t, c, "1.33", false)
	for _, n := range c.Nodes {
		if n.KubeletVersion != from {
			t.Errorf("node %s kubelet %s, want %s", n.Name, n.KubeletVersion, from)
		}
	}
	for _, call := range c.Calls {
		if argv := strings.Join(call.Argv, " "); strings.Contains(argv, "kubeadm upgrade") && !strings.Contains(argv, "--skip-phases=addon/kube-proxy") {
			t.Errorf("kubeadm ran without skipping its kube-proxy phase: %s", call)
		}
	}
	if got, want := closing(rec), "Still older: the kubelets and /kind/version of kind-control-plane (v1.33.13), kind-control-plane2 (v1.33.13), kind-worker (v1.33.13); kube-proxy (v1.33.13)."; !strings.Contains(got, want) {
		t.Errorf("closing line %q, want it to contain %q", got, want)
	}
	start := len(c.Calls)
	mustRun(t, e, nil)
	assertUpgraded(t, c)
	wantEmulation(t, c, "1.33", false)
	if want := fakenode.KubeadmImages(target, fakenode.ImageConfig{})[3]; c.KubeProxy != want {
		t.Errorf("kube-proxy %s, want %s", c.KubeProxy, want)
	}
	var kubeadm []string
	for _, call := range e.calls(start) {
		if strings.Contains(strings.Join(call.Argv, " "), "kubeadm upgrade") {
			kubeadm = append(kubeadm, call.Node+" "+strings.Join(call.Argv[3:5], " "))
		}
	}
	if got, want := strings.Join(kubeadm, ", "), "kind-control-plane2 upgrade node, kind-worker upgrade node"; got != want {
		t.Errorf("kubeadm ran %s, want %s (the last control-plane node upgrades kube-proxy)", got, want)
	}
	nothingToDo(t, e, nil)
}

// writePatches writes a folder of kubeadm patches.
func writePatches(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const apiServerPatch = `[{"op": "add", "path": "/spec/containers/0/command/-", "value": "--v=4"}]`

// TestPatches: the patches are copied to every node that runs kubeadm and
// handed to every kubeadm upgrade.
func TestPatches(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, 1, fakenode.Flat)
	dir := writePatches(t, map[string]string{"kube-apiserver+json.yaml": apiServerPatch, "kubeletconfiguration+merge.yaml": "maxPods: 100\n", "README.md": "ignored"})
	mustRun(t, e, func(o *upgrade.Options) { o.Patches = dir })
	assertUpgraded(t, e.cluster)
	nodeDir := ""
	for _, call := range e.cluster.Calls {
		argv := strings.Join(call.Argv, " ")
		if !strings.Contains(argv, "kubeadm upgrade") {
			continue
		}
		i := strings.Index(argv, "--patches=")
		if i < 0 {
			t.Errorf("kubeadm ran without the patches: %s", call)
			continue
		}
		nodeDir = strings.Fields(argv[i+len("--patches="):])[0]
	}
	if !strings.HasPrefix(nodeDir, "/kind/upgrade/patches/") {
		t.Fatalf("patches staged in %q", nodeDir)
	}
	for _, n := range e.cluster.Nodes {
		for _, name := range []string{"kube-apiserver+json.yaml", "kubeletconfiguration+merge.yaml"} {
			f := n.Files[nodeDir+"/"+name]
			want, _ := os.ReadFile(filepath.Join(dir, name))
			if f == nil || !bytes.Equal(f.Content, want) {
				t.Errorf("node %s lacks %s/%s", n.Name, nodeDir, name)
			}
		}
		if n.Files[nodeDir+"/README.md"] != nil {
			t.Errorf("node %s got a file kubeadm ignores", n.Name)
		}
	}
	// patches alone change nothing kubeadm has not rendered
	nothingToDo(t, e, func(o *upgrade.Options) { o.Patches = dir })
}

// TestDryRunShowsTheConfigurationChange: the plan shows kubeadm's
// configuration change, and for a bump that only the control plane is
// re-applied.
func TestDryRunShowsTheConfigurationChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 1, fakenode.Flat)
	dir := writePatches(t, map[string]string{"kube-apiserver+json.yaml": apiServerPatch})
	plan := func(modify func(*upgrade.Options)) string {
		var out bytes.Buffer
		snapshotUnchanged(t, e, func() {
			_, err := e.run(func(o *upgrade.Options) {
				modify(o)
				o.DryRun, o.JSON, o.Out = true, false, &out
			})
			if err != nil {
				t.Fatal(err)
			}
		})
		return out.String()
	}
	got := plan(func(o *upgrade.Options) { emulating("1.33", true)(o); o.Patches = dir })
	for _, want := range []string{
		"Upgrade plan: v1.33.13 -> v1.34.4\n",
		"kubeadm configuration: apiServer, controllerManager, scheduler extraArgs emulated-version=1.33 (was: none)\n",
		"kubeadm configuration: apiServer extraArgs emulation-forward-compatible=true (was: none)\n",
		"kubeadm patches: " + dir + ", staged as /kind/upgrade/patches/",
		"control-plane: setting the emulation in kubeadm's ClusterConfiguration",
		"load-artifacts: copying the kubeadm patches of " + dir,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("plan lacks %q:\n%s", want, got)
		}
	}
	mustRun(t, e, emulating("1.33", false))
	got = plan(emulating(options.EmulationNone, false))
	for _, want := range []string{
		"Upgrade plan: v1.34.4 -> v1.34.4 (the same version: the control plane is re-applied for its new kubeadm configuration)\n",
		"kubeadm configuration: apiServer, controllerManager, scheduler extraArgs emulated-version removed (was: 1.33)\n",
		"control-plane: kubeadm upgrade apply v1.34.4",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("plan lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "kubelets:") || strings.Contains(strings.SplitN(got, "Node kind-worker", 2)[1], "load-artifacts") {
		t.Errorf("the bump's plan touches the kubelets or the worker:\n%s", got)
	}
}
