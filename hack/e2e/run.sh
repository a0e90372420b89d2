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

# run.sh [upgrade|ha|faults|faults-short|pinned|bench]: runs one offline end-to-end test
# or the benchmark. Both build (or
# reuse) the same offline artifacts and create their cluster at E2E_FROM
# (default v1.36.3) with bin/kind.
#
#   upgrade (make e2e, the default): test/e2e's TestIntegrationUpgrade
#     creates 1 control-plane node and 1 worker, deploys canaries, upgrades
#     the cluster to E2E_TO (default v1.37.2) with `kind alpha upgrade`
#     (interrupted, then the control plane alone, then the rest) and checks
#     the result. E2E_IMAGE_DIR_LAYOUT=build-tree upgrades from a Kubernetes
#     build tree's _output/ instead of the release-like folder.
#     Writes junit_e2e.xml, upgrade-report.txt (per-phase wall times, node
#     versions before and after), phase-times.json, the upgrade's JSON
#     events, commands.log and, on failure, `kind export logs` to
#     ${ARTIFACTS}.
#   ha (make e2e-ha): TestIntegrationUpgradeHA creates 3 control-plane
#     nodes (behind kind's load balancer: the envoy stand-in
#     build-artifacts.sh keeps in Docker) and 2 workers, deploys canaries and
#     writes 20 ConfigMaps, probes the API through the load balancer and the
#     canary Service from every node while one run of `kind alpha upgrade`
#     takes the cluster to E2E_TO, then checks the order of the upgrade's
#     steps, the availability figures against their bounds, etcd's members
#     and data, every control plane's static pods and the load balancer.
#     Writes the same files, with ha-report.txt (create time, availability)
#     and both probes' logs (api-probe.log, canary-probe.log), to
#     ${ARTIFACTS}/ha.
#   faults (make e2e-faults), faults-short (part of make test):
#     TestIntegrationUpgradeFaults creates 1 control-plane node and 2
#     workers, deploys canaries and writes 20 ConfigMaps, then runs
#     `kind alpha upgrade` again and again, each run stopped at the next
#     point of a chain (SIGINT, SIGKILL, a killed docker exec, a restarted
#     node container; the short chain: inside an image import, kubeadm
#     upgrade node and a drain) until a last run finishes; checks that
#     every point was reached, that no finished work ran twice, and the
#     end state. Writes faults-report.txt and each run's events to
#     ${ARTIFACTS}/faults or ${ARTIFACTS}/faults-short.
#   pinned (make e2e-pinned, part of make test):
#     TestIntegrationUpgradePinnedImages creates 1 control-plane node whose
#     kubeadmConfigPatches pin etcd and CoreDNS to E2E_FROM's tags, upgrades
#     it with an --image-dir that lacks the target's etcd and CoreDNS
#     archives, and checks that everything else runs E2E_TO while etcd and
#     CoreDNS keep the pinned images, with no data lost. Writes
#     pinned-report.txt and the events to ${ARTIFACTS}/pinned.
#   bench (make bench): TestBenchmarkUpgrade times loading the target's
#     artifacts against upstream `kind load image-archive` on
#     1 + E2E_BENCH_LOADING workers (default "0 1 3"), then upgrades fresh
#     identical clusters (1 control plane + E2E_BENCH_WORKERS workers,
#     default "1 3") from E2E_FROM to E2E_TO with `kind alpha upgrade` and
#     with the hand-typed sequence of hack/bench/hand-upgrade.sh,
#     alternating, E2E_BENCH_ROUNDS times each (default 3); "none" skips a
#     part. Writes bench.md and bench.json to ${ARTIFACTS}/bench after every
#     run. Not a test: it fails only when a run fails (a failed run is named
#     in the report and left out of its figures).
#
# Needs a running Docker engine (hack/e2e/docker-setup.sh) and bin/kind
# (make build).

set -o errexit -o nounset -o pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "${REPO_ROOT}"
# shellcheck source=hack/e2e/artifacts-env.sh
source hack/e2e/artifacts-env.sh

SUITE="${1:-upgrade}"
ARTIFACTS="${ARTIFACTS:-${REPO_ROOT}/_artifacts}"
case "${SUITE}" in
  upgrade) TEST=TestIntegrationUpgrade REPORT=upgrade-report.txt ;;
  ha)
    TEST=TestIntegrationUpgradeHA REPORT=ha-report.txt
    ARTIFACTS="${ARTIFACTS}/ha"
    export E2E_HA=1
    ;;
  faults | faults-short)
    TEST=TestIntegrationUpgradeFaults REPORT=faults-report.txt
    ARTIFACTS="${ARTIFACTS}/${SUITE}"
    export E2E_FAULTS=full
    [[ "${SUITE}" == faults ]] || E2E_FAULTS=short
    ;;
  pinned)
    TEST=TestIntegrationUpgradePinnedImages REPORT=pinned-report.txt
    ARTIFACTS="${ARTIFACTS}/pinned"
    export E2E_PINNED=1
    ;;
  bench)
    TEST=TestBenchmarkUpgrade REPORT=bench.md TIMEOUT=360m
    ARTIFACTS="${ARTIFACTS}/bench"
    export E2E_BENCH=1 E2E_HAND_SCRIPT="${REPO_ROOT}/hack/bench/hand-upgrade.sh"
    ;;
  *)
    echo "ERROR: unknown e2e suite ${SUITE}: use upgrade, ha, faults, faults-short, pinned or bench" >&2
    exit 1
    ;;
esac
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
export E2E_SOURCE_RELEASE="${SOURCE_RELEASE}"
export E2E_CANARY_TAR="${CANARY_TAR}"
export E2E_CANARY_IMAGE="${CANARY_IMAGE}"
export E2E_ARTIFACTS="${ARTIFACTS}"
export E2E_FROM="${E2E_FROM_VERSION}"
export E2E_TO="${E2E_TO_VERSION}"
export E2E_ETCD_IMAGE="${TO_ETCD_IMAGE}"
export E2E_COREDNS_IMAGE="${TO_COREDNS_IMAGE}"
export E2E_FROM_ETCD_IMAGE="${FROM_ETCD_IMAGE}"
export E2E_FROM_COREDNS_IMAGE="${FROM_COREDNS_IMAGE}"
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
go test -count=1 -v -timeout "${TIMEOUT:-60m}" -run "^${TEST}\$" ./test/e2e/ 2>&1 | tee "${ARTIFACTS}/e2e.log" || rc=$?
if [[ "${rc}" -eq 0 ]] && ! grep -q -- "--- PASS: ${TEST} " "${ARTIFACTS}/e2e.log"; then
  echo "ERROR: ${TEST} did not run" >&2
  rc=1
fi
if [[ -f "${ARTIFACTS}/${REPORT}" ]]; then
  cat "${ARTIFACTS}/${REPORT}"
fi
echo "e2e artifacts (${SUITE}) in ${ARTIFACTS}"
exit "${rc}"
