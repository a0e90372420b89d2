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

# e2e-k8s-upgrade.sh: Kubernetes' own upgrade tests
# (k8s.io/kubernetes/test/e2e/upgrades, plus the availability tests of
# test/upgrades) across `kind alpha upgrade`, as a CI job runs them: builds
# or takes the artifacts, creates a kind cluster at the old version, runs
# the suite across each upgrade, exports the cluster's logs when something
# failed, deletes the cluster and exits with the suite's result. Driven by
# environment variables, all optional:
#
#   FROM_VERSION, TO_VERSION  the upgrade (default: hack/e2e's, v1.36.3 ->
#                     v1.37.2); with no node images given, the script builds
#                     both node images, the suite and the test images
#                     offline (hack/e2e/build-artifacts.sh, cached)
#   NODE_IMAGE        the cluster's node image, at FROM_VERSION; give it,
#                     the target (TARGET_NODE_IMAGE or TARGET_IMAGE_DIR) and
#                     UPGRADES_TEST all, or none of them (then every
#                     artifact is built here: about an hour on a cold
#                     machine); a partial set is refused
#   TARGET_NODE_IMAGE the target as a node image (--image)
#   TARGET_IMAGE_DIR  the target as a folder (--image-dir); with
#                     TARGET_NODE_IMAGE too, the folder adds archives
#   TOPOLOGY          1cp-2w (default: one control plane, two workers, the
#                     x-on-y shape: a master upgrade, then a node upgrade)
#                     or ha (three control planes behind kind's load
#                     balancer and two workers, one cluster upgrade)
#   UPGRADE_TYPES     override the upgrades run, in order (master,node |
#                     cluster)
#   UPGRADES_TEST     the suite binary (default: built for TO_VERSION)
#   TEST_IMAGES_ARCHIVE, CANARY_ARCHIVE
#                     images loaded on the nodes before the tests (default:
#                     built; set them empty when the nodes can pull)
#   KIND              the kind binary (default: bin/kind of this checkout)
#   CLUSTER_NAME      default kind-upgrade-k8s
#   ARTIFACTS         reports, junit_*.xml and logs (default
#                     _artifacts/k8s-upgrade)
#   GINKGO_ARGS       more flags for the suite (e.g. --ginkgo.v)
#   KIND_UPGRADE_ARGS more flags for kind alpha upgrade (e.g. "-v 1")
#
# Needs a running Docker engine (make host-setup starts one here).

set -o errexit -o nounset -o pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "${REPO_ROOT}"
# shellcheck source=hack/e2e/artifacts-env.sh
source hack/e2e/artifacts-env.sh

E2E_FROM="${FROM_VERSION:-${E2E_FROM}}"
E2E_TO="${TO_VERSION:-${E2E_TO}}"
TOPOLOGY="${TOPOLOGY:-1cp-2w}"
KIND="${KIND:-${REPO_ROOT}/bin/kind}"
CLUSTER_NAME="${CLUSTER_NAME:-kind-upgrade-k8s}"
ARTIFACTS="${ARTIFACTS:-${REPO_ROOT}/_artifacts/k8s-upgrade}"
START="${SECONDS}"
CI_JOB=e2e-k8s-upgrade
# shellcheck source=hack/ci/lib.sh
source hack/ci/lib.sh

# cluster_config: the kind configuration of TOPOLOGY, for this host
cluster_config() {
  printf 'kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\n'
  local patch
  patch="$(cgroup_v1_patch)"
  [[ -z "${patch}" ]] || printf 'kubeadmConfigPatches:\n%s\n' "${patch}"
  printf 'nodes:\n'
  case "${TOPOLOGY}" in
  1cp-2w) printf -- '- role: control-plane\n- role: worker\n- role: worker\n' ;;
  ha) printf -- '- role: control-plane\n- role: control-plane\n- role: control-plane\n- role: worker\n- role: worker\n' ;;
  *) die "TOPOLOGY must be 1cp-2w or ha, not ${TOPOLOGY}" ;;
  esac
}

# check_inputs: the inputs come all from the caller or none of them (then
# every artifact is built here); a partial set is refused before anything
# is built or created, as it would rebuild every artifact (about an hour on
# a cold machine) for the ones left out
check_inputs() {
  local given=() missing=()
  if [[ -n "${NODE_IMAGE:-}" ]]; then given+=(NODE_IMAGE); else missing+=(NODE_IMAGE); fi
  if [[ -n "${TARGET_NODE_IMAGE:-}" || -n "${TARGET_IMAGE_DIR:-}" ]]; then
    given+=("${TARGET_NODE_IMAGE:+TARGET_NODE_IMAGE}${TARGET_IMAGE_DIR:+${TARGET_NODE_IMAGE:+ and }TARGET_IMAGE_DIR}")
  else
    missing+=("TARGET_NODE_IMAGE (or TARGET_IMAGE_DIR)")
  fi
  if [[ -n "${UPGRADES_TEST:-}" ]]; then given+=(UPGRADES_TEST); else missing+=(UPGRADES_TEST); fi
  if ((${#given[@]} > 0 && ${#missing[@]} > 0)); then
    die "a partial set of inputs (set: $(join "${given[@]}"); missing: $(join "${missing[@]}")). Set all of them, or none of them to build every artifact here (about an hour on a cold machine)"
  fi
}

# join: its arguments, separated by ", "
join() {
  local out="$1" arg
  shift
  for arg in "$@"; do out+=", ${arg}"; done
  printf '%s\n' "${out}"
}

main() {
  check_inputs
  [[ -x "${KIND}" ]] || die "no kind binary at ${KIND}: run make build, or set KIND"
  mkdir -p "${ARTIFACTS}"
  local types
  case "${TOPOLOGY}" in
  1cp-2w) types="${UPGRADE_TYPES:-master,node}" ;;
  ha) types="${UPGRADE_TYPES:-cluster}" ;;
  *) cluster_config >/dev/null ;;
  esac

  # check_inputs let through all of them or none
  if [[ -z "${NODE_IMAGE:-}" ]]; then
    log "no inputs given: building (or reusing) every artifact of ${E2E_FROM} -> ${E2E_TO} (hack/e2e/build-artifacts.sh; about an hour on a cold machine, seconds when cached)"
    load_artifacts_env
    NODE_IMAGE="$(manifest_field "${MANIFEST}" nodeImage)"
    # the target as kind's builder makes it, plus what it lacks offline
    TARGET_NODE_IMAGE="$(manifest_field "${MANIFEST}" targetNodeImage)"
    TARGET_IMAGE_DIR="$(manifest_field "${MANIFEST}" imageExtrasDir)"
    UPGRADES_TEST="$(manifest_field "${MANIFEST}" upgradesSuite)"
    TEST_IMAGES_ARCHIVE="${TEST_IMAGES_ARCHIVE-$(manifest_field "${MANIFEST}" testImagesArchive)}"
    CANARY_ARCHIVE="${CANARY_ARCHIVE-$(manifest_field "${MANIFEST}" canaryArchive)}"
  fi
  local source=()
  [[ -z "${TARGET_NODE_IMAGE:-}" ]] || source+=(--image "${TARGET_NODE_IMAGE}")
  [[ -z "${TARGET_IMAGE_DIR:-}" ]] || source+=(--image-dir "${TARGET_IMAGE_DIR}")
  local extra=()
  # word splitting on purpose: a list of flags
  # shellcheck disable=SC2206
  extra=(${KIND_UPGRADE_ARGS:-})

  trap cleanup EXIT
  log "creating cluster ${CLUSTER_NAME} (${TOPOLOGY}) from ${NODE_IMAGE}"
  "${KIND}" delete cluster --name "${CLUSTER_NAME}" >/dev/null 2>&1 || true
  cluster_config >"${ARTIFACTS}/kind-config.yaml"
  create_cluster --name "${CLUSTER_NAME}" --image "${NODE_IMAGE}" --config "${ARTIFACTS}/kind-config.yaml" \
    --kubeconfig "${ARTIFACTS}/kubeconfig" --wait 5m
  local archive
  for archive in "${TEST_IMAGES_ARCHIVE:-}" "${CANARY_ARCHIVE:-}"; do
    [[ -z "${archive}" ]] || "${KIND}" load image-archive "${archive}" --name "${CLUSTER_NAME}"
  done

  local type rc=0 ginkgo=()
  # shellcheck disable=SC2206
  ginkgo=(${GINKGO_ARGS:-})
  for type in ${types//,/ }; do
    log "Kubernetes' upgrade tests across a ${type} upgrade: ${UPGRADES_TEST} -- ${source[*]} ${extra[*]}"
    "${UPGRADES_TEST}" --kubeconfig "${ARTIFACTS}/kubeconfig" --report-dir "${ARTIFACTS}" --report-prefix "${type}-" \
      --kind-cluster "${CLUSTER_NAME}" --kind-binary "${KIND}" --upgrade-type "${type}" "${ginkgo[@]}" \
      -- "${source[@]}" "${extra[@]}" || rc=$?
    if ((rc != 0)); then
      log "the ${type} upgrade's tests failed (exit code ${rc}): see ${ARTIFACTS}/junit_${type}-upgrades.xml"
      return "${rc}"
    fi
  done
}

main "$@"
