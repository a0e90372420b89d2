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
# It drains the worker twice (a pod no controller recreates, then one a
# PodDisruptionBudget protects) and cleans up after: run it on a cluster
# made for the capture.

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

# What the fake nodes (pkg/cluster/internal/upgrade/fakenode) answer and
# its contract tests hold against the real answers.
# The file systems of preflight's disk check: the staging folder's nearest
# existing ancestor (/kind, before any upgrade staged there) and
# containerd's; then the node's whole layout (/var a volume of its own,
# /tmp a tmpfs, the rest the root overlay).
on "${CP}" df -Pk /kind /var/lib/containerd >"${OUT}/df-preflight.txt"
on "${CP}" df -Pk / /kind /usr/bin /var /var/lib/containerd /var/tmp /tmp >"${OUT}/df-layout.txt"
on "${CP}" cat /kind/version >"${OUT}/kind-version.txt"
on "${CP}" uname -m >"${OUT}/uname-m.txt"
on "${CP}" stat -f -c %T /sys/fs/cgroup >"${OUT}/stat-cgroup.txt"
on "${CP}" cat /proc/swaps >"${OUT}/proc-swaps.txt"
kubectl_cp get daemonsets,deployments --namespace=local-path-storage -o json >"${OUT}/local-path-storage-workloads.json"
kubectl_cp get configmap kubelet-config --namespace=kube-system -o 'jsonpath={.data.kubelet}' >"${OUT}/kubelet-config.yaml"
kubectl_cp get --raw=/readyz >"${OUT}/readyz.txt"
# what the node-image source reads of the node image: its platform (on the
# host) and its containerd's images (the node's, as kind's builder left them)
docker image inspect --format '{{.Os}}/{{.Architecture}}' "$(docker inspect --format '{{.Config.Image}}' "${CP}")" \
  >"${OUT}/docker-image-inspect-platform.txt"
on "${CP}" ctr --namespace=k8s.io images list >"${OUT}/ctr-images-list.txt"
# a pull on a node that reaches no registry (the lab's nodes reach none)
on "${WORKER}" crictl pull registry.k8s.io/kind-upgrade-capture-missing:v0 >"${OUT}/crictl-pull-offline.txt" 2>&1 || true

# Drains, as the kubelets phase runs them (kubectl drain NODE
# --ignore-daemonsets --delete-emptydir-data --timeout=...): first with a
# pod no controller recreates on the worker, then with a pod a
# PodDisruptionBudget protects. The worker is uncordoned and the pods
# removed afterwards.
PAUSE="registry.k8s.io/pause:3.10"
BARE="kind-upgrade-capture-bare"
PDB="kind-upgrade-capture-pdb"
drain_worker() {
  kubectl_cp drain "${WORKER}" --ignore-daemonsets --delete-emptydir-data --timeout=10s 2>&1 || true
  kubectl_cp uncordon "${WORKER}" >/dev/null
}
kubectl_cp run "${BARE}" --image="${PAUSE}" --restart=Never \
  --overrides="{\"apiVersion\":\"v1\",\"spec\":{\"nodeName\":\"${WORKER}\"}}" >/dev/null
kubectl_cp wait --for=condition=Ready "pod/${BARE}" --timeout=120s >/dev/null
kubectl_cp get namespaces,pods --all-namespaces -o json >"${OUT}/all-pods-bare-on-worker.json"
drain_worker >"${OUT}/drain-bare.txt"
kubectl_cp delete pod "${BARE}" --wait=true >/dev/null
kubectl_cp create deployment "${PDB}" --image="${PAUSE}" >/dev/null
kubectl_cp patch deployment "${PDB}" --type=merge \
  --patch="{\"spec\":{\"template\":{\"spec\":{\"nodeSelector\":{\"kubernetes.io/hostname\":\"${WORKER}\"}}}}}" >/dev/null
kubectl_cp rollout status "deployment/${PDB}" --timeout=120s >/dev/null
kubectl_cp create poddisruptionbudget "${PDB}" --selector="app=${PDB}" --min-available=1 >/dev/null
drain_worker >"${OUT}/drain-pdb.txt"
kubectl_cp delete poddisruptionbudget "${PDB}" >/dev/null
kubectl_cp delete deployment "${PDB}" --wait=true >/dev/null
printf 'captured from kind cluster %s (nodes %s, %s) at %s, /kind/version %s\n' \
  "${CLUSTER}" "${CP}" "${WORKER}" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${version}" >"${OUT}/SOURCE.txt"
ls -l "${OUT}"
