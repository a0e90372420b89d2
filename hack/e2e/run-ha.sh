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

# Runs the offline HA end-to-end test (`make e2e-ha`): builds (or reuses)
# the same offline artifacts as run.sh, then test/e2e's
# TestIntegrationUpgradeHA creates a cluster of 3 control-plane nodes
# (behind kind's load balancer: the envoy stand-in build-artifacts.sh keeps
# in Docker) and 2 workers at E2E_FROM (default v1.36.3) with bin/kind,
# deploys canaries and writes 20 ConfigMaps, probes the API through the load
# balancer and the canary Service from every node while one run of
# `kind alpha upgrade` takes the cluster to E2E_TO (default v1.37.2), then
# checks the order of the upgrade's steps, the availability figures against
# their bounds, etcd's members and data, every control plane's static pods
# and the load balancer.
# Needs a running Docker engine (hack/e2e/docker-setup.sh), bin/kind (make
# build), and room for five node containers.
#
# Writes to ${ARTIFACTS}/ha: junit_e2e.xml, ha-report.txt (create time,
# per-phase wall times, availability, node versions), phase-times.json,
# the upgrade's JSON events, both probes' logs (api-probe.log,
# canary-probe.log), commands.log and, on failure, `kind export logs`.

set -o errexit -o nounset -o pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "${REPO_ROOT}"
# shellcheck source=hack/e2e/artifacts-env.sh
source hack/e2e/artifacts-env.sh

ARTIFACTS="${ARTIFACTS:-${REPO_ROOT}/_artifacts}/ha"
mkdir -p "${ARTIFACTS}"

load_artifacts_env

export E2E_HA=1
export E2E_KIND="${REPO_ROOT}/bin/kind"
export E2E_NODE_IMAGE="${NODE_IMAGE}"
export E2E_IMAGE_DIR="${IMAGE_DIR}"
export E2E_CANARY_TAR="${CANARY_TAR}"
export E2E_CANARY_IMAGE="${CANARY_IMAGE}"
export E2E_ARTIFACTS="${ARTIFACTS}"
export E2E_FROM="${E2E_FROM_VERSION}"
export E2E_TO="${E2E_TO_VERSION}"
export E2E_ETCD_IMAGE="${TO_ETCD_IMAGE}"
export E2E_COREDNS_IMAGE="${TO_COREDNS_IMAGE}"

[[ -x "${E2E_KIND}" ]] || { echo "ERROR: ${E2E_KIND} is missing: run make build first" >&2; exit 1; }

rc=0
go test -count=1 -v -timeout 120m -run '^TestIntegrationUpgradeHA$' ./test/e2e/ 2>&1 | tee "${ARTIFACTS}/e2e.log" || rc=$?
if [[ "${rc}" -eq 0 ]] && ! grep -q -- '--- PASS: TestIntegrationUpgradeHA' "${ARTIFACTS}/e2e.log"; then
  echo "ERROR: TestIntegrationUpgradeHA did not run" >&2
  rc=1
fi
if [[ -f "${ARTIFACTS}/ha-report.txt" ]]; then
  cat "${ARTIFACTS}/ha-report.txt"
fi
echo "HA e2e artifacts in ${ARTIFACTS}"
exit "${rc}"
