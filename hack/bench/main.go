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

// Command bench is the benchmark of `kind alpha upgrade` (make bench): it
// creates fresh identical kind clusters from the offline artifacts and times
// the tool against upstream `kind load image-archive` for loading and
// against the hand-typed kubeadm sequence for the whole upgrade.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kindupgrade/kind-upgrade/internal/lab/kindtest"
	"github.com/kindupgrade/kind-upgrade/internal/lab/manifest"
	"github.com/kindupgrade/kind-upgrade/internal/lab/timeline"
)

// benchClusterName is the clusters the benchmark creates, one at a time.
const benchClusterName = "kind-upgrade-bench"

// The benchmark (make bench) measures loading the target's artifacts
// (`kind alpha upgrade --skip-phases control-plane,kubelets,verify`)
// against upstream `kind load image-archive` of the same archives at each
// size of -loading; then, on fresh identical clusters, `kind alpha upgrade`
// against the hand-typed sequence of hack/bench/hand-upgrade.sh at each
// size of -workers. The methods alternate round after round. It writes
// bench.json and bench.md to -artifacts after every run. It fails only
// when a run fails, never on a time.
func main() {
	manifestPath := flag.String("manifest", "", "the offline artifacts' manifest, as hack/e2e/build-artifacts.sh prints its path (required)")
	kind := flag.String("kind", "bin/kind", "the kind binary with `kind alpha upgrade`")
	hand := flag.String("hand-script", "hack/bench/hand-upgrade.sh", "the hand-typed kubeadm sequence")
	artifacts := flag.String("artifacts", filepath.Join("_artifacts", "bench"), "where bench.md, bench.json and commands.log go")
	rounds := flag.Int("rounds", 3, "rounds per size and method")
	loading := flag.String("loading", "0 1 3", `worker counts of the loading benchmark, space separated; "none" skips it`)
	workers := flag.String("workers", "1 3", `worker counts of the upgrade benchmark, space separated; "none" skips it`)
	sources := flag.String("sources", "1", `worker counts of the source benchmark (--image against --image-dir), space separated; "none" skips it`)
	baseline := flag.String("baseline", "", "another kind binary (an earlier build of `kind alpha upgrade`) whose upgrades alternate with the other methods' as a third method, for before/after figures; none when empty")
	flag.Parse()
	if *rounds < 1 {
		fatal(fmt.Errorf("-rounds %d: want a positive number", *rounds))
	}
	loadingSizes, err := workerCounts("-loading", *loading)
	if err != nil {
		fatal(err)
	}
	upgradeSizes, err := workerCounts("-workers", *workers)
	if err != nil {
		fatal(err)
	}
	sourceSizes, err := workerCounts("-sources", *sources)
	if err != nil {
		fatal(err)
	}
	if *manifestPath == "" {
		fatal(fmt.Errorf("-manifest is required: run the benchmark with make bench, which builds the artifacts and passes it"))
	}
	m, err := manifest.Load(*manifestPath)
	if err != nil {
		fatal(err)
	}
	r := newRunner()
	ok := r.run(func() {
		benchmark(r, m, *kind, *hand, *baseline, *artifacts, *rounds, loadingSizes, upgradeSizes, sourceSizes)
	})
	if !ok {
		fmt.Fprintln(os.Stderr, "ERROR: the benchmark had a failed run (named in bench.md)")
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "ERROR:", err)
	os.Exit(1)
}

// workerCounts reads a space-separated list of worker counts; "none"
// skips that part.
func workerCounts(flagName, v string) ([]int, error) {
	if strings.TrimSpace(v) == "none" {
		return nil, nil
	}
	var counts []int
	for _, f := range strings.Fields(v) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s: %q is not a number of workers", flagName, f)
		}
		counts = append(counts, n)
	}
	if len(counts) == 0 {
		return nil, fmt.Errorf("%s: no worker count (give \"none\" to skip this part)", flagName)
	}
	return counts, nil
}

// benchConfig is a kind config of one control plane and workers workers.
func benchConfig(workers int) string {
	config := "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n- role: control-plane\n"
	for i := 0; i < workers; i++ {
		config += "- role: worker\n"
	}
	return config
}

// bench drives the benchmark's cluster.
type bench struct {
	*kindtest.Cluster
}

// kubeletsAt checks every node is Ready with its kubelet at version (the
// hand-typed sequence does not write /kind/version).
func (h *bench) kubeletsAt(version string) error {
	if _, err := h.KubeletsReadyAt(version); err != nil {
		return err
	}
	return h.ServerAt(version)
}

// benchmark runs every part of the benchmark on the cluster it drives.
func benchmark(t kindtest.T, m *manifest.Manifest, kind, hand, baseline, artifacts string, rounds int, loadingSizes, upgradeSizes, sourceSizes []int) {
	from, to := m.From, m.To
	imageDir := m.ImageDir
	h := &bench{kindtest.New(t, kindtest.Options{Kind: kind, Name: benchClusterName, Artifacts: artifacts, Manifest: m})}
	start := time.Now()
	progress := func(format string, args ...interface{}) {
		t.Logf("[%s] %s", time.Since(start).Round(time.Second), fmt.Sprintf(format, args...))
	}

	// the report is written after every run, so that a benchmark stopped
	// half-way still leaves what it measured
	machine := h.machine()
	var upgrades, loads, sources []benchSize
	save := func(upgrades, loads, sources []benchSize) string {
		report := benchReport(machine, from, to, rounds, upgrades, loads, sources)
		kindtest.WriteFile(t, h.Artifacts, "bench.md", report)
		if b, err := json.MarshalIndent(map[string]interface{}{
			"machine": machine, "from": from, "to": to, "rounds": rounds, "upgrade": upgrades, "loading": loads, "sources": sources,
		}, "", "  "); err == nil {
			kindtest.WriteFile(t, h.Artifacts, "bench.json", string(b)+"\n")
		}
		return report
	}

	for _, workers := range loadingSizes {
		size := benchSize{Workers: workers}
		h.NodeCount = 1 + workers
		progress("loading on %s: creating the cluster at %s", size.name(), from)
		h.CreateCluster(from, benchConfig(workers))
		h.Must("the nodes are Ready at "+from, func() error { return h.NodesReadyAt(from, 3*time.Minute) })
		var baseline map[string]map[string]bool
		h.Must("list the images of the fresh nodes", func() error {
			var err error
			baseline, err = h.imageBaseline()
			return err
		})
		for round := 1; round <= rounds; round++ {
			methods := []string{methodTool, methodKindLoad}
			if round%2 == 0 {
				methods[0], methods[1] = methods[1], methods[0]
			}
			for _, method := range methods {
				h.Must("remove the target's images and staged binaries from the nodes", func() error { return h.unload(to, baseline) })
				run := benchRun{Method: method, Round: round}
				h.Must(fmt.Sprintf("loading on %s, round %d: %s", size.name(), round, method), func() error {
					var err error
					if method == methodKindLoad {
						run, err = h.kindLoad(run, imageDir)
					} else {
						run, err = h.toolUpgrade(run, []string{"--image-dir", imageDir}, "", "--skip-phases", "control-plane,kubelets,verify")
					}
					return err
				})
				progress("loading on %s, round %d: %s took %.1f s", size.name(), round, method, run.Total)
				size.Runs = append(size.Runs, run)
				save(upgrades, append(loads, size), sources)
			}
		}
		h.Must("delete the cluster", func() error {
			_, err := h.Run(nil, h.Kind, "delete", "cluster", "--name", h.Name)
			return err
		})
		loads = append(loads, size)
	}

	for _, workers := range upgradeSizes {
		size := benchSize{Workers: workers}
		h.NodeCount = 1 + workers
		for round := 1; round <= rounds; round++ {
			for _, method := range upgradeMethods(round, baseline != "") {
				progress("%s, round %d of %d: creating the cluster at %s", size.name(), round, rounds, from)
				created := h.CreateCluster(from, benchConfig(workers))
				h.Must("the nodes are Ready at "+from, func() error { return h.NodesReadyAt(from, 3*time.Minute) })
				progress("%s, round %d: upgrading with %s", size.name(), round, method)
				run := benchRun{Method: method, Round: round, Created: created.Seconds()}
				// a failed run fails the benchmark at the end, is kept out
				// of the figures and named in the report; the next run gets
				// a fresh cluster anyway
				h.Check(fmt.Sprintf("%s, round %d: %s to %s", size.name(), round, method, to), func() error {
					var err error
					switch method {
					case methodHand:
						run, err = h.handUpgrade(run, hand, imageDir, to)
					case methodBaseline:
						run, err = h.toolUpgradeWith(baseline, run, []string{"--image-dir", imageDir}, to, "--parallel-workers", strconv.Itoa(max(1, workers)))
					default:
						run, err = h.toolUpgrade(run, []string{"--image-dir", imageDir}, to, "--parallel-workers", strconv.Itoa(max(1, workers)))
					}
					if err != nil {
						run.Failed = firstLine(err.Error())
					}
					return err
				})
				progress("%s, round %d: %s took %.1f s %v", size.name(), round, method, run.Total, run.Phases)
				size.Runs = append(size.Runs, run)
				save(append(upgrades, size), loads, sources)
				h.Must("delete the cluster", func() error {
					_, err := h.Run(nil, h.Kind, "delete", "cluster", "--name", h.Name)
					return err
				})
			}
		}
		upgrades = append(upgrades, size)
	}

	// the same upgrade from the target's node image (plus the archive it
	// lacks offline) and from the release folder, on fresh identical
	// clusters, the order alternating
	fromSource := map[string][]string{
		methodImageDir: {"--image-dir", imageDir},
		methodImage:    {"--image", m.TargetNodeImage, "--image-dir", m.ImageExtrasDir},
	}
	for _, workers := range sourceSizes {
		size := benchSize{Workers: workers}
		h.NodeCount = 1 + workers
		for round := 1; round <= rounds; round++ {
			methods := []string{methodImageDir, methodImage}
			if round%2 == 0 {
				methods[0], methods[1] = methods[1], methods[0]
			}
			for _, method := range methods {
				progress("source on %s, round %d of %d: creating the cluster at %s", size.name(), round, rounds, from)
				created := h.CreateCluster(from, benchConfig(workers))
				h.Must("the nodes are Ready at "+from, func() error { return h.NodesReadyAt(from, 3*time.Minute) })
				run := benchRun{Method: method, Round: round, Created: created.Seconds()}
				h.Check(fmt.Sprintf("source on %s, round %d: kind alpha upgrade %s", size.name(), round, strings.Join(fromSource[method], " ")), func() error {
					var err error
					run, err = h.toolUpgrade(run, fromSource[method], to)
					if err != nil {
						run.Failed = firstLine(err.Error())
					}
					return err
				})
				progress("source on %s, round %d: %s took %.1f s %v", size.name(), round, method, run.Total, run.Phases)
				size.Runs = append(size.Runs, run)
				save(upgrades, loads, append(sources, size))
				h.Must("delete the cluster", func() error {
					_, err := h.Run(nil, h.Kind, "delete", "cluster", "--name", h.Name)
					return err
				})
			}
		}
		sources = append(sources, size)
	}

	// run.sh prints bench.md
	save(upgrades, loads, sources)
}

// upgradeMethods are the upgrade benchmark's methods in round's order:
// each round starts with the next method, so that every method runs
// first, second (and third) alike.
func upgradeMethods(round int, baseline bool) []string {
	methods := []string{methodTool, methodHand}
	if baseline {
		methods = append(methods, methodBaseline)
	}
	k := (round - 1) % len(methods)
	return append(append([]string{}, methods[k:]...), methods[:k]...)
}

// toolUpgrade runs `kind alpha upgrade --output json` with extra flags and,
// when to is set, checks the cluster ends at to.
func (h *bench) toolUpgrade(run benchRun, source []string, to string, extra ...string) (benchRun, error) {
	return h.toolUpgradeWith(h.Kind, run, source, to, extra...)
}

// toolUpgradeWith is toolUpgrade with the kind binary kind.
func (h *bench) toolUpgradeWith(kind string, run benchRun, source []string, to string, extra ...string) (benchRun, error) {
	args := append(append(append([]string{"alpha", "upgrade", "--name", h.Name}, source...), "--output", "json"), extra...)
	begin := time.Now()
	out, err := h.RunStdout(kind, args...)
	run.Total = time.Since(begin).Seconds()
	if err != nil {
		return run, err
	}
	_, run.Phases, _, err = timeline.PhaseTimes(out)
	if err != nil {
		return run, err
	}
	events, err := timeline.Parse(out)
	if err != nil {
		return run, err
	}
	if run.Split, _, err = timeline.Split(events); err != nil {
		return run, err
	}
	if run.Overhead, err = timeline.OverheadSteps(events); err != nil {
		return run, err
	}
	if run.Steps, run.Waits, err = stepSeconds(events); err != nil {
		return run, err
	}
	if run.Apply, err = applySeconds(events); err != nil {
		return run, err
	}
	if to == "" {
		return run, nil
	}
	return run, h.AllAt(to)
}

// handUpgrade runs the hand-typed sequence and checks the cluster ends at
// to.
func (h *bench) handUpgrade(run benchRun, script, imageDir, to string) (benchRun, error) {
	begin := time.Now()
	out, lines, err := h.RunTimed("env", "KIND="+h.Kind, "bash", script, h.Name, imageDir)
	run.Total = time.Since(begin).Seconds()
	if err != nil {
		return run, err
	}
	if _, run.Phases, err = handPhases(out); err != nil {
		return run, err
	}
	if run.KubeadmApply, err = kubeadmApplyParts(lines); err != nil {
		return run, err
	}
	for _, p := range run.KubeadmApply {
		if p.Name == kubeadmTotal {
			run.Apply = p.Seconds
		}
	}
	return run, h.kubeletsAt(to)
}

// benchArchives lists the image archives of a release folder: its
// kubernetes/server/bin/*.tar and the *.tar beside it.
func benchArchives(imageDir string) ([]string, error) {
	var all []string
	for _, pattern := range []string{filepath.Join(imageDir, "kubernetes", "server", "bin", "*.tar"), filepath.Join(imageDir, "*.tar")} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			return nil, err
		}
		all = append(all, m...)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no image archive in %s", imageDir)
	}
	return all, nil
}

// kindLoad loads every archive of imageDir with upstream `kind load
// image-archive`, one after another.
func (h *bench) kindLoad(run benchRun, imageDir string) (benchRun, error) {
	archives, err := benchArchives(imageDir)
	if err != nil {
		return run, err
	}
	begin := time.Now()
	for _, a := range archives {
		if _, err := h.Run(nil, h.Kind, "load", "image-archive", a, "--name", h.Name); err != nil {
			return run, err
		}
	}
	run.Total = time.Since(begin).Seconds()
	run.Phases = map[string]float64{"load": run.Total}
	return run, nil
}

// unload removes the target's images (as kubeadm names them and as the
// release tags them) and the staged binaries from every node, so that the
// next load does all its work again.
func (h *bench) unload(to string, baseline map[string]map[string]bool) error {
	out, err := h.Run(nil, h.Kind, "get", "nodes", "--name", h.Name)
	if err != nil {
		return err
	}
	for _, node := range strings.Fields(out) {
		present, err := h.imageRefs(node)
		if err != nil {
			return err
		}
		// every image the loads added: the target's, under every name, and
		// the import-<date>@sha256 names ctr's --digests gives them, which
		// would otherwise keep their content for the next load
		var remove []string
		for ref := range present {
			if !baseline[node][ref] {
				remove = append(remove, ref)
			}
		}
		sort.Strings(remove)
		if len(remove) > 0 {
			if _, err := h.Run(nil, "docker", append([]string{"exec", node, "ctr", "--namespace=k8s.io", "images", "rm", "--sync"}, remove...)...); err != nil {
				return err
			}
		}
		if _, err := h.Run(nil, "docker", "exec", node, "rm", "-rf", "/kind/upgrade"); err != nil {
			return err
		}
	}
	return nil
}

// imageRefs lists the images in node's containerd.
func (h *bench) imageRefs(node string) (map[string]bool, error) {
	list, err := h.Run(nil, "docker", "exec", node, "ctr", "--namespace=k8s.io", "images", "ls", "--quiet")
	if err != nil {
		return nil, err
	}
	refs := map[string]bool{}
	for _, ref := range strings.Fields(list) {
		refs[ref] = true
	}
	return refs, nil
}

// imageBaseline lists the images on each node of a fresh cluster.
func (h *bench) imageBaseline() (map[string]map[string]bool, error) {
	out, err := h.Run(nil, h.Kind, "get", "nodes", "--name", h.Name)
	if err != nil {
		return nil, err
	}
	baseline := map[string]map[string]bool{}
	for _, node := range strings.Fields(out) {
		if baseline[node], err = h.imageRefs(node); err != nil {
			return nil, err
		}
	}
	return baseline, nil
}

// machine describes where the benchmark ran.
func (h *bench) machine() map[string]string {
	m := map[string]string{"cores": strconv.Itoa(runtime.NumCPU())}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.Atoi(f[1]); err == nil {
					m["memory"] = fmt.Sprintf("%.0f GiB", float64(kb)/(1<<20))
				}
			}
		}
	}
	if out, err := h.Run(nil, "docker", "version", "--format", "{{.Server.Version}}"); err == nil {
		m["docker"] = strings.TrimSpace(out)
	}
	if out, err := h.Run(nil, "docker", "info", "--format", "{{.CgroupVersion}}"); err == nil {
		m["cgroup"] = "v" + strings.TrimSpace(out)
	}
	return m
}
