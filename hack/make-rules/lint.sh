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

# lint.sh: golangci-lint, with the repository's .golangci.yml, over every Go
# module of the repository. golangci-lint is built from the version pinned in
# hack/tools/go.mod (a module of its own, so the main go.mod stays lean);
# the first build takes a few minutes, later ones come from Go's cache.

set -o errexit -o nounset -o pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

GOLANGCI_LINT="${REPO_ROOT}/bin/golangci-lint"

stage "build golangci-lint (hack/tools/go.mod)" \
  go -C hack/tools build -o "${GOLANGCI_LINT}" github.com/golangci/golangci-lint/v2/cmd/golangci-lint

rc=0
while IFS= read -r mod; do
  # hack/tools only pins tools: it has no code of its own
  if [[ "${mod}" == hack/tools ]]; then
    continue
  fi
  stage "golangci-lint (module ${mod})" \
    env -C "${mod}" "${GOLANGCI_LINT}" run --config "${REPO_ROOT}/.golangci.yml" ./... || rc=1
done < <(go_modules)
exit "${rc}"
