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

# host-setup.sh: the one step that prepares this host for the end-to-end
# tests, the demo and the benchmark (make host-setup; every target that
# creates clusters depends on it): hack/e2e/docker-setup.sh, which installs
# and starts a Docker engine when none answers, adds the runc wrapper this
# kind of VM needs and raises the inotify limits. Idempotent: on a host
# already set up it only checks (about a second). Needs root.

set -o errexit -o nounset -o pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

stage "host set-up: Docker engine, runtime, inotify limits (hack/e2e/docker-setup.sh)" bash hack/e2e/docker-setup.sh
