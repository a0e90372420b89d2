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

package kube

import (
	"strings"
	"testing"
)

func TestTransient(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]bool{
		"The connection to the server kind-control-plane:6443 was refused - did you specify the right host or port?": true,
		"Unable to connect to the server: EOF":                                                                                                               true,
		"Unable to connect to the server: net/http: TLS handshake timeout":                                                                                   true,
		"Error from server: etcdserver: leader changed":                                                                                                      true,
		"Error from server (ServiceUnavailable): the server is currently unable to handle the request (get nodes)":                                           true,
		"Error from server (Forbidden): nodes is forbidden: User \"kubernetes-admin\" cannot list resource \"nodes\" in API group \"\" at the cluster scope": false,
		"error: the server doesn't have a resource type \"nodez\"":                                                                                           false,
		"Error from server (NotFound): nodes \"kind-worker\" not found":                                                                                      false,
		"error: You must be logged in to the server (Unauthorized)":                                                                                          false,
		"error: unable to drain node \"kind-worker\" due to error: cannot delete Pods that declare no controller (use --force to override)":                  false,
	} {
		if got := Transient(msg); got != want {
			t.Errorf("Transient(%q) = %v, want %v", msg, got, want)
		}
	}
	if !Forbidden("Error from server (Forbidden): nodes is forbidden: User \"kubernetes-admin\" cannot list resource \"nodes\" in API group \"\" at the cluster scope") || Forbidden("error: You must be logged in to the server (Unauthorized)") {
		t.Error("Forbidden does not tell an RBAC denial")
	}
}

func TestMessageIsBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x ", 1000) + "the end"
	got := message([]byte(long))
	if len(got) != maxMessage+3 || !strings.HasPrefix(got, "...") || !strings.HasSuffix(got, "the end") {
		t.Errorf("message(%d bytes) = %d bytes %q...", len(long), len(got), got[:20])
	}
	if got := message([]byte("a\n  b\n")); got != "a b" {
		t.Errorf("message = %q, want one line", got)
	}
}

// TestEvictionsPending tells kubectl drain's output when its --timeout ran
// out only while evicted pods were going (the shapes of k8s.io/kubectl's
// pkg/drain: one error alone, several in brackets) from its other
// failures.
func TestEvictionsPending(t *testing.T) {
	t.Parallel()
	wait := func(pod string) string {
		return `error when waiting for pod "` + pod + `" in namespace "kube-system" to terminate: context deadline exceeded`
	}
	drainOutput := func(agg string) string {
		return "node/kind-control-plane cordoned\n" +
			"Warning: ignoring DaemonSet-managed Pods: kube-system/kindnet-m2c7k, kube-system/kube-proxy-4c9j7\n" +
			"evicting pod kube-system/coredns-589f44dc88-7gnjr\n" +
			"There are pending pods in node \"kind-control-plane\" when an error occurred: " + agg + "\n" +
			"error: unable to drain node \"kind-control-plane\" due to error: " + agg + ", continuing command...\n" +
			"There are pending nodes to be drained:\n kind-control-plane\n" +
			"error: " + agg + "\n"
	}
	pdb := `error when evicting pods/"app-0" -n "default": global timeout reached: 2s`
	for _, tc := range []struct {
		name   string
		output string
		want   bool
	}{
		{"one pod going", drainOutput(wait("coredns-589f44dc88-7gnjr")), true},
		{"two pods going", drainOutput("[" + wait("coredns-589f44dc88-7gnjr") + ", " + wait("coredns-589f44dc88-tgndn") + "]"), true},
		{"an eviction a PodDisruptionBudget refused", drainOutput(pdb), false},
		{"one going, one refused", drainOutput("[" + wait("coredns-589f44dc88-7gnjr") + ", " + pdb + "]"), false},
		{"a pod kubectl refuses", "node/kind-worker cordoned\nerror: unable to drain node \"kind-worker\" due to error: cannot delete Pods that declare no controller (use --force to override): default/bare, continuing command...\n", false},
		{"the API server away", "The connection to the server kind-control-plane:6443 was refused - did you specify the right host or port?\n", false},
		{"drained", "node/kind-control-plane drained\n", false},
	} {
		if got := EvictionsPending(tc.output); got != tc.want {
			t.Errorf("%s: EvictionsPending = %v, want %v", tc.name, got, tc.want)
		}
	}
}
