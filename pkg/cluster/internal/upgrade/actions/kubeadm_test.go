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

package actions

import "testing"

func TestKubeadmIgnorePreflightErrors(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"--ignore-preflight-errors=SystemVerification,Swap,FileContent--proc-sys-net-bridge-bridge-nf-call-iptables":        nil,
		"--ignore-preflight-errors=SystemVerification,Swap,FileContent--proc-sys-net-bridge-bridge-nf-call-iptables,NumCPU": {"NumCPU", "swap", ""},
		"--ignore-preflight-errors=all": {"NumCPU", "All"},
	}
	for want, user := range cases {
		c := &Context{Options: Options{IgnorePreflightErrors: user}}
		if got := c.KubeadmIgnorePreflightErrors(); got != want {
			t.Errorf("with %v got %q, want %q", user, got, want)
		}
	}
}
