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

# e2e-compatibility-versions.sh: SIG API Machinery's two-step
# compatibility-version job (ci-kubernetes-e2e-kind-two-steps-upgrade-n-minus-1)
# through `kind alpha upgrade`, in the job's shape: a kind cluster created
# at the previous version with kube-apiserver, kube-controller-manager and
# kube-scheduler at --emulated-version=<previous minor>; step 1, the control
# plane upgraded to the target still emulating it (kubelets and kube-proxy
# left behind) and the previous version's e2e tests run against it; step 2,
# the emulation removed and the target's e2e tests run; then the kubelets
# and kube-proxy upgraded. Each kind alpha upgrade's events, each e2e run's
# JUnit (junit_<step>-01.xml) and log, and the cluster's logs when a step
# failed go to $ARTIFACTS. Exits non-zero when a step or a test failed.
# Driven by environment variables, all optional:
#
#   FROM_VERSION, TO_VERSION  the versions, one minor apart (default
#                     hack/e2e's, v1.36.3 -> v1.37.2); with no inputs given
#                     the node image, the target's folder, both e2e binaries
#                     and the test images are built offline
#                     (hack/e2e/build-artifacts.sh with E2E_CONFORMANCE=1,
#                     cached)
#   EMULATED_VERSION  the emulation of step 1 (default FROM_VERSION's minor,
#                     e.g. 1.36)
#   NODE_IMAGE        the cluster's node image, at FROM_VERSION; give it,
#                     TARGET_IMAGE_DIR, PREV_E2E_TEST and E2E_TEST all, or
#                     none of them; a partial set is refused
#   TARGET_IMAGE_DIR  the target (--image-dir: a release's folder, a build
#                     tree's _output/)
#   PREV_E2E_TEST, E2E_TEST  the e2e binaries of FROM_VERSION and
#                     TO_VERSION: Kubernetes' e2e.test, or the lab's
#                     conformance.test (its [sig-api-machinery] tests)
#   TEST_IMAGES_ARCHIVES  archives loaded on every node once the cluster
#                     is created, space separated (default: the lab's stand-ins;
#                     set it empty when the nodes can pull)
#   FOCUS, SKIP       the e2e runs' ginkgo focus and skip (default the
#                     [sig-api-machinery] conformance tests, without the
#                     Aggregator's, whose sample API server the lab does not
#                     build)
#   GINKGO_ARGS       more flags for the e2e runs (e.g. --ginkgo.v)
#   FINISH            true (default): upgrade the kubelets and kube-proxy
#                     at the end; false leaves them at FROM_VERSION
#   KIND              the kind binary (default: bin/kind of this checkout)
#   CLUSTER_NAME      default kind-upgrade-compat-ci
#   ARTIFACTS         default _artifacts/compatibility-versions
#   KIND_UPGRADE_ARGS more flags for every kind alpha upgrade (e.g. "-v 1")
#
# Needs a running Docker engine (make host-setup starts one here).

set -o errexit -o nounset -o pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "${REPO_ROOT}"
# shellcheck source=hack/e2e/artifacts-env.sh
source hack/e2e/artifacts-env.sh

E2E_FROM="${FROM_VERSION:-${E2E_FROM}}"
E2E_TO="${TO_VERSION:-${E2E_TO}}"
KIND="${KIND:-${REPO_ROOT}/bin/kind}"
CLUSTER_NAME="${CLUSTER_NAME:-kind-upgrade-compat-ci}"
ARTIFACTS="${ARTIFACTS:-${REPO_ROOT}/_artifacts/compatibility-versions}"
FOCUS="${FOCUS-\[sig-api-machinery\].*\[Conformance\]}"
SKIP="${SKIP-\[sig-api-machinery\] Aggregator}"
FINISH="${FINISH:-true}"
START="${SECONDS}"
CI_JOB=e2e-compatibility-versions
# shellcheck source=hack/ci/lib.sh
source hack/ci/lib.sh

# minor_of v1.36.3 -> 36
minor_of() {
  local v="${1#v}"
  v="${v#*.}"
  printf '%s\n' "${v%%.*}"
}

# check_inputs: all of the inputs from the caller, or none of them (then
# every artifact is built here); refused before anything runs
check_inputs() {
  local name given=() missing=()
  for name in NODE_IMAGE TARGET_IMAGE_DIR PREV_E2E_TEST E2E_TEST; do
    if [[ -n "${!name:-}" ]]; then given+=("${name}"); else missing+=("${name}"); fi
  done
  if ((${#given[@]} > 0 && ${#missing[@]} > 0)); then
    die "a partial set of inputs (set: ${given[*]}; missing: ${missing[*]}). Set all of them, or none of them to build every artifact here (about an hour on a cold machine)"
  fi
  if (($(minor_of "${E2E_TO}") != $(minor_of "${E2E_FROM}") + 1)); then
    die "FROM_VERSION ${E2E_FROM} and TO_VERSION ${E2E_TO} must be one minor apart (the two-step job); for N-2 and N-3 use a chain (site: Upgrade chains)"
  fi
}

# cluster_config: one control plane and two workers, the three components
# emulating EMULATED_VERSION through kubeadm's configuration, as the job's
# cluster is created
cluster_config() {
  printf 'kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nkubeadmConfigPatches:\n- |\n  kind: ClusterConfiguration\n'
  local c
  for c in apiServer controllerManager scheduler; do
    printf '  %s:\n    extraArgs:\n      emulated-version: "%s"\n' "${c}" "${EMULATED_VERSION}"
  done
  cgroup_v1_patch
  printf 'nodes:\n- role: control-plane\n- role: worker\n- role: worker\n'
}

# upgrade STEP FLAG...: kind alpha upgrade to the target, its events in
# ${ARTIFACTS}/STEP-events.jsonl
upgrade() {
  local step="$1" extra=()
  shift
  # word splitting on purpose: a list of flags
  # shellcheck disable=SC2206
  extra=(${KIND_UPGRADE_ARGS:-})
  log "${step}: kind alpha upgrade --image-dir ${TARGET_IMAGE_DIR} $* ${extra[*]}"
  "${KIND}" alpha upgrade --name "${CLUSTER_NAME}" --image-dir "${TARGET_IMAGE_DIR}" --output json "$@" "${extra[@]}" \
    >"${ARTIFACTS}/${step}-events.jsonl"
}

# e2e STEP BINARY: the e2e binary's tests against the cluster, its JUnit
# junit_STEP-01.xml and log STEP-e2e.log
e2e() {
  local step="$1" bin="$2" ginkgo=()
  # shellcheck disable=SC2206
  ginkgo=(${GINKGO_ARGS:-})
  log "${step}: ${bin} --ginkgo.focus='${FOCUS}' --ginkgo.skip='${SKIP}'"
  "${bin}" --kubeconfig "${ARTIFACTS}/kubeconfig" --provider skeleton --report-dir "${ARTIFACTS}" --report-prefix "${step}-" \
    --ginkgo.focus "${FOCUS}" --ginkgo.skip "${SKIP}" --ginkgo.no-color "${ginkgo[@]}" 2>&1 | tee "${ARTIFACTS}/${step}-e2e.log" >&2
}

main() {
  check_inputs
  [[ -x "${KIND}" ]] || die "no kind binary at ${KIND}: run make build, or set KIND"
  EMULATED_VERSION="${EMULATED_VERSION:-1.$(minor_of "${E2E_FROM}")}"
  mkdir -p "${ARTIFACTS}"
  if [[ -z "${NODE_IMAGE:-}" ]]; then
    log "no inputs given: building (or reusing) every artifact of ${E2E_FROM} -> ${E2E_TO} and both versions' e2e binaries (hack/e2e/build-artifacts.sh; about an hour on a cold machine, seconds when cached)"
    E2E_CONFORMANCE=1 load_artifacts_env
    local conformance="${MANIFEST%.json}-conformance.json"
    NODE_IMAGE="$(manifest_field "${MANIFEST}" nodeImage)"
    TARGET_IMAGE_DIR="$(manifest_field "${MANIFEST}" imageDir)"
    PREV_E2E_TEST="$(json_field "${conformance}" from.binary)"
    E2E_TEST="$(json_field "${conformance}" to.binary)"
    # the test images of both versions and kubeadm's pause, which the
    # source's node image lacks
    TEST_IMAGES_ARCHIVES="${TEST_IMAGES_ARCHIVES-$(json_field "${conformance}" from.imagesArchive) $(json_field "${conformance}" to.imagesArchive) $(manifest_field "${MANIFEST}" imageExtrasDir)/*.tar}"
  fi

  trap cleanup EXIT
  log "creating cluster ${CLUSTER_NAME} at ${NODE_IMAGE}, the control plane emulating ${EMULATED_VERSION}"
  "${KIND}" delete cluster --name "${CLUSTER_NAME}" >/dev/null 2>&1 || true
  cluster_config >"${ARTIFACTS}/kind-config.yaml"
  create_cluster --name "${CLUSTER_NAME}" --image "${NODE_IMAGE}" --config "${ARTIFACTS}/kind-config.yaml" \
    --kubeconfig "${ARTIFACTS}/kubeconfig" --wait 5m
  # the images of both versions' tests, which the upgrades keep
  local archive
  for archive in ${TEST_IMAGES_ARCHIVES:-}; do
    "${KIND}" load image-archive "${archive}" --name "${CLUSTER_NAME}"
  done

  local behind=(--skip-phases "kubelets,control-plane/kube-proxy")
  # the job's kind-upgrade.sh (run twice there), in one command
  upgrade step1-upgrade --emulated-version "${EMULATED_VERSION}" --emulation-forward-compatible "${behind[@]}"
  e2e step1 "${PREV_E2E_TEST}"
  # the job's emulated-version-upgrade.sh
  upgrade step2-emulation --emulated-version none "${behind[@]}"
  e2e step2 "${E2E_TEST}"
  if [[ "${FINISH}" == true ]]; then
    upgrade step3-nodes
  fi
}

main "$@"
