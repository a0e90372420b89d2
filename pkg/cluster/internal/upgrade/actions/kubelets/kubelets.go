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

// Package kubelets implements the kubelets phase: one node at a time,
// control-plane nodes first (workers a few at a time when asked), it drains
// the node, installs the target's kubeadm, kubelet and kubectl, restarts the
// kubelet, waits for the node to be Ready at the target version and
// uncordons it.
package kubelets

import (
	"encoding/json"
	"path"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/staticpods"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/options"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/stepid"
)

// Phase is this phase's name.
const Phase = actions.PhaseKubelets

// BinDir is where kind nodes keep kubeadm, kubelet and kubectl.
const BinDir = "/usr/bin"

type action struct{}

// NewAction returns the kubelets action.
func NewAction() actions.Action {
	return &action{}
}

// Execute upgrades each control-plane node's kubelet, one node at a time
// (controlPlanes), then the workers', Options.ParallelWorkers at a time:
// as soon as one worker is done the next one starts. After a failure no
// other worker starts; those under way finish, and the errors are
// returned together. The last control-plane node's settle runs beside the
// workers (workersBeside): each worker's kubectl then runs on the worker,
// and no worker starts after the settle failed.
func (a *action) Execute(ctx *actions.Context) error {
	st := ctx.State
	settling, kubeconfig, err := controlPlanes(ctx)
	if err != nil {
		return err
	}
	slots := make(chan struct{}, max(1, ctx.Options.ParallelWorkers))
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed []error
		// stop is set, under mu, when a worker's step fails and before
		// its failure is reported; a worker is started, and its start
		// reported, under mu too: no worker's start is reported after
		// another's failure
		stop bool
	)
	for _, n := range st.Workers {
		if !st.MovesKubelet(n.String()) {
			continue
		}
		slots <- struct{}{}
		mu.Lock()
		if ended, err := settling.Ended(); ended && err != nil {
			stop = true
		}
		if stop {
			mu.Unlock()
			<-slots
			break
		}
		nctx := ctx
		if settling != nil {
			// the bootstrap node runs the settle's reads, and the last
			// control-plane node's API server may just have restarted
			nctx = ctx.AfterAPIRestarts().WithKubeOn(n, kubeconfig)
		}
		started := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			var once sync.Once
			hooks := actions.StepHooks{
				Started: func() { once.Do(func() { close(started) }) },
				Failing: func() {
					mu.Lock()
					stop = true
					mu.Unlock()
				},
			}
			err := nctx.RunStepsWith(Phase, n.String(), Steps(nctx, n), hooks)
			// a run that fails before it starts (none does today)
			hooks.Started()
			if err != nil {
				mu.Lock()
				stop = true
				failed = append(failed, err)
				mu.Unlock()
			}
		}()
		<-started
		mu.Unlock()
	}
	wg.Wait()
	if settling != nil {
		// the settle's failure first: it is why the workers stopped
		if err := settling.Gate.Ended(); err != nil {
			failed = append([]error{err}, failed...)
		}
	}
	return errors.NewAggregate(failed)
}

// besideSettle is the last control-plane node's settle running beside the
// workers.
type besideSettle struct {
	*actions.Gate
}

// Ended reports whether the settle s (nil for none) has ended, and with
// which error; it does not wait.
func (s *besideSettle) Ended() (bool, error) {
	if s == nil {
		return false, nil
	}
	return s.Gate.Opened()
}

// controlPlanes upgrades the control-plane nodes' kubelets, one node at a
// time. With settleBeside, a node's settle (the last of its steps) runs
// beside the next node's drain and install, and that node waits for it
// before its kubelet restart. With workersBeside, the last node's settle
// runs beside the workers, which wait only for its etcd and API server
// (kubelets/wait-serving): controlPlanes returns it still running, with
// the admin kubeconfig the workers' kubectl is handed; else it returns
// once the last settle is over.
func controlPlanes(ctx *actions.Context) (*besideSettle, []byte, error) {
	st := ctx.State
	settled := map[string]*actions.Gate{}
	var last *actions.Gate // the settle running beside, nil for none
	waitLast := func(err error) error {
		if last == nil {
			return err
		}
		// no settle is left running (cancelled, it ends at once): its
		// error, if any, is its step's
		if werr := last.Ended(); err == nil {
			err = werr
		}
		return err
	}
	lastCP := lastControlPlane(st)
	for _, n := range st.ControlPlanes {
		if !st.MovesKubelet(n.String()) {
			continue
		}
		steps := steps(ctx, n, settled)
		isLast := lastCP != nil && n.String() == lastCP.String()
		if !settleBeside(ctx) && !(isLast && workersBeside(ctx)) {
			if err := ctx.RunSteps(Phase, n.String(), steps); err != nil {
				return nil, nil, err
			}
			continue
		}
		settle := steps[len(steps)-1]
		if err := ctx.RunSteps(Phase, n.String(), steps[:len(steps)-1]); err != nil {
			return nil, nil, waitLast(err)
		}
		var kubeconfig []byte
		if isLast && workersBeside(ctx) {
			// read before the settle starts reading on the bootstrap node
			var err error
			if kubeconfig, err = adminKubeconfig(ctx, "for the workers' kubectl"); err != nil {
				return nil, nil, waitLast(ctx.Cancelled(err))
			}
		}
		g := actions.NewGate()
		settled[n.String()], last = g, g
		go func() { g.Open(ctx.RunStepFor(Phase, n.String(), settle)) }()
		if isLast && workersBeside(ctx) {
			return &besideSettle{g}, kubeconfig, nil
		}
	}
	return nil, nil, waitLast(nil)
}

// lastControlPlane is the control-plane node whose kubelet the phase moves
// last, nil for none.
func lastControlPlane(st *actions.State) nodes.Node {
	var last nodes.Node
	for _, cp := range st.ControlPlanes {
		if st.MovesKubelet(cp.String()) {
			last = cp
		}
	}
	return last
}

// workersBeside reports whether the last control-plane node's settle runs
// beside the workers: when a worker's kubelet moves, and no caller's hook
// must find the node settled. A worker's upgrade needs the API server and
// etcd, not the new kubelet's Ready on the controller-manager and the
// scheduler, nor on etcd and the API server themselves, which their
// startup probes give only 10 to 20 s after they start; so the workers
// wait only until the new kubelet runs the node's etcd and API server and
// /readyz answers (kubelets/wait-serving).
func workersBeside(ctx *actions.Context) bool {
	if ctx.Hook != nil {
		return false
	}
	for _, n := range ctx.State.Workers {
		if ctx.State.MovesKubelet(n.String()) {
			return true
		}
	}
	return false
}

// settleBeside reports whether a control-plane node's settle runs beside
// the next node's drain: with three control-plane nodes or more, etcd
// keeps its quorum and kind's load balancer an API server while one node's
// static pods are replaced, and a drain needs no more. Not with a caller's
// hook, which runs after each node and must find it settled.
func settleBeside(ctx *actions.Context) bool {
	return len(ctx.State.ControlPlanes) >= 3 && ctx.Hook == nil
}

// previous returns the control-plane node whose kubelet the phase moves
// before control-plane node n's, nil for none.
func previous(st *actions.State, n nodes.Node) nodes.Node {
	var prev nodes.Node
	for _, cp := range st.ControlPlanes {
		if cp.String() == n.String() {
			return prev
		}
		if st.MovesKubelet(cp.String()) {
			prev = cp
		}
	}
	return nil
}

// Steps are the steps of this phase on node n.
func Steps(ctx *actions.Context, n nodes.Node) []actions.Step {
	return steps(ctx, n, nil)
}

// steps are the steps of this phase on node n; settled are the gates of
// the control-plane nodes' settles running beside (settleBeside), by
// node, nil for the plan. With settleBeside, a control-plane node's settle
// is its last step, after its uncordoning: the node is Ready at the target
// then, and the next node may be drained meanwhile, from its own kubectl
// (the bootstrap node's may be reading the settle); its kubelet restart
// waits for the settle.
func steps(ctx *actions.Context, n nodes.Node, settled map[string]*actions.Gate) []actions.Step {
	st := ctx.State
	if !st.MovesKubelet(n.String()) {
		// --nodes leaves it
		return nil
	}
	isCP := st.IsControlPlane(n)
	if isCP {
		// restarting its kubelet restarts its API server
		ctx = ctx.AfterAPIRestarts()
	}
	// the last control-plane node's settle runs beside the workers (n's
	// kubelet moves, so lastControlPlane is not nil)
	last := isCP && workersBeside(ctx) && n.String() == lastControlPlane(st).String()
	beside := isCP && (settleBeside(ctx) || last)
	var prev nodes.Node
	drainer := ctx.Kube()
	if isCP && settleBeside(ctx) {
		if prev = previous(st, n); prev != nil {
			drainer = ctx.KubeOn(n, nil)
		}
	}
	var steps []actions.Step
	if !isCP {
		marker := path.Join(st.StagingDir(), "upgrade-node.done")
		steps = append(steps, actions.Task{
			ID:   stepid.KubeletsUpgradeNode,
			Name: "kubeadm upgrade node",
			Done: func() (bool, string, error) {
				done, err := nodeutils.Exists(ctx, n, marker)
				return done, "", err
			},
			Run: func() error {
				if err := ctx.Kubeadm(Phase, n, append([]string{"upgrade", "node"}, ctx.KubeadmUpgradeArgs()...)...); err != nil {
					return err
				}
				return nodeutils.WriteString(ctx, n, marker, 0o644, st.Target+"\n")
			},
		})
	}
	steps = append(steps,
		actions.Todo[kube.Node]{
			ID:   stepid.KubeletsDrain,
			Name: "draining",
			Find: func() (kube.Node, bool, string, error) { return findDrain(ctx, drainer, n, false) },
			Run:  func(kn kube.Node) error { return drain(ctx, drainer, n, kn, true, runDrain) },
		},
		actions.Todo[[]string]{
			ID:   stepid.KubeletsInstall,
			Name: "installing kubeadm, kubelet and kubectl " + st.Target,
			// Run installs what Find found stale, all in one command
			Find: func() ([]string, bool, string, error) {
				stale, err := staleBinaries(ctx, n)
				return stale, len(stale) == 0, "", err
			},
			Run: func(stale []string) error {
				return nodeutils.InstallBinaries(ctx, n, installPairs(st, stale)...)
			},
		},
		actions.Todo[flagsEdit]{
			ID:   stepid.KubeletsFlags,
			Name: "removing kubelet flags " + st.Target + " refuses from " + KubeadmFlagsEnv,
			Find: func() (flagsEdit, bool, string, error) {
				content, ok, err := nodeutils.ReadFile(ctx, n, KubeadmFlagsEnv)
				if err != nil || !ok {
					return flagsEdit{}, true, "", err
				}
				stale := staleFlags(content, st.TargetVersion)
				return flagsEdit{stale, content}, len(stale) == 0, "no such flag", nil
			},
			Run: func(e flagsEdit) error {
				ctx.Logger.V(1).Infof("%s: %s: removing %s from %s, as kubeadm's upgrade of the minor versions this kubelet skips would have", Phase, n, strings.Join(e.stale, ", "), KubeadmFlagsEnv)
				return nodeutils.WriteString(ctx, n, KubeadmFlagsEnv, 0o644, withoutFlags(e.content, e.stale))
			},
		},
	)
	if prev != nil {
		steps = append(steps, actions.Task{
			ID:   stepid.KubeletsWaitPrevious,
			Name: "waiting for the control-plane pods of " + prev.String() + " to settle",
			Run: func() error {
				g := settled[prev.String()]
				if g == nil {
					// not run beside in this phase
					return nil
				}
				if err := g.Wait(ctx); err != nil {
					return errors.Wrapf(err, "the control-plane pods of node %q did not settle", prev)
				}
				return nil
			},
		})
	}
	steps = append(steps,
		actions.Task{
			ID:   stepid.KubeletsRestart,
			Name: "restarting the kubelet",
			Done: func() (bool, string, error) {
				kn, err := ctx.Kube().Node(ctx, n.String())
				if err != nil {
					return false, "", err
				}
				return kn.KubeletVersion == st.Target, "the kubelet already runs " + st.Target, nil
			},
			Run: func() error { return nodeutils.Systemctl(ctx, n, "restart", "kubelet") },
		},
		actions.Task{
			ID:   stepid.KubeletsWaitReady,
			Name: "waiting for the node to be Ready at " + st.Target,
			Run:  func() error { return waitForNode(ctx, n) },
		},
	)
	settle := actions.Task{
		ID:   stepid.KubeletsWaitSettled,
		Name: "waiting for the control-plane pods and /readyz",
		Run:  func() error { return waitSettled(ctx, n) },
	}
	if isCP && !beside {
		steps = append(steps, settle)
	}
	if last {
		// before the uncordon: with fewer than three control-plane nodes
		// the API server is away while the new kubelet replaces it, and a
		// request then only waits out its retries' pauses
		steps = append(steps, actions.Task{
			ID:   stepid.KubeletsWaitServing,
			Name: "waiting for the new etcd and API server and /readyz (the other control-plane pods settle beside the workers)",
			Run:  func() error { return waitServing(ctx, n) },
		})
	}
	steps = append(steps,
		actions.Task{
			ID:   stepid.KubeletsUncordon,
			Name: "uncordoning",
			Done: func() (bool, string, error) {
				kn, err := ctx.Kube().Node(ctx, n.String())
				if err != nil {
					return false, "", err
				}
				_, ours := kn.Annotations[actions.DrainedAnnotation]
				return !ours, "the upgrade did not cordon it", nil
			},
			Run: func() error {
				return patchNode(ctx, ctx.Kube(), n, false, "")
			},
		},
		actions.Task{
			ID:   stepid.KubeletsWriteVersion,
			Name: "writing /kind/version",
			Done: func() (bool, string, error) {
				content, ok, err := nodeutils.ReadFile(ctx, n, "/kind/version")
				return ok && strings.TrimSpace(content) == st.Target, "", err
			},
			Run: func() error {
				return nodeutils.WriteString(ctx, n, "/kind/version", 0o644, st.Target)
			},
		},
	)
	if beside {
		steps = append(steps, settle)
	}
	return steps
}

// DrainAheadOn picks the node that drains the bootstrap control-plane node
// beside the load-artifacts phase, nil for none. When the kubelets phase
// will move the bootstrap node's kubelet, it drains the node first; that
// drain waits for the node's pods to stop (CoreDNS's lame duck alone is
// 5 s) and need not wait for kubeadm upgrade apply: it is done while the
// bootstrap node loads, and the kubelets phase's drain finds nothing left
// to evict.
// A node runs one command at a time, so it runs from another node, idle
// then but for its pause image: another control-plane node, with its
// admin kubeconfig, else the first worker, handed it (AheadKubeconfig).
// The node stays cordoned through the control-plane phase: the cluster's
// other nodes take its pods, and kubeadm's health-check Job.
func DrainAheadOn(st *actions.State) nodes.Node {
	if !st.UpgradesKubelets || st.ControlPlaneOnly || st.KubeletsAt != "" || st.Bootstrap == nil || !st.MovesKubelet(st.Bootstrap.String()) {
		return nil
	}
	if info := st.Info[st.Bootstrap.String()]; info != nil && info.Kubelet != nil && "v"+info.Kubelet.String() == st.Target {
		// a run resumed after its kubelet moved: its drain is over
		return nil
	}
	switch {
	case len(st.ControlPlanes) > 1:
		return st.ControlPlanes[1]
	case len(st.Workers) > 0:
		return st.Workers[0]
	}
	return nil
}

// AheadKubeconfig reads the admin kubeconfig on the bootstrap
// control-plane node when node on, DrainAheadOn's, lacks it (a worker);
// nil when on has its own.
func AheadKubeconfig(ctx *actions.Context, on nodes.Node) ([]byte, error) {
	if ctx.State.IsControlPlane(on) {
		return nil, nil
	}
	return adminKubeconfig(ctx, "to drain the bootstrap control-plane node from another node")
}

// adminKubeconfig reads the admin kubeconfig on the bootstrap
// control-plane node, for a worker's kubectl; what names the use.
func adminKubeconfig(ctx *actions.Context, what string) ([]byte, error) {
	content, ok, err := nodeutils.ReadFile(ctx, ctx.State.Bootstrap, nodeutils.AdminKubeconfig)
	if err == nil && !ok {
		err = errors.Errorf("control-plane node %q has no %s", ctx.State.Bootstrap, nodeutils.AdminKubeconfig)
	}
	if err != nil {
		return nil, errors.Wrap(err, "failed to read the admin kubeconfig "+what)
	}
	return []byte(content), nil
}

// DrainAheadStep is the bootstrap control-plane node's step that drains
// it from node on (DrainAheadOn's), its kubectl handed kubeconfig
// (AheadKubeconfig's); on's run runs it (Context.RunStepFor). It cordons
// the node and evicts its pods, and leaves the node marked cordoned, not
// drained: the kubelets phase's drain runs kubectl drain once more, which
// finds nothing left to evict (the node stayed cordoned), and marks it
// drained. A node this upgrade already cordoned is left to that drain.
func DrainAheadStep(ctx *actions.Context, on nodes.Node, kubeconfig []byte) actions.Step {
	b := ctx.State.Bootstrap
	// a rerun may start right after an API server restarted, as
	// preflight's requests
	client := ctx.AfterAPIRestarts().KubeOn(on, kubeconfig)
	return actions.Todo[kube.Node]{
		ID:   stepid.LoadDrainBootstrap,
		Name: "draining, from " + on.String() + ", beside the loading (its kubelet is upgraded later)",
		Find: func() (kube.Node, bool, string, error) { return findDrain(ctx, client, b, true) },
		Run:  func(kn kube.Node) error { return drain(ctx, client, b, kn, false, startDrain) },
	}
}

// findDrain reads node n as the API server has it (client runs the
// request) and says whether the drain is done: when actions.DrainNeeded
// says it is not needed, and, ahead (DrainAheadStep), when this upgrade
// already cordoned the node.
func findDrain(ctx *actions.Context, client kube.Client, n nodes.Node, ahead bool) (kube.Node, bool, string, error) {
	list, err := client.Nodes(ctx)
	if err != nil {
		return kube.Node{}, false, "", err
	}
	for _, self := range list {
		if self.Name != n.String() {
			continue
		}
		if ahead && self.Unschedulable && self.Annotations[actions.DrainedAnnotation] != "" {
			return self, true, "this upgrade already cordoned it", nil
		}
		needed, reason := actions.DrainNeeded(list, self, ctx.State.Target)
		if reason == actions.NoOtherNode {
			ctx.Logger.V(0).Infof("Not draining %s: no other node can take its pods; they keep running while the kubelet restarts", n)
		}
		return self, !needed, reason, nil
	}
	return kube.Node{}, false, "", errors.Errorf("node %q is not registered with the API server", n)
}

// drainArgs is the kubectl drain command for n, given up after timeout.
func drainArgs(ctx *actions.Context, n nodes.Node, timeout time.Duration) []string {
	args := []string{"drain", n.String(), "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=" + timeout.String()}
	if ctx.Options.Force {
		args = append(args, "--force")
	}
	return args
}

// drain cordons n (remembering that this command did, unless it already
// had) and evicts its pods with run (runDrain, or startDrain); kn is n as
// findDrain just read it, client runs kubectl. With mark, it then marks n
// drained.
func drain(ctx *actions.Context, client kube.Client, n nodes.Node, kn kube.Node, mark bool, run func(*actions.Context, kube.Client, nodes.Node) error) error {
	_, ours := kn.Annotations[actions.DrainedAnnotation]
	if kn.Unschedulable && !ours {
		// the user cordoned it: drain, but leave it cordoned afterwards
		return run(ctx, client, n)
	}
	if !kn.Unschedulable || !ours {
		if err := patchNode(ctx, client, n, true, actions.Cordoned); err != nil {
			return err
		}
	}
	if err := run(ctx, client, n); err != nil || !mark {
		return err
	}
	return patchNode(ctx, client, n, true, actions.Drained)
}

// EvictionsWait bounds the early drain of the bootstrap node (startDrain):
// long enough for kubectl to ask for every eviction, not to wait for the
// pods to be gone (CoreDNS alone takes 5 s).
const EvictionsWait = 2 * time.Second

// startDrain starts the drain of n: kubectl drain given up after
// EvictionsWait. When kubectl gave up only waiting for evicted pods to go
// (kube.EvictionsPending), they are going, and the kubelets phase's drain,
// a whole kubectl drain before the node's kubelet restarts, waits for
// them; any other failure (an eviction a PodDisruptionBudget refused, a
// pod kubectl refuses to evict) runs the whole drain here, which waits
// for it or reports it as the kubelets phase's would.
func startDrain(ctx *actions.Context, client kube.Client, n nodes.Node) error {
	err := client.Run(ctx, drainArgs(ctx, n, min(EvictionsWait, ctx.Options.Wait))...)
	if err == nil {
		return nil
	}
	if runErr := exec.RunErrorForError(err); runErr != nil && kube.EvictionsPending(string(runErr.Output)) {
		ctx.Logger.V(1).Infof("%s: the evictions from %s are under way; its drain in the kubelets phase waits for the pods to go", actions.PhaseLoadArtifacts, n)
		return nil
	}
	if ctx.Err() != nil {
		return errors.Wrapf(err, "cancelled while draining node %q", n)
	}
	return runDrain(ctx, client, n)
}

// runDrain runs kubectl drain on n. kubectl refuses a pod no controller
// recreates even when it goes away by itself (it is being deleted, alone
// or with its namespace, or it is a helper of kind's storage provisioner,
// which deletes it when done), and preflight lets those pass: then
// runDrain waits for them to be gone, within --wait, and drains once more.
func runDrain(ctx *actions.Context, client kube.Client, n nodes.Node) error {
	err := client.Run(ctx, drainArgs(ctx, n, ctx.Options.Wait)...)
	if err == nil || !strings.Contains(err.Error(), "declare no controller") {
		return drainBlocked(n, err)
	}
	pods, listErr := client.Pods(ctx)
	if listErr != nil {
		return errors.Wrapf(err, "and listing the pods of node %q to see whether they are going away failed: %v", n, listErr)
	}
	var leaving []kube.Pod
	for _, p := range pods {
		if p.NodeName != n.String() || !p.Unmanaged {
			continue
		}
		if !p.GoesAway() {
			// one that stays: kubectl's refusal stands
			return err
		}
		leaving = append(leaving, p)
	}
	for _, p := range leaving {
		start := time.Now()
		why := "which is being deleted"
		if !p.Deleting {
			why = "a helper kind's storage provisioner deletes when it is done"
		}
		ctx.Logger.V(0).Infof("Waiting for pod %s/%s, %s, to leave node %s before draining it", p.Namespace, p.Name, why, n)
		if err := client.Run(ctx, "wait", "--for=delete", "pod/"+p.Name, "--namespace="+p.Namespace, "--timeout="+ctx.Options.Wait.String()); err != nil {
			return errors.Wrapf(err, "pod %s/%s, %s, is still on node %q after %s (%s), and kubectl drain does not evict a pod no controller recreates: wait until it is gone (kubectl get pod %s --namespace=%s), then run the same command again", p.Namespace, p.Name, why, n, ctx.Options.Name(options.Wait), ctx.Options.Wait, p.Name, p.Namespace)
		}
		ctx.Logger.V(1).Infof("Pod %s/%s left node %s after %s", p.Namespace, p.Name, n, time.Since(start).Round(time.Millisecond))
	}
	return drainBlocked(n, client.Run(ctx, drainArgs(ctx, n, ctx.Options.Wait)...))
}

// patchNode cordons (or uncordons) n and sets actions.DrainedAnnotation
// to mark (or removes it when mark is ""), both in one JSON merge patch:
// one command, and no state in between for an interruption to leave.
func patchNode(ctx *actions.Context, client kube.Client, n nodes.Node, cordon bool, mark string) error {
	var unschedulable, annotation interface{} // JSON null removes the field
	if cordon {
		unschedulable = true
	}
	if mark != "" {
		annotation = mark
	}
	patch, err := json.Marshal(map[string]interface{}{
		"spec":     map[string]interface{}{"unschedulable": unschedulable},
		"metadata": map[string]interface{}{"annotations": map[string]interface{}{actions.DrainedAnnotation: annotation}},
	})
	if err != nil {
		return errors.Wrap(err, "failed to write the node patch")
	}
	return client.Run(ctx, "patch", "node", n.String(), "--type=merge", "--patch="+string(patch))
}

// drainBlocked says what to do when a PodDisruptionBudget kept a drain
// from evicting a pod until its --timeout; other errors pass unchanged.
func drainBlocked(n nodes.Node, err error) error {
	if err == nil {
		return nil
	}
	// the error quotes the end of kubectl's output, which on a real node can
	// be all timeouts (testdata/nodes/v1.36.3/drain-pdb.txt): read it whole
	said := err.Error()
	if runErr := exec.RunErrorForError(err); runErr != nil {
		said += " " + string(runErr.Output)
	}
	if !strings.Contains(said, "disruption budget") {
		return err
	}
	return errors.Wrapf(err, "a PodDisruptionBudget keeps node %q from being drained (kubectl get poddisruptionbudgets --all-namespaces shows which): let it allow a disruption, with more replicas or a lower minAvailable, then run the same command again; the node stays cordoned until then", n)
}

// installPairs pairs each of names' staged file with where it is installed.
func installPairs(st *actions.State, names []string) [][2]string {
	var pairs [][2]string
	for _, name := range names {
		pairs = append(pairs, [2]string{st.Staged(name), path.Join(BinDir, name)})
	}
	return pairs
}

// staleBinaries lists the binaries in BinDir that differ from the staged
// ones. Installed ones are hard links to the staged ones, so this reads no
// data on kind's nodes.
func staleBinaries(ctx *actions.Context, n nodes.Node) ([]string, error) {
	st := ctx.State
	found, err := nodeutils.Compare(ctx, n, installPairs(st, artifacts.Binaries)...)
	if err != nil {
		return nil, err
	}
	var stale []string
	for i, name := range artifacts.Binaries {
		switch found[i] {
		case nodeutils.Missing:
			return nil, errors.Errorf("%s is not staged on node %q: run the load-artifacts phase", st.Staged(name), n)
		case nodeutils.Differ:
			stale = append(stale, name)
		}
	}
	return stale, nil
}

// KubeletExits is how many times the restarted kubelet may exit (systemd
// restarts kind's kubelet a second after it exits) before the wait for its
// node gives up: a kubelet that exits at every start is not coming back.
const KubeletExits = 5

// kubeletLogLines is how much of the kubelet's log an error quotes;
// kubeletJournalLines how much of its journal is read to find its last
// run (a kubelet that exits at start logs about 160 lines a run).
const (
	kubeletLogLines     = 15
	kubeletJournalLines = 600
)

// waitForNode waits until n is Ready at the target version. While it is
// not, it watches the kubelet's unit: a kubelet that keeps exiting ends
// the wait at once, and the error (that one or a timeout) quotes the
// kubelet's own last error line and the end of its log.
func waitForNode(ctx *actions.Context, n nodes.Node) error {
	firstRestarts := -1
	err := ctx.WaitOn(n.String(), "node "+n.String()+" to be Ready at "+ctx.State.Target, func(ctx *actions.Context) (bool, error) {
		kn, err := ctx.Kube().Once().Node(ctx, n.String())
		if err == nil && kn.KubeletVersion == ctx.State.Target && kn.Ready {
			return true, nil
		}
		if ctx.Err() != nil {
			return false, err
		}
		unit, uerr := nodeutils.ShowUnit(ctx, n, "kubelet")
		if uerr == nil {
			if firstRestarts < 0 {
				firstRestarts = unit.NRestarts
			}
			if exits := unit.NRestarts - firstRestarts; exits >= KubeletExits && !unit.Running() {
				return false, nodeutils.Permanent(errors.Errorf("the kubelet on node %s does not stay up: it exited %d times since the wait began (systemd: %s/%s)", n, exits, unit.ActiveState, unit.SubState))
			}
		}
		switch {
		case err != nil:
			return false, err
		case kn.KubeletVersion != ctx.State.Target:
			return false, errors.Errorf("node %s reports kubelet %s", n, kn.KubeletVersion)
		default:
			return false, errors.Errorf("node %s is not Ready", n)
		}
	})
	if err == nil || ctx.Err() != nil {
		return err
	}
	return withKubeletLog(ctx, n, err)
}

// withKubeletLog adds to err the last error line of n's kubelet and the
// end of its log, which say why it is not Ready.
func withKubeletLog(ctx *actions.Context, n nodes.Node, err error) error {
	journal, lerr := nodeutils.UnitLog(ctx, n, "kubelet", kubeletJournalLines)
	if lerr != nil {
		return errors.Wrapf(err, "(the kubelet's log could not be read: %v)", lerr)
	}
	lines := LastKubeletRun(journal)
	if len(lines) == 0 {
		return errors.Wrap(err, "(the kubelet logged nothing)")
	}
	last := LastKubeletError(lines)
	if len(lines) > kubeletLogLines {
		lines = lines[len(lines)-kubeletLogLines:]
	}
	hint := ""
	if strings.Contains(last, "inotify") && strings.Contains(last, "too many open files") {
		hint = "\nthe host's inotify limits are exhausted: raise them as kind's known-issues page advises (as root on the host: `" + actions.InotifyAdvice + "`), then run this command again"
	}
	return errors.Errorf("%v\nthe kubelet on %s says: %s%s\nthe end of its log (`%s exec %s journalctl -u kubelet` has all of it):\n    %s",
		err, n, last, hint, ctx.Options.Provider(), n, strings.Join(lines, "\n    "))
}

// systemd's lines about the kubelet's unit in its journal (journalctl -o
// cat), which begin and end its runs.
const (
	unitStarted = "Started kubelet.service"
	unitExited  = "kubelet.service: Main process exited"
)

// LastKubeletRun picks from the kubelet unit's journal the lines the
// kubelet logged in its last run that ended (systemd's "Main process
// exited" closes a run), or in its current run when none ended; systemd's
// own lines are left out. A kubelet that exits at every start is mostly
// caught starting again, when its current run has not yet logged why the
// last one ended.
func LastKubeletRun(journal []string) []string {
	end := len(journal)
	for i := len(journal) - 1; i >= 0; i-- {
		if strings.HasPrefix(journal[i], unitExited) {
			end = i
			break
		}
	}
	start := 0
	for i := end - 1; i >= 0; i-- {
		if strings.HasPrefix(journal[i], unitStarted) {
			start = i + 1
			break
		}
	}
	var run []string
	for _, line := range journal[start:end] {
		if !strings.HasPrefix(line, "kubelet.service: ") && !strings.HasPrefix(line, unitStarted) {
			run = append(run, line)
		}
	}
	return run
}

// LastKubeletError picks from a kubelet's log the line that says why it
// stopped: the last one klog logged at error or fatal level (E or F
// followed by the date), else the last line.
func LastKubeletError(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if isKlogError(lines[i]) {
			return lines[i]
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}

// isKlogError reports whether line is a klog line at error or fatal
// level: "E1201 21:00:00.000000 ..." or "F1201 ...".
func isKlogError(line string) bool {
	if len(line) < 6 || (line[0] != 'E' && line[0] != 'F') {
		return false
	}
	for _, c := range line[1:5] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return line[5] == ' '
}

// waitSettled waits until the new kubelet on control-plane node n has
// taken over its static pods and they are back: it restarts them a few
// seconds after it starts when their spec hashes differ under its version,
// and until it has synced a pod the API server still shows the previous
// kubelet's status. Done when staticpods.Reader.KubeletTookOver finds the
// same containers Ready on two polls at least Options.Settle apart, so that
// a container the kubelet stops right after its first sync (it relists
// them every second) is seen gone first.
func waitSettled(ctx *actions.Context, n nodes.Node) error {
	pods := staticpods.NewReader(n)
	return waitStable(ctx, n, "the control-plane pods on "+n.String()+" to settle", pods.KubeletTookOver)
}

// waitServing waits, as waitSettled, until the new kubelet on
// control-plane node n runs its etcd and API server
// (staticpods.Reader.KubeletServes: started, not necessarily Ready) and
// /readyz answers, on two polls at least Options.Settle apart: from then
// on the kubelet does not replace them again.
func waitServing(ctx *actions.Context, n nodes.Node) error {
	pods := staticpods.NewReader(n)
	return waitStable(ctx, n, "the new etcd and API server on "+n.String(), pods.KubeletServes)
}

// waitStable waits until read returns the same container IDs, without an
// error, on two polls at least Options.Settle apart.
func waitStable(ctx *actions.Context, n nodes.Node, what string, read func(*actions.Context) (string, error)) error {
	seen := ""
	var since time.Time
	return ctx.WaitOn(n.String(), what, func(ctx *actions.Context) (bool, error) {
		ids, err := read(ctx)
		if err != nil {
			seen = ""
			return false, err
		}
		if ids != seen {
			seen, since = ids, time.Now()
			return false, nil
		}
		return time.Since(since) >= ctx.Options.Settle, nil
	})
}
