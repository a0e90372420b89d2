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

// Package kindupgrades runs upgrade tests written for Kubernetes' own
// upgrade suite (k8s.io/kubernetes/test/e2e/upgrades: the upstream ones,
// or a caller's own upgrades.Test) across `kind alpha upgrade` of a kind
// cluster: each test sets up its objects, keeps checking while the
// upgrade runs, and checks again once it has finished.
//
// Describe adds the Ginkgo spec; Upgrade says which cluster, how
// (Master, Node or Cluster, kubeadm's "x-on-y" shapes) and from which
// source. The upgrade is the `kind` binary's `kind alpha upgrade`, run as
// a command, so the tests run against what users run.
//
// This package is alpha: its API may change between releases.
package kindupgrades
