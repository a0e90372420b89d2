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
  local dir="$1" version="$2" minor patch
  [[ "${version}" =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || die "bad version ${version}: want v1.MINOR.PATCH"
  minor="${BASH_REMATCH[1]}" patch="${BASH_REMATCH[2]}"
  [[ -f "${dir}/go.mod" ]] || die "no go.mod in ${dir}"
  cd "${dir}"

  local gomod
  gomod="$(go mod download -json "k8s.io/kubernetes@${version}" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')"
  [[ -f "${gomod}" ]] || die "cannot find go.mod of k8s.io/kubernetes@${version}"
  local staging
  staging="$(sed -n 's#^[[:space:]]*\(k8s\.io/[^[:space:]]*\) => \./staging/src/.*$#\1#p' "${gomod}")"
  [[ -n "${staging}" ]] || die "no staging modules found in ${gomod}"

  local edits=("-require=k8s.io/kubernetes@${version}") old m
  # the replace lines of the version the module was at
  for old in $(go mod edit -json | sed -n 's#^[[:space:]]*"Path": "\(k8s\.io/[^"]*\)"$#\1#p' | sort -u); do
    [[ "${old}" == k8s.io/kubernetes ]] || edits+=("-dropreplace=${old}")
  done
  for m in ${staging}; do
    edits+=("-replace=${m}=${m}@v0.${minor}.${patch}")
  done
  go mod edit "${edits[@]}"
  go mod tidy
  echo "upgrades-module.sh: ${dir} now builds with k8s.io/kubernetes ${version} ($(wc -w <<<"${staging}") staging modules replaced)" >&2
}

main "$@"
