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
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/kindupgrade/kind-upgrade/internal/lab/kindtest"
	"github.com/kindupgrade/kind-upgrade/internal/lab/manifest"
	"github.com/kindupgrade/kind-upgrade/internal/lab/timeline"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster"
	"github.com/kindupgrade/kind-upgrade/test/e2e/faultchain"
)

// chainManifestsFlag are the manifests of the chain's earlier pairs
// (hack/e2e/run.sh chain passes them): the first one's source is where
// the chain starts, each one's target a target of the chain; -manifest's
// target is the last.
var chainManifestsFlag = flag.String("chain-manifests", "", "comma separated: the manifests of a chain's earlier pairs, in order (TestIntegrationUpgradeChain)")

// firstHopAPIOutageBound is the longest the API may be unreachable while
// the first target alone is applied inside Kubernetes' upgrade tests, on
// the chain's one control-plane node. The hop replaces etcd's image, then
// the API server's, and the two outages add up: the old etcd stops, the
// kubelet (still at the chain's first version) waits for its request
// deleting etcd's mirror pod to time out against the API that etcd's
// absence has stopped (34 s) before it starts the new etcd, the API server
// reconnects to it, and a few seconds later the API server's own static
// pod is replaced. Measured for v1.34.4 to v1.35.4 (2026-12-07): 67 s,
// then 44 s, 7 s apart, on an idle 1+1 cluster; in three runs of this
// suite, its tests' workloads on 2 cores, the longest 69.3 s, 70.5 s and
// 113.2 s (the two as one). The default single control-plane bound
// (90 s) comes from the pinned suite's v1.36.3 to v1.37.2 runs, whose
// outages were 34 s at most.
const firstHopAPIOutageBound = 150 * time.Second

// chainRun is one run of kind alpha upgrade in the chain suite.
type chainRun struct {
	name     string
	duration time.Duration
	events   string
}

// TestIntegrationUpgradeChain (make e2e-chain) upgrades a cluster through
// a chain of minor versions in one command: created at the first pair's
// source with 1 control plane and 2 workers; a chain whose last target
// lacks an image refused, nothing changed; the chain run, killed inside the
// second target's kubeadm upgrade apply and run again by Kubernetes' own
// upgrade tests, one worker's kubelet left at the source (--nodes); then
// that kubelet moved by the same chain through the Go API with the worker
// chosen, a hook checking the worker and its pods while the upgrade waits.
// A chain from before v1.35 into v1.35 or later on a cgroup v1 host gets
// the kubelets' failCgroupV1: false at create, as its user would add it.
func TestIntegrationUpgradeChain(t *testing.T) {
	c := loadChain(t)
	m, from, to, targets, dirs := c.m, c.from, c.to, c.targets, c.dirs
	h := newHarness(t, &m, "kind-upgrade-chain", 3, "chain")
	cp, worker, left := h.Name+"-control-plane", h.Name+"-worker", h.Name+"-worker2"
	allNodes := []string{cp, worker, left}
	chainArgs := imageDirArgs
	var runs []chainRun
	defer func() { h.writeChainReport(from, targets, runs) }()

	config := h.chainConfig(faultsClusterConfig, c)
	h.CreateCluster(from, config)
	h.Must("nodes Ready at "+from, func() error { return h.NodesReadyAt(from, 3*time.Minute) })
	h.Must("load the images of Kubernetes' upgrade tests", h.loadTestImages)

	// a chain whose last target lacks an image: refused before the first
	// target starts
	h.Check("a chain whose last target lacks the kube-apiserver archive is refused with --image-pull-policy Never, nothing changed", func() error {
		broken := filepath.Join(t.TempDir(), "broken")
		linkTree(t, dirs[len(dirs)-1], broken)
		archive := ""
		_ = filepath.Walk(broken, func(p string, info os.FileInfo, err error) error {
			if err == nil && info.Name() == "kube-apiserver.tar" {
				archive = p
			}
			return nil
		})
		if archive == "" {
			return fmt.Errorf("no kube-apiserver.tar in %s", dirs[len(dirs)-1])
		}
		if err := os.Remove(archive); err != nil {
			return err
		}
		args := append([]string{"alpha", "upgrade", "--name", h.Name, "--image-pull-policy", "Never"}, chainArgs(append(append([]string{}, dirs[:len(dirs)-1]...), broken))...)
		msg, err := h.refusedChangingNothing(allNodes, args, []string{fmt.Sprintf("target %d of %d", len(dirs), len(dirs)), "kube-apiserver"})
		kindtest.WriteFile(t, h.Artifacts, "chain-refusal.txt", msg)
		return err
	})

	// Kubernetes' upgrade tests between targets: their checks run once,
	// after the upgrade they wrap, so the first target alone is wrapped
	// (a master upgrade: the kubelets move once, at the end of the chain)
	h.Must("Kubernetes' upgrade tests across the first target alone (a master upgrade): they check the cluster between the first and second targets", func() error {
		return h.chainSuiteRun(&runs, "the first target alone", 0, suiteSpec{typ: "master", prefix: "chain-hop-1-", apiOutageBound: firstHopAPIOutageBound}, chainArgs(dirs[:1])...)
	})

	nodesFlag := []string{"--nodes", "control-plane," + worker}
	kill := faultchain.Point{StepID: timeline.StepID("control-plane/kubeadm-upgrade-apply"), Node: "control-plane", Hop: 2, Exec: "upgrade apply", Delay: 10 * time.Second, Action: faultchain.SIGKILL}
	h.Must("kind alpha upgrade through "+strings.Join(targets, ", ")+" is stopped by "+kill.String(), func() error {
		run := h.faultedRun(dirs[0], func(ev timeline.Event) *faultchain.Point {
			if kill.Matches(ev, h.Name) {
				return &kill
			}
			return nil
		}, append(chainArgs(dirs[1:]), nodesFlag...)...)
		runs = append(runs, chainRun{name: "the chain, killed", duration: run.duration, events: run.raw})
		kindtest.WriteFile(t, h.Artifacts, "chain-run-1-events.jsonl", run.raw)
		return h.checkFaulted(run)
	})
	h.Check("after the kill, the control plane is past the first target and every kubelet still at "+from, func() error {
		// the killed run's kubeadm goes on in the node, restarting the
		// API server: wait for its answers
		return kindtest.Eventually(3*time.Minute, func() error {
			v, err := h.ServerVersion()
			if err != nil {
				return err
			}
			if kindtest.MinorOf(v) < kindtest.MinorOf(targets[0]) {
				return fmt.Errorf("the API server runs %s", v)
			}
			_, err = h.KubeletsReadyAt(from)
			return err
		})
	})
	h.Must("Kubernetes' upgrade tests around the same command again (it finishes the chain)", func() error {
		return h.chainSuiteRun(&runs, "the same command again", 2, suiteSpec{typ: "cluster", prefix: "chain-"}, append(chainArgs(dirs), nodesFlag...)...)
	})
	h.Check("the control plane and "+worker+" run "+to+", "+left+" stays at "+from+" and Ready, its pods Running", func() error {
		nodes, err := h.Nodes()
		if err != nil {
			return err
		}
		want := map[string]string{cp: to, worker: to, left: from}
		for _, n := range nodes {
			if n.Kubelet != want[n.Name] || !n.Ready {
				return fmt.Errorf("node %s: kubelet %s Ready=%v, want %s and Ready", n.Name, n.Kubelet, n.Ready, want[n.Name])
			}
		}
		if v, err := h.ServerVersion(); err != nil || v != to {
			return fmt.Errorf("the API server runs %s (%v), want %s", v, err, to)
		}
		out, err := h.podsRunningOn(left)
		if err != nil {
			return err
		}
		nodesTable, _ := h.Kubectl("get", "nodes")
		kindtest.WriteFile(t, h.Artifacts, "chain-nodes-skewed.txt", nodesTable+"\n"+out)
		return nil
	})
	// the last run through the Go API, as an operator's test calls it: a
	// hook checks the workload on the node while the upgrade waits
	var points []string
	hook := func(p cluster.UpgradeHookPoint) error {
		points = append(points, fmt.Sprintf("target %d (%s) %s", p.Hop, p.Target, p))
		if p.Node != left || p.Phase != "kubelets" {
			return nil
		}
		nodes, err := h.Nodes()
		if err != nil {
			return err
		}
		for _, n := range nodes {
			if n.Name == left && (n.Kubelet != to || !n.Ready) {
				return fmt.Errorf("the hook after %s: its kubelet %s Ready=%v, want %s and Ready", left, n.Kubelet, n.Ready, to)
			}
		}
		_, err = h.podsRunningOn(left)
		return err
	}
	h.Must("the same chain through the Go API with UpgradeWithNodes(\""+left+"\") and a hook moves its kubelet", func() error {
		var events bytes.Buffer
		opts := []cluster.UpgradeOption{cluster.UpgradeWithNodes(left), cluster.UpgradeWithHook(hook), cluster.UpgradeWithOutput(&events, true)}
		for _, d := range dirs {
			opts = append(opts, cluster.UpgradeWithImageDir(d))
		}
		start := time.Now()
		err := cluster.Upgrade(kindcluster.NewProvider(), h.Name, opts...)
		runs = append(runs, chainRun{name: "the chain again, Go API, --nodes " + left, duration: time.Since(start), events: events.String()})
		kindtest.WriteFile(t, h.Artifacts, "chain-run-3-events.jsonl", events.String())
		kindtest.WriteFile(t, h.Artifacts, "chain-run-3-hooks.txt", strings.Join(points, "\n")+"\n")
		return err
	})
	h.Check("the hook ran after "+left+" in the last target's kubelets phase and after that target, and nowhere in the targets done before", func() error {
		want := []string{
			fmt.Sprintf("target %d (%s) node %s in phase kubelets", len(targets), to, left),
			fmt.Sprintf("target %d (%s) the upgrade to %s", len(targets), to, to),
		}
		got := strings.Join(points, "\n")
		for _, w := range want {
			if !strings.Contains(got, w) {
				return fmt.Errorf("no hook at %q; it ran at:\n%s", w, got)
			}
		}
		for _, p := range points {
			if !strings.HasPrefix(p, fmt.Sprintf("target %d ", len(targets))) {
				return fmt.Errorf("a hook in a target the first runs finished: %s", p)
			}
		}
		return nil
	})
	h.Check("every node runs "+to, func() error { return h.AllAt(to) })
}

// chain is the chain of an e2e: the manifest to create the cluster with
// (the first pair's source and node image, the last pair's tests and
// their images), the versions and the targets' folders.
type chain struct {
	m             manifest.Manifest
	from, to      string
	targets, dirs []string
}

// loadChain reads -manifest and -chain-manifests, and fails unless they
// are a chain of minor versions one at a time.
func loadChain(t *testing.T) chain {
	last := integration(t)
	var earlier []*manifest.Manifest
	for _, p := range strings.Split(*chainManifestsFlag, ",") {
		if p == "" {
			continue
		}
		m, err := manifest.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		earlier = append(earlier, m)
	}
	if len(earlier) == 0 {
		t.Skip("no -chain-manifests: run this test with make e2e-chain (or e2e-chain-compat), which builds every pair of the chain")
	}
	c := chain{m: *last}
	c.m.From, c.m.NodeImage = earlier[0].From, earlier[0].NodeImage
	c.from = c.m.From
	for _, e := range append(earlier, last) {
		c.targets, c.dirs = append(c.targets, e.To), append(c.dirs, e.ImageDir)
	}
	c.to = c.targets[len(c.targets)-1]
	for i := 1; i < len(c.targets); i++ {
		if kindtest.MinorOf(c.targets[i]) != kindtest.MinorOf(c.targets[i-1])+1 {
			t.Fatalf("the chain %s -> %s is not one minor at a time", c.from, strings.Join(c.targets, " -> "))
		}
	}
	if len(c.targets) < 2 {
		t.Fatalf("a chain needs two targets at least, not %v", c.targets)
	}
	return c
}

// imageDirArgs repeats --image-dir for each folder, in order.
func imageDirArgs(dirs []string) []string {
	var args []string
	for _, d := range dirs {
		args = append(args, "--image-dir", d)
	}
	return args
}

// chainConfig returns config, with the kubelets' failCgroupV1: false on a
// cgroup v1 host when the chain starts before v1.35 and reaches it: what
// a kind user adds before such a chain (kindtest adds it itself for a
// cluster created at v1.35 or later).
func (h *harness) chainConfig(config string, c chain) string {
	if v1, err := h.CgroupV1Host(); err == nil && v1 && kindtest.MinorOf(c.from) < 35 && kindtest.MinorOf(c.to) >= 35 {
		h.t.Log("cgroup v1 host and a chain into v1.35 or later: the cluster's kubelets get failCgroupV1: false")
		h.CgroupPatched = true
		return kindtest.WithPatch(config, kindtest.CgroupV1Patch)
	}
	return config
}

// chainSuiteRun runs Kubernetes' upgrade tests around kind alpha upgrade
// with args, records the run as the n-th of runs (its events in
// chain-run-<n>-events.jsonl) and, when they pass, writes their results to
// <prefix>upgrade-tests.txt.
func (h *harness) chainSuiteRun(runs *[]chainRun, name string, n int, spec suiteSpec, args ...string) error {
	run, err := h.runUpgradeSuite(spec, args...)
	*runs = append(*runs, chainRun{name: name + ", inside Kubernetes' upgrade tests", events: run.Events})
	kindtest.WriteFile(h.t, h.Artifacts, fmt.Sprintf("chain-run-%d-events.jsonl", n), run.Events)
	if err == nil {
		kindtest.WriteFile(h.t, h.Artifacts, spec.prefix+"upgrade-tests.txt", describeCases(run.Cases)+"\n"+strings.Join(run.Figures, "\n")+"\n")
	}
	return err
}

// podsRunningOn returns the pods on node, each with its phase, and an
// error unless there is one and each is Running or Succeeded within 2
// minutes.
func (h *harness) podsRunningOn(node string) (string, error) {
	var out string
	// within 2 minutes: a pod just created there (the storage
	// provisioner's helper that deletes a volume the tests released) is
	// Pending for a moment; one the kubelet cannot start stays so
	err := kindtest.Eventually(2*time.Minute, func() error {
		var err error
		out, err = h.Kubectl("get", "pods", "--all-namespaces", "--field-selector", "spec.nodeName="+node, "-o", `jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {.status.phase}{"\n"}{end}`)
		if err != nil {
			return err
		}
		if strings.TrimSpace(out) == "" {
			return fmt.Errorf("no pod runs on %s", node)
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if !strings.HasSuffix(line, " Running") && !strings.HasSuffix(line, " Succeeded") {
				return fmt.Errorf("on %s: %s", node, line)
			}
		}
		return nil
	})
	return out, err
}

// writeChainReport writes, for each run, each target's time (from its
// own preflight to its last event) and the run's total.
func (h *harness) writeChainReport(from string, targets []string, runs []chainRun) {
	var b strings.Builder
	fmt.Fprintf(&b, "chain %s -> %s (%s)\n", from, strings.Join(targets, " -> "), time.Now().Format("2006-01-02"))
	for _, r := range runs {
		events, _ := timeline.Parse(r.events)
		fmt.Fprintf(&b, "%s:", r.name)
		if r.duration > 0 {
			fmt.Fprintf(&b, " %s in all", r.duration.Round(100*time.Millisecond))
		}
		b.WriteString("\n")
		hops := 0
		for _, ev := range events {
			hops = max(hops, ev.Hop)
		}
		if hops == 0 && len(events) > 0 {
			// one target: its events carry no hop
			fmt.Fprintf(&b, "  one target: %s\n", events[len(events)-1].Time.Sub(events[0].Time).Round(100*time.Millisecond))
		}
		for hop := 1; hop <= len(targets); hop++ {
			var start, end time.Time
			for _, ev := range events {
				if ev.Hop != hop {
					continue
				}
				if ev.Kind == "phase" && ev.Phase == "preflight" && ev.Event == "started" {
					// the last preflight: the look ahead comes first
					start = ev.Time
				}
				end = ev.Time
			}
			if start.IsZero() {
				continue
			}
			fmt.Fprintf(&b, "  target %d (%s): %s\n", hop, targets[hop-1], end.Sub(start).Round(100*time.Millisecond))
		}
	}
	b.WriteString(h.Versions("at the end"))
	kindtest.WriteFile(h.t, h.Artifacts, "chain-report.txt", b.String())
}
