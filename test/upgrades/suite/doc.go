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

// Package suite is the test binary of Kubernetes' upgrade tests across
// `kind alpha upgrade`: build it with `go test -c -o upgrades.test
// ./suite` in this module and run it against a kind cluster, e.g.
//
//	upgrades.test --kubeconfig "$KUBECONFIG" --report-dir "$ARTIFACTS" \
//	  --report-prefix master- --kind-cluster kind --upgrade-type master \
//	  -- --image-dir /tmp/v1.37.2
//
// The arguments after -- are `kind alpha upgrade`'s source and flags.
// hack/ci/e2e-k8s-upgrade.sh runs it as kind's CI would.
package suite
