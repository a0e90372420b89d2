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

# lib.sh: what the CI entry scripts of this folder share. Sourced after
# they set CI_JOB (their name in log lines), KIND, CLUSTER_NAME, ARTIFACTS
# and START (${SECONDS} at their start).

log() {
  printf '[%s] %s: %s\n' "$(date -u +%H:%M:%S)" "${CI_JOB}" "$*" >&2
}

die() {
  log "ERROR: $*"
  exit 1
}

# cleanup (the EXIT trap): the cluster's logs to ${ARTIFACTS}/logs when
# the script failed, the cluster deleted, the result and time said, the
# script's exit code kept
cleanup() {
  local rc=$?
  if ((rc != 0)) && "${KIND}" get clusters 2>/dev/null | grep -qx "${CLUSTER_NAME}"; then
    log "exporting the cluster's logs to ${ARTIFACTS}/logs"
    "${KIND}" export logs "${ARTIFACTS}/logs" --name "${CLUSTER_NAME}" >/dev/null 2>&1 || true
  fi
  "${KIND}" delete cluster --name "${CLUSTER_NAME}" >/dev/null 2>&1 || true
  log "$( ((rc == 0)) && echo ok || echo "FAILED (exit code ${rc})") in $((SECONDS - START))s; reports in ${ARTIFACTS}"
  exit "${rc}"
}

# cgroup_v1_patch: on a cgroup v1 host, the kubeadmConfigPatches entry
# that lets kubelets from v1.35 on start (they refuse cgroup v1 unless
# told otherwise); nothing elsewhere
cgroup_v1_patch() {
  if [[ "$(docker info --format '{{.CgroupVersion}}')" == 1 ]]; then
    printf -- '- |\n  kind: KubeletConfiguration\n  failCgroupV1: false\n'
  fi
}

# create_cluster ARGS...: kind create cluster ARGS, its output shown as it
# comes; run again, three times in all, while Docker refuses a node's
# host port as "already allocated": kind picks the API server's port of
# each control-plane node concurrently, so two nodes of a cluster with
# several control planes can get the same one (kind then removes the
# nodes it made)
create_cluster() {
  local attempt rc out="${ARTIFACTS}/kind-create-cluster.log"
  for attempt in 1 2 3; do
    rc=0
    "${KIND}" create cluster "$@" 2>&1 | tee "${out}" >&2 || rc=$?
    if ((rc == 0)) || ! grep -q "port is already allocated" "${out}"; then
      return "${rc}"
    fi
    ((attempt == 3)) || log "kind create cluster, attempt ${attempt} of 3: two nodes were given the same host port (kind picks them concurrently); creating the cluster again"
  done
  return "${rc}"
}
