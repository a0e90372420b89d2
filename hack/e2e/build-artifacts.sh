#!/usr/bin/env bash
# Copyright 2026 The kind-upgrade Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# build-artifacts.sh: builds, offline, everything the upgrade e2e tests need
# for the pair E2E_FROM -> E2E_TO (default v1.36.3 -> v1.37.2), writes the
# artifacts' manifest ($CACHE/manifests/FROM-to-TO.json, read through
# internal/lab/manifest) and prints its path (the only line on stdout; logs
# go to stderr). The work is hack/e2e/artifacts's: the build graph, each
# cache entry keyed by the inputs it declares (`explain GROUP/NAME` shows
# them), and the recipes (Go packages in artifacts/recipes, one per kind of
# entry; only the debootstrap call runs a shell program). See
# hack/e2e/README.md. Needs root and a running Docker engine (make
# host-setup).

set -o errexit -o nounset -o pipefail

exec go -C "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/artifacts" run -trimpath . build "$@"
