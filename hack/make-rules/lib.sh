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

# Helpers shared by the make-rules scripts. Source it, do not run it: it
# changes to the repository root and puts Go on PATH.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." &>/dev/null && pwd -P)"
export REPO_ROOT
cd "${REPO_ROOT}" || exit 1

# Go: the one on PATH, else the one the machine image installs.
if ! command -v go >/dev/null 2>&1; then
  if [[ -x /usr/local/go/bin/go ]]; then
    PATH="/usr/local/go/bin:${PATH}"
    export PATH
  else
    echo "ERROR: go not found on PATH nor in /usr/local/go/bin: install Go (see go.mod for the version)" >&2
    exit 1
  fi
fi

# stage NAME COMMAND [ARGS...] runs COMMAND, framed by a start line and an
# end line with the outcome and how long it took (on stderr), and returns
# its exit code.
stage() {
  local name="$1" start rc=0
  shift
  start="${SECONDS}"
  printf '==> %s\n' "${name}" >&2
  "$@" || rc=$?
  if [[ "${rc}" -eq 0 ]]; then
    printf '<== %s: ok (%ss)\n' "${name}" "$((SECONDS - start))" >&2
  else
    printf '<== %s: FAILED with exit code %s (%ss)\n' "${name}" "${rc}" "$((SECONDS - start))" >&2
  fi
  return "${rc}"
}

# repo_files PATHSPEC... lists the files git knows or would add (tracked,
# and untracked but not ignored) that match PATHSPEC and exist.
repo_files() {
  local f
  git ls-files --cached --others --exclude-standard -- "$@" | sort -u | while IFS= read -r f; do
    if [[ -f "${f}" ]]; then
      printf '%s\n' "${f}"
    fi
  done
}

# go_modules lists the directories of the repository's Go modules, the
# root first.
go_modules() {
  repo_files ':(glob)go.mod' ':(glob)**/go.mod' | xargs -r -n1 dirname | sort -u
}

# require_script PATH WHAT fails with a clear message when PATH, another
# part of the project, does not exist yet.
require_script() {
  if [[ ! -f "$1" ]]; then
    echo "ERROR: $1 does not exist yet, so ${2} cannot run: it is written separately from the Makefile; until it lands, 'make unit' runs the unit tests." >&2
    exit 1
  fi
}
