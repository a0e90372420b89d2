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

# capture-testdata.sh CLUSTER OUT_DIR
#
# Captures, from the nodes of a running kind cluster, the output of every
# command whose output `kind alpha upgrade` parses, so that the parsers' unit
# tests run on what real nodes print (pkg/cluster/internal/upgrade/testdata).
# One file per command and node role; see the table in the README there.

set -o errexit -o nounset -o pipefail

CLUSTER="${1:?usage: capture-testdata.sh CLUSTER OUT_DIR}"
OUT="${2:?usage: capture-testdata.sh CLUSTER OUT_DIR}"
KIND="${KIND:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/bin/kind}"

CP="${CLUSTER}-control-plane"
WORKER="$("${KIND}" get nodes --name "${CLUSTER}" | grep -v control-plane | sort | head -n 1)"
[[ -n "${WORKER}" ]] || {
  echo "ERROR: cluster ${CLUSTER} has no worker" >&2
  exit 1
}
mkdir -p "${OUT}"

on() {
  local node="$1"
  shift
  docker exec "${node}" "$@"
}

kubectl_cp() {
  on "${CP}" kubectl --kubeconfig=/etc/kubernetes/admin.conf "$@"
}

version="$(on "${CP}" cat /kind/version)"
on "${CP}" containerd config dump >"${OUT}/containerd-config-dump.toml"
on "${CP}" containerd --version >"${OUT}/containerd-version.txt"
on "${CP}" ctr --namespace=k8s.io images import --help >"${OUT}/ctr-images-import-help.txt"
on "${CP}" ctr --namespace=k8s.io images ls --quiet >"${OUT}/ctr-images-ls-quiet-control-plane.txt"
on "${WORKER}" ctr --namespace=k8s.io images ls --quiet >"${OUT}/ctr-images-ls-quiet-worker.txt"
on "${CP}" df -Pk /var/lib/containerd >"${OUT}/df-var-lib-containerd.txt"
on "${CP}" kubelet --version >"${OUT}/kubelet-version.txt"
on "${CP}" kubectl version --client >"${OUT}/kubectl-version-client.txt"
# shellcheck disable=SC2016 # expanded by the node's shell
on "${CP}" sh -c 'kubeadm version -o short && kubeadm config images list --kubernetes-version "$(kubeadm version -o short)"' \
  >"${OUT}/kubeadm-probe.txt"
on "${CP}" cat /etc/kubernetes/manifests/kube-apiserver.yaml >"${OUT}/kube-apiserver.yaml"
on "${CP}" cat /etc/kubernetes/manifests/etcd.yaml >"${OUT}/etcd.yaml"
kubectl_cp get nodes -o json >"${OUT}/nodes.json"
kubectl_cp get pods --namespace=kube-system --selector=tier=control-plane -o json >"${OUT}/control-plane-pods.json"
kubectl_cp get daemonsets,deployments --namespace=kube-system -o json >"${OUT}/kube-system-workloads.json"
kubectl_cp get configmap kubeadm-config --namespace=kube-system -o 'jsonpath={.data.ClusterConfiguration}' \
  >"${OUT}/cluster-configuration.yaml"
kubectl_cp get --raw=/version >"${OUT}/version.json"
printf 'captured from kind cluster %s (nodes %s, %s) at %s, /kind/version %s\n' \
  "${CLUSTER}" "${CP}" "${WORKER}" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${version}" >"${OUT}/SOURCE.txt"
ls -l "${OUT}"
