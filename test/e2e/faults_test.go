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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/internal/lab/etcdcheck"
	"github.com/kindupgrade/kind-upgrade/internal/lab/kindtest"
	"github.com/kindupgrade/kind-upgrade/internal/lab/manifest"
	"github.com/kindupgrade/kind-upgrade/internal/lab/timeline"
	"github.com/kindupgrade/kind-upgrade/test/e2e/faultchain"
)

const faultsClusterName = "kind-upgrade-e2e-faults"

// faultsClusterConfig: one control-plane node and two workers, so that a
// worker really drains onto the other.
const faultsClusterConfig = `kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
- role: control-plane
- role: worker
- role: worker
`

// fullChain visits every phase: step boundaries, and inside the long
// steps (an image import, kubeadm upgrade apply, kubeadm upgrade node on a
// worker, a drain, a kubelet restart), with SIGINT, SIGKILL and a killed
// `docker exec`, then restarts a worker's container in the middle of its
// kubelet upgrade. Each run resumes the previous one and is stopped at the
// next point.
var fullChain = []faultchain.Point{
	{StepID: timeline.StepID("preflight/images"), Action: faultchain.SIGINT},
	{StepID: timeline.StepID("load-artifacts/stage"), Node: "control-plane", AtBoundary: true, Action: faultchain.SIGKILL},
	{StepID: timeline.StepID("load-artifacts/import"), Node: "control-plane", Delay: 3 * time.Second, Action: faultchain.SIGKILL},
	{StepID: timeline.StepID("control-plane/kubeadm-upgrade-apply"), Node: "control-plane", Delay: 20 * time.Second, Action: faultchain.SIGINT},
	// right after the control-plane phase (one control-plane node: its pods
	// are waited for in the kubelets phase)
	{StepID: timeline.StepID("control-plane/kubeadm-upgrade-apply"), Node: "control-plane", AtBoundary: true, Action: faultchain.SIGKILL},
	{StepID: timeline.StepID("kubelets/drain"), Node: "control-plane", AtBoundary: true, Action: faultchain.SIGINT},
	{StepID: timeline.StepID("kubelets/restart"), Node: "control-plane", Action: faultchain.KillExec, Exec: "restart kubelet"},
	{StepID: timeline.StepID("kubelets/kubeadm-upgrade-node"), Node: "worker", Action: faultchain.KillExec, Exec: "upgrade node"},
	{StepID: timeline.StepID("kubelets/drain"), Node: "worker", Exec: " drain ", Delay: 500 * time.Millisecond, Action: faultchain.SIGKILL},
	{StepID: timeline.StepID("kubelets/uncordon"), Node: "worker", AtBoundary: true, Action: faultchain.SIGINT},
	{StepID: timeline.StepID("kubelets/install"), Node: "worker2", Action: faultchain.RestartNode},
}

// shortChain is the subset make test runs: inside an image import, inside
// kubeadm upgrade node on a worker (its docker exec killed) and 0.5 s into
// that worker's kubectl drain.
var shortChain = []faultchain.Point{
	{StepID: timeline.StepID("load-artifacts/import"), Node: "control-plane", Delay: 3 * time.Second, Action: faultchain.SIGKILL},
	{StepID: timeline.StepID("kubelets/kubeadm-upgrade-node"), Node: "worker", Action: faultchain.KillExec, Exec: "upgrade node"},
	{StepID: timeline.StepID("kubelets/drain"), Node: "worker", Exec: " drain ", Delay: 500 * time.Millisecond, Action: faultchain.SIGKILL},
}

// faultRun is one run of the chain.
type faultRun struct {
	point    *faultchain.Point // nil for the last run, which must finish
	raw      string            // its --output json
	events   []timeline.Event
	stderr   string
	fired    time.Time
	exitErr  error
	duration time.Duration
}

// lineWriter hands each complete line written to it to fn.
type lineWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	fn  func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil {
			w.buf.WriteString(line)
			return len(p), nil
		}
		w.fn(strings.TrimSuffix(line, "\n"))
	}
}

// faultedRun runs `kind alpha upgrade --output json` (with flags added)
// and applies the first fault pick (when not nil) returns for one of its
// events. It returns when the run has ended and the fault's own work (a
// node restart) is done.
func (h *harness) faultedRun(imageDir string, pick func(timeline.Event) *faultchain.Point, flags ...string) faultRun {
	cmd := exec.Command(h.Kind, append([]string{"alpha", "upgrade", "--name", h.Name, "--image-dir", imageDir, "--output", "json", "-v", "1"}, flags...)...)
	// a SIGKILLed run's docker exec children may hold its pipes for long
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var run faultRun
	var raw strings.Builder
	var mu sync.Mutex
	var faultDone sync.WaitGroup
	fire := func(p *faultchain.Point) {
		defer faultDone.Done()
		if p.Exec != "" && p.Action != faultchain.KillExec {
			// inside the command itself: once its docker exec runs
			for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && faultchain.ExecChild(cmd.Process.Pid, p.Exec) == 0; {
				time.Sleep(5 * time.Millisecond)
			}
		}
		time.Sleep(p.Delay)
		mu.Lock()
		run.fired = time.Now()
		mu.Unlock()
		switch p.Action {
		case faultchain.SIGINT:
			_ = cmd.Process.Signal(os.Interrupt)
		case faultchain.SIGKILL:
			_ = cmd.Process.Kill()
		case faultchain.KillExec:
			deadline := time.Now().Add(time.Minute)
			for time.Now().Before(deadline) {
				if child := faultchain.ExecChild(cmd.Process.Pid, p.Exec); child != 0 {
					_ = syscall.Kill(child, syscall.SIGKILL)
					mu.Lock()
					run.fired = time.Now()
					mu.Unlock()
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
			mu.Lock()
			run.fired = time.Time{}
			mu.Unlock()
		case faultchain.RestartNode:
			_, _ = h.Run(nil, h.Provider, "restart", h.Name+"-"+p.Node)
		}
	}
	cmd.Stdout = &lineWriter{fn: func(line string) {
		mu.Lock()
		defer mu.Unlock()
		raw.WriteString(line + "\n")
		evs, err := timeline.Parse(line)
		if err != nil || len(evs) != 1 || pick == nil || run.point != nil {
			return
		}
		if run.point = pick(evs[0]); run.point != nil {
			faultDone.Add(1)
			go fire(run.point)
		}
	}}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		run.exitErr = err
		return run
	}
	run.exitErr = cmd.Wait()
	faultDone.Wait()
	run.duration = time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	run.raw, run.stderr = raw.String(), stderr.String()
	run.events, _ = timeline.Parse(run.raw)
	what := "to the end"
	if run.point != nil {
		what = run.point.String()
	}
	fmt.Fprintf(h.CommandLog, "$ %s  (%s; fired=%v)  # %s, err=%v\n%s%s\n", strings.Join(cmd.Args, " "), what, !run.fired.IsZero(), run.duration.Round(time.Millisecond), run.exitErr, run.raw, run.stderr)
	return run
}

// checkFaulted checks that run was stopped where its point says.
func (h *harness) checkFaulted(run faultRun) error {
	p := run.point
	if run.fired.IsZero() {
		return fmt.Errorf("the run never reached %s (exit: %v):\n%s", p, run.exitErr, lastLines(run.stderr, 15))
	}
	if err := p.LandedInside(run.events, h.Name, run.fired); err != nil {
		return err
	}
	switch {
	case run.exitErr == nil && p.Action != faultchain.RestartNode:
		return fmt.Errorf("the run finished although it was stopped by %s", p)
	case p.Action == faultchain.SIGINT && !strings.Contains(run.stderr, "run the same command again"):
		return fmt.Errorf("the interrupted run did not say how to continue:\n%s", lastLines(run.stderr, 15))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestIntegrationUpgradeFaults stops `kind alpha upgrade` at every point of
// a chain, resumes it each time by running the same command again, and
// checks that the last run finishes the upgrade, that no finished work ran
// twice and that nothing was lost.
func TestIntegrationUpgradeFaults(t *testing.T) {
	testFaults(t, integration(t), "full", fullChain)
}

// TestIntegrationUpgradeFaultsShort (make e2e-faults-short, part of make
// test) is TestIntegrationUpgradeFaults with the short chain: inside an
// image import, kubeadm upgrade node and a drain, without the bad inputs.
func TestIntegrationUpgradeFaultsShort(t *testing.T) {
	testFaults(t, integration(t), "short", shortChain)
}

func testFaults(t *testing.T, m *manifest.Manifest, which string, chain []faultchain.Point) {
	from, to := m.From, m.To
	sub := "faults"
	if which == "short" {
		sub = "faults-short"
	}
	h := newHarness(t, m, faultsClusterName, 3, sub)
	imageDir := m.ImageDir
	worker := h.Name + "-worker"

	h.CreateCluster(from, faultsClusterConfig)
	h.Must("nodes Ready at "+from, func() error { return h.NodesReadyAt(from, 3*time.Minute) })
	h.Must("deploy the canaries", func() error { return h.DeployCanaries(workloads, worker) })
	token := fmt.Sprintf("written-before-the-upgrade-%d", time.Now().UnixNano())
	h.Must("write to the PersistentVolume", func() error {
		_, err := h.Canary("write", "/data/canary.txt", token)
		return err
	})
	h.Must(fmt.Sprintf("write %d ConfigMaps to etcd (namespace e2e-etcd)", etcdcheck.Keys), func() error { return h.WriteEtcdKeys(token) })

	full := which == "full"
	// the chain's --image-dir: a folder of symlinks to the good one, at a
	// path with spaces; both must work
	goodDir := imageDir
	imageDir = filepath.Join(t.TempDir(), "image dir with spaces")
	linkTree(t, goodDir, imageDir)
	if full {
		h.badInputs(goodDir, imageDir)
	}
	driver := faultchain.NewDriver(h.Name, chain, full)
	var runs []faultRun
	var report strings.Builder
	fmt.Fprintf(&report, "Fault chain (%s) %s -> %s on 1 control-plane node and 2 workers:\n", which, from, to)
	line := func(run faultRun, what string, err error) {
		fmt.Fprintf(&report, "  run %2d  %-100s %6.1fs  %s\n", len(runs), what, run.duration.Seconds(), faultOutcome(run, err))
	}
	// a bound on the runs: one per step boundary at most, and some
	const maxRuns = 120
	var final faultRun
	for len(runs) < maxRuns {
		t.Logf("run %d of the chain", len(runs)+1)
		run := h.faultedRun(imageDir, driver.Pick)
		runs = append(runs, run)
		what := "not stopped"
		if run.point != nil {
			what = "stopped by " + run.point.String()
		}
		t.Logf("run %d: %s after %s; %s", len(runs), what, run.duration.Round(time.Millisecond), faultOutcome(run, nil))
		kindtest.WriteFile(t, h.Artifacts, fmt.Sprintf("faults-run-%03d-events.jsonl", len(runs)), run.raw)
		if run.exitErr == nil {
			// it finished: a fault at the last step's end came too late
			final = run
			var err error
			if run.point != nil && !run.point.AtBoundary {
				err = fmt.Errorf("the run finished although %s stopped it", run.point)
			}
			line(run, "the same command, to the end", err)
			h.Check("the run that finished was not stopped inside a step", func() error { return err })
			break
		}
		if run.point == nil {
			// nothing stopped it: the upgrade itself failed
			err := fmt.Errorf("run %d failed by itself: %v:\n%s", len(runs), run.exitErr, lastLines(run.stderr, 20))
			line(run, "no fault", err)
			h.Check(fmt.Sprintf("run %d fails only where the chain stops it", len(runs)), func() error { return err })
			continue
		}
		p := *run.point
		driver.Fired(p)
		err := h.checkFaulted(run)
		line(run, p.String(), err)
		h.Record(fmt.Sprintf("run %d is stopped by %s", len(runs), p), run.duration, err, "")
		if err != nil {
			t.Errorf("run %d: %v", len(runs), err)
		}
		if p.Action != faultchain.RestartNode {
			continue
		}
		node := h.Name + "-" + p.Node
		h.Check("the restarted node "+node+" is Ready again", func() error {
			return kindtest.Eventually(3*time.Minute, func() error { return h.nodeReady(node) })
		})
		if !full {
			continue
		}
		// and stopped, mid-upgrade: refused until it is started again
		h.Check("with "+node+"'s container stopped, a run is refused in preflight", func() error {
			if _, err := h.Run(nil, h.Provider, "stop", node); err != nil {
				return err
			}
			run := h.faultedRun(imageDir, nil)
			runs = append(runs, run)
			line(run, "docker stop "+node+" before the run", nil)
			if run.exitErr == nil {
				return fmt.Errorf("the run was not refused")
			}
			if !strings.Contains(run.stderr, "docker start "+node) {
				return fmt.Errorf("the refusal does not say how to start the node:\n%s", lastLines(run.stderr, 15))
			}
			for _, ev := range run.events {
				if ev.Kind == "phase" && ev.Phase != "preflight" {
					return fmt.Errorf("phase %s ran", ev.Phase)
				}
			}
			return nil
		})
		h.Check("after docker start "+node+", it is Ready again", func() error {
			if _, err := h.Run(nil, h.Provider, "start", node); err != nil {
				return err
			}
			return kindtest.Eventually(3*time.Minute, func() error { return h.nodeReady(node) })
		})
	}
	h.Check("every fault point of the chain was reached", func() error {
		var missed []string
		for _, p := range driver.Missed() {
			missed = append(missed, p.String())
		}
		return timeline.JoinProblems("never reached", missed)
	})
	h.Must("a last run finishes the upgrade", func() error {
		if final.exitErr != nil || final.raw == "" {
			return fmt.Errorf("no run finished within %d runs", maxRuns)
		}
		return nil
	})
	if full {
		// steps of other nodes that finished while a run was being stopped
		// (load-artifacts runs nodes in parallel) had no fault of their own
		var passed []string
		seen := map[string]bool{}
		for _, r := range runs {
			for _, ev := range r.events {
				k := faultchain.BoundaryKey(ev)
				if ev.Kind == "step" && ev.Event == "finished" && ev.Outcome == "success" && !driver.Used(k) && !driver.ExplicitStep(ev) && !seen[k] {
					seen[k] = true
					passed = append(passed, k)
				}
			}
		}
		boundaries, explicit := driver.Counts()
		fmt.Fprintf(&report, "%d step boundaries stopped a run; %d explicit points inside steps; steps that finished while another fault stopped the run, without one of their own: %d\n", boundaries, explicit, len(passed))
		for _, k := range passed {
			fmt.Fprintf(&report, "  %s\n", k)
		}
	}
	kindtest.WriteFile(t, h.Artifacts, "faults-report.txt", report.String())
	t.Log("\n" + report.String())

	h.Check("no finished work ran twice across the chain", func() error {
		var all [][]timeline.Event
		for _, r := range runs {
			all = append(all, r.events)
		}
		if repeated := faultchain.RepeatedWork(all, nil); len(repeated) > 0 {
			return fmt.Errorf("work done again:\n  %s", strings.Join(repeated, "\n  "))
		}
		return nil
	})
	h.checkAfterUpgrade(afterUpgrade{
		to: to, etcd: m.ToEtcdImage, coreDNS: m.ToCoreDNSImage, noCordon: true,
		volumeToken: token, configMapsToken: token,
	})
	h.Check("the canary Deployment is available with 2 replicas", func() error {
		_, err := h.Kubectl("wait", "--for=condition=Available", "--timeout=120s", "deployment/canary", "deployment/pv-canary")
		return err
	})
}

// badInputs checks that every case of badInputs, and a full disk where a
// node's binaries go, is refused and changes nothing; linked is a good
// --image-dir the disk case uses.
func (h *harness) badInputs(goodDir, linked string) {
	nodes := []string{h.CP, h.Name + "-worker", h.Name + "-worker2"}
	bin := "kubernetes/server/bin"
	if _, err := os.Stat(filepath.Join(goodDir, bin, "kubeadm")); err != nil {
		h.t.Fatalf("the bad inputs are made from a release tree with archives beside it: %v", err)
	}
	var report strings.Builder
	for i, c := range badInputs(h.t, h, bin) {
		dir := filepath.Join(h.t.TempDir(), fmt.Sprintf("bad input %02d", i+1))
		linkTree(h.t, goodDir, dir)
		h.Check("refused, nothing changed: "+c.name, func() error {
			if err := c.setup(dir); err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			var args []string
			for _, a := range c.args {
				args = append(args, strings.ReplaceAll(a, "<dir>", dir))
			}
			msg, err := h.refusedChangingNothing(nodes, args, c.want)
			fmt.Fprintf(&report, "%s:\n  %s\n", c.name, lastLines(msg, 1))
			return err
		})
	}
	node := h.Name + "-worker2"
	h.Check("refused, nothing changed: a full disk where the binaries go (a 1 MiB tmpfs on "+node+"'s /kind/upgrade)", func() error {
		if _, err := h.Run(nil, h.Provider, "exec", node, "sh", "-c", "mkdir /kind/upgrade && mount -t tmpfs -o size=1m tmpfs /kind/upgrade"); err != nil {
			return err
		}
		defer func() {
			if _, err := h.Run(nil, h.Provider, "exec", node, "sh", "-c", "umount /kind/upgrade && rmdir /kind/upgrade"); err != nil {
				h.t.Errorf("failed to remove the tmpfs: %v", err)
			}
		}()
		msg, err := h.refusedChangingNothing(nodes, []string{"alpha", "upgrade", "--name", h.Name, "--image-dir", linked},
			[]string{`node "` + node + `" has 1 MiB free in /kind/upgrade (file system /kind/upgrade)`, "free disk space"})
		fmt.Fprintf(&report, "a full disk where the binaries go:\n  %s\n", lastLines(msg, 1))
		return err
	})
	kindtest.WriteFile(h.t, h.Artifacts, "bad-inputs.txt", report.String())
}

// faultOutcome says how a run ended, on one line.
func faultOutcome(run faultRun, err error) string {
	end := "exit 0"
	if run.exitErr != nil {
		end = fmt.Sprintf("%v: %s", run.exitErr, errorLine(run.stderr))
	}
	if err != nil {
		return "FAILED (" + firstLine(err.Error()) + "); " + end
	}
	return end
}

// errorLine returns kind's ERROR line in stderr, else its last line.
func errorLine(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "ERROR: ") {
			return l
		}
	}
	return firstLine(lastLines(stderr, 1))
}

// nodeReady returns nil when node is Ready.
func (h *harness) nodeReady(node string) error {
	list, err := h.Nodes()
	if err != nil {
		return err
	}
	for _, n := range list {
		if n.Name == node {
			if !n.Ready {
				return fmt.Errorf("%s is not Ready", node)
			}
			return nil
		}
	}
	return fmt.Errorf("%s is not registered", node)
}

// inotifyInstancesLimit is the host's per-user limit of inotify instances.
const inotifyInstancesLimit = "/proc/sys/fs/inotify/max_user_instances"

// atInotifyLimit runs fn with the host's inotify instance limit lowered
// to what the host's root processes hold now, plus 2, and restores the
// limit afterwards: a host at its limit, where a kubelet that restarts may
// find no instance free. fn gets the limit set.
func (h *harness) atInotifyLimit(fn func(limit int) (string, error)) (string, error) {
	old, err := os.ReadFile(inotifyInstancesLimit)
	if err != nil {
		return "", err
	}
	held, err := rootInotifyInstances()
	if err != nil {
		return "", err
	}
	limit := held + 2
	fmt.Fprintf(h.CommandLog, "# %s: %s -> %d (root holds %d)\n", inotifyInstancesLimit, strings.TrimSpace(string(old)), limit, held)
	if err := os.WriteFile(inotifyInstancesLimit, []byte(fmt.Sprint(limit)), 0o644); err != nil {
		return "", err
	}
	defer func() {
		if err := os.WriteFile(inotifyInstancesLimit, old, 0o644); err != nil {
			h.t.Errorf("failed to restore %s to %s: %v", inotifyInstancesLimit, old, err)
		}
	}()
	return fn(limit)
}

// rootInotifyInstances counts the inotify instances the host's processes
// of user root hold (every rootful node's processes among them).
func rootInotifyInstances() (int, error) {
	fds, err := filepath.Glob("/proc/[0-9]*/fd/*")
	if err != nil {
		return 0, err
	}
	count := 0
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err != nil || target != "anon_inode:inotify" {
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Dir(filepath.Dir(fd)), &st); err != nil || st.Uid != 0 {
			continue
		}
		count++
	}
	return count, nil
}
