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

# install-cni.sh CLUSTER_NAME
#
# Pod networking for e2e kind clusters created with
# `networking.disableDefaultCNI: true` (kindnetd cannot be built offline).
# For every node container of the cluster:
#   - /etc/cni/net.d/10-e2e-bridge.conflist: bridge + host-local IPAM on the
#     node's podCIDR (from the API, through the control plane's admin.conf)
#     + portmap (containerd itself sets up lo with /opt/cni/bin/loopback);
#   - a route to every other node's podCIDR via that node's container IP;
#   - NAT for pod traffic that leaves the cluster's networks.
# Idempotent; nothing here depends on the kubelet, so it survives kubelet
# upgrades. Re-run it after nodes are added or containers restarted.
#
# Environment: CNI_WAIT_SECONDS (default 180) bounds the wait for podCIDRs.

set -o errexit -o nounset -o pipefail

CNI_WAIT_SECONDS="${CNI_WAIT_SECONDS:-180}"
CONFLIST=/etc/cni/net.d/10-e2e-bridge.conflist
BRIDGE=e2ebr0
NAT_CHAIN=E2E-CNI-MASQ

log() {
  printf '[%s] install-cni: %s\n' "$(date +%H:%M:%S)" "$*" >&2
}

die() {
  log "ERROR: $*"
  exit 1
}

# nodes_of CLUSTER: "name role" of every Kubernetes node container.
nodes_of() {
  docker ps --filter "label=io.x-k8s.kind.cluster=$1" \
    --format '{{.Names}} {{.Label "io.x-k8s.kind.role"}}' |
    awk '$2 == "control-plane" || $2 == "worker"' | sort
}

# container_net NAME: "network ipv4" of a node container.
container_net() {
  docker inspect -f '{{range $n, $e := .NetworkSettings.Networks}}{{$n}} {{$e.IPAddress}}{{"\n"}}{{end}}' "$1" |
    awk 'NF == 2 {print; exit}'
}

# pod_cidrs CP: "node podCIDR" lines (IPv4 CIDR only) from the API.
pod_cidrs() {
  docker exec "$1" kubectl --kubeconfig=/etc/kubernetes/admin.conf get nodes \
    -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.spec.podCIDRs[*]}{"\n"}{end}' 2>/dev/null |
    awk '{for (i = 2; i <= NF; i++) if ($i ~ /^[0-9.]+\/[0-9]+$/) {print $1, $i; break}}'
}

# write_node_file NODE PATH CONTENT: atomic write inside the node.
write_node_file() {
  printf '%s\n' "$3" | docker exec -i "$1" sh -c "mkdir -p \"\$(dirname '$2')\" && cat >'$2.tmp' && mv -f '$2.tmp' '$2'"
}

conflist_for() {
  cat <<EOF
{
  "cniVersion": "1.0.0",
  "name": "e2e-bridge",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "${BRIDGE}",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$1"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {
      "type": "portmap",
      "capabilities": {"portMappings": true}
    }
  ]
}
EOF
}

main() {
  [[ $# -eq 1 ]] || die "usage: $0 CLUSTER_NAME"
  local cluster="$1"
  local -A role=() ip=() cidr=()
  local name r net addr network=""
  while read -r name r; do
    [[ -n "${name}" ]] || continue
    role[${name}]="${r}"
    read -r net addr <<<"$(container_net "${name}")"
    [[ -n "${addr:-}" ]] || die "node ${name} has no IPv4 address"
    ip[${name}]="${addr}"
    network="${net}"
  done <<<"$(nodes_of "${cluster}")"
  [[ ${#role[@]} -gt 0 ]] || die "no nodes found for cluster ${cluster}"

  local cp=""
  for name in "${!role[@]}"; do
    if [[ "${role[${name}]}" == control-plane ]] && [[ -z "${cp}" || "${name}" < "${cp}" ]]; then
      cp="${name}"
    fi
  done
  [[ -n "${cp}" ]] || die "cluster ${cluster} has no control-plane node"

  # The controller-manager hands out podCIDRs shortly after nodes register.
  local deadline=$((SECONDS + CNI_WAIT_SECONDS)) missing
  while :; do
    cidr=()
    while read -r name addr; do
      [[ -n "${name}" ]] && cidr[${name}]="${addr}"
    done <<<"$(pod_cidrs "${cp}")"
    missing=""
    for name in "${!role[@]}"; do
      [[ -n "${cidr[${name}]:-}" ]] || missing+=" ${name}"
    done
    [[ -n "${missing}" ]] || break
    ((SECONDS < deadline)) || die "no podCIDR for:${missing} (is the cluster's podSubnet set?)"
    sleep 1
  done

  local subnets=""
  if [[ -n "${network}" ]]; then
    subnets="$(docker network inspect -f '{{range .IPAM.Config}}{{.Subnet}} {{end}}' "${network}" 2>/dev/null || true)"
  fi

  local other s rules
  for name in "${!role[@]}"; do
    log "${name}: podCIDR ${cidr[${name}]}, ip ${ip[${name}]}"
    docker exec "${name}" test -x /opt/cni/bin/loopback -a -x /opt/cni/bin/bridge -a -x /opt/cni/bin/portmap ||
      die "${name} lacks CNI plugins in /opt/cni/bin"
    write_node_file "${name}" "${CONFLIST}" "$(conflist_for "${cidr[${name}]}")"
    for other in "${!role[@]}"; do
      [[ "${other}" == "${name}" ]] && continue
      docker exec "${name}" ip route replace "${cidr[${other}]}" via "${ip[${other}]}"
    done
    # NAT only what leaves the pod and node networks.
    rules="iptables -t nat -N ${NAT_CHAIN} 2>/dev/null || iptables -t nat -F ${NAT_CHAIN}"
    for other in "${!role[@]}"; do
      rules+="; iptables -t nat -A ${NAT_CHAIN} -d ${cidr[${other}]} -j RETURN"
    done
    for s in ${subnets}; do
      [[ "${s}" == *:* ]] && continue
      rules+="; iptables -t nat -A ${NAT_CHAIN} -d ${s} -j RETURN"
    done
    rules+="; iptables -t nat -A ${NAT_CHAIN} -j MASQUERADE"
    rules+="; iptables -t nat -C POSTROUTING -s ${cidr[${name}]} -j ${NAT_CHAIN} 2>/dev/null"
    rules+=" || iptables -t nat -A POSTROUTING -s ${cidr[${name}]} -j ${NAT_CHAIN}"
    docker exec "${name}" sh -c "${rules}"
  done
  log "pod networking configured on ${#role[@]} node(s) of ${cluster}"
}

main "$@"
exit
