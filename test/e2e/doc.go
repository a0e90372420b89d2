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

// Package e2e upgrades a real kind cluster with `kind alpha upgrade`. It
// needs a Docker engine and the offline artifacts hack/e2e builds; run it
// with `make e2e` (hack/e2e/run.sh), which provides both, and the HA test
// (3 control-plane nodes, 2 workers, availability probes) with `make
// e2e-ha` (hack/e2e/run.sh ha). The parsers and checks the tests use
// (events, probes, etcd) are unit-tested and run under -short.
package e2e
