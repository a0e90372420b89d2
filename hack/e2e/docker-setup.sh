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

# docker-setup.sh: leaves a working Docker engine behind, idempotently.
#
#  - installs Debian's docker.io when no dockerd exists (services are not
#    auto-started by apt; this script starts dockerd itself);
#  - when the capability bounding set lacks CAP_SYS_RESOURCE (privileged
#    containers then fail in runc), installs runc-nosysresource, a runc
#    wrapper that drops that capability from the OCI spec, and makes it
#    dockerd's default runtime;
#  - starts dockerd in the background when `docker info` fails, after
#    clearing what a killed dockerd leaves behind, and waits for it;
#  - raises the host's inotify limits to what kind's known-issues page
#    advises (fs.inotify.max_user_watches=524288,
#    fs.inotify.max_user_instances=512) where they are lower: every kind
#    node's processes count against the host's per-user limits (rootful
#    Docker, no user namespaces), and a kubelet that cannot get an inotify
#    instance dies at start (`inotify_init: too many open files`). Runtime
#    only (sysctl -w): a reboot restores the host's own values, and the next
#    run raises them again;
#  - runs a --privileged container (create + exec) of a tiny imported image.
#
# Environment: DOCKERD_LOG (default /var/log/kind-upgrade-e2e-dockerd.log),
# DOCKER_WAIT_SECONDS (default 120).

set -o errexit -o nounset -o pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=host-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/host-lib.sh"

DOCKERD_LOG="${DOCKERD_LOG:-/var/log/kind-upgrade-e2e-dockerd.log}"
DOCKER_WAIT_SECONDS="${DOCKER_WAIT_SECONDS:-120}"
DAEMON_JSON=/etc/docker/daemon.json

ensure_packages() {
  local missing=()
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v jq >/dev/null || missing+=(jq)
  command -v ctr >/dev/null || missing+=(containerd)
  if [[ ${#missing[@]} -gt 0 ]]; then
    log "installing ${missing[*]}"
    apt_install "${missing[@]}"
  fi
  command -v docker >/dev/null || die "no docker client after installing docker.io"
}

# ensure_daemon_json: registers the wrapper as the default runtime, keeping
# other settings. Returns 0 when the file changed.
ensure_daemon_json() {
  mkdir -p "$(dirname "${DAEMON_JSON}")"
  local current='{}'
  if [[ -s "${DAEMON_JSON}" ]]; then
    current="$(cat "${DAEMON_JSON}")"
  fi
  local updated
  updated="$(jq --arg name "${RUNTIME_NAME}" --arg path "${WRAPPER}" \
    '.runtimes[$name] = {path: $path} | .["default-runtime"] = $name' <<<"${current}")"
  if [[ "$(jq -S . <<<"${current}")" == "$(jq -S . <<<"${updated}")" ]]; then
    return 1
  fi
  log "registering ${RUNTIME_NAME} as default runtime in ${DAEMON_JSON}"
  printf '%s\n' "${updated}" >"${DAEMON_JSON}.new"
  mv -f "${DAEMON_JSON}.new" "${DAEMON_JSON}"
  return 0
}

pid_alive() {
  [[ -n "$1" ]] && kill -0 "$1" 2>/dev/null
}

# pid_cmdline_has PID TEXT: the process's command line mentions TEXT.
pid_cmdline_has() {
  local cmdline
  cmdline="$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline")" || return 1
  [[ "${cmdline}" == *"$2"* ]]
}

# clear_leftovers removes what a killed dockerd leaves behind: a pid file
# naming a dead process, the containerd it supervised (still running or
# not), and sockets nobody serves.
clear_leftovers() {
  local pidfile=/var/run/docker.pid pid
  if [[ -f "${pidfile}" ]]; then
    pid="$(cat "${pidfile}" 2>/dev/null || true)"
    if pid_alive "${pid}" && pid_cmdline_has "${pid}" dockerd; then
      die "dockerd (pid ${pid}) runs but docker info fails; see ${DOCKERD_LOG}"
    fi
    log "removing stale ${pidfile} (pid ${pid:-?} is gone)"
    rm -f "${pidfile}"
  fi
  local cpid=/var/run/docker/containerd/containerd.pid
  if [[ -f "${cpid}" ]]; then
    pid="$(cat "${cpid}" 2>/dev/null || true)"
    if pid_alive "${pid}" && pid_cmdline_has "${pid}" /var/run/docker/containerd; then
      log "stopping orphaned docker containerd (pid ${pid})"
      kill "${pid}" || true
      local deadline=$((SECONDS + 20))
      while pid_alive "${pid}" && ((SECONDS < deadline)); do
        sleep 0.5
      done
      if pid_alive "${pid}"; then
        kill -9 "${pid}" || true
      fi
    fi
    rm -f "${cpid}"
  fi
  rm -f /var/run/docker/containerd/containerd.sock /var/run/docker/containerd/containerd-debug.sock
  # dockerd uses a system containerd when this socket exists: make sure one
  # answers on it, else remove it so dockerd starts its own.
  local sys=/run/containerd/containerd.sock
  if [[ -S "${sys}" ]] && ! timeout 5 ctr --address "${sys}" version >/dev/null 2>&1; then
    log "removing stale ${sys}"
    rm -f "${sys}"
  fi
  if [[ -S /var/run/docker.sock ]]; then
    rm -f /var/run/docker.sock
  fi
}

wait_for_docker() {
  local deadline=$((SECONDS + DOCKER_WAIT_SECONDS))
  until docker info >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      tail -n 30 "${DOCKERD_LOG}" >&2 || true
      die "docker did not answer within ${DOCKER_WAIT_SECONDS}s (log: ${DOCKERD_LOG})"
    fi
    if [[ -n "${1:-}" ]] && ! pid_alive "$1"; then
      tail -n 30 "${DOCKERD_LOG}" >&2 || true
      die "dockerd exited (log: ${DOCKERD_LOG})"
    fi
    sleep 0.5
  done
}

start_dockerd() {
  clear_leftovers
  log "starting dockerd (log: ${DOCKERD_LOG})"
  mkdir -p "$(dirname "${DOCKERD_LOG}")"
  # setsid + nohup: dockerd outlives this script and its terminal.
  setsid nohup dockerd >>"${DOCKERD_LOG}" 2>&1 </dev/null &
  local pid=$!
  wait_for_docker "${pid}"
  log "dockerd is up (pid $(cat /var/run/docker.pid 2>/dev/null || echo "${pid}"))"
}

reload_dockerd() {
  local pid
  pid="$(cat /var/run/docker.pid 2>/dev/null || true)"
  if pid_alive "${pid}"; then
    log "reloading dockerd configuration (SIGHUP ${pid})"
    kill -HUP "${pid}"
    local deadline=$((SECONDS + 30))
    until [[ "$(docker info --format '{{.DefaultRuntime}}' 2>/dev/null)" == "${RUNTIME_NAME}" ]]; do
      ((SECONDS < deadline)) || die "dockerd did not pick up ${DAEMON_JSON}"
      sleep 0.5
    done
  fi
}

# smoke_test: a privileged container from an image imported from a tar of
# host binaries, plus a privileged exec into it (exercises both spec paths).
smoke_test() {
  if ! docker image inspect "${SMOKE_IMAGE}" >/dev/null 2>&1; then
    local tmp
    tmp="$(mktemp -d)"
    smoke_rootfs "${tmp}/smoke.tar"
    docker import --change 'CMD ["/usr/bin/sleep", "infinity"]' "${tmp}/smoke.tar" "${SMOKE_IMAGE}" >/dev/null
    rm -rf "${tmp}"
  fi
  local name="kind-upgrade-e2e-smoke-$$"
  docker rm -f "${name}" >/dev/null 2>&1 || true
  docker run -d --privileged --name "${name}" "${SMOKE_IMAGE}" >/dev/null
  local rc=0
  docker exec --privileged "${name}" /usr/bin/true || rc=$?
  docker rm -f "${name}" >/dev/null 2>&1 || true
  [[ ${rc} -eq 0 ]] || die "privileged exec failed"
  log "privileged container run + exec ok (runtime: $(docker info --format '{{.DefaultRuntime}}'))"
}

main() {
  [[ "$(id -u)" == 0 ]] || die "must run as root"
  ensure_packages
  ensure_inotify_limits
  local changed=false
  if ! has_cap_sys_resource; then
    log "CAP_SYS_RESOURCE is not in the bounding set: using ${RUNTIME_NAME}"
    if ensure_wrapper; then changed=true; fi
    if ensure_daemon_json; then changed=true; fi
  fi
  # Remove leftover smoke containers of killed runs.
  if docker info >/dev/null 2>&1; then
    if [[ "${changed}" == true ]]; then
      reload_dockerd
    fi
  else
    start_dockerd
  fi
  local leftovers
  leftovers="$(docker ps -aq --filter name=kind-upgrade-e2e-smoke-)"
  if [[ -n "${leftovers}" ]]; then
    # shellcheck disable=SC2086 # one id per word
    docker rm -f ${leftovers} >/dev/null
  fi
  smoke_test
}

main "$@"
exit
