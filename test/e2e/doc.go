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

// Package e2e holds the end-to-end tests: each creates a real kind cluster
// from the offline artifacts (hack/e2e builds them and writes their
// manifest), upgrades it with `kind alpha upgrade` and checks the result.
// The tests build only with the e2e tag and are selected by -run alone:
//
//	go test -tags e2e ./test/e2e -run '^TestIntegrationUpgradeHA$' -args -manifest=FILE
//
// which make e2e, e2e-ha, e2e-pinned, e2e-faults, e2e-faults-short and
// e2e-compat do through hack/e2e/run.sh. Under -short they skip. What they share lives in
// packages beside: kindtest (the cluster driver), manifest, timeline
// (events and order checks), probe (availability), faultchain and
// etcdcheck, whose unit tests run in make unit.
package e2e
