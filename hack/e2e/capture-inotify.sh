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

# capture-inotify.sh CLUSTER OUT_DIR: captures, from a running kind cluster
# with a worker, what the upgrade's inotify check and its kubelet watch
# read on real nodes (the testdata of pkg/cluster/internal/upgrade/testdata/
# nodes/kubelet-inotify): each node's inotify listing and the kubelet's
# unit state; then, with the host's fs.inotify.max_user_instances lowered
# for a few seconds below what root holds (by 10: a kubelet holds 7, which
# it gets back when the limit is exactly what is held), the worker's
# kubelet restarted into a host past its limit: its unit state and journal,
# as the upgrade reads them. The limit is restored at the end (and on any exit) and the kubelet
# comes back by itself. Needs root on the Docker host; changes the host's
# limit briefly, so run it on a test machine.

set -o errexit -o nounset -o pipefail

CLUSTER="${1:?usage: capture-inotify.sh CLUSTER OUT_DIR}"
OUT="${2:?usage: capture-inotify.sh CLUSTER OUT_DIR}"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CP="${CLUSTER}-control-plane"
WORKER="${CLUSTER}-worker"
LIMIT=/proc/sys/fs/inotify/max_user_instances
mkdir -p "${OUT}"

# the scripts, exactly as the tool sends them (nodeutils.Script)
script() {
  (cd "${REPO}" && go run ./pkg/cluster/internal/nodeutils/scriptbody "$1")
}
INOTIFY="$(script kind-upgrade-inotify)"
UNITLOG="$(script kind-upgrade-unit-log)"
SHOW=(systemctl show kubelet "--property=ActiveState,SubState,NRestarts")

docker exec "${CP}" sh -c "${INOTIFY}" kind-upgrade-inotify >"${OUT}/inotify-control-plane.txt"
docker exec "${WORKER}" sh -c "${INOTIFY}" kind-upgrade-inotify >"${OUT}/inotify-worker.txt"
docker exec "${WORKER}" "${SHOW[@]}" >"${OUT}/systemctl-show-kubelet-running.txt"

root_instances() {
  local f n=0
  for f in /proc/[0-9]*/fd/*; do
    if [[ "$(readlink "${f}" 2>/dev/null)" == anon_inode:inotify ]] && [[ "$(stat -c %u "${f%/fd/*}" 2>/dev/null)" == 0 ]]; then
      n=$((n + 1))
    fi
  done
  echo "${n}"
}

old="$(cat "${LIMIT}")"
trap 'echo "${old}" >"${LIMIT}"' EXIT
held="$(root_instances)"
low=$((held - 10))
echo "host: ${LIMIT} ${old}, root holds ${held}: lowering to ${low} and restarting ${WORKER}'s kubelet" >&2
echo "${low}" >"${LIMIT}"
docker exec "${WORKER}" systemctl restart kubelet
sleep 6
docker exec "${WORKER}" "${SHOW[@]}" >"${OUT}/systemctl-show-kubelet-exhausted.txt"
docker exec "${WORKER}" sh -c "${UNITLOG}" kind-upgrade-unit-log kubelet 600 >"${OUT}/kubelet-journal-exhausted.txt"
echo "${old}" >"${LIMIT}"
trap - EXIT
for _ in $(seq 60); do
  if docker exec "${WORKER}" systemctl is-active --quiet kubelet; then
    break
  fi
  sleep 1
done
printf 'captured by hack/e2e/capture-inotify.sh from kind cluster %s (nodes %s, %s) at %s, /kind/version %s; the host limit lowered from %s to %s for the exhausted capture\n' \
  "${CLUSTER}" "${CP}" "${WORKER}" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(docker exec "${CP}" cat /kind/version)" "${old}" "${low} (root held ${held})" >"${OUT}/SOURCE.txt"
ls -l "${OUT}"
