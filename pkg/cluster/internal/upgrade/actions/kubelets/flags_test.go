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

package kubelets

import (
	"testing"

	"github.com/Masterminds/semver/v3"
)

// TestStaleFlags: on the flags file a v1.34 kind node's kubeadm wrote
// (the chain e2e's worker, 2026-12-06), --pod-infra-container-image is
// stale for a kubelet from v1.35 only, and removing it keeps every other
// flag and line.
func TestStaleFlags(t *testing.T) {
	t.Parallel()
	written := `KUBELET_KUBEADM_ARGS="--pod-infra-container-image=registry.k8s.io/pause:3.10.1 --node-ip=172.18.0.2 --node-labels= --provider-id=kind://docker/kind-upgrade-chain/kind-upgrade-chain-worker"
`
	for _, tc := range []struct {
		target string
		want   []string
	}{
		{"v1.34.4", nil},
		{"v1.35.0", []string{"--pod-infra-container-image"}},
		{"v1.37.2", []string{"--pod-infra-container-image"}},
	} {
		got := staleFlags(written, semver.MustParse(tc.target))
		if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
			t.Errorf("%s: stale %v, want %v", tc.target, got, tc.want)
		}
	}
	want := `KUBELET_KUBEADM_ARGS="--node-ip=172.18.0.2 --node-labels= --provider-id=kind://docker/kind-upgrade-chain/kind-upgrade-chain-worker"
`
	if got := withoutFlags(written, []string{"--pod-infra-container-image"}); got != want {
		t.Errorf("without the flag:\n%s\nwant\n%s", got, want)
	}
	if got := staleFlags(want, semver.MustParse("v1.37.2")); len(got) != 0 {
		t.Errorf("a file without it: stale %v", got)
	}
	if got := staleFlags("# no args\n", semver.MustParse("v1.37.2")); len(got) != 0 {
		t.Errorf("a file without KUBELET_KUBEADM_ARGS: stale %v", got)
	}
}
