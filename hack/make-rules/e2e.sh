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

# e2e.sh SUITE [FLAG...]: one end-to-end suite (make e2e, e2e-ha,
# e2e-pinned, e2e-faults, e2e-faults-short, e2e-compat) or the benchmark
# (make bench), after make host-setup: runs hack/e2e/run.sh with the same
# arguments. Needs root. The first run builds every image and binary
# offline and caches them (see hack/e2e/build-artifacts.sh).

set -o errexit -o nounset -o pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUN="hack/e2e/run.sh"
require_script "${RUN}" "the end-to-end tests"
stage "e2e test ${1:-upgrade} (${RUN})" bash "${RUN}" "$@"
