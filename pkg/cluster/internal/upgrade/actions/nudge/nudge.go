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

// Package nudge shortens the kubelet's pause before it starts a
// control-plane component's new static pod during kubeadm upgrade.
//
// When kubeadm replaces a static pod manifest, the kubelet stops the old
// pod and starts the new one only once the old one is gone; a first try
// that finds it still stopping puts the new pod off for 10 to 15 s (the
// kubelet's pod worker back-off), although the old pod is gone within a
// second or two. Any change of the component's mirror pod makes the
// kubelet sync the static pod of that name at once. So while kubeadm waits
// for the kubelet to restart a component, a Watcher reading kubeadm's
// output annotates the old mirror pod every Interval, guarded by its hash
// so that nothing touches the new one: the kubelet starts the new pod at
// the first nudge after the old one is gone, as it would at the end of
// its back-off. The nudges reach a kubelet only while an API server it
// talks to is up, so they shorten the controller manager's and the
// scheduler's restarts, not always etcd's or the API server's.
package nudge

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"sync"
	"time"

	"sigs.k8s.io/kind/pkg/log"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
)

// MirrorPods is what a Watcher asks of the API server (kube.Client).
type MirrorPods interface {
	// MirrorPodHash returns the static pod hash of a mirror pod.
	MirrorPodHash(ctx context.Context, name string) (string, error)
	// NudgeMirrorPod changes the mirror pod while its hash is hash, and
	// fails once it is not.
	NudgeMirrorPod(ctx context.Context, name, hash, value string) error
}

// Interval is how often a Watcher nudges, by default.
const Interval = time.Second

// MaxWait bounds the pause between nudges while no API server answers.
const MaxWait = 8 * time.Second

// MaxNudges bounds a component's nudges: past the kubelet's own back-off
// they add nothing.
const MaxNudges = 30

// kubeadm's lines (cmd/kubeadm/app/phases/upgrade/staticpods.go): before a
// component's manifest is replaced, once it is and kubeadm waits for the
// kubelet, and when the new pod runs.
var (
	preparing = regexp.MustCompile(`^\[upgrade/staticpods\] Preparing for "([a-z0-9-]+)" upgrade`)
	waiting   = regexp.MustCompile(`^\[upgrade/staticpods\] Waiting for the kubelet to restart the component`)
	upgraded  = regexp.MustCompile(`^\[upgrade/staticpods\] Component "([a-z0-9-]+)" upgraded successfully`)
)

// Watcher reads kubeadm's output (it is an io.Writer) on node Node and
// nudges the kubelet there while kubeadm waits for it to restart a
// component. Close stops it; it must be called once kubeadm has ended.
type Watcher struct {
	Node     string
	API      MirrorPods
	Logger   log.Logger
	Interval time.Duration

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	partial []byte
	// component is the one kubeadm is upgrading; hash its old mirror
	// pod's, read at "Preparing"; stop ends its nudges
	component string
	hash      chan string
	stop      context.CancelFunc
}

// Start returns a Watcher of kubeadm's output on node, nudging through
// api until ctx ends or Close.
func Start(ctx context.Context, node string, api MirrorPods, logger log.Logger) *Watcher {
	w := &Watcher{Node: node, API: api, Logger: logger, Interval: Interval}
	w.ctx, w.cancel = context.WithCancel(ctx)
	return w
}

// Write takes kubeadm's output and acts on each whole line.
func (w *Watcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.line(string(w.partial[:i]))
		w.partial = w.partial[i+1:]
	}
	return len(p), nil
}

// Close stops the nudges and waits for them to end.
func (w *Watcher) Close() {
	w.cancel()
	w.wg.Wait()
}

// line acts on one line of kubeadm's output; w.mu is held.
func (w *Watcher) line(l string) {
	switch {
	case preparing.MatchString(l):
		w.end()
		w.component = preparing.FindStringSubmatch(l)[1]
		// the old mirror pod's hash, read while it is surely the old one
		hash := make(chan string, 1)
		w.hash = hash
		name := w.mirrorPod()
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			h, err := w.API.MirrorPodHash(w.ctx, name)
			if err != nil {
				w.Logger.V(1).Infof("%s: not nudging the kubelet for %s: %v", w.Node, name, err)
				h = ""
			}
			hash <- h
		}()
	case waiting.MatchString(l) && w.component != "" && w.stop == nil:
		ctx, stop := context.WithCancel(w.ctx)
		w.stop = stop
		name, hash, interval := w.mirrorPod(), w.hash, w.Interval
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.nudge(ctx, name, hash, interval)
		}()
	case upgraded.MatchString(l):
		w.end()
		w.component = ""
	}
}

// end stops the current component's nudges; w.mu is held.
func (w *Watcher) end() {
	if w.stop != nil {
		w.stop()
		w.stop = nil
	}
}

// mirrorPod is the current component's mirror pod name; w.mu is held.
func (w *Watcher) mirrorPod() string {
	return w.component + "-" + w.Node
}

// nudge nudges the kubelet about mirror pod name, whose hash arrives on
// hash, every interval until ctx ends, the mirror pod is no longer the
// old one, or MaxNudges.
func (w *Watcher) nudge(ctx context.Context, name string, hash <-chan string, interval time.Duration) {
	var h string
	select {
	case h = <-hash:
	case <-ctx.Done():
		return
	}
	if h == "" {
		return
	}
	start := time.Now()
	wait := interval
	for i := 1; i <= MaxNudges; i++ {
		select {
		case <-ctx.Done():
			w.Logger.V(1).Infof("%s: kubeadm saw %s restarted after %d nudge(s) of the kubelet (%s)", w.Node, name, i-1, time.Since(start).Round(time.Millisecond))
			return
		case <-time.After(wait):
		}
		err := w.API.NudgeMirrorPod(ctx, name, h, strconv.Itoa(i))
		switch {
		case err == nil, ctx.Err() != nil:
			wait = interval
		case kube.Transient(err.Error()):
			// no API server answered: while none does, no kubelet
			// hears of a nudge either, so ask less often
			wait = min(2*wait, MaxWait)
		default:
			// the kubelet replaced the mirror pod (the test failed, or
			// it is deleted): nothing more to nudge
			w.Logger.V(1).Infof("%s: stopped nudging the kubelet about %s after %d nudge(s) (%s): %v", w.Node, name, i-1, time.Since(start).Round(time.Millisecond), err)
			return
		}
	}
}
