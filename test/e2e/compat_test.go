//go:build e2e

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
	"crypto/x509"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kindupgrade/kind-upgrade/internal/lab/kindtest"
	"github.com/kindupgrade/kind-upgrade/internal/lab/timeline"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster"
	"github.com/kindupgrade/kind-upgrade/test/e2e/faultchain"
	"github.com/kindupgrade/kind-upgrade/test/e2e/probe"
)

// compatPatch sets the control plane's emulated version at kind create
// cluster as SIG API Machinery's compatibility job does: map-style
// extraArgs, which kind converts for kubeadm's v1beta4.
const compatPatch = `kind: ClusterConfiguration
apiServer:
  extraArgs:
    emulated-version: "EMULATED"
controllerManager:
  extraArgs:
    emulated-version: "EMULATED"
scheduler:
  extraArgs:
    emulated-version: "EMULATED"
`

// controlPlaneComponents are the static pods that take an emulated version.
var controlPlaneComponents = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"}

// emulation is what the control plane must run: its images' version,
// --emulated-version ("" for none) and kube-apiserver's
// --emulation-forward-compatible=true.
type emulation struct {
	version, emulated string
	forward           bool
}

// compatRun is one run of kind alpha upgrade, for the report.
type compatRun struct {
	name       string
	start, end time.Time
	events     string
}

// TestIntegrationUpgradeCompatibility (make e2e-compat) is SIG API
// Machinery's two-step compatibility job through kind alpha upgrade: a
// cluster created emulating the source's minor; its control plane upgraded
// to the target still emulating it, kubelets and kube-proxy left behind;
// the emulation removed at the target, the run killed once inside kubeadm
// upgrade apply and run again; then the rest upgraded. The API server is
// probed from the host throughout.
func TestIntegrationUpgradeCompatibility(t *testing.T) {
	m := integration(t)
	from, to := m.From, m.To
	if kindtest.MinorOf(to) != kindtest.MinorOf(from)+1 {
		t.Skipf("the compatibility suite needs an upgrade to the next minor version, not %s", m.Pair())
	}
	conformance := conformanceSuites(t)
	if conformance != nil && (conformance.From.Version != from || conformance.To.Version != to) {
		t.Fatalf("the conformance suites are %s's and %s's, not %s's and %s's", conformance.From.Version, conformance.To.Version, from, to)
	}
	h := newHarness(t, m, "kind-upgrade-compat", 3, "compat")
	imageDir := m.ImageDir
	emulated := fmt.Sprintf("1.%d", kindtest.MinorOf(from))
	leaveBehind := []string{"--skip-phases", "kubelets,control-plane/kube-proxy"}
	configStep, applyStep := timeline.StepID("control-plane/kubeadm-config"), timeline.StepID("control-plane/kubeadm-upgrade-apply")

	h.createEmulating(from, emulated, faultsClusterConfig)

	api := h.startAPIProbe("start probing the API from the host", nil)
	var runs []compatRun
	// the report, also when a run fails
	defer func() { h.writeCompatReport(from, to, emulated, runs, api.Stop()) }()
	upgrade := func(name string, flags ...string) (compatRun, error) {
		r := compatRun{name: name, start: time.Now()}
		out, err := h.RunStdout(h.Kind, append([]string{"alpha", "upgrade", "--name", h.Name, "--image-dir", imageDir, "--output", "json", "-v", "1"}, flags...)...)
		r.end, r.events = time.Now(), out
		runs = append(runs, r)
		kindtest.WriteFile(t, h.Artifacts, fmt.Sprintf("compat-run-%d-events.jsonl", len(runs)), out)
		return r, err
	}
	kubeProxyAt := h.kubeProxyAt

	// step 2: the control plane at the target, still emulating the source
	emulate := append([]string{"--emulated-version", emulated, "--emulation-forward-compatible"}, leaveBehind...)
	var emulating compatRun
	h.Must("kind alpha upgrade to "+to+" "+strings.Join(emulate, " "), func() error {
		var err error
		emulating, err = upgrade("step 2, "+strings.Join(emulate, " "), emulate...)
		return err
	})
	h.Check("the events show the step "+string(configStep)+" writing the emulation", func() error {
		return stepOutcomes(emulating.events, configStep, "success")
	})
	h.Check("the control plane runs "+to+" emulating "+emulated+", kube-apiserver forward compatible (manifests, mirror pods, /version)", func() error {
		return h.controlPlaneEmulates(emulation{version: to, emulated: emulated, forward: true})
	})
	h.Check("the kube-proxy DaemonSet is still at "+from, func() error { return kubeProxyAt(from) })
	h.Check("every kubelet and /kind/version are still at "+from, func() error { return h.AllAt(from) })
	if conformance != nil {
		// the job's first test run: the source's tests against the
		// target's binaries emulating it
		h.conformanceStep(conformance.From, "emulating-", conformanceSkip, &runs)
	}

	// step 3: the emulation removed, the first run killed inside kubeadm
	remove := append([]string{"--emulated-version", "none"}, leaveBehind...)
	kill := faultchain.Point{StepID: applyStep, Node: "control-plane", Exec: "upgrade apply", Delay: 10 * time.Second, Action: faultchain.SIGKILL}
	h.Must("kind alpha upgrade "+strings.Join(remove, " ")+" is stopped by "+kill.String(), func() error {
		start := time.Now()
		run := h.faultedRun(imageDir, func(ev timeline.Event) *faultchain.Point {
			if kill.Matches(ev, h.Name) {
				return &kill
			}
			return nil
		}, remove...)
		runs = append(runs, compatRun{name: "step 3, " + strings.Join(remove, " ") + ", killed", start: start, end: time.Now(), events: run.raw})
		kindtest.WriteFile(t, h.Artifacts, fmt.Sprintf("compat-run-%d-events.jsonl", len(runs)), run.raw)
		return h.checkFaulted(run)
	})
	var resumed compatRun
	h.Must("the same command again finishes", func() error {
		var err error
		resumed, err = upgrade("step 3, the same command again", remove...)
		return err
	})
	h.Check("the control plane runs "+to+" without emulation (manifests, mirror pods, /version)", func() error {
		return h.controlPlaneEmulates(emulation{version: to})
	})
	h.Check("once more, the same command changes nothing: kubeadm's configuration and upgrade apply skipped, no work repeated, the manifests unchanged", func() error {
		before, err := h.staticPodManifests()
		if err != nil {
			return err
		}
		again, err := upgrade("step 3, once more", remove...)
		if err != nil {
			return err
		}
		if err := timeline.FirstError(stepOutcomes(again.events, configStep, "skipped"), stepOutcomes(again.events, applyStep, "skipped")); err != nil {
			return err
		}
		var both [][]timeline.Event
		for _, r := range []compatRun{resumed, again} {
			events, err := timeline.Parse(r.events)
			if err != nil {
				return err
			}
			both = append(both, events)
		}
		if repeated := faultchain.RepeatedWork(both, nil); len(repeated) > 0 {
			return fmt.Errorf("work done again:\n  %s", strings.Join(repeated, "\n  "))
		}
		after, err := h.staticPodManifests()
		if err != nil {
			return err
		}
		for _, c := range controlPlaneComponents {
			if after[c] != before[c] {
				return fmt.Errorf("%s's manifest changed:\n%s\nwas:\n%s", c, after[c], before[c])
			}
		}
		return nil
	})

	if conformance != nil {
		// the job's second: the target's tests, the emulation removed
		h.conformanceStep(conformance.To, "target-", conformanceSkip, &runs)
	}

	// step 4: the kubelets and kube-proxy
	h.Must("kind alpha upgrade to "+to+" without --skip-phases finishes the upgrade", func() error {
		_, err := upgrade("step 4, without --skip-phases")
		return err
	})
	h.checkAfterUpgrade(afterUpgrade{to: to, etcd: m.ToEtcdImage, coreDNS: m.ToCoreDNSImage, kubeProxy: true, noCordon: true})
	h.Check("the kube-proxy DaemonSet runs "+to, func() error { return kubeProxyAt(to) })
	h.Check("the control plane still runs "+to+" without emulation", func() error {
		return h.controlPlaneEmulates(emulation{version: to})
	})
	h.checkNoOpRerun(imageDir, to)
}

// startAPIProbe starts probing the API server from the host, through
// the cluster's kubeconfig, as the check named what; identify names the
// server of an answer by its certificate (nil: "api-server").
func (h *harness) startAPIProbe(what string, identify func(*x509.Certificate) string) *probe.APIProbe {
	if identify == nil {
		identify = func(*x509.Certificate) string { return "api-server" }
	}
	var api *probe.APIProbe
	h.Must(what, func() error {
		creds, err := h.hostCredentials()
		if err != nil {
			return err
		}
		api, err = probe.StartAPIProbe(creds, "/api/v1/namespaces/default", probe.Interval, identify)
		return err
	})
	return api
}

// hostCredentials reads the cluster's kubeconfig for the host.
func (h *harness) hostCredentials() (probe.Credentials, error) {
	out, err := h.RunStdout(h.Kind, "get", "kubeconfig", "--name", h.Name)
	if err != nil {
		return probe.Credentials{}, err
	}
	return probe.ParseKubeconfig([]byte(out))
}

// createEmulating creates the cluster at from with config, the three
// components emulating emulated (compatPatch added), and checks it.
func (h *harness) createEmulating(from, emulated, config string) {
	h.CreateCluster(from, kindtest.WithPatch(config, strings.ReplaceAll(compatPatch, "EMULATED", emulated)))
	h.Must("nodes Ready at "+from, func() error { return h.NodesReadyAt(from, 3*time.Minute) })
	h.Must("the control plane emulates "+emulated+" from kind create cluster (manifests, mirror pods, /version)", func() error {
		return h.controlPlaneEmulates(emulation{version: from, emulated: emulated})
	})
}

// kubeProxyAt checks the kube-proxy DaemonSet's image version.
func (h *harness) kubeProxyAt(version string) error {
	out, err := h.Kubectl("get", "daemonset", "kube-proxy", "--namespace=kube-system", "-o", "jsonpath={.spec.template.spec.containers[0].image}")
	if want := "registry.k8s.io/kube-proxy:" + version; err == nil && strings.TrimSpace(out) != want {
		err = fmt.Errorf("the kube-proxy DaemonSet runs %s, want %s", out, want)
	}
	return err
}

// controlPlaneEmulates checks the control plane against e, for up to 2
// minutes (a static pod's mirror pod follows its manifest): each
// component's manifest on the control-plane node, its mirror pod as the
// API server reports it, and /version.
func (h *harness) controlPlaneEmulates(e emulation) error {
	return kindtest.Eventually(2*time.Minute, func() error {
		manifests, err := h.staticPodManifests()
		if err != nil {
			return err
		}
		var problems []string
		for _, c := range controlPlaneComponents {
			mirror, err := h.Kubectl("get", "pod", c+"-"+h.CP, "--namespace=kube-system", "-o", "json")
			if err != nil {
				return err
			}
			if err := checkStaticPod(c, manifests[c], e); err != nil {
				problems = append(problems, "the manifest on the node: "+err.Error())
			}
			if err := checkStaticPod(c, mirror, e); err != nil {
				problems = append(problems, "the mirror pod: "+err.Error())
			}
		}
		out, err := h.Kubectl("get", "--raw=/version")
		if err != nil {
			return err
		}
		if err := checkVersion(out, e); err != nil {
			problems = append(problems, err.Error())
		}
		return timeline.JoinProblems("the control plane", problems)
	})
}

// staticPodManifests reads the control-plane node's manifests of
// controlPlaneComponents.
func (h *harness) staticPodManifests() (map[string]string, error) {
	manifests := map[string]string{}
	for _, c := range controlPlaneComponents {
		out, err := h.RunStdout(h.Provider, "exec", h.CP, "cat", "/etc/kubernetes/manifests/"+c+".yaml")
		if err != nil {
			return nil, err
		}
		manifests[c] = out
	}
	return manifests, nil
}

// checkStaticPod checks component's static pod (its manifest, YAML, or its
// mirror pod, JSON) against e: the image at e.version, --emulated-version
// as e.emulated, kube-apiserver's --emulation-forward-compatible=true when
// e.forward; neither flag when not asked for.
func checkStaticPod(component, pod string, e emulation) error {
	var p struct {
		Spec struct {
			Containers []struct {
				Image   string   `json:"image"`
				Command []string `json:"command"`
			} `json:"containers"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(pod), &p); err != nil || len(p.Spec.Containers) == 0 {
		return fmt.Errorf("%s: not a pod with a container (%v):\n%s", component, err, pod)
	}
	c := p.Spec.Containers[0]
	var problems []string
	if want := "registry.k8s.io/" + component + ":" + e.version; c.Image != want {
		problems = append(problems, fmt.Sprintf("image %s, want %s", c.Image, want))
	}
	want := map[string]string{"--emulated-version": e.emulated}
	if e.forward && component == "kube-apiserver" {
		want["--emulation-forward-compatible"] = "true"
	}
	got := map[string]string{}
	for _, arg := range c.Command {
		name, value, _ := strings.Cut(arg, "=")
		got[name] = value
	}
	flag := func(name, value string) string {
		if value == "" {
			return "no " + name
		}
		return name + "=" + value
	}
	for _, name := range []string{"--emulated-version", "--emulation-forward-compatible"} {
		if got[name] != want[name] {
			problems = append(problems, fmt.Sprintf("%s, want %s", flag(name, got[name]), flag(name, want[name])))
		}
	}
	return timeline.JoinProblems(component, problems)
}

// checkVersion checks /version against e: gitVersion e.version,
// emulationMinor e.emulated's minor, or the server's own (or none) without
// emulation.
func checkVersion(out string, e emulation) error {
	var v struct {
		GitVersion     string `json:"gitVersion"`
		EmulationMinor string `json:"emulationMinor"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		return fmt.Errorf("/version: %v:\n%s", err, out)
	}
	want := fmt.Sprint(kindtest.MinorOf(e.version))
	if e.emulated != "" {
		want = fmt.Sprint(kindtest.MinorOf(e.emulated))
	}
	if v.GitVersion != e.version || (v.EmulationMinor != want && (e.emulated != "" || v.EmulationMinor != "")) {
		return fmt.Errorf("/version reports gitVersion %s emulationMinor %q, want %s emulating minor %s", v.GitVersion, v.EmulationMinor, e.version, want)
	}
	return nil
}

// stepOutcomes checks that step id finished once in a run's events, with
// outcome.
func stepOutcomes(events string, id cluster.UpgradeStepID, outcome string) error {
	parsed, err := timeline.Parse(events)
	if err != nil {
		return err
	}
	var got []string
	for _, ev := range parsed {
		if ev.Kind == cluster.UpgradeEventKindStep && ev.Event == cluster.UpgradeEventFinished && ev.StepID == id {
			got = append(got, ev.Outcome)
		}
	}
	if len(got) != 1 || got[0] != outcome {
		return fmt.Errorf("step %s finished with %v, want once with %s", id, got, outcome)
	}
	return nil
}

// writeCompatReport writes compat-report.txt: each run's wall time and
// what the API probe saw during it (each figure also a test case of the
// JUnit), the phases' wall times and the versions after.
func (h *harness) writeCompatReport(from, to, emulated string, runs []compatRun, samples []probe.Sample) {
	var b strings.Builder
	fmt.Fprintf(&b, "Compatibility versions %s -> %s on 1 control-plane node and 2 workers created emulating %s; the API server from the host (GET /api/v1/namespaces/default every %s, a new connection each) during each run:\n", from, to, emulated, probe.Interval)
	var all strings.Builder
	for _, r := range runs {
		a := probe.Measure(samples, r.start, r.end)
		line := fmt.Sprintf("%s: %.1fs, API %s", r.name, r.end.Sub(r.start).Seconds(), describeAPI(a, r))
		fmt.Fprintf(&b, "  %s\n", line)
		var err error
		if a.Total == 0 {
			err = fmt.Errorf("the API probe sent no request during the run")
		}
		h.Record("availability: "+line, 0, err, "")
		all.WriteString(r.events)
	}
	order, times, total, err := timeline.PhaseTimes(all.String())
	if err != nil {
		fmt.Fprintf(&b, "the runs' events could not be read: %v\n", err)
	}
	b.WriteString("per-phase wall time summed over the runs:\n")
	for _, p := range order {
		fmt.Fprintf(&b, "  %-15s %7.1fs\n", p, times[p])
	}
	fmt.Fprintf(&b, "  %-15s %7.1fs\n\n%s", "total", total, h.Versions("After the runs"))
	kindtest.WriteFile(h.t, h.Artifacts, "compat-report.txt", b.String())
	kindtest.WriteFile(h.t, h.Artifacts, "api-probe.log", probe.FormatSamples(samples))
	h.t.Log("\n" + b.String())
}

// describeAPI is one line about a, measured during r: its longest outage
// located in r's steps (when r finished; else from r's start).
func describeAPI(a probe.Availability, r compatRun) string {
	l := a.Longest()
	if l.Missed == 0 {
		return a.String() + ", no outage"
	}
	where := fmt.Sprintf("%+.1fs into the run", l.Start.Sub(r.start).Seconds())
	// a test run has no events: no steps to place it in
	if events, err := timeline.Parse(r.events); err == nil && r.events != "" {
		if spans, err := timeline.SpansOf(events); err == nil {
			where = timeline.Locate(spans, l.Start)
		}
	}
	return fmt.Sprintf("%s, %d outage(s), the longest %s (%d requests) at %s", a, len(a.Outages), l.Duration().Round(10*time.Millisecond), l.Missed, where)
}

// TestCompatConfig checks the compatibility suite's kind config, with the
// cgroup v1 patch added as on a cgroup v1 host: the emulation in the
// extraArgs of the three components, and both patches.
func TestCompatConfig(t *testing.T) {
	t.Parallel()
	config := kindtest.WithPatch(kindtest.WithPatch(faultsClusterConfig, strings.ReplaceAll(compatPatch, "EMULATED", "1.36")), kindtest.CgroupV1Patch)
	var c struct {
		Nodes   []struct{ Role string } `json:"nodes"`
		Patches []string                `json:"kubeadmConfigPatches"`
	}
	if err := yaml.Unmarshal([]byte(config), &c); err != nil {
		t.Fatalf("the kind config is not YAML: %v\n%s", err, config)
	}
	if len(c.Nodes) != 3 || len(c.Patches) != 2 || !strings.Contains(c.Patches[1], "failCgroupV1: false") {
		t.Fatalf("nodes %v, patches %q", c.Nodes, c.Patches)
	}
	type args struct {
		ExtraArgs map[string]string `json:"extraArgs"`
	}
	var cluster struct {
		Kind              string `json:"kind"`
		APIServer         args   `json:"apiServer"`
		ControllerManager args   `json:"controllerManager"`
		Scheduler         args   `json:"scheduler"`
	}
	if err := yaml.UnmarshalStrict([]byte(c.Patches[0]), &cluster); err != nil {
		t.Fatalf("the ClusterConfiguration patch: %v\n%s", err, c.Patches[0])
	}
	for _, a := range []args{cluster.APIServer, cluster.ControllerManager, cluster.Scheduler} {
		if cluster.Kind != "ClusterConfiguration" || len(a.ExtraArgs) != 1 || a.ExtraArgs["emulated-version"] != "1.36" {
			t.Errorf("the ClusterConfiguration patch is %+v", cluster)
		}
	}
}

// TestCheckStaticPod checks the static pods' check on a manifest as
// kubeadm writes it (YAML) and a mirror pod as the API returns it (JSON).
func TestCheckStaticPod(t *testing.T) {
	t.Parallel()
	manifest := func(component, version string, flags ...string) string {
		var b strings.Builder
		b.WriteString("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - command:\n    - " + component + "\n    - --v=2\n")
		for _, f := range flags {
			b.WriteString("    - " + f + "\n")
		}
		b.WriteString("    image: registry.k8s.io/" + component + ":" + version + "\n    name: " + component + "\n")
		return b.String()
	}
	mirror := `{"kind":"Pod","spec":{"containers":[{"name":"kube-apiserver","image":"registry.k8s.io/kube-apiserver:v1.37.2","command":["kube-apiserver","--emulated-version=1.36","--emulation-forward-compatible=true"]}]}}`
	emulating := emulation{version: "v1.37.2", emulated: "1.36", forward: true}
	for _, c := range []struct {
		name, component, pod string
		want                 emulation
		wantErr              string
	}{
		{"kube-apiserver emulating, forward compatible", "kube-apiserver", manifest("kube-apiserver", "v1.37.2", "--emulated-version=1.36", "--emulation-forward-compatible=true"), emulating, ""},
		{"the mirror pod, JSON", "kube-apiserver", mirror, emulating, ""},
		{"forward compatible is kube-apiserver's only", "kube-scheduler", manifest("kube-scheduler", "v1.37.2", "--emulated-version=1.36"), emulating, ""},
		{"without emulation", "kube-controller-manager", manifest("kube-controller-manager", "v1.37.2"), emulation{version: "v1.37.2"}, ""},
		{"an emulation left", "kube-apiserver", mirror, emulation{version: "v1.37.2"}, "--emulated-version=1.36, want no --emulated-version"},
		{"forward compatible missing", "kube-apiserver", manifest("kube-apiserver", "v1.37.2", "--emulated-version=1.36"), emulating, "no --emulation-forward-compatible, want --emulation-forward-compatible=true"},
		{"forward compatible false", "kube-apiserver", manifest("kube-apiserver", "v1.37.2", "--emulation-forward-compatible=false"), emulation{version: "v1.37.2"}, "--emulation-forward-compatible=false, want no"},
		{"the old image", "kube-scheduler", manifest("kube-scheduler", "v1.36.3", "--emulated-version=1.36"), emulating, "image registry.k8s.io/kube-scheduler:v1.36.3, want registry.k8s.io/kube-scheduler:v1.37.2"},
		{"not a pod", "kube-scheduler", "Error from server (NotFound)", emulating, "not a pod"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := checkStaticPod(c.component, c.pod, c.want)
			if (err == nil) != (c.wantErr == "") || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
				t.Errorf("got %v, want an error with %q", err, c.wantErr)
			}
		})
	}
}

// TestCheckVersion checks the /version check on what a v1.37.2 API server
// of the lab answered emulating 1.36 and not (trimmed), and on an answer
// without the emulation fields, as servers before them give.
func TestCheckVersion(t *testing.T) {
	t.Parallel()
	emulating := `{"major": "1", "minor": "37", "emulationMajor": "1", "emulationMinor": "36", "minCompatibilityMajor": "1", "minCompatibilityMinor": "35", "gitVersion": "v1.37.2", "platform": "linux/amd64"}`
	own := `{"major": "1", "minor": "37", "emulationMajor": "1", "emulationMinor": "37", "minCompatibilityMajor": "1", "minCompatibilityMinor": "36", "gitVersion": "v1.37.2", "platform": "linux/amd64"}`
	before := `{"major": "1", "minor": "37", "gitVersion": "v1.37.2"}`
	for _, c := range []struct {
		name, out string
		want      emulation
		ok        bool
	}{
		{"emulating 1.36", emulating, emulation{version: "v1.37.2", emulated: "1.36"}, true},
		{"not emulating", own, emulation{version: "v1.37.2"}, true},
		{"no emulation fields", before, emulation{version: "v1.37.2"}, true},
		{"still emulating", emulating, emulation{version: "v1.37.2"}, false},
		{"not emulating yet", own, emulation{version: "v1.37.2", emulated: "1.36"}, false},
		{"another version", own, emulation{version: "v1.36.3"}, false},
		{"not JSON", "error: the server is unavailable", emulation{version: "v1.37.2"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if err := checkVersion(c.out, c.want); (err == nil) != c.ok {
				t.Errorf("got %v, want ok %v", err, c.ok)
			}
		})
	}
}
