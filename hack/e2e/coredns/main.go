// Copyright 2026 The kind-upgrade Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

// Command coredns is CoreDNS with only the plugins that the Corefile written
// by kubeadm (and so by kind) uses, plus a few harmless extras. Linking the
// full plugin set would drag in every cloud provider's SDK.
//
// It is its own module (so hack/e2e stays free of CoreDNS's dependencies);
// build-artifacts.sh builds this file against each CoreDNS version the e2e
// tests need, in a scratch module that requires that version.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
	_ "github.com/coredns/coredns/plugin/rewrite"
	_ "github.com/coredns/coredns/plugin/whoami"
)

// linked are the directives of the plugins imported above.
var linked = map[string]bool{
	"cache": true, "errors": true, "forward": true, "health": true,
	"hosts": true, "kubernetes": true, "loadbalance": true, "log": true,
	"loop": true, "prometheus": true, "ready": true, "reload": true,
	"rewrite": true, "whoami": true,
}

func init() {
	// Keep CoreDNS's own ordering, minus the plugins that are not linked in
	// (a Corefile naming one of those is then rejected as unknown).
	var kept []string
	for _, d := range dnsserver.Directives {
		if linked[d] {
			kept = append(kept, d)
		}
	}
	dnsserver.Directives = kept
}

func main() {
	coremain.Run()
}
