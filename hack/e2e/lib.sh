# shellcheck shell=bash
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

# Helpers shared by the offline e2e scripts. Source it, do not run it.
#
# Cache model: every artifact lives in its own directory
#   $E2E_CACHE/<group>/<name>
# and is complete exactly when it holds a stamp file whose content equals the
# key the caller computed (version + hash of the inputs that produced it).
# Entries are built in $E2E_CACHE/tmp, stamped, and renamed into place while
# holding an exclusive flock on $E2E_CACHE/locks/<group>_<name>.lock, so a
# concurrent run either sees the old complete entry or the new one, and an
# interrupted build only leaves a temp dir behind that the next run removes.

E2E_CACHE="${KIND_UPGRADE_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kind-upgrade-e2e}"
E2E_STAMP=".e2e-stamp"
# shellcheck disable=SC2034 # used by the scripts that source this file
E2E_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

log() {
  printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2
}

die() {
  log "ERROR: $*"
  exit 1
}

# hash_of FILE|-STRING... prints a short sha256 over the content of the given
# files (arguments starting with '=' are hashed as literal strings).
hash_of() {
  local arg
  for arg in "$@"; do
    if [[ "${arg}" == =* ]]; then
      printf 'str:%s\n' "${arg#=}"
    else
      printf 'file:%s\n' "$(basename "${arg}")"
      cat "${arg}"
    fi
  done | sha256sum | cut -c1-16
}

# entry_ok DIR KEY: true when DIR is a complete entry built for KEY.
entry_ok() {
  [[ -f "$1/${E2E_STAMP}" ]] && [[ "$(cat "$1/${E2E_STAMP}")" == "$2" ]]
}

# unmount_under DIR: detaches every mount below DIR (an interrupted
# debootstrap can leave proc/sys mounted in its target).
unmount_under() {
  local target
  while read -r target; do
    umount -l "${target}" 2>/dev/null || true
  done < <(awk -v p="$1/" 'index($5, p) == 1 {print $5}' /proc/self/mountinfo | sort -r)
}

# entry_valid DIR KEY FUNC: entry_ok, and, when a function FUNC_valid
# exists, that it accepts DIR too (e.g. checks that an image the entry
# describes is still in Docker).
entry_valid() {
  entry_ok "$1" "$2" || return 1
  if declare -F "$3_valid" >/dev/null; then
    "$3_valid" "$1" || return 1
  fi
  return 0
}

# cached GROUP NAME KEY FUNC [ARGS...]
# Ensures $E2E_CACHE/GROUP/NAME is complete for KEY, calling
# "FUNC TMPDIR ARGS..." to build it into an empty TMPDIR when it is not.
# Prints the entry's path on stdout.
cached() {
  local group="$1" name="$2" key="$3" fn="$4"
  shift 4
  local dir="${E2E_CACHE}/${group}/${name}"
  if entry_valid "${dir}" "${key}" "${fn}"; then
    printf '%s\n' "${dir}"
    return 0
  fi
  mkdir -p "${E2E_CACHE}/locks" "${E2E_CACHE}/tmp" "${E2E_CACHE}/${group}"
  local lockfile="${E2E_CACHE}/locks/${group//\//_}_${name}.lock"
  local fd
  exec {fd}>"${lockfile}"
  if ! flock -n "${fd}"; then
    log "waiting for another run building ${group}/${name}"
    flock "${fd}"
  fi
  if entry_valid "${dir}" "${key}" "${fn}"; then
    exec {fd}>&-
    printf '%s\n' "${dir}"
    return 0
  fi
  # We hold the lock: any temp dir for this entry is a leftover.
  local prefix="${group//\//_}_${name}"
  local old
  for old in "${E2E_CACHE}/tmp/${prefix}".*; do
    [[ -e "${old}" ]] || continue
    log "removing leftover ${old}"
    unmount_under "${old}"
    rm -rf "${old}"
  done
  local tmp
  tmp="$(mktemp -d "${E2E_CACHE}/tmp/${prefix}.build.XXXXXX")"
  chmod 0755 "${tmp}"
  log "building ${group}/${name} (key ${key})"
  local start=${SECONDS} ticker rc=0
  # a build of minutes says it is still at work
  (while sleep "${E2E_HEARTBEAT:-60}" 2>/dev/null; do log "still building ${group}/${name} ($((SECONDS - start))s)"; done) >/dev/null &
  ticker=$!
  "${fn}" "${tmp}" "$@" >&2 || rc=$?
  kill "${ticker}" 2>/dev/null || true
  wait "${ticker}" 2>/dev/null || true
  if ((rc != 0)); then
    exec {fd}>&-
    die "building ${group}/${name} failed (partial result left in ${tmp})"
  fi
  printf '%s' "${key}" >"${tmp}/${E2E_STAMP}"
  sync -f "${tmp}/${E2E_STAMP}" 2>/dev/null || true
  if [[ -e "${dir}" ]]; then
    mv -T "${dir}" "${E2E_CACHE}/tmp/${prefix}.old.$$"
  fi
  mv -T "${tmp}" "${dir}"
  rm -rf "${E2E_CACHE}/tmp/${prefix}.old.$$"
  log "built ${group}/${name} in $((SECONDS - start))s"
  exec {fd}>&-
  printf '%s\n' "${dir}"
}

# with_file_lock FILE CMD...: runs CMD holding an exclusive flock on FILE.
with_file_lock() {
  local file="$1"
  shift
  local fd rc=0
  exec {fd}>>"${file}"
  flock "${fd}"
  "$@" || rc=$?
  exec {fd}>&-
  return "${rc}"
}

# with_lock NAME CMD...: runs CMD holding the cache's lock NAME.
with_lock() {
  local name="$1"
  shift
  mkdir -p "${E2E_CACHE}/locks"
  with_file_lock "${E2E_CACHE}/locks/${name}.lock" "$@"
}

# go_scratch_module DIR MODPATH: starts an empty module in DIR.
go_scratch_module() {
  mkdir -p "$1"
  printf 'module %s\n\ngo 1.24.0\n' "$2" >"$1/go.mod"
}
