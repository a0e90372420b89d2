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

# run.sh SUITE [FLAG...]: runs one offline end-to-end suite or the benchmark.
# Every suite builds (or reuses) the offline artifacts of E2E_FROM -> E2E_TO
# (default v1.36.3 -> v1.37.2; hack/e2e/build-artifacts.sh writes their
# manifest) and creates its cluster with bin/kind. A suite is one Go test of
# test/e2e, selected by -run alone (the tests build with -tags e2e):
#
#   upgrade       TestIntegrationUpgrade (make e2e)
#   ha            TestIntegrationUpgradeHA (make e2e-ha)
#   pinned        TestIntegrationUpgradePinnedImages (make e2e-pinned)
#   faults        TestIntegrationUpgradeFaults (make e2e-faults)
#   faults-short  TestIntegrationUpgradeFaultsShort (make e2e-faults-short)
#   compat        TestIntegrationUpgradeCompatibility (make e2e-compat),
#                 with both versions' own [sig-api-machinery] conformance
#                 tests at its steps unless E2E_CONFORMANCE=0
#   chain         TestIntegrationUpgradeChain (make e2e-chain): a chain of
#                 targets in one command; E2E_CHAIN="v1.34.4 v1.35.4 v1.36.3
#                 v1.37.2"
#                 (the default) is the versions, the cluster created at the
#                 first; every consecutive pair's artifacts are built, the
#                 last pair is E2E_FROM -> E2E_TO
#   chain-compat  TestIntegrationUpgradeChainEmulation (make
#                 e2e-chain-compat): the same chain emulating its first
#                 version, the emulation then raised and removed, with the
#                 emulated version's [sig-api-machinery] conformance tests
#                 (but [Slow]) after each step unless E2E_CONFORMANCE=0
#   podman        TestIntegrationUpgradePodman (make e2e-podman): the node
#                 images are loaded into podman's store first, and the test
#                 runs with KIND_EXPERIMENTAL_PROVIDER=podman
#   bench         the program hack/bench (make bench), not a test
#
# What each checks is in site/content/docs/contributing/testing.md. FLAGs go
# to the test after -args (e.g. -keep-cluster, -image-dir-layout=build-tree;
# `go test -tags e2e ./test/e2e -args -h` lists them) or to the benchmark
# (-rounds 1 -loading none ...). gotestsum runs the test and writes its
# JUnit, junit_SUITE.xml, one test case per check, with the go test -json
# stream (test2json.json), the suite's report and, on failure, `kind export
# logs` to ${ARTIFACTS} (default _artifacts). Needs a running Docker engine
# (make host-setup; the artifacts are built with it, for podman too) and
# bin/kind (make build).

set -o errexit -o nounset -o pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "${REPO_ROOT}"
# shellcheck source=hack/e2e/artifacts-env.sh
source hack/e2e/artifacts-env.sh

SUITE="${1:-upgrade}"
shift || true
ARTIFACTS="${ARTIFACTS:-${REPO_ROOT}/_artifacts}"
case "${SUITE}" in
  upgrade) TEST=TestIntegrationUpgrade REPORT=upgrade-report.txt DIR="${ARTIFACTS}" ;;
  ha) TEST=TestIntegrationUpgradeHA REPORT=ha-report.txt DIR="${ARTIFACTS}/ha" ;;
  pinned) TEST=TestIntegrationUpgradePinnedImages REPORT=pinned-report.txt DIR="${ARTIFACTS}/pinned" ;;
  faults) TEST=TestIntegrationUpgradeFaults REPORT=faults-report.txt DIR="${ARTIFACTS}/faults" ;;
  faults-short) TEST=TestIntegrationUpgradeFaultsShort REPORT=faults-report.txt DIR="${ARTIFACTS}/faults-short" ;;
  compat) TEST=TestIntegrationUpgradeCompatibility REPORT=compat-report.txt DIR="${ARTIFACTS}/compat" ;;
  chain) TEST=TestIntegrationUpgradeChain REPORT=chain-report.txt DIR="${ARTIFACTS}/chain" ;;
  chain-compat) TEST=TestIntegrationUpgradeChainEmulation REPORT=compat-report.txt DIR="${ARTIFACTS}/chain-compat" ;;
  podman) TEST=TestIntegrationUpgradePodman REPORT=upgrade-report.txt DIR="${ARTIFACTS}/podman" ;;
  bench) DIR="${ARTIFACTS}/bench" ;;
  *)
    echo "ERROR: unknown e2e suite ${SUITE}: use upgrade, ha, pinned, faults, faults-short, compat, chain, chain-compat, podman or bench" >&2
    exit 1
    ;;
esac
[[ -x bin/kind ]] || { echo "ERROR: bin/kind is missing: run make build first" >&2; exit 1; }
mkdir -p "${DIR}"

EXTRA_ARGS=()
TIMEOUT=60m
if [[ "${SUITE}" == compat || "${SUITE}" == chain-compat ]]; then
  # the suite also runs [sig-api-machinery] conformance tests at its
  # steps (set E2E_CONFORMANCE=0 to leave them out)
  export E2E_CONFORMANCE="${E2E_CONFORMANCE:-1}"
fi
if [[ "${SUITE}" == chain || "${SUITE}" == chain-compat ]]; then
  # every pair of the chain but the last: their manifests go to the test
  read -r -a CHAIN <<<"${E2E_CHAIN:-v1.34.4 v1.35.4 v1.36.3 v1.37.2}"
  ((${#CHAIN[@]} >= 3)) || { echo "ERROR: E2E_CHAIN needs three versions at least (a cluster and two targets), not '${CHAIN[*]}'" >&2; exit 1; }
  earlier=()
  for ((i = 0; i + 2 < ${#CHAIN[@]}; i++)); do
    E2E_FROM="${CHAIN[i]}" E2E_TO="${CHAIN[i + 1]}" load_artifacts_env
    earlier+=("${MANIFEST}")
  done
  E2E_FROM="${CHAIN[${#CHAIN[@]} - 2]}" E2E_TO="${CHAIN[${#CHAIN[@]} - 1]}"
  EXTRA_ARGS=(-chain-manifests "$(IFS=,; echo "${earlier[*]}")")
fi
load_artifacts_env
echo "artifacts' manifest: ${MANIFEST}"
if [[ "${SUITE}" == compat && "${E2E_CONFORMANCE}" == 1 ]]; then
  EXTRA_ARGS=(-conformance "${MANIFEST%.json}-conformance.json")
  TIMEOUT=150m
fi
if [[ "${SUITE}" == chain-compat && "${E2E_CONFORMANCE}" == 1 ]]; then
  # each pair's conformance suites: the tests of the version the control
  # plane emulates run after each step
  suites=()
  for m in "${earlier[@]}" "${MANIFEST}"; do suites+=("${m%.json}-conformance.json"); done
  EXTRA_ARGS+=(-chain-conformance "$(IFS=,; echo "${suites[*]}")")
  TIMEOUT=150m
fi

if [[ "${SUITE}" == bench ]]; then
  rc=0
  go run ./hack/bench -manifest "${MANIFEST}" -kind bin/kind -artifacts "${DIR}" "$@" || rc=$?
  [[ ! -f "${DIR}/bench.md" ]] || cat "${DIR}/bench.md"
  echo "benchmark artifacts in ${DIR}"
  exit "${rc}"
fi

if [[ "${SUITE}" == podman ]]; then
  bash hack/e2e/podman-setup.sh
  bash hack/e2e/podman-images.sh "$(manifest_field "${MANIFEST}" nodeImage)" "$(manifest_field "${MANIFEST}" targetNodeImage)"
  export KIND_EXPERIMENTAL_PROVIDER=podman
fi

GOTESTSUM="${REPO_ROOT}/bin/gotestsum"
go -C hack/tools build -o "${GOTESTSUM}" gotest.tools/gotestsum
rc=0
"${GOTESTSUM}" --format standard-verbose --junitfile "${DIR}/junit_${SUITE}.xml" --jsonfile "${DIR}/test2json.json" -- \
  -tags e2e -count=1 -timeout "${TIMEOUT}" -run "^${TEST}\$" ./test/e2e/ \
  -args -manifest "${MANIFEST}" -kind "${REPO_ROOT}/bin/kind" -artifacts "${ARTIFACTS}" "${EXTRA_ARGS[@]}" "$@" 2>&1 |
  tee "${DIR}/e2e.log" || rc=$?
if [[ -f "${DIR}/${REPORT}" ]]; then
  cat "${DIR}/${REPORT}"
fi
echo "e2e artifacts (${SUITE}) in ${DIR}"
exit "${rc}"
