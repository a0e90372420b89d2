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

// Package conformance is a test binary of Kubernetes' own
// [sig-api-machinery] tests (k8s.io/kubernetes/test/e2e/apimachinery), with
// e2e.test's set-up and flags, built against the k8s.io/kubernetes version
// whose tests it runs. It is e2e.test with one test package linked: its
// specs and their names are that package's, and the suite's
// SynchronizedBeforeSuite is e2e.test's (k8s.io/kubernetes/test/e2e).
// Build it with `go test -c -o conformance.test ./conformance` in this
// module (hack/e2e retargets a copy to another version) and run it as
// e2e.test:
//
//	conformance.test --kubeconfig "$KUBECONFIG" --provider skeleton \
//	  --report-dir "$ARTIFACTS" \
//	  --ginkgo.focus '\[sig-api-machinery\].*\[Conformance\]'
//
// --list-kind-images prints the test images its tests run that hack/e2e
// builds stand-ins for, as the upgrade suite's flag does; the pause image
// the tests also run is kubeadm's, which the lab builds.
package conformance
