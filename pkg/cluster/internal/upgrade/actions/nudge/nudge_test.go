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

package nudge_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/log"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/nudge"
)

// kubelet simulates one kubelet's static pod replacement as the API
// server shows it through the mirror pod: the new pod starts at the first
// sync after the old one is gone, a sync being the end of the back-off or
// any change of the mirror pod; starting it replaces the mirror pod.
type kubelet struct {
	mu       sync.Mutex
	hash     string
	newHash  string
	replaced time.Time // when kubeadm replaced the manifest
	gone     time.Duration
	backoff  time.Duration
	started  time.Duration // after replaced; 0 until it starts
	nudges   int
	onNew    int // nudges that touched the new mirror pod
	readErr  error
	nudgeErr func(i int) error
}

func (k *kubelet) sync(now time.Time) {
	if k.started == 0 && !k.replaced.IsZero() && now.Sub(k.replaced) >= k.gone {
		k.started = now.Sub(k.replaced)
		k.hash = k.newHash
	}
}

// tick is the kubelet's own back-off ending.
func (k *kubelet) tick() {
	time.Sleep(k.backoff)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.sync(time.Now())
}

func (k *kubelet) MirrorPodHash(_ context.Context, name string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.readErr != nil {
		return "", k.readErr
	}
	return k.hash, nil
}

func (k *kubelet) NudgeMirrorPod(_ context.Context, name, hash, value string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.nudgeErr != nil {
		if err := k.nudgeErr(k.nudges + 1); err != nil {
			k.nudges++
			return err
		}
	}
	if hash != k.hash {
		return errors.New("failed to run kubectl patch pod: The request is invalid: the server rejected our request due to an error in our request")
	}
	if k.hash == k.newHash {
		k.onNew++
	}
	k.nudges++
	k.sync(time.Now())
	return nil
}

// kubeadmLines are kubeadm's output for one component, as it prints it.
func kubeadmLines(component string, restarts bool) []string {
	lines := []string{
		fmt.Sprintf("[upgrade/staticpods] Preparing for %q upgrade", component),
	}
	if !restarts {
		return append(lines, fmt.Sprintf("[upgrade/staticpods] Current and new manifests of %s are equal, skipping upgrade", component))
	}
	return append(lines,
		fmt.Sprintf("[upgrade/staticpods] Moving new manifest to \"/etc/kubernetes/manifests/%s.yaml\" and backing up old manifest to \"/etc/kubernetes/tmp/x/%s.yaml\"", component, component),
		"[upgrade/staticpods] Waiting for the kubelet to restart the component",
		"[upgrade/staticpods] This can take up to 5m0s",
	)
}

// TestNudges runs a Watcher on kubeadm's output against a simulated
// kubelet: nudged, the new pod starts within an interval of the old one
// being gone, long before the kubelet's back-off; the new mirror pod is
// never touched; nothing is nudged where kubeadm does not wait for a
// restart, or when the old mirror pod could not be read.
func TestNudges(t *testing.T) {
	t.Parallel()
	const (
		interval = 20 * time.Millisecond
		gone     = 50 * time.Millisecond
		backoff  = 2 * time.Second
	)
	cases := []struct {
		name     string
		restarts bool
		k        *kubelet
		// want is when the new pod starts: "soon" (nudged, within
		// `within` intervals of the old pod being gone), "backoff" (not
		// nudged) or "never" (no restart)
		want   string
		within int
	}{
		{name: "nudged", restarts: true, want: "soon", within: 3},
		{name: "manifests equal", restarts: false, want: "never"},
		{name: "old mirror pod unreadable", restarts: true, k: &kubelet{readErr: errors.New("failed to run kubectl get pod: Error from server (NotFound)")}, want: "backoff"},
		{
			// two refusals: the nudges after them wait 2 and 4 intervals
			name: "an API server away for a moment", restarts: true, want: "soon", within: 9,
			k: &kubelet{nudgeErr: func(i int) error {
				if i <= 2 {
					return errors.New("failed to run kubectl patch pod: The connection to the server kind-control-plane:6443 was refused - did you specify the right host or port?")
				}
				return nil
			}},
		},
		{
			name: "refused for good", restarts: true, want: "backoff",
			k: &kubelet{nudgeErr: func(int) error {
				return errors.New(`failed to run kubectl patch pod: Error from server (Forbidden): pods "kube-scheduler-kind-control-plane" is forbidden`)
			}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k := tc.k
			if k == nil {
				k = &kubelet{}
			}
			k.hash, k.newHash, k.gone, k.backoff = "old", "new", gone, backoff
			w := nudge.Start(context.Background(), "kind-control-plane", k, log.NoopLogger{})
			w.Interval = interval
			lines := kubeadmLines("kube-scheduler", tc.restarts)
			// kubeadm's output arrives in pieces that need not end lines
			out := strings.Join(lines, "\n") + "\n"
			for len(out) > 0 {
				n := min(7, len(out))
				if _, err := w.Write([]byte(out[:n])); err != nil {
					t.Fatal(err)
				}
				out = out[n:]
			}
			if tc.restarts {
				k.mu.Lock()
				k.replaced = time.Now()
				k.mu.Unlock()
				k.tick()
			} else {
				time.Sleep(10 * interval)
			}
			// kubeadm sees the new pod run, then ends
			if _, err := w.Write([]byte("[upgrade/staticpods] Component \"kube-scheduler\" upgraded successfully!\n")); err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * interval)
			w.Close()
			k.mu.Lock()
			defer k.mu.Unlock()
			switch tc.want {
			case "soon":
				if bound := time.Duration(tc.within) * interval; k.started == 0 || k.started > gone+bound {
					t.Errorf("the new pod started %s after its manifest was replaced, want within %s of the old one being gone (%s)", k.started, bound, gone)
				}
			case "backoff":
				if k.started < backoff {
					t.Errorf("the new pod started %s after its manifest was replaced, before the kubelet's back-off (%s): something nudged it", k.started, backoff)
				}
			case "never":
				if k.nudges != 0 || k.started != 0 {
					t.Errorf("%d nudges, the pod started %s: want none where kubeadm does not wait for a restart", k.nudges, k.started)
				}
			}
			if k.onNew != 0 {
				t.Errorf("%d nudges touched the new mirror pod, want none", k.onNew)
			}
		})
	}
}

// TestCloseStopsTheNudges ends a Watcher while kubeadm still waits (it
// failed, or was stopped): no nudge comes after Close.
func TestCloseStopsTheNudges(t *testing.T) {
	t.Parallel()
	k := &kubelet{hash: "old", newHash: "new", gone: time.Hour, backoff: time.Hour}
	w := nudge.Start(context.Background(), "kind-control-plane", k, log.NoopLogger{})
	w.Interval = 10 * time.Millisecond
	if _, err := w.Write([]byte(strings.Join(kubeadmLines("kube-controller-manager", true), "\n") + "\n")); err != nil {
		t.Fatal(err)
	}
	k.mu.Lock()
	k.replaced = time.Now()
	k.mu.Unlock()
	time.Sleep(100 * time.Millisecond)
	w.Close()
	k.mu.Lock()
	after := k.nudges
	k.mu.Unlock()
	if after == 0 {
		t.Fatal("no nudge while kubeadm waited")
	}
	time.Sleep(50 * time.Millisecond)
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.nudges != after {
		t.Errorf("%d nudges after Close", k.nudges-after)
	}
	if k.nudges > nudge.MaxNudges {
		t.Errorf("%d nudges, more than MaxNudges (%d)", k.nudges, nudge.MaxNudges)
	}
}
