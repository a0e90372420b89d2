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
# and is complete exactly when it holds a stamp file whose content equals its
# key: the entry's name and a hash of every input of the function that builds
# it, derived by derive_key (nobody lists them by hand, so none can be left
# out).
# Entries are built in $E2E_CACHE/tmp, stamped, and renamed into place while
# holding an exclusive flock on $E2E_CACHE/locks/<group>_<name>.lock, so a
# concurrent run either sees the old complete entry or the new one, and an
# interrupted build only leaves a temp dir behind that the next run removes.

E2E_CACHE="${KIND_UPGRADE_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kind-upgrade-e2e}"
E2E_STAMP=".e2e-stamp"
# shellcheck disable=SC2034 # used by the scripts that source this file
E2E_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# the checkout (key_word names its files relative to it)
KEY_REPO="$(cd "${E2E_DIR}/../.." && pwd)"

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

# Functions that do not shape what a build produces (they log, lock or
# locate): left out of derive_key's closure so that rewording a log line does
# not throw away every entry. Leaving a function off this list only costs a
# rebuild; a function on it must never change an artifact.
# The scripts' main functions are on it too: they only pass arguments,
# which are keyed themselves.
KEY_NEUTRAL_FUNCTIONS=(log die with_file_lock with_lock unmount_under main cached derive_key key_inputs key_closure
  key_word key_value key_tree entry_ok entry_valid)
# Variables that say where things are, not what they are: a cache or a
# checkout moved elsewhere holds the same artifacts. Their paths are
# rewritten by key_word instead.
KEY_LOCATIONS=(E2E_CACHE E2E_DIR KEY_REPO REPO_ROOT HOME PATH PWD OLDPWD TMPDIR)

# key_closure FUNC...: FUNC, its FUNC_valid check when there is one, and
# every function their bodies name, transitively, one per line, sorted.
key_closure() {
  local -A defined=() seen=() neutral=()
  local f word
  while read -r _ _ f; do defined["${f}"]=1; done < <(declare -F)
  for f in "${KEY_NEUTRAL_FUNCTIONS[@]}"; do neutral["${f}"]=1; done
  local queue=("$@")
  while ((${#queue[@]} > 0)); do
    f="${queue[0]}"
    queue=("${queue[@]:1}")
    if [[ -n "${seen["${f}"]:-}" || -z "${defined["${f}"]:-}" || -n "${neutral["${f}"]:-}" ]]; then
      continue
    fi
    seen["${f}"]=1
    queue+=("${f}_valid")
    while read -r word; do
      queue+=("${word}")
    # (a word followed by a dot, like main.go, names a file, not a call)
    done < <(declare -f "${f}" | grep -oE '[A-Za-z_][A-Za-z0-9_]*\.?' | grep -v '\.$' | sort -u)
  done
  printf '%s\n' "${!seen[@]}" | sort
}

# key_tree DIR: a hash of the files under DIR, by relative name and content;
# Go tests and test data are left out (go build never reads them).
key_tree() {
  (cd "$1" && find . -type f ! -name '*_test.go' ! -path '*/testdata/*' ! -name "${E2E_STAMP}" -print0 |
    LC_ALL=C sort -z | xargs -0 -r sha256sum) | sha256sum | cut -c1-16
}

# key_word WORD: what WORD stands for, free of where the cache and the
# checkout are: a path inside a cache entry is the entry's key plus the rest
# of the path; a path in the checkout is its relative name and a hash of its
# content (this repository's own binaries in bin/ by what `BINARY version`
# prints, so a rebuilt kind with the same version does not rebuild images);
# anything else is itself.
key_word() {
  local w="$1" d repo="${KEY_REPO}"
  if [[ "${w}" == "${E2E_CACHE}"/* && -e "${w}" ]]; then
    d="${w}"
    while [[ "${d}" == "${E2E_CACHE}"/* ]]; do
      if [[ -f "${d}/${E2E_STAMP}" ]]; then
        printf 'entry:%s:%s' "$(cat "${d}/${E2E_STAMP}")" "${w#"${d}"}"
        return
      fi
      d="$(dirname "${d}")"
    done
  fi
  if [[ "${w}" == "${repo}"/* && -e "${w}" ]]; then
    if [[ "${w}" == "${repo}/bin/"* && -x "${w}" && -f "${w}" ]]; then
      printf 'repo:%s:%s' "${w#"${repo}"/}" "$("${w}" version 2>/dev/null || sha256sum <"${w}")"
    elif [[ -d "${w}" ]]; then
      printf 'repo:%s:%s' "${w#"${repo}"/}" "$(key_tree "${w}")"
    else
      printf 'repo:%s:%s' "${w#"${repo}"/}" "$(sha256sum <"${w}" | cut -c1-16)"
      # a module's go.sum goes with its go.mod
      if [[ "${w}" == */go.mod && -f "${w%.mod}.sum" ]]; then
        printf '+%s' "$(sha256sum <"${w%.mod}.sum" | cut -c1-16)"
      fi
    fi
    return
  fi
  printf '%s' "${w}"
}

# key_value STRING: key_word of each of STRING's words.
key_value() {
  local w
  # word splitting on purpose: "a b" lists of paths are common here
  # shellcheck disable=SC2086
  for w in $1; do
    printf '%s ' "$(key_word "${w}")"
  done
}

# derive_key NAME FUNC [ARGS...]: the cache key of what "FUNC TMPDIR ARGS..."
# builds: NAME, then a hash of
#   - the body of every function in FUNC's closure (key_closure);
#   - every global (upper-case) variable those bodies read, by key_value (the
#     location variables of KEY_LOCATIONS left out), arrays whole;
#   - every checkout file or folder those bodies name as ${E2E_DIR}/...;
#   - ARGS, by key_value;
#   - the Go toolchain (version and GOOS, GOARCH, CGO_ENABLED, GOFLAGS) when
#     a body runs go.
derive_key() {
  local name="$1"
  key_inputs "$@" | sha256sum | cut -c1-16 | sed "s|^|${name}-|"
}

# key_inputs NAME FUNC [ARGS...]: what derive_key hashes, readable (to see
# why an entry was rebuilt: diff two runs' output).
key_inputs() {
  local _key_name="$1" _key_fn="$2"
  shift 2
  local _key_closure _key_bodies
  # patterns for a literal $NAME or ${NAME and a literal ${E2E_DIR}/PATH
  # shellcheck disable=SC2016
  local _key_var_pattern='\$\{?[A-Z_][A-Z0-9_]*\b' _key_file_pattern='\$\{E2E_DIR\}/[A-Za-z0-9_./-]+'
  _key_closure="$(key_closure "${_key_fn}")"
  # shellcheck disable=SC2086
  _key_bodies="$(declare -f ${_key_closure})"
  {
    printf 'name %s\nfunctions:\n%s\n' "${_key_name}" "${_key_bodies}"
    local -A _key_skip=()
    local _key_v
    for _key_v in "${KEY_LOCATIONS[@]}"; do _key_skip["${_key_v}"]=1; done
    while read -r _key_v; do
      [[ -z "${_key_skip["${_key_v}"]:-}" ]] || continue
      # only globals that are set: upper-case names by this repository's
      # convention (lower-case ones are locals, and a caller's locals are
      # visible here)
      declare -p "${_key_v}" >/dev/null 2>&1 || continue
      case "$(declare -p "${_key_v}")" in
      "declare -a"* | "declare -A"*)
        local -n _key_ref="${_key_v}"
        printf 'var %s=' "${_key_v}"
        local _key_item
        for _key_item in "${_key_ref[@]}"; do printf '%s\n' "$(key_value "${_key_item}")"; done
        unset -n _key_ref
        ;;
      *) printf 'var %s=%s\n' "${_key_v}" "$(key_value "${!_key_v-}")" ;;
      esac
    done < <(grep -oE "${_key_var_pattern}" <<<"${_key_bodies}" | tr -d '\$\{' | grep -vxE '[0-9]+|BASH.*|FUNCNAME|LINENO|SECONDS|RANDOM|EPOCH.*|PIPESTATUS|OPTIND|OPTARG|IFS|PPID|UID|EUID' | sort -u)
    local _key_f
    while read -r _key_f; do
      if [[ -e "${E2E_DIR}/${_key_f}" ]]; then
        printf 'file %s\n' "$(key_word "${E2E_DIR}/${_key_f}")"
      fi
    done < <(grep -oE "${_key_file_pattern}" <<<"${_key_bodies}" | sed 's|^[^/]*/||' | sort -u)
    local _key_a
    for _key_a in "$@"; do printf 'arg %s\n' "$(key_value "${_key_a}")"; done
    if grep -qE '(^|[[:space:];&|(])go (build|install|mod|run|list|get|env|-C)' <<<"${_key_bodies}"; then
      printf 'go %s\n' "$(go env GOVERSION GOOS GOARCH CGO_ENABLED GOFLAGS | tr '\n' ' ')"
    fi
  }
}

# cached GROUP NAME FUNC [ARGS...]
# Ensures $E2E_CACHE/GROUP/NAME is complete for its key (derive_key NAME
# FUNC ARGS...), calling "FUNC TMPDIR ARGS..." to build it into an empty
# TMPDIR when it is not. Prints the entry's path on stdout.
cached() {
  local group="$1" name="$2" fn="$3"
  shift 3
  local key
  key="$(derive_key "${name}" "${fn}" "$@")"
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
  # (without the lock and with its sleep's output nowhere: a sleep that
  # outlives the ticker must hold neither the lock nor the caller's stderr)
  (
    exec {fd}>&-
    while sleep 60 >/dev/null 2>&1; do
      log "still building ${group}/${name} ($((SECONDS - start))s)"
    done
  ) >/dev/null &
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

# artifacts_tool ARGS...: hack/e2e/artifacts (kind's recipe facts, staging
# replaces, the manifest; see its doc comment), run through go run, which
# keeps the built program in Go's build cache.
artifacts_tool() {
  go -C "${E2E_DIR}/artifacts" run -trimpath . "$@"
}

# go_scratch_module DIR MODPATH: starts an empty module in DIR.
go_scratch_module() {
  mkdir -p "$1"
  printf 'module %s\n\ngo 1.24.0\n' "$2" >"$1/go.mod"
}
