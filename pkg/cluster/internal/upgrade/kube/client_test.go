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

package kube_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/fakenode"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
)

// TestReadAll makes several reads in one command on a fake node: what each
// read gets is what it gets alone, a request that fails fails it and those
// after it, and a transient failure is tried again as the client's retries
// allow, and only then.
func TestReadAll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name   string
		client func(kube.Client) kube.Client
		breaks func(c *fakenode.Cluster)
		// want is each read's error, "" for none
		want  []string
		calls int
	}{
		{name: "all answered", calls: 1, want: []string{"", "", ""}},
		{
			name:   "the API server away",
			breaks: func(c *fakenode.Cluster) { c.APIServerUp = false },
			calls:  1,
			want: []string{
				"failed to run kubectl get pods --namespace=kube-system --selector=tier=control-plane -o json: The connection to the server kind-control-plane:6443 was refused",
				"failed to run kubectl get pods", "failed to run kubectl get pods",
			},
		},
		{
			name:   "the kubelet away",
			breaks: func(c *fakenode.Cluster) { c.Nodes[0].KubeletVersion = "" },
			calls:  1,
			want:   []string{"", "", "failed to run kubectl get --raw=/api/v1/nodes/kind-control-plane/proxy/pods: Error from server (ServiceUnavailable)"},
		},
		{
			name:   "the kubelet away, with retries",
			client: func(c kube.Client) kube.Client { c.Retries = 2; return c },
			breaks: func(c *fakenode.Cluster) { c.Nodes[0].KubeletVersion = "" },
			calls:  3,
			want:   []string{"", "", "failed to run kubectl get --raw=/api/v1/nodes/kind-control-plane/proxy/pods after 3 tries: Error from server (ServiceUnavailable)"},
		},
		{
			name:   "the kubelet away, retries asked for once",
			client: func(c kube.Client) kube.Client { c.Retries = 2; return c.Once() },
			breaks: func(c *fakenode.Cluster) { c.Nodes[0].KubeletVersion = "" },
			calls:  1,
			want:   []string{"", "", "failed to run kubectl get --raw=/api/v1/nodes/kind-control-plane/proxy/pods: Error from server (ServiceUnavailable)"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := fakenode.NewCluster("kind", "v1.34.4", 1, 1)
			n := c.Nodes[0]
			alone, err := kube.Client{On: n}.ControlPlanePods(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tc.breaks != nil {
				tc.breaks(c)
			}
			client := kube.Client{On: n}
			if tc.client != nil {
				client = tc.client(client)
			}
			start := len(c.Calls)
			var api, own []kube.Pod
			errs := client.ReadAll(ctx, kube.ReadControlPlanePods(&api), kube.ReadReadyz(), kube.ReadKubeletPods(n.Name, &own))
			var got []string
			for _, err := range errs {
				if err == nil {
					got = append(got, "")
				} else {
					got = append(got, err.Error())
				}
			}
			for i := range tc.want {
				if tc.want[i] == "" && got[i] != "" || !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("read %d: error %q, want %q", i, got[i], tc.want[i])
				}
			}
			if calls := len(c.Calls) - start; calls != tc.calls {
				t.Errorf("%d commands, want %d", calls, tc.calls)
			}
			if tc.breaks == nil && fmt.Sprint(api) != fmt.Sprint(alone) {
				t.Errorf("the control-plane pods read with others:\n%v\nread alone:\n%v", api, alone)
			}
			if tc.breaks == nil && len(own) == 0 {
				t.Error("the kubelet's pods were not read")
			}
		})
	}
}

// TestOnceBoundsRequests: the client of a wait's polls sends a short
// request timeout, the others a longer one.
func TestOnceBoundsRequests(t *testing.T) {
	t.Parallel()
	c := fakenode.NewCluster("kind", "v1.34.4", 1, 0)
	client := kube.Client{On: c.Nodes[0], Retries: 5}
	for _, tc := range []struct {
		client kube.Client
		want   string
	}{
		{client, "--request-timeout=" + kube.DefaultRequestTimeout.String()},
		{client.Once(), "--request-timeout=" + kube.PollRequestTimeout.String()},
	} {
		start := len(c.Calls)
		if err := tc.client.Readyz(context.Background()); err != nil {
			t.Fatal(err)
		}
		if argv := strings.Join(c.Calls[start].Argv, " "); !strings.Contains(argv, tc.want) {
			t.Errorf("ran %s, want %s", argv, tc.want)
		}
	}
}

// TestNudgeMirrorPod changes a mirror pod only while it is the one of
// the hash read before: once its static pod's manifest changed, the
// nudge fails, and not as a transient failure.
func TestNudgeMirrorPod(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := fakenode.NewCluster("kind", "v1.34.4", 1, 0)
	n := c.Nodes[0]
	client := kube.Client{On: n}
	const pod = "kube-scheduler-kind-control-plane"
	hash, err := client.MirrorPodHash(ctx, pod)
	if err != nil || hash == "" {
		t.Fatalf("read hash %q, error %v", hash, err)
	}
	if err := client.NudgeMirrorPod(ctx, pod, hash, "1"); err != nil {
		t.Fatal(err)
	}
	if got := n.Nudged["kube-scheduler"]; got != "1" {
		t.Fatalf("the mirror pod's nudge annotation is %q, want 1", got)
	}
	// kubeadm replaces the manifest: the kubelet replaces the mirror pod
	f := n.Files["/etc/kubernetes/manifests/kube-scheduler.yaml"]
	f.Content = append(f.Content, []byte("    - --v=2\n")...)
	err = client.NudgeMirrorPod(ctx, pod, hash, "2")
	if err == nil || kube.Transient(err.Error()) {
		t.Fatalf("nudged a replaced mirror pod: error %v, want a failure that is not transient", err)
	}
	if got := n.Nudged["kube-scheduler"]; got != "1" {
		t.Errorf("the replaced mirror pod's nudge annotation is %q, want it untouched", got)
	}
	if _, err := client.MirrorPodHash(ctx, "kube-scheduler-nowhere"); err == nil {
		t.Error("read the hash of a mirror pod that does not exist")
	}
}
