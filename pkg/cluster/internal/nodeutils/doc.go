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

// Package nodeutils contains helpers for working with kind nodes that
// sigs.k8s.io/kind/pkg/cluster/nodeutils lacks: streaming files in,
// installing binaries atomically, systemd units, kubectl on a node and
// waiting for conditions. Each helper runs its commands under the context
// it is given, so cancelling the context stops it between commands.
package nodeutils
