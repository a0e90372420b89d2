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

# The version matrix (`make e2e-matrix`): runs the offline e2e
# (hack/e2e/run.sh) for each pair below, one after another, and writes one
# junit (junit_matrix.xml) and one report (matrix-report.md) to
# ${ARTIFACTS}/matrix, with each pair's own artifacts in a folder beside.
#
#   v1.33.13 -> v1.34.4   the previous line; first refuses an --image-dir
#                         that skips a minor version (v1.36.3); created
#                         without failCgroupV1: false (not needed before
#                         v1.35), so on a cgroup v1 host it ends by refusing
#                         an upgrade to v1.35.4's kubelet
#   v1.35.4  -> v1.36.3   across kind's kubeadm config API change (v1beta3
#                         to v1beta4)
#   v1.36.1  -> v1.36.3   a patch upgrade from a Kubernetes build tree's
#                         _output/: no etcd, CoreDNS or pause change, and
#                         no archive of them in --image-dir
#   v1.36.3  -> v1.37.2   kind's current line (the pair `make e2e` runs)
#
# Every run also stops at kubeadm's skew point (control plane at the
# target, kubelets at the source), refuses a downgrade after the upgrade and
# checks that a second run with the same version is a no-op.
# E2E_MATRIX="FROM:TO:LAYOUT ..." runs other pairs. The JUnit of all pairs,
# junit_matrix.xml, is gotestsum's, from the pairs' go test -json streams
# (each pair's checks are subtests named after it). Needs root and a running
# Docker engine (make host-setup).

set -o errexit -o nounset -o pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "${REPO_ROOT}"
# shellcheck source=hack/e2e/artifacts-env.sh
source hack/e2e/artifacts-env.sh

ARTIFACTS="${ARTIFACTS:-${REPO_ROOT}/_artifacts}"
OUT="${ARTIFACTS}/matrix"
read -r -a PAIRS <<<"${E2E_MATRIX:-v1.33.13:v1.34.4:release v1.35.4:v1.36.3:release v1.36.1:v1.36.3:build-tree v1.36.3:v1.37.2:release}"

log() {
  printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2
}

rm -rf "${OUT}"
mkdir -p "${OUT}"
START="${SECONDS}"

# Artifacts first, all of them: a pair's refusal checks use another pair's
# --image-dir.
declare -A IMAGE_DIRS BINARIES BUILD_SECONDS
for pair in "${PAIRS[@]}"; do
  IFS=: read -r from to _ <<<"${pair}"
  log "artifacts for ${from} -> ${to}"
  start="${SECONDS}"
  E2E_FROM="${from}" E2E_TO="${to}" load_artifacts_env
  IMAGE_DIRS["${to}"]="$(manifest_field "${MANIFEST}" imageDir)"
  BINARIES["${from}"]="$(manifest_field "${MANIFEST}" downgradeImageDir)"
  BUILD_SECONDS["${pair}"]=$((SECONDS - start))
done

# skipped_minor_dir FROM: an --image-dir two or more minors above FROM,
# from the matrix's own artifacts, or nothing.
skipped_minor_dir() {
  local minor="${1#v1.}" to
  minor="${minor%%.*}"
  for to in "${!IMAGE_DIRS[@]}"; do
    local m="${to#v1.}"
    m="${m%%.*}"
    if ((m >= minor + 2)); then
      printf '%s' "${IMAGE_DIRS[${to}]}"
      return
    fi
  done
}

# next_minor_binaries TO: kubeadm, kubelet and kubectl one minor above TO,
# at v1.35 or later (a kubelet that refuses cgroup v1 unless told), from the
# matrix's own artifacts, or nothing.
next_minor_binaries() {
  local minor="${1#v1.}" v
  minor="${minor%%.*}"
  for v in "${!BINARIES[@]}"; do
    local m="${v#v1.}"
    m="${m%%.*}"
    if ((m == minor + 1 && m >= 35)); then
      printf '%s' "${BINARIES[${v}]}"
      return
    fi
  done
}

{
  echo "# Version matrix"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 1024)) GiB," \
    "Docker $(docker version --format '{{.Server.Version}}'), cgroup v$(docker info --format '{{.CgroupVersion}}')."
  echo
  echo "| from | to | --image-dir | result | upgrade wall time (s) | e2e wall time (s) | artifacts build (s) |"
  echo "|---|---|---|---|---|---|---|"
} >"${OUT}/matrix-report.md"

failed=0
streams=()
for pair in "${PAIRS[@]}"; do
  IFS=: read -r from to layout <<<"${pair}"
  dir="${OUT}/${from}-${to}"
  mkdir -p "${dir}"
  log "e2e ${from} -> ${to} (--image-dir: ${layout})"
  start="${SECONDS}"
  rc=0
  E2E_FROM="${from}" E2E_TO="${to}" ARTIFACTS="${dir}" bash hack/e2e/run.sh upgrade \
    -image-dir-layout="${layout}" \
    -skipped-minor-image-dir="$(skipped_minor_dir "${from}")" \
    -cgroup-refusal-image-dir="$(next_minor_binaries "${to}")" \
    >"${dir}/run.log" 2>&1 || rc=$?
  took=$((SECONDS - start))
  result=pass
  if ((rc != 0)); then
    result="**FAIL** (exit ${rc})"
    failed=$((failed + 1))
    tail -n 30 "${dir}/run.log" >&2
  fi
  total="$(go -C hack/e2e/artifacts run -trimpath . json-field "$(cd "${dir}" && pwd)/phase-times.json" totalSeconds 2>/dev/null || true)"
  [[ -z "${total}" ]] || total="$(printf '%.0f' "${total}")"
  echo "| ${from} | ${to} | ${layout} | ${result} | ${total:-n/a} | ${took} | ${BUILD_SECONDS[${pair}]} |" >>"${OUT}/matrix-report.md"
  log "${from} -> ${to}: ${result} in ${took}s"
  if [[ -f "${dir}/test2json.json" ]]; then
    streams+=("${dir}/test2json.json")
  fi
done

{
  echo
  echo "Upgrade wall time: the three runs of kind alpha upgrade (interrupted 20 s into kubeadm upgrade apply, control plane only, kubelets) summed, from their JSON events; the second run's preflight waits for the kubeadm the first left running."
  echo "Each pair's per-phase times, node versions and logs: ${OUT}/<from>-<to>/upgrade-report.txt."
  echo "Matrix wall time: $((SECONDS - START)) s."
} >>"${OUT}/matrix-report.md"
# one JUnit for every pair (a pair whose test never ran is a failure in
# the report and in the exit code)
if ((${#streams[@]} > 0)); then
  bin/gotestsum --junitfile "${OUT}/junit_matrix.xml" --raw-command -- cat "${streams[@]}" >/dev/null || true
fi

cat "${OUT}/matrix-report.md"
echo "matrix artifacts in ${OUT}"
exit $((failed > 0))
