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

# upgrades-module.sh DIR VERSION
#
# Points the Go module in DIR (test/upgrades, or a copy of it) at
# k8s.io/kubernetes VERSION (e.g. v1.37.2): its require line, and a replace
# line for each staging module that version's go.mod replaces with one of
# its own folders (k8s.io/X => ./staging/src/k8s.io/X), which are published
# as k8s.io/X v0.MINOR.PATCH; then go mod tidy. Offline but for the Go
# module proxy. The build of the upgrade tests runs it on a copy for a
# target other than the committed one; run it on test/upgrades to move the
# committed module to another version.

set -o errexit -o nounset -o pipefail

die() {
  echo "upgrades-module.sh: $*" >&2
  exit 1
}

main() {
  [[ $# -eq 2 ]] || die "usage: $0 DIR VERSION"
  local dir="$1" version="$2"
  [[ "${version}" =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || die "bad version ${version}: want v1.MINOR.PATCH"
  [[ -f "${dir}/go.mod" ]] || die "no go.mod in ${dir}"
  local tool="${ARTIFACTS_TOOL_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/artifacts}"
  cd "${dir}"

  # the require and the staging replaces, made by the one generator of
  # them (hack/e2e/artifacts/staging)
  go -C "${tool}" run -trimpath . staging-retarget "$(pwd)" "${version}"
  go mod tidy
  echo "upgrades-module.sh: ${dir} now builds with k8s.io/kubernetes ${version}" >&2
}

main "$@"
