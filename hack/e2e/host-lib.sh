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

# host-lib.sh: what the host set-up scripts (docker-setup.sh,
# podman-setup.sh) share: Debian packages, the runc wrapper this kind of VM
# needs, the inotify limits and the smoke image. Sourced after lib.sh.

# Used by the scripts that source this file.
WRAPPER=/usr/local/bin/runc-nosysresource
export RUNTIME_NAME=runc-nosysresource
export SMOKE_IMAGE=kind-upgrade-e2e/smoke:v1

APT_UPDATED=false
apt_install() {
  if [[ "${APT_UPDATED}" == false ]]; then
    apt-get update -qq
    APT_UPDATED=true
  fi
  # Keep apt from starting services: the setup scripts start what they
  # need, their way.
  local policy=/usr/sbin/policy-rc.d added=false
  if [[ ! -e "${policy}" ]]; then
    printf '#!/bin/sh\nexit 101\n' >"${policy}"
    chmod +x "${policy}"
    added=true
  fi
  local rc=0
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2 || rc=$?
  if [[ "${added}" == true ]]; then
    rm -f "${policy}"
  fi
  return "${rc}"
}

# has_cap_sys_resource: CAP_SYS_RESOURCE is in the capability bounding set
# (without it privileged containers fail in runc, and so does any container
# whose spec asks for an rlimit above this host's hard limit).
has_cap_sys_resource() {
  local bnd
  bnd="$(awk '/^CapBnd:/ {print $2}' /proc/self/status)"
  (((16#${bnd} >> 24) & 1))
}

# ensure_wrapper: builds and installs the runc wrapper if it is missing or
# was built from other sources. Returns 0 when it changed.
ensure_wrapper() {
  local src="${E2E_DIR}/runc-nosysresource"
  local want
  # its source and the Go that builds it
  want="$({ cat "${src}/main.go" && go env GOVERSION 2>/dev/null; } | sha256sum | cut -d' ' -f1)"
  if [[ -x "${WRAPPER}" && -f "${WRAPPER}.sha" && "$(cat "${WRAPPER}.sha")" == "${want}" ]]; then
    return 1
  fi
  command -v go >/dev/null || die "go is needed to build ${WRAPPER}"
  log "building ${WRAPPER}"
  (cd "${E2E_DIR}" && CGO_ENABLED=0 GOTOOLCHAIN=local go build -trimpath -o "${WRAPPER}.new" ./runc-nosysresource)
  mv -f "${WRAPPER}.new" "${WRAPPER}"
  printf '%s' "${want}" >"${WRAPPER}.sha"
  return 0
}

# INOTIFY_LIMITS: kind's advice (https://kind.sigs.k8s.io/docs/user/known-issues/#pod-errors-due-to-too-many-open-files)
INOTIFY_LIMITS=(fs.inotify.max_user_watches=524288 fs.inotify.max_user_instances=512)

# ensure_inotify_limits raises each limit of INOTIFY_LIMITS that is lower
# on this host and says so; a limit that is already as high is left alone.
ensure_inotify_limits() {
  local setting key want have
  for setting in "${INOTIFY_LIMITS[@]}"; do
    key="${setting%%=*}"
    want="${setting#*=}"
    have="$(sysctl -n "${key}")"
    if ((have >= want)); then
      continue
    fi
    log "raising ${key} from ${have} to ${want} (kind's advice for several nodes on one host; sysctl -w, until the next reboot)"
    sysctl -q -w "${key}=${want}" || die "could not raise ${key} to ${want}"
  done
}

# smoke_rootfs OUT [BINARY...] writes a tar of a tiny root file system
# (sleep, true, the BINARYs and their libraries) to OUT, for a smoke image.
smoke_rootfs() {
  local out="$1" tmp files=() f
  shift
  tmp="$(mktemp -d)"
  for f in /usr/bin/sleep /usr/bin/true "$@"; do
    files+=("${f}")
    # shellcheck disable=SC2207 # ldd prints plain paths
    files+=($(ldd "${f}" | grep -o '/[^ ]*'))
  done
  printf '%s\n' "${files[@]#/}" | sort -u >"${tmp}/files"
  tar -C / -ch --hard-dereference -f "${out}" -T "${tmp}/files"
  rm -rf "${tmp}"
}
