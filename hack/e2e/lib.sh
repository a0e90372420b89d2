# shellcheck shell=bash
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

# Helpers shared by the offline e2e scripts (logging, locks, where the cache
# is). Source it, do not run it. The cache itself (keys, stamps, the build
# graph) is hack/e2e/artifacts's.

E2E_CACHE="${KIND_UPGRADE_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kind-upgrade-e2e}"
# shellcheck disable=SC2034 # used by the scripts that source this file
E2E_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

log() {
  printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2
}

die() {
  log "ERROR: $*"
  exit 1
}

# with_file_lock FILE CMD...: runs CMD holding an exclusive flock on FILE.
with_file_lock() {
  local file="$1"
  shift
  local fd rc=0
  exec {fd}>>"${file}"
  flock "${fd}"
  "$@" || rc=$?
  exec {fd}>&-
  return "${rc}"
}

# with_lock NAME CMD...: runs CMD holding the cache's lock NAME.
with_lock() {
  local name="$1"
  shift
  mkdir -p "${E2E_CACHE}/locks"
  with_file_lock "${E2E_CACHE}/locks/${name}.lock" "$@"
}

# go_scratch_module DIR MODPATH: starts an empty module in DIR.
go_scratch_module() {
  mkdir -p "$1"
  printf 'module %s\n\ngo 1.24.0\n' "$2" >"$1/go.mod"
}
