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

# unit.sh [PACKAGES...]: the unit tests, with the race detector, of
# PACKAGES; by default of ./... and of the hack/e2e module (and, without the
# race detector, of test/upgrades' packages). With -tags e2e,
# so that the end-to-end tests compile and their unit tests run (-short
# skips the integration tests themselves).

set -o errexit -o nounset -o pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# the race detector needs cgo
export CGO_ENABLED=1
if [[ $# -gt 0 ]]; then
  stage "unit tests (go test -short -race -tags e2e $*)" go test -short -race -tags e2e "$@"
  exit
fi
stage "unit tests (go test -short -race -tags e2e ./...)" go test -short -race -tags e2e ./...
# the offline e2e toolchain's own module: the mirror, kindnetd, the load
# balancer stand-in
stage "unit tests of hack/e2e (go test -short -race ./...)" bash -c 'cd hack/e2e && go test -short -race ./...'
# Kubernetes' upgrade tests' own module: its packages' unit tests, without
# -race and with the flags its build in hack/e2e uses (CGO_ENABLED=0,
# -trimpath), so that Kubernetes' e2e framework is compiled once for both
# (guide builds the user guide's operator example as an outside module)
stage "unit tests of test/upgrades (go test -trimpath ./kindupgrades/... ./availability/... ./guide/...)" \
  bash -c 'cd test/upgrades && CGO_ENABLED=0 go test -trimpath ./kindupgrades/... ./availability/... ./guide/...'
