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

# Entrypoint of the e2e node image (installed as /usr/local/bin/entrypoint).
# It prepares a privileged Docker container to run systemd + containerd +
# kubelet the way kind expects, then execs its arguments (/sbin/init).
# Every step is safe to repeat when the container restarts.

set -o errexit -o nounset -o pipefail

say() {
  echo "e2e-node-entrypoint: $*" >&2
}

# Shared mount propagation is needed by the kubelet (Bidirectional mounts).
setup_mounts() {
  mount --make-rshared /
  # A fresh product_uuid per node: kubelet and kubeadm want machines to
  # differ, but every container sees the host's DMI data.
  local uuid_file=/sys/class/dmi/id/product_uuid
  if [[ -e "${uuid_file}" ]] && ! mountpoint -q "${uuid_file}"; then
    if [[ ! -s /etc/kind-upgrade-e2e/product_uuid ]]; then
      mkdir -p /etc/kind-upgrade-e2e
      cat /proc/sys/kernel/random/uuid >/etc/kind-upgrade-e2e/product_uuid
    fi
    mount --bind /etc/kind-upgrade-e2e/product_uuid "${uuid_file}"
  fi
  # systemd wants a read-only /sys in a container; --privileged makes it
  # read-write. The cgroup mounts under it are separate mounts and stay
  # writable.
  local opts
  opts="$(findmnt -n -o OPTIONS /sys || true)"
  if [[ ",${opts}," == *",rw,"* ]]; then
    say "remounting /sys read-only"
    mount -o remount,ro /sys
  fi
}

# copy_cpuset DIR: a new v1 cpuset cgroup starts empty; give it its parent's.
copy_cpuset() {
  local dir="$1" f
  for f in cpuset.cpus cpuset.mems; do
    if [[ -f "${dir}/${f}" && -z "$(tr -d '[:space:]' <"${dir}/${f}")" ]]; then
      cat "${dir}/../${f}" >"${dir}/${f}"
    fi
  done
}

# The KubeletConfiguration kind writes has cgroupRoot /kubelet, which the
# kubelet requires to exist in every hierarchy (as kubelet.slice with the
# systemd driver).
setup_cgroups() {
  if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
    say "cgroup v2"
    # Processes may not live in a cgroup that delegates controllers: move
    # everything into a leaf first, then enable all controllers below root.
    mkdir -p /sys/fs/cgroup/init.scope
    local pid
    while read -r pid; do
      echo "${pid}" >/sys/fs/cgroup/init.scope/cgroup.procs 2>/dev/null || true
    done </sys/fs/cgroup/cgroup.procs
    local c controls="" list=()
    read -r -a list </sys/fs/cgroup/cgroup.controllers
    for c in "${list[@]}"; do
      controls+=" +${c}"
    done
    if [[ -n "${controls}" ]]; then
      echo "${controls# }" >/sys/fs/cgroup/cgroup.subtree_control
    fi
    return 0
  fi
  say "cgroup v1: preparing kubelet cgroups"
  local hier sub
  for hier in /sys/fs/cgroup/*/; do
    hier="${hier%/}"
    # skip the cgroup2 "unified" helper hierarchy and symlinked aliases
    [[ -L "${hier}" ]] && continue
    [[ -f "${hier}/cgroup.procs" ]] || continue
    [[ "$(stat -f -c %T "${hier}")" == cgroup2fs ]] && continue
    for sub in kubelet kubelet.slice; do
      mkdir -p "${hier}/${sub}"
      copy_cpuset "${hier}/${sub}"
    done
  done
}

# A node needs its own machine id; the image ships an empty one.
setup_machine_id() {
  if [[ ! -s /etc/machine-id ]]; then
    rm -f /etc/machine-id
    systemd-machine-id-setup >/dev/null
    say "machine-id $(cat /etc/machine-id)"
  fi
}

# rule_count BACKEND: how many rules iptables-BACKEND-save shows.
rule_count() {
  local n=0 cmd
  for cmd in "iptables-$1-save" "ip6tables-$1-save"; do
    n=$((n + $("${cmd}" 2>/dev/null | grep -c '^-' || true)))
  done
  echo "${n}"
}

# Use the iptables backend Docker (and anything else) already put rules in,
# so that everything in this network namespace agrees.
setup_iptables() {
  local legacy nft mode
  legacy="$(rule_count legacy)"
  nft="$(rule_count nft)"
  mode=nft
  if ((legacy > nft)); then
    mode=legacy
  fi
  say "iptables mode ${mode} (rules: legacy ${legacy}, nft ${nft})"
  update-alternatives --quiet --set iptables "/usr/sbin/iptables-${mode}"
  update-alternatives --quiet --set ip6tables "/usr/sbin/ip6tables-${mode}"
}

setup_sysctls() {
  sysctl -q -w net.ipv4.ip_forward=1 || say "cannot enable ip_forward"
  sysctl -q -w net.ipv4.conf.all.route_localnet=1 || say "cannot set route_localnet"
  if [[ -e /proc/sys/net/bridge/bridge-nf-call-iptables ]]; then
    sysctl -q -w net.bridge.bridge-nf-call-iptables=1 net.bridge.bridge-nf-call-ip6tables=1 || true
  fi
}

node_ipv4() {
  ip -4 -o addr show scope global | awk '{sub(/\/.*/, "", $4); print $4; exit}'
}

# docker_dns_port PROTO: the port Docker's embedded DNS really listens on
# (Docker redirects 127.0.0.11:53 there with its own NAT rules).
docker_dns_port() {
  iptables-save -t nat 2>/dev/null |
    sed -n "s/^-A DOCKER_OUTPUT .*-p $1 .*--to-destination 127\.0\.0\.11:\([0-9]*\).*/\1/p" | head -n 1
}

# Pods inherit the node's resolv.conf. Docker's 127.0.0.11 is loopback in a
# pod's namespace (CoreDNS would forward to itself and stop on the loop), so
# expose Docker's DNS on the node's own address and point resolv.conf there.
setup_dns() {
  # After a restart resolv.conf may still hold the address written last
  # time (the node's old IP): that one stands for Docker's DNS too.
  local marker=/etc/kind-upgrade-e2e/dns-ip old="127.0.0.11"
  if ! grep -q '^nameserver 127\.0\.0\.11$' /etc/resolv.conf; then
    [[ -s "${marker}" ]] && grep -qxF "nameserver $(cat "${marker}")" /etc/resolv.conf || return 0
    old="$(cat "${marker}")"
  fi
  local ip udp tcp
  ip="$(node_ipv4)"
  udp="$(docker_dns_port udp)"
  tcp="$(docker_dns_port tcp)"
  if [[ -z "${ip}" || -z "${udp}" || -z "${tcp}" ]]; then
    say "cannot rewire Docker DNS (ip=${ip} udp=${udp} tcp=${tcp}); leaving resolv.conf"
    return 0
  fi
  iptables -t nat -N E2E_NODE_DNS 2>/dev/null || iptables -t nat -F E2E_NODE_DNS
  iptables -t nat -A E2E_NODE_DNS -d "${ip}/32" -p udp --dport 53 -j DNAT --to-destination "127.0.0.11:${udp}"
  iptables -t nat -A E2E_NODE_DNS -d "${ip}/32" -p tcp --dport 53 -j DNAT --to-destination "127.0.0.11:${tcp}"
  local chain
  for chain in PREROUTING OUTPUT; do
    iptables -t nat -C "${chain}" -j E2E_NODE_DNS 2>/dev/null ||
      iptables -t nat -I "${chain}" 1 -j E2E_NODE_DNS
  done
  # resolv.conf is a bind mount: rewrite it in place.
  local content
  content="$(sed "s/^nameserver ${old//./\\.}\$/nameserver ${ip}/" /etc/resolv.conf)"
  printf '%s\n' "${content}" >/etc/resolv.conf
  mkdir -p "$(dirname "${marker}")"
  printf '%s' "${ip}" >"${marker}"
  say "DNS: ${ip}:53 -> Docker DNS (udp ${udp}, tcp ${tcp})"
}

# kind passes KIND_EXPERIMENTAL_CONTAINERD_SNAPSHOTTER through to the node.
setup_snapshotter() {
  local s="${KIND_EXPERIMENTAL_CONTAINERD_SNAPSHOTTER:-}"
  if [[ -n "${s}" ]]; then
    sed -i "s/^\([[:space:]]*snapshotter[[:space:]]*=\).*/\1 \"${s}\"/" /etc/containerd/config.toml
    say "containerd snapshotter ${s}"
  fi
}

main() {
  setup_mounts
  setup_cgroups
  setup_machine_id
  setup_iptables
  setup_sysctls
  setup_dns
  setup_snapshotter
  say "starting $*"
  exec "$@"
}

main "$@"
