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

# Sourced by hack/e2e/run.sh and demo.sh: the versions the e2e
# upgrades between (E2E_FROM, E2E_TO; default kind's current line, the
# pair CI runs), and load_artifacts_env, which builds (or reuses) the
# offline artifacts for them and sets NODE_IMAGE, IMAGE_DIR, BUILD_TREE,
# DOWNGRADE_IMAGE_DIR, SOURCE_RELEASE, CANARY_IMAGE, CANARY_TAR and the etcd, CoreDNS and
# pause images each version's kubeadm lists (FROM_ETCD_IMAGE, TO_ETCD_IMAGE,
# ...) from hack/e2e/build-artifacts.sh's output.

E2E_FROM_VERSION="${E2E_FROM:-v1.36.3}"
E2E_TO_VERSION="${E2E_TO:-v1.37.2}"

# the keys build-artifacts.sh reports
E2E_ARTIFACT_KEYS=(NODE_IMAGE IMAGE_DIR BUILD_TREE DOWNGRADE_IMAGE_DIR SOURCE_RELEASE CANARY_IMAGE CANARY_TAR
  FROM_ETCD_IMAGE FROM_COREDNS_IMAGE FROM_PAUSE_IMAGE TO_ETCD_IMAGE TO_COREDNS_IMAGE TO_PAUSE_IMAGE)

load_artifacts_env() {
  local out key value
  out="$(E2E_NODE_VERSION="${E2E_FROM_VERSION}" E2E_UPGRADE_VERSION="${E2E_TO_VERSION}" \
    bash "$(dirname "${BASH_SOURCE[0]}")/build-artifacts.sh")"
  for key in "${E2E_ARTIFACT_KEYS[@]}"; do
    printf -v "${key}" '%s' ""
  done
  while IFS='=' read -r key value; do
    if [[ " ${E2E_ARTIFACT_KEYS[*]} " == *" ${key} "* ]]; then
      printf -v "${key}" '%s' "${value}"
    fi
  done <<<"${out}"
  for key in "${E2E_ARTIFACT_KEYS[@]}"; do
    if [[ -z "${!key}" ]]; then
      echo "ERROR: hack/e2e/build-artifacts.sh did not report ${key}" >&2
      return 1
    fi
  done
}
