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

# verify.sh [CHECK...]: checks the repository without changing it. CHECK is
# any of gofmt, vet, tidy, shellcheck, boilerplate, lint (default: all). Every
# check runs even when an earlier one fails; the script fails if any did.
#
# The files checked are those git tracks or would add (untracked files that
# are not ignored count too), so a new file is checked before its commit.

set -o errexit -o nounset -o pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# verify_gofmt: every Go file is formatted.
verify_gofmt() {
  local -a unformatted
  mapfile -t unformatted < <(repo_files ':(glob)**/*.go' | xargs -r gofmt -l)
  if [[ ${#unformatted[@]} -gt 0 ]]; then
    echo "These files are not gofmt-ed (run gofmt -w on them):" >&2
    printf '  %s\n' "${unformatted[@]}" >&2
    return 1
  fi
}

# verify_vet: go build (which, unlike go vet, leaves out test files, so a
# package that needs its tests to compile fails) and go vet on every module
# with code.
verify_vet() {
  local mod rc=0
  while IFS= read -r mod; do
    if [[ "${mod}" == hack/tools ]]; then
      continue
    fi
    # -tags e2e: the end-to-end tests (test/e2e) build only with it
    echo "go build ./... and go vet -tags e2e ./... in ${mod}" >&2
    (cd "${mod}" && go build -o /dev/null ./... && go vet -tags e2e ./...) || rc=1
  done < <(go_modules)
  return "${rc}"
}

# verify_tidy: go.mod and go.sum of every module are what `go mod tidy` makes.
verify_tidy() {
  local mod rc=0
  while IFS= read -r mod; do
    echo "go mod tidy -diff in ${mod}" >&2
    if ! (cd "${mod}" && go mod tidy -diff); then
      echo "${mod}/go.mod or go.sum is not tidy: run (cd ${mod} && go mod tidy)" >&2
      rc=1
    fi
  done < <(go_modules)
  return "${rc}"
}

# verify_shellcheck: every shell script under hack/ and .ci/.
verify_shellcheck() {
  if ! command -v shellcheck >/dev/null 2>&1; then
    if [[ "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
      echo "installing shellcheck (apt-get)" >&2
      apt-get update -qq >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends shellcheck >&2
    else
      echo "shellcheck is not installed: install it (e.g. apt-get install shellcheck) and run again" >&2
      return 1
    fi
  fi
  local -a scripts
  mapfile -t scripts < <(repo_files ':(glob)hack/**/*.sh' ':(glob).ci/**/*.sh' .ci/run)
  echo "shellcheck $(shellcheck --version | sed -n 's/^version: //p') on ${#scripts[@]} scripts" >&2
  shellcheck --external-sources "${scripts[@]}"
}

# header_lines FILE N SKIP_REGEX prints the first N lines of FILE after any
# leading lines matching SKIP_REGEX (a shebang, build tags, ...).
header_lines() {
  awk -v n="$2" -v skip="$3" '
    !started && $0 ~ skip { next }
    { started = 1; print; if (++printed >= n) exit }
  ' "$1"
}

# has_header FILE BOILERPLATE SKIP_REGEX: FILE starts with BOILERPLATE,
# after any leading lines matching SKIP_REGEX.
has_header() {
  local file="$1" boilerplate="$2" skip="$3"
  cmp -s <(header_lines "${file}" "$(wc -l <"${boilerplate}")" "${skip}") "${boilerplate}"
}

# go_line_header prints the Go header as // comments instead of /* */.
go_line_header() {
  sed -e '1d' -e '$d' hack/boilerplate.go.txt | sed -e 's|^|// |' -e 's| $||'
}

# verify_boilerplate: the Apache-2.0 header on every Go and shell file. Go
# files may write it as in hack/boilerplate.go.txt or as // comments.
verify_boilerplate() {
  local f rc=0 go_skip='^(//go:build .*|// [+]build .*|)$'
  local line_header
  line_header="$(mktemp)"
  go_line_header >"${line_header}"
  while IFS= read -r f; do
    if ! has_header "${f}" hack/boilerplate.go.txt "${go_skip}" &&
      ! has_header "${f}" "${line_header}" "${go_skip}"; then
      echo "${f}: missing the license header of hack/boilerplate.go.txt" >&2
      rc=1
    fi
  done < <(repo_files ':(glob)**/*.go')
  rm -f "${line_header}"
  while IFS= read -r f; do
    if ! has_header "${f}" hack/boilerplate.sh.txt '^(#!.*|# shellcheck .*)$'; then
      echo "${f}: missing the license header of hack/boilerplate.sh.txt (after the #! line)" >&2
      rc=1
    fi
  done < <(repo_files ':(glob)**/*.sh' .ci/run)
  return "${rc}"
}

verify_lint() {
  hack/make-rules/lint.sh
}

CHECKS=(gofmt vet tidy shellcheck boilerplate lint)
if [[ $# -gt 0 ]]; then
  CHECKS=("$@")
fi

failed=()
for check in "${CHECKS[@]}"; do
  if ! declare -F "verify_${check}" >/dev/null; then
    echo "ERROR: unknown check ${check}: the checks are gofmt vet tidy shellcheck boilerplate lint" >&2
    exit 2
  fi
  stage "verify ${check}" "verify_${check}" || failed+=("${check}")
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "verify: all checks passed" >&2
