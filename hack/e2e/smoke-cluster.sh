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

# smoke-cluster.sh: checks the offline toolchain end to end, without
# upgrading anything:
#   1. build-artifacts.sh (warm: only checks the cache);
#   2. `kind create cluster` from NODE_IMAGE with kind-config.yaml
#      (1 control plane + 1 worker, default CNI disabled);
#   3. install-cni.sh; every node Ready, CoreDNS available;
#   4. the canary as a Deployment + Service: served through the API server
#      proxy, resolved by cluster DNS from a pod on each node;
#   5. every archive of IMAGE_DIR imports into every node's containerd.
#
# Environment: KIND (default <repo>/bin/kind), CLUSTER (default e2e-smoke),
# KEEP_CLUSTER=1 keeps the cluster afterwards.

set -o errexit -o nounset -o pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REPO_ROOT="$(cd "${E2E_DIR}/../.." && pwd)"
KIND="${KIND:-${REPO_ROOT}/bin/kind}"
CLUSTER="${CLUSTER:-e2e-smoke}"

step() {
  log "==> $*"
}

main() {
  [[ -x "${KIND}" ]] || die "no kind binary at ${KIND} (go build -o bin/kind ./cmd/kind)"
  step "artifacts"
  local out
  out="$("${E2E_DIR}/build-artifacts.sh")"
  local NODE_IMAGE="" IMAGE_DIR="" CANARY_IMAGE="" KUBECTL="" k v
  while IFS='=' read -r k v; do
    case "${k}" in
    NODE_IMAGE | IMAGE_DIR | CANARY_IMAGE | KUBECTL) printf -v "${k}" '%s' "${v}" ;;
    esac
  done <<<"${out}"

  step "create cluster ${CLUSTER} from ${NODE_IMAGE}"
  "${KIND}" delete cluster --name "${CLUSTER}" >/dev/null 2>&1 || true
  local t0=${SECONDS}
  "${KIND}" create cluster --name "${CLUSTER}" --image "${NODE_IMAGE}" --config "${E2E_DIR}/kind-config.yaml"
  log "cluster created in $((SECONDS - t0))s"
  if [[ "${KEEP_CLUSTER:-}" != 1 ]]; then
    trap '"${KIND}" delete cluster --name "${CLUSTER}" >/dev/null 2>&1 || true' EXIT
  fi

  local kubeconfig
  kubeconfig="$(mktemp)"
  "${KIND}" get kubeconfig --name "${CLUSTER}" >"${kubeconfig}"
  kc() { "${KUBECTL}" --kubeconfig "${kubeconfig}" "$@"; }

  step "pod networking"
  "${E2E_DIR}/install-cni.sh" "${CLUSTER}"
  kc wait --for=condition=Ready node --all --timeout=180s
  kc -n kube-system rollout status deployment/coredns --timeout=180s
  kc -n kube-system rollout status daemonset/kube-proxy --timeout=180s

  step "canary workload"
  kc apply -f - <<EOF
apiVersion: apps/v1
kind: Deployment
metadata:
  name: canary
spec:
  replicas: 2
  selector:
    matchLabels: {app: canary}
  template:
    metadata:
      labels: {app: canary}
    spec:
      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: kubernetes.io/hostname
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels: {app: canary}
      containers:
        - name: canary
          image: ${CANARY_IMAGE}
          args: ["serve"]
          ports: [{containerPort: 8080}]
          readinessProbe:
            httpGet: {path: /healthz, port: 8080}
            periodSeconds: 2
---
apiVersion: v1
kind: Service
metadata:
  name: canary
spec:
  selector: {app: canary}
  ports: [{port: 80, targetPort: 8080}]
EOF
  kc rollout status deployment/canary --timeout=180s
  local host
  host="$(kc get --raw /api/v1/namespaces/default/services/canary:80/proxy/)"
  log "canary answered through the API server: ${host}"
  local node
  for node in $(kc get nodes -o jsonpath='{.items[*].metadata.name}'); do
    kc delete pod "lookup-${node}" --ignore-not-found >/dev/null
    kc run "lookup-${node}" --image "${CANARY_IMAGE}" --restart=Never \
      --overrides "{\"spec\":{\"nodeName\":\"${node}\"}}" -- lookup canary.default.svc.cluster.local >/dev/null
    kc wait --for=jsonpath='{.status.phase}'=Succeeded "pod/lookup-${node}" --timeout=120s
    log "DNS from ${node}: $(kc logs "lookup-${node}" | tr '\n' ' ')"
    kc delete pod "lookup-${node}" --wait=false >/dev/null
  done

  step "IMAGE_DIR archives import into every node"
  local tar name
  for node in $(docker ps --filter "label=io.x-k8s.kind.cluster=${CLUSTER}" --format '{{.Names}}'); do
    while read -r tar; do
      docker exec -i "${node}" ctr -n k8s.io images import --all-platforms --digests --snapshotter=overlayfs - <"${tar}" >/dev/null ||
        die "${node}: importing ${tar} failed"
      for name in $(tar -xOf "${tar}" manifest.json | jq -r '.[].RepoTags[]'); do
        [[ -n "$(docker exec "${node}" ctr -n k8s.io images ls -q "name==${name}")" ]] ||
          die "${node}: ${name} missing after importing ${tar}"
        log "${node}: imported ${name}"
      done
    done < <(find -L "${IMAGE_DIR}" -name '*.tar' | sort)
  done
  step "smoke test passed"
}

main "$@"
exit
