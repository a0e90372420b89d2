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

# Runs the offline end-to-end test: builds (or reuses) the offline artifacts,
# then test/e2e's TestIntegrationUpgrade creates a cluster at E2E_FROM
# (default v1.36.3) with bin/kind, deploys canaries, upgrades it to E2E_TO
# (default v1.37.2) with `kind alpha upgrade` (interrupted, then the control
# plane alone, then the rest) and checks the result.
# Needs a running Docker engine (hack/e2e/docker-setup.sh) and bin/kind
# (make build). E2E_IMAGE_DIR_LAYOUT=build-tree upgrades from a Kubernetes
# build tree's _output/ instead of the release-like folder.
#
# Writes junit_e2e.xml, upgrade-report.txt (per-phase wall times, node
# versions before and after), phase-times.json, the upgrade's JSON events,
# commands.log and, on failure, `kind export logs` to ${ARTIFACTS}.

set -o errexit -o nounset -o pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "${REPO_ROOT}"
# shellcheck source=hack/e2e/artifacts-env.sh
source hack/e2e/artifacts-env.sh

ARTIFACTS="${ARTIFACTS:-${REPO_ROOT}/_artifacts}"
mkdir -p "${ARTIFACTS}"

load_artifacts_env

export E2E_KIND="${REPO_ROOT}/bin/kind"
export E2E_NODE_IMAGE="${NODE_IMAGE}"
case "${E2E_IMAGE_DIR_LAYOUT:-release}" in
  release) export E2E_IMAGE_DIR="${IMAGE_DIR}" ;;
  build-tree) export E2E_IMAGE_DIR="${BUILD_TREE}" ;;
  *)
    echo "ERROR: E2E_IMAGE_DIR_LAYOUT must be release or build-tree, not ${E2E_IMAGE_DIR_LAYOUT}" >&2
    exit 1
    ;;
esac
export E2E_DOWNGRADE_IMAGE_DIR="${DOWNGRADE_IMAGE_DIR}"
export E2E_CANARY_TAR="${CANARY_TAR}"
export E2E_CANARY_IMAGE="${CANARY_IMAGE}"
export E2E_ARTIFACTS="${ARTIFACTS}"
export E2E_FROM="${E2E_FROM_VERSION}"
export E2E_TO="${E2E_TO_VERSION}"
export E2E_ETCD_IMAGE="${TO_ETCD_IMAGE}"
export E2E_COREDNS_IMAGE="${TO_COREDNS_IMAGE}"
export E2E_UNCHANGED_IMAGES=""
# (not pause: kind's node images hold containerd's sandbox image instead of
# kubeadm's pause, so the nodes lack it whatever its version)
for pair in "${FROM_ETCD_IMAGE} ${TO_ETCD_IMAGE}" "${FROM_COREDNS_IMAGE} ${TO_COREDNS_IMAGE}"; do
  read -r old new <<<"${pair}"
  if [[ "${old}" == "${new}" ]]; then
    E2E_UNCHANGED_IMAGES+="${new} "
  fi
done

[[ -x "${E2E_KIND}" ]] || { echo "ERROR: ${E2E_KIND} is missing: run make build first" >&2; exit 1; }

rc=0
go test -count=1 -v -timeout 60m -run '^TestIntegrationUpgrade$' ./test/e2e/ 2>&1 | tee "${ARTIFACTS}/e2e.log" || rc=$?
if [[ "${rc}" -eq 0 ]] && ! grep -q -- '--- PASS: TestIntegrationUpgrade' "${ARTIFACTS}/e2e.log"; then
  echo "ERROR: TestIntegrationUpgrade did not run" >&2
  rc=1
fi
if [[ -f "${ARTIFACTS}/upgrade-report.txt" ]]; then
  cat "${ARTIFACTS}/upgrade-report.txt"
fi
echo "e2e artifacts in ${ARTIFACTS}"
exit "${rc}"
