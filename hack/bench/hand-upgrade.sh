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

# hand-upgrade.sh CLUSTER IMAGE_DIR: upgrades the kind cluster CLUSTER to the
# Kubernetes release in IMAGE_DIR (its kubernetes/server/bin, plus etcd,
# CoreDNS and pause archives beside it) the way a person types it from
# kubeadm's upgrade guide and kind's own commands, one node after another:
#
#   1. load the images: `kind load image-archive` once per archive, then tag
#      the release's <name>-<arch> images as the <name> kubeadm expects;
#   2. the control plane: copy the new kubeadm into the first control-plane
#      node and run `kubeadm upgrade apply`, then `kubeadm upgrade node` on
#      the other control-plane nodes;
#   3. every node, control plane first: (workers: copy kubeadm, `kubeadm
#      upgrade node`), drain, copy the new kubelet and kubectl, restart the
#      kubelet, wait until the node reports the new version and is Ready,
#      uncordon.
#
# KIND is the kind binary (default: kind on PATH); ARCH the release's
# architecture (default amd64). It is the benchmark's reference (make bench) and a readable account of
# what `kind alpha upgrade` automates; it checks nothing and does not resume,
# but types a kubeadm or kubectl command again when it fails right after an
# API server restarted (see retry).
# After each part it prints `BENCH phase=<name> seconds=<wall time>`.

set -o errexit -o nounset -o pipefail

CLUSTER="$1"
DIR="$2"
BIN="${DIR}/kubernetes/server/bin"
ARCH="${ARCH:-amd64}"
KIND="${KIND:-kind}"
VERSION="$("${BIN}/kubeadm" version -o short)"
# the kubeadm preflight errors kind itself ignores when it creates a cluster
IGNORE="SystemVerification,Swap,FileContent--proc-sys-net-bridge-bridge-nf-call-iptables"

KUBECONFIG_FILE="$(mktemp)"
trap 'rm -f "${KUBECONFIG_FILE}"' EXIT
"${KIND}" get kubeconfig --name "${CLUSTER}" >"${KUBECONFIG_FILE}"
kubectl() { "${BIN}/kubectl" --kubeconfig "${KUBECONFIG_FILE}" "$@"; }

mapfile -t NODES < <("${KIND}" get nodes --name "${CLUSTER}" | sort)
CONTROL_PLANES=() WORKERS=()
for node in "${NODES[@]}"; do
  if [[ "${node}" == *-control-plane* ]]; then CONTROL_PLANES+=("${node}"); else WORKERS+=("${node}"); fi
done

phase_start="$(date +%s%3N)"
phase_done() {
  local now ms
  now="$(date +%s%3N)"
  ms=$((now - phase_start))
  printf 'BENCH phase=%s seconds=%d.%03d\n' "$1" $((ms / 1000)) $((ms % 1000))
  phase_start="${now}"
}

# copy_binary NODE NAME: the new binary beside the old one, then renamed over
# it (a running kubelet's file cannot be overwritten in place)
copy_binary() {
  docker cp "${BIN}/$2" "$1:/usr/bin/$2.new"
  docker exec "$1" mv -f "/usr/bin/$2.new" "/usr/bin/$2"
}

# retry COMMAND...: what a person does when a command fails right after an
# API server restarted (`kubeadm upgrade node` refused by the node authorizer
# until it has caught up, `kubectl drain` refused until RBAC is loaded):
# types it again, a few seconds later
retry() {
  local attempt
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    if "$@"; then return 0; fi
    echo "hand-upgrade.sh: attempt ${attempt} of: $*: failed; trying again in 3 s" >&2
    sleep 3
  done
  return 1
}

# upgrade_kubelet NODE: kubeadm's "upgrade the kubelet" steps for one node
upgrade_kubelet() {
  local node="$1"
  retry kubectl drain "${node}" --ignore-daemonsets --delete-emptydir-data
  copy_binary "${node}" kubelet
  copy_binary "${node}" kubectl
  docker exec "${node}" systemctl restart kubelet
  until [[ "$(kubectl get node "${node}" -o jsonpath='{.status.nodeInfo.kubeletVersion}')" == "${VERSION}" ]]; do
    sleep 1
  done
  retry kubectl wait --for=condition=Ready "node/${node}" --timeout=5m
  retry kubectl uncordon "${node}"
}

# 1. images
for archive in "${BIN}"/kube-*.tar "${DIR}"/*.tar; do
  "${KIND}" load image-archive "${archive}" --name "${CLUSTER}"
done
for node in "${NODES[@]}"; do
  for image in kube-apiserver kube-controller-manager kube-scheduler kube-proxy; do
    docker exec "${node}" ctr --namespace=k8s.io images tag --force \
      "registry.k8s.io/${image}-${ARCH}:${VERSION}" "registry.k8s.io/${image}:${VERSION}"
  done
done
phase_done load-artifacts

# 2. the control plane
copy_binary "${CONTROL_PLANES[0]}" kubeadm
docker exec "${CONTROL_PLANES[0]}" kubeadm upgrade apply "${VERSION}" --yes --ignore-preflight-errors="${IGNORE}"
for node in "${CONTROL_PLANES[@]:1}"; do
  copy_binary "${node}" kubeadm
  retry docker exec "${node}" kubeadm upgrade node --ignore-preflight-errors="${IGNORE}"
done
phase_done control-plane

# 3. the kubelets, one node at a time
for node in "${CONTROL_PLANES[@]}"; do
  upgrade_kubelet "${node}"
done
for node in "${WORKERS[@]}"; do
  copy_binary "${node}" kubeadm
  retry docker exec "${node}" kubeadm upgrade node --ignore-preflight-errors="${IGNORE}"
  upgrade_kubelet "${node}"
done
phase_done kubelets
