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

# Sourced by hack/e2e/run.sh, matrix.sh and demo.sh: the versions the e2e
# upgrades between (E2E_FROM, E2E_TO; default kind's current line, the
# pair CI runs), and load_artifacts_env, which builds (or reuses) the
# offline artifacts for them and sets MANIFEST to their manifest (see
# build-artifacts.sh); manifest_field reads one of its fields.

E2E_FROM="${E2E_FROM:-v1.36.3}"
E2E_TO="${E2E_TO:-v1.37.2}"

# load_artifacts_env: builds or reuses the artifacts of E2E_FROM -> E2E_TO
# and sets MANIFEST.
load_artifacts_env() {
  MANIFEST="$(E2E_FROM="${E2E_FROM}" E2E_TO="${E2E_TO}" bash "$(dirname "${BASH_SOURCE[0]}")/build-artifacts.sh")"
  [[ -f "${MANIFEST}" ]] || {
    echo "ERROR: hack/e2e/build-artifacts.sh wrote no manifest (it printed '${MANIFEST}')" >&2
    return 1
  }
}

# manifest_field FILE KEY: the value of KEY in the manifest FILE, read
# through the type the tests read (internal/lab/manifest).
manifest_field() {
  go -C "$(dirname "${BASH_SOURCE[0]}")/artifacts" run -trimpath . manifest-field "$1" "$2"
}

# json_field FILE KEY: a field of the JSON object in FILE; a dotted KEY
# (to.binary) names a field of a nested object.
json_field() {
  go -C "$(dirname "${BASH_SOURCE[0]}")/artifacts" run -trimpath . json-field "$1" "$2"
}
