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

# podman-setup.sh: leaves a podman that can run kind's node containers
# behind, idempotently (for KIND_EXPERIMENTAL_PROVIDER=podman).
#
#  - installs Debian's podman when it is missing, and netavark and
#    aardvark-dns beside it, made podman's network backend with a drop-in,
#    PODMAN_NET_CONF: with --no-install-recommends podman brings only the
#    CNI backend, whose networks have no name resolution, and kind's worker
#    nodes then cannot resolve their control plane (kubeadm join fails);
#  - when the capability bounding set lacks CAP_SYS_RESOURCE, every podman
#    container fails (`error setting rlimit type 7: operation not
#    permitted`: podman asks for an RLIMIT_NOFILE above this host's hard
#    limit) and so does every privileged one: installs runc-nosysresource
#    (the runc wrapper docker-setup.sh gives dockerd, which also lowers the
#    spec's rlimits to the host's) and makes it podman's runtime with a
#    drop-in, PODMAN_CONF, that only this script writes. On a host with the
#    capability nothing is changed;
#  - raises the host's inotify limits as docker-setup.sh does;
#  - where the host's FORWARD policy is DROP (dockerd sets it), accepts
#    what podman's bridges forward between their own containers: netavark
#    accepts only its networks' subnets, so the pod traffic between kind's
#    nodes (10.244.0.0/16, bridged between two node containers) was
#    dropped; the rule goes in DOCKER-USER, Docker's place for its user's
#    rules, when that chain exists, else in FORWARD;
#  - runs a --privileged container (run + exec) of a tiny imported image,
#    and two containers on a podman network that must resolve each other by
#    name.
#
# Podman has no daemon: nothing is left running.

set -o errexit -o nounset -o pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=host-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/host-lib.sh"

PODMAN_CONF=/etc/containers/containers.conf.d/50-kind-upgrade-runtime.conf
PODMAN_NET_CONF=/etc/containers/containers.conf.d/50-kind-upgrade-network.conf
DNS_SMOKE_IMAGE=kind-upgrade-e2e/smoke-dns:v1

# ensure_netavark installs netavark and aardvark-dns when missing and makes
# netavark podman's network backend.
ensure_netavark() {
  local missing=() p
  for p in netavark aardvark-dns; do
    dpkg-query -W -f '${Status}' "${p}" 2>/dev/null | grep -q 'install ok installed' || missing+=("${p}")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    log "installing ${missing[*]}: kind's podman nodes find each other by name through them"
    apt_install "${missing[@]}"
  fi
  local want
  want="$(printf '%s\n' \
    '# written by kind-upgrade'"'"'s hack/e2e/podman-setup.sh: kind'"'"'s nodes' \
    '# resolve each other by name on netavark networks (aardvark-dns)' \
    '[network]' \
    'network_backend = "netavark"')"
  if [[ -f "${PODMAN_NET_CONF}" && "$(cat "${PODMAN_NET_CONF}")" == "${want}" ]]; then
    return 0
  fi
  log "making netavark podman's network backend (${PODMAN_NET_CONF})"
  mkdir -p "$(dirname "${PODMAN_NET_CONF}")"
  printf '%s\n' "${want}" >"${PODMAN_NET_CONF}.new"
  mv -f "${PODMAN_NET_CONF}.new" "${PODMAN_NET_CONF}"
}

# dns_smoke_test: two containers on a podman network of their own resolve
# each other by name, as kind's nodes must.
dns_smoke_test() {
  if ! podman image exists "${DNS_SMOKE_IMAGE}"; then
    local tmp
    tmp="$(mktemp -d)"
    smoke_rootfs "${tmp}/smoke.tar" /usr/bin/getent
    podman import --change 'CMD ["/usr/bin/sleep", "infinity"]' "${tmp}/smoke.tar" "${DNS_SMOKE_IMAGE}" >/dev/null
    rm -rf "${tmp}"
  fi
  local net=kind-upgrade-e2e-smoke-net a="kind-upgrade-e2e-smoke-a-$$" b="kind-upgrade-e2e-smoke-b-$$" leftovers
  leftovers="$(podman ps -aq --filter name=kind-upgrade-e2e-smoke-)"
  if [[ -n "${leftovers}" ]]; then
    # shellcheck disable=SC2086 # one id per word
    podman rm -f ${leftovers} >/dev/null
  fi
  podman network exists "${net}" || podman network create "${net}" >/dev/null
  podman run -d --network "${net}" --name "${a}" "${DNS_SMOKE_IMAGE}" >/dev/null
  podman run -d --network "${net}" --name "${b}" "${DNS_SMOKE_IMAGE}" >/dev/null
  local rc=0 out
  out="$(podman exec "${b}" /usr/bin/getent hosts "${a}" 2>&1)" || rc=$?
  podman rm -f -t 0 "${a}" "${b}" >/dev/null 2>&1 || true
  podman network rm "${net}" >/dev/null 2>&1 || true
  [[ ${rc} -eq 0 ]] || die "containers on a podman network do not resolve each other by name (network backend: $(podman info --format '{{.Host.NetworkBackend}}')): ${out}"
  log "containers on a podman network resolve each other by name (${out%% *}; network backend $(podman info --format '{{.Host.NetworkBackend}}'))"
}

# ensure_podman_conf writes PODMAN_CONF, naming the wrapper as podman's
# runtime. Returns 0 when the file changed.
ensure_podman_conf() {
  local want
  want="$(printf '%s\n' \
    '# written by kind-upgrade'"'"'s hack/e2e/podman-setup.sh: this host lacks' \
    '# CAP_SYS_RESOURCE, see hack/e2e/runc-nosysresource' \
    '[engine]' \
    "runtime = \"${RUNTIME_NAME}\"" \
    '' \
    '[engine.runtimes]' \
    "${RUNTIME_NAME} = [\"${WRAPPER}\"]")"
  if [[ -f "${PODMAN_CONF}" && "$(cat "${PODMAN_CONF}")" == "${want}" ]]; then
    return 1
  fi
  log "making ${RUNTIME_NAME} podman's runtime (${PODMAN_CONF})"
  mkdir -p "$(dirname "${PODMAN_CONF}")"
  printf '%s\n' "${want}" >"${PODMAN_CONF}.new"
  mv -f "${PODMAN_CONF}.new" "${PODMAN_CONF}"
}

# ensure_forwarding accepts traffic that a podman bridge forwards between
# its own containers when the FORWARD policy would drop it.
ensure_forwarding() {
  command -v iptables >/dev/null || return 0
  iptables -S FORWARD 2>/dev/null | grep -qx -- '-P FORWARD DROP' || return 0
  local chain=FORWARD
  if iptables -S DOCKER-USER >/dev/null 2>&1; then
    chain=DOCKER-USER
  fi
  if ! iptables -C "${chain}" -i podman+ -o podman+ -j ACCEPT 2>/dev/null; then
    log "the FORWARD policy is DROP: accepting what podman's bridges forward between their own containers (iptables -I ${chain} -i podman+ -o podman+ -j ACCEPT)"
    iptables -I "${chain}" -i podman+ -o podman+ -j ACCEPT
  fi
}

# smoke_test: a privileged container of an image imported from a tar of
# host binaries, plus a privileged exec into it.
smoke_test() {
  if ! podman image exists "${SMOKE_IMAGE}"; then
    local tmp
    tmp="$(mktemp -d)"
    smoke_rootfs "${tmp}/smoke.tar"
    podman import --change 'CMD ["/usr/bin/sleep", "infinity"]' "${tmp}/smoke.tar" "${SMOKE_IMAGE}" >/dev/null
    rm -rf "${tmp}"
  fi
  local leftovers name="kind-upgrade-e2e-smoke-$$"
  leftovers="$(podman ps -aq --filter name=kind-upgrade-e2e-smoke-)"
  if [[ -n "${leftovers}" ]]; then
    # shellcheck disable=SC2086 # one id per word
    podman rm -f ${leftovers} >/dev/null
  fi
  podman run -d --privileged --name "${name}" "${SMOKE_IMAGE}" >/dev/null
  local rc=0
  podman exec --privileged "${name}" /usr/bin/true || rc=$?
  podman rm -f -t 0 "${name}" >/dev/null 2>&1 || true
  [[ ${rc} -eq 0 ]] || die "privileged podman exec failed"
  log "privileged podman container run + exec ok (runtime: $(podman info --format '{{.Host.OCIRuntime.Name}}'), podman $(podman version --format '{{.Client.Version}}'))"
}

main() {
  [[ "$(id -u)" == 0 ]] || die "must run as root"
  if ! command -v podman >/dev/null; then
    log "installing podman"
    apt_install podman
  fi
  ensure_netavark
  ensure_inotify_limits
  ensure_forwarding
  if ! has_cap_sys_resource; then
    log "CAP_SYS_RESOURCE is not in the bounding set: podman runs containers through ${RUNTIME_NAME}"
    ensure_wrapper || true
    ensure_podman_conf || true
  fi
  smoke_test
  dns_smoke_test
}

main "$@"
exit
