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

# The demo (`make demo`): on a fresh machine it builds (or reuses) the
# offline artifacts, creates a cluster "kind-upgrade-demo" at E2E_FROM
# (default v1.36.3) with bin/kind (1 control plane, 1 worker), deploys a
# canary, upgrades the cluster in place to E2E_TO (default v1.37.2) with
# `kind alpha upgrade --image` of E2E_TO's node image (made by kind's
# builder) plus, offline, the archive that image lacks (kubeadm's pause),
# and shows the nodes and the canary afterwards. The
# cluster is left running; delete it with
#   bin/kind delete cluster --name kind-upgrade-demo
# Needs a running Docker engine (hack/e2e/docker-setup.sh) and bin/kind.

set -o errexit -o nounset -o pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "${REPO_ROOT}"
# shellcheck source=hack/e2e/artifacts-env.sh
source hack/e2e/artifacts-env.sh

NAME="${DEMO_CLUSTER_NAME:-kind-upgrade-demo}"
KIND="${REPO_ROOT}/bin/kind"
CP="${NAME}-control-plane"

say() {
  printf '\n\033[1m==> %s\033[0m\n' "$*"
}

kubectl_cp() {
  docker exec "${CP}" kubectl --kubeconfig=/etc/kubernetes/admin.conf "$@"
}

say "Building (or reusing) the offline artifacts: node images ${E2E_FROM} and ${E2E_TO}"
load_artifacts_env
NODE_IMAGE="$(manifest_field "${MANIFEST}" nodeImage)"
TARGET_IMAGE="$(manifest_field "${MANIFEST}" targetNodeImage)"
EXTRAS_DIR="$(manifest_field "${MANIFEST}" imageExtrasDir)"
CANARY_TAR="$(manifest_field "${MANIFEST}" canaryArchive)"
CANARY_IMAGE="$(manifest_field "${MANIFEST}" canaryImage)"
echo "node image:   ${NODE_IMAGE}"
echo "--image:      ${TARGET_IMAGE}"
echo "--image-dir:  ${EXTRAS_DIR} ($(cd "${EXTRAS_DIR}" && echo *.tar): kubeadm's pause, which kind's node images lack; these nodes cannot pull it)"

say "Creating cluster ${NAME} at ${E2E_FROM} (1 control plane, 1 worker)"
"${KIND}" delete cluster --name "${NAME}"
CONFIG=hack/e2e/kind-config.yaml
if [[ "$(docker info --format '{{.CgroupVersion}}')" == 1 ]]; then
  # kubelets from v1.35 on refuse cgroup v1 unless told otherwise
  CONFIG=hack/e2e/kind-config-cgroupv1.yaml
  echo "cgroup v1 host: creating the cluster with ${CONFIG} (failCgroupV1: false)"
fi
"${KIND}" create cluster --name "${NAME}" --image "${NODE_IMAGE}" --config "${CONFIG}"
kubectl_cp wait --for=condition=Ready --timeout=180s nodes --all

say "Deploying a canary (2 replicas behind a Service)"
"${KIND}" load image-archive "${CANARY_TAR}" --name "${NAME}"
kubectl_cp create deployment canary --image="docker.io/${CANARY_IMAGE}" --replicas=2 -- /canary serve
kubectl_cp patch deployment canary --type=json \
  -p='[{"op":"add","path":"/spec/template/spec/containers/0/imagePullPolicy","value":"Never"}]'
kubectl_cp expose deployment canary --port=80 --target-port=8080
kubectl_cp wait --for=condition=Available --timeout=180s deployment/canary

say "Before the upgrade"
kubectl_cp get nodes -o wide
kubectl_cp get pods -A -o wide

say "kind alpha upgrade --name ${NAME} --image ${TARGET_IMAGE} --image-dir ${EXTRAS_DIR}"
start="${SECONDS}"
"${KIND}" alpha upgrade --name "${NAME}" --image "${TARGET_IMAGE}" --image-dir "${EXTRAS_DIR}"
echo "upgraded in $((SECONDS - start))s"

say "After the upgrade"
kubectl_cp get nodes -o wide
kubectl_cp version
kubectl_cp get pods -A -o wide
for node in $(docker ps --filter "label=io.x-k8s.kind.cluster=${NAME}" --format '{{.Names}}' | sort); do
  printf '%s /kind/version: %s\n' "${node}" "$(docker exec "${node}" cat /kind/version)"
done
kubectl_cp wait --for=condition=Available --timeout=120s deployment/canary
echo "canary: $(kubectl_cp get deployment canary -o jsonpath='{.status.availableReplicas}')/2 replicas available"

say "Done. The cluster ${NAME} is still running: ${KIND} delete cluster --name ${NAME}"
