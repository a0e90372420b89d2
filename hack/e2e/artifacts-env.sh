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

# Sourced by hack/e2e/run.sh and hack/e2e/demo.sh: the versions the e2e
# upgrades between, and load_artifacts_env, which builds (or reuses) the
# offline artifacts and sets NODE_IMAGE, IMAGE_DIR, CANARY_IMAGE and
# CANARY_TAR from hack/e2e/build-artifacts.sh's output.

# shellcheck disable=SC2034 # used by the scripts that source this file
E2E_FROM_VERSION="v1.33.13"
# shellcheck disable=SC2034
E2E_TO_VERSION="v1.34.4"
# shellcheck disable=SC2034 # etcd and CoreDNS versions kubeadm v1.34.4 wants
E2E_TO_ETCD="3.6.5"
# shellcheck disable=SC2034
E2E_TO_COREDNS="v1.12.1"

load_artifacts_env() {
  local out key value
  out="$(bash "$(dirname "${BASH_SOURCE[0]}")/build-artifacts.sh")"
  NODE_IMAGE="" IMAGE_DIR="" CANARY_IMAGE="" CANARY_TAR=""
  while IFS='=' read -r key value; do
    case "${key}" in
      NODE_IMAGE | IMAGE_DIR | CANARY_IMAGE | CANARY_TAR) printf -v "${key}" '%s' "${value}" ;;
    esac
  done <<<"${out}"
  for key in NODE_IMAGE IMAGE_DIR CANARY_IMAGE CANARY_TAR; do
    if [[ -z "${!key}" ]]; then
      echo "ERROR: hack/e2e/build-artifacts.sh did not report ${key}" >&2
      return 1
    fi
  done
}
