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

# demo.sh [ARGS...]: the demo (after make host-setup): runs hack/e2e/demo.sh
# ARGS, which builds
# what it needs offline, creates a cluster at the old version and upgrades
# it with `kind alpha upgrade`. Needs root.

set -o errexit -o nounset -o pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DEMO="hack/e2e/demo.sh"
require_script "${DEMO}" "the demo"
stage "demo (${DEMO})" bash "${DEMO}" "$@"
