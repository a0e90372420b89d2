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

# build-artifacts.sh: builds, offline, everything the upgrade e2e tests need
# for the pair E2E_FROM -> E2E_TO (default v1.36.3 -> v1.37.2), writes the
# artifacts' manifest and prints its path (the only line on stdout; logs go
# to stderr). The manifest, $E2E_CACHE/manifests/FROM-to-TO.json, is a flat
# JSON object (read by internal/lab/manifest and by manifest_field in
# artifacts-env.sh):
#
#   nodeImage       kind node image at FROM, every image its kubeadm needs
#                   preloaded
#   targetNodeImage kind node image at TO, made by kind's builder from
#                   targetRelease (what `kind alpha upgrade --image` takes)
#   imageExtrasDir  a folder of the archives that image lacks for an offline
#                   upgrade: kubeadm's pause at TO (`--image-dir` beside
#                   `--image`)
#   targetRelease   the kubernetes-server-linux-amd64.tar.gz of TO
#   mirrorImage     the stand-in registry (hack/e2e/mirror) as an image: an
#                   HTTPS proxy answering for registry.k8s.io and docker.io
#                   from archives, with the CA in mirrorCA (the node
#                   images trust it)
#   pullArchives    what it serves to nodes that pull: TO's etcd, CoreDNS
#                   and kubeadm's pause
#   imageDir        what a user brings to `kind alpha upgrade --image-dir`
#                   for TO: a release-like kubernetes/server/bin/ plus
#                   etcd.tar and coredns.tar for those images that differ
#                   from FROM's, and pause.tar (kind's nodes lack kubeadm's
#                   pause)
#   buildTree       a Kubernetes source tree's _output/ after `make
#                   quick-release` of TO: binaries in
#                   _output/dockerized/bin/linux/amd64/, image archives in
#                   _output/release-images/amd64/
#   downgradeImageDir  kubeadm, kubelet and kubectl at FROM (a flat folder:
#                   what an accidental downgrade brings)
#   sourceRelease   the kubernetes-server-linux-amd64.tar.gz of FROM (the
#                   node image is built from it)
#   fromEtcdImage, fromCoreDNSImage, fromPauseImage, toEtcdImage, ...
#                   the images kubeadm lists for each version
#   canaryImage     the test workload image (also loaded in Docker)
#   canaryArchive   the same as a docker-archive
#   upgradesSuite   Kubernetes' upgrade tests across kind alpha upgrade
#                   (test/upgrades, built from k8s.io/kubernetes at TO)
#   testImagesArchive  the images those tests run, under their names
#   kubectl         a host kubectl at FROM
#
# Sources: Go modules (Kubernetes, etcd, CoreDNS, crictl) and Debian
# packages (debootstrap). Every piece is cached under
#   ${KIND_UPGRADE_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kind-upgrade-e2e}
# keyed by a hash of everything its build reads (derive_key in lib.sh), so a
# warm run only checks stamps. Needs root and a running Docker engine (make
# host-setup).

set -o errexit -o nounset -o pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=build-kubernetes.sh
source "${E2E_DIR}/build-kubernetes.sh"

E2E_FROM="${E2E_FROM:-v1.36.3}"
E2E_TO="${E2E_TO:-v1.37.2}"
# the newest version of its Go module the proxy serves (kind ships v0.0.34)
LOCAL_PATH_PROVISIONER_VERSION="${LOCAL_PATH_PROVISIONER_VERSION:-v0.0.30}"
# this repository's kind: its `build node-image` is kind's builder
KIND="${KIND:-$(cd "${E2E_DIR}/../.." && pwd)/bin/kind}"
DEBIAN_SUITE="${DEBIAN_SUITE:-bookworm}"
# Prefix of the Docker images this script names itself (node, base, canary).
E2E_IMAGE_PREFIX="${E2E_IMAGE_PREFIX:-kind-upgrade-e2e}"
NODE_IMAGE_REPO="${E2E_IMAGE_PREFIX}/node"
CANARY_IMAGE="${E2E_IMAGE_PREFIX}/canary:v1"
# registry.k8s.io/* tags exist in Docker only between import and save; runs
# with different caches must not interleave there.
DOCKER_TAG_LOCK="${TMPDIR:-/tmp}/kind-upgrade-e2e-docker-tags.lock"
KEY_LABEL="io.kind-upgrade-e2e.key"

# shellcheck source-path=SCRIPTDIR source=build-base.sh
source "${E2E_DIR}/build-base.sh"
# shellcheck source-path=SCRIPTDIR source=build-node.sh
source "${E2E_DIR}/build-node.sh"
# shellcheck source-path=SCRIPTDIR source=build-envoy.sh
source "${E2E_DIR}/build-envoy.sh"

export GOTOOLCHAIN=local CGO_ENABLED=0 GOOS=linux GOARCH=amd64 GOFLAGS=-mod=mod
export DOCKER_BUILDKIT=0
umask 022

PROXY_PACKAGES=(iptables nftables conntrack ipset kmod iproute2)

# ---------------------------------------------------------------- helpers

debian_mirror() {
  if [[ -n "${DEBIAN_MIRROR:-}" ]]; then
    echo "${DEBIAN_MIRROR}"
    return
  fi
  local uri
  uri="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
    awk '/^URIs:/ && $2 ~ /debian\/?$/ {print $2; exit}' || true)"
  if [[ -z "${uri}" ]]; then
    uri="$(awk '$1 == "deb" && $3 == "'"${DEBIAN_SUITE}"'" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)"
  fi
  echo "${uri:-http://deb.debian.org/debian}"
}

# image_id NAME: Docker's id of an image, empty when absent.
image_id() {
  docker image inspect -f '{{.Id}}' "$1" 2>/dev/null || true
}

# Entries that describe a Docker image keep its id in DIR/image-id; they are
# valid only while Docker still has that image under DIR/image-name.
docker_image_entry_valid() {
  [[ -f "$1/image-id" && -f "$1/image-name" ]] || return 1
  [[ "$(image_id "$(cat "$1/image-name")")" == "$(cat "$1/image-id")" ]]
}

# record_image DIR NAME: remembers NAME's id in the entry.
record_image() {
  printf '%s' "$2" >"$1/image-name"
  image_id "$2" >"$1/image-id"
  [[ -s "$1/image-id" ]] || die "image $2 vanished"
}

# drop_replaced OLD_ID NAME: after NAME was rebuilt, removes the image it
# used to name, unless something (a container, another tag) still uses it.
drop_replaced() {
  if [[ -n "$1" && "$1" != "$(image_id "$2")" ]]; then
    docker rmi "$1" >/dev/null 2>&1 || true
  fi
}

# remove_images NAME...: drops tags (best effort).
remove_images() {
  docker rmi "$@" >/dev/null 2>&1 || true
}

# minimal_root DIR: what static-binary images need besides the binary.
minimal_root() {
  mkdir -p "$1/etc" "$1/tmp" "$1/usr/local/bin"
  chmod 1777 "$1/tmp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' >"$1/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$1/etc/group"
  printf 'hosts: files dns\n' >"$1/etc/nsswitch.conf"
}

# import_dir DIR NAME CHANGE...: docker import of DIR's content as NAME.
import_dir() {
  local dir="$1" name="$2"
  shift 2
  local changes=() c
  for c in "$@"; do
    changes+=(--change "${c}")
  done
  tar -C "${dir}" --numeric-owner --owner=0 --group=0 --sort=name --mtime=@0 -cf - . |
    docker import "${changes[@]}" - "${name}" >/dev/null
}

# docker_build CONTEXT NAME: a legacy-builder `docker build` of CONTEXT as
# NAME (the client's deprecation notice is only shown with a failure).
docker_build() {
  local out
  out="$(docker build -q --force-rm -t "$2" "$1" 2>&1)" || {
    printf '%s\n' "${out}" >&2
    return 1
  }
}

# save_images OUT_TAR NAME...: docker-archive holding the given tags.
save_images() {
  local out="$1"
  shift
  docker save -o "${out}.part" "$@"
  mv -f "${out}.part" "${out}"
}

# go_module_build OUT BIN PKG MODULE VERSION [TAGS [MAINFILE [LDFLAGS]]]:
# builds PKG (a main package of MODULE@VERSION, or MAINFILE placed in a
# scratch module that requires MODULE@VERSION) to OUT/BIN.
go_module_build() {
  local out="$1" bin="$2" pkg="$3" module="$4" version="$5" tags="${6:-}" mainfile="${7:-}" ldflags="${8:-}"
  local work="${out}/.work"
  go_scratch_module "${work}" kindupgrade.local/e2e/build
  printf '\nrequire %s %s\n' "${module}" "${version}" >>"${work}/go.mod"
  if [[ -n "${mainfile}" ]]; then
    cp "${mainfile}" "${work}/main.go"
    pkg=.
  else
    printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "${pkg}" >"${work}/tools.go"
  fi
  (cd "${work}" && go mod tidy && go build -trimpath -tags "${tags}" -ldflags "-s -w ${ldflags}" -o "${out}/${bin}" "${pkg}")
  rm -rf "${work}"
}

# ------------------------------------------------------------ binaries

# reports "CMD ARGS" TEXT: fails unless CMD's output contains TEXT. (The
# output is captured first: a grep -q that stops reading early would make
# CMD die of SIGPIPE, failing the pipeline at random.)
reports() {
  local out
  # shellcheck disable=SC2086 # "CMD ARGS" is split on purpose
  out="$($1 2>&1)" || die "$1 failed: ${out}"
  [[ "${out}" == *"$2"* ]] || die "$1 does not report '$2': ${out}"
}

build_etcd() {
  go_module_build "$1" etcd go.etcd.io/etcd/server/v3 go.etcd.io/etcd/server/v3 "v$2"
  reports "$1/etcd --version" "etcd Version: $2"
}

build_coredns() {
  go_module_build "$1" coredns . github.com/coredns/coredns "$2" "" "${E2E_DIR}/coredns/main.go"
  reports "$1/coredns -version" "CoreDNS-${2#v}"
}

build_crictl() {
  go_module_build "$1" crictl sigs.k8s.io/cri-tools/cmd/crictl sigs.k8s.io/cri-tools "$2" "" "" \
    "-X sigs.k8s.io/cri-tools/pkg/version.Version=$2"
  reports "$1/crictl --version" "version $2"
}

# build_helpers OUT: pause, canary, the registry mirror, kindnetd and the
# load balancer stand-in (envoy), from this repository.
build_helpers() {
  # every source by its path, so that derive_key sees each of them
  go -C "${E2E_DIR}" build -modfile "${E2E_DIR}/go.mod" -trimpath -ldflags "-s -w" -o "$1/" \
    "${E2E_DIR}/pause" "${E2E_DIR}/canary" "${E2E_DIR}/mirror" "${E2E_DIR}/kindnetd" "${E2E_DIR}/envoy"
}

# -------------------------------------------------------- root file systems

# build_rootfs OUT SUITE PACKAGES: a debootstrapped Debian tree as
# OUT/rootfs.tar.
build_rootfs() {
  local out="$1" suite="$2" packages="$3"
  command -v debootstrap >/dev/null || {
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap
  }
  local root="${out}/root" mirror
  mirror="$(debian_mirror)"
  mkdir -p "${E2E_CACHE}/debs/${suite}"
  log "debootstrap ${suite} from ${mirror}: ${packages}"
  with_lock debs debootstrap --variant=minbase --include="${packages}" \
    --cache-dir="${E2E_CACHE}/debs/${suite}" "${suite}" "${root}" "${mirror}" >"${out}/debootstrap.log" 2>&1 ||
    {
      tail -n 30 "${out}/debootstrap.log" >&2
      return 1
    }
  chroot "${root}" apt-get clean
  rm -rf "${root}"/var/lib/apt/lists/* "${root}"/var/cache/apt/*.bin \
    "${root}"/usr/share/doc/* "${root}"/usr/share/man/* "${root}"/usr/share/info/* \
    "${root}"/var/log/*.log "${root}"/var/log/apt/* "${root}"/tmp/* "${root}"/run/*
  find "${root}/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} + 2>/dev/null || true
  # Fresh identity per container: empty machine-id, no dbus copy of it.
  : >"${root}/etc/machine-id"
  rm -f "${root}/var/lib/dbus/machine-id"
  if [[ -d "${root}/usr/lib/cni" ]]; then
    mkdir -p "${root}/opt/cni/bin"
    cp -a "${root}"/usr/lib/cni/. "${root}/opt/cni/bin/"
  fi
  tar -C "${root}" --numeric-owner --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' \
    -cf "${out}/rootfs.tar.part" .
  mv "${out}/rootfs.tar.part" "${out}/rootfs.tar"
  rm -rf "${root}"
}

# ------------------------------------------------------------ base images

build_proxy_base_image() {
  local out="$1" rootfs="$2" name="${E2E_IMAGE_PREFIX}/proxy-base:${DEBIAN_SUITE}"
  local old
  old="$(image_id "${name}")"
  docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    - "${name}" <"${rootfs}/rootfs.tar" >/dev/null
  record_image "${out}" "${name}"
  drop_replaced "${old}" "${name}"
}
build_proxy_base_image_valid() { docker_image_entry_valid "$1"; }

# ------------------------------------------------------------ image archives

# build_static_image_tar OUT BIN_PATH ENTRYPOINT_JSON CMD_JSON NAME...:
# OUT/image.tar with an image holding only BIN_PATH (at /usr/local/bin and
# linked from /), tagged NAME... Kubernetes' own images (etcd, kube-*) get
# no ENTRYPOINT and the binary as CMD, so both kubeadm's pod specs (command:
# [kube-apiserver, ...]) and `docker run IMAGE kube-apiserver --version`
# work; CoreDNS, pause and the canary run from their ENTRYPOINT.
build_static_image_tar() {
  with_file_lock "${DOCKER_TAG_LOCK}" static_image_tar "$@"
}
static_image_tar() {
  local out="$1" bin="$2" entrypoint="$3" cmd="$4"
  shift 4
  local root="${out}/.root" base
  base="$(basename "${bin}")"
  minimal_root "${root}"
  install -m 0755 "${bin}" "${root}/usr/local/bin/${base}"
  ln -s "usr/local/bin/${base}" "${root}/${base}"
  import_dir "${root}" "$1" \
    'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
    "ENTRYPOINT ${entrypoint}" \
    "CMD ${cmd}"
  rm -rf "${root}"
  local n
  for n in "${@:2}"; do
    docker tag "$1" "${n}"
  done
  save_images "${out}/image.tar" "$@"
  printf '%s\n' "$@" >"${out}/image-names"
  remove_images "$@"
}

# build_debian_tool_tar OUT BIN ENTRYPOINT_JSON CMD_JSON NAME: BIN (in
# /usr/local/bin) on the Debian proxy base (iptables, conntrack, ip), its
# iptables commands picking the backend the node uses. kube-proxy and
# kindnetd images.
build_debian_tool_tar() {
  with_file_lock "${DOCKER_TAG_LOCK}" debian_tool_tar "$@"
}
debian_tool_tar() {
  local out="$1" bin="$2" entrypoint="$3" cmd="$4" name="$5"
  local ctx="${out}/.ctx"
  mkdir -p "${ctx}/files/usr/local/bin" "${ctx}/files/usr/local/sbin" "${ctx}/files/usr/sbin"
  install -m 0755 "${bin}" "${ctx}/files/usr/local/bin/$(basename "${bin}")"
  install -m 0755 "${E2E_DIR}/kube-proxy/iptables-auto.sh" "${ctx}/files/usr/local/sbin/iptables-auto"
  local c
  for c in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
    ln -s /usr/local/sbin/iptables-auto "${ctx}/files/usr/sbin/${c}"
  done
  # the base by its cache entry, which makes the entry an input of this one
  cat >"${ctx}/Dockerfile" <<EOF
FROM $(cat "${PROXY_BASE_DIR}/image-name")
COPY files/ /
ENTRYPOINT ${entrypoint}
CMD ${cmd}
EOF
  docker_build "${ctx}" "${name}"
  rm -rf "${ctx}"
  save_images "${out}/image.tar" "${name}"
  printf '%s\n' "${name}" >"${out}/image-names"
  remove_images "${name}"
}

# ------------------------------------------------------- upgrade artifacts

# link_or_copy SRC DST: hard link when possible (entries are immutable).
link_or_copy() {
  ln -f "$1" "$2" 2>/dev/null || cp "$1" "$2"
}

# build_image_dir OUT VERSION KUBE_DIR CP_TAR_DIRS(4, space separated) ETCD COREDNS PAUSE
# Lays out what `kind alpha upgrade --image-dir` gets.
build_image_dir() {
  local out="$1" version="$2" kube="$3" cp_dirs="$4" etcd="$5" coredns="$6" pause="$7"
  local bin="${out}/kubernetes/server/bin"
  mkdir -p "${bin}"
  local b
  for b in kubeadm kubelet kubectl; do
    link_or_copy "${kube}/${b}" "${bin}/${b}"
  done
  local d comp
  for d in ${cp_dirs}; do
    comp="$(sed -n '1s|^registry\.k8s\.io/\(.*\)-amd64:.*$|\1|p' "${d}/image-names")"
    [[ -n "${comp}" ]] || die "unexpected image name in ${d}"
    link_or_copy "${d}/image.tar" "${bin}/${comp}.tar"
    printf '%s' "${version}" >"${bin}/${comp}.docker_tag"
  done
  # not in a release: etcd, CoreDNS and pause archives beside it
  [[ -z "${etcd}" ]] || link_or_copy "${etcd}/image.tar" "${out}/etcd.tar"
  [[ -z "${coredns}" ]] || link_or_copy "${coredns}/image.tar" "${out}/coredns.tar"
  [[ -z "${pause}" ]] || link_or_copy "${pause}/image.tar" "${out}/pause.tar"
}

# build_binaries_dir OUT KUBE_DIR: kubeadm, kubelet and kubectl only.
build_binaries_dir() {
  local b
  for b in kubeadm kubelet kubectl; do
    link_or_copy "$2/${b}" "$1/${b}"
  done
}

# build_kube_tree OUT KUBE_DIR CP_TAR_DIRS PAUSE_DIR: the _output/ folder a
# Kubernetes source tree has after `make quick-release` (the parts
# `kind alpha upgrade` reads): every server binary in
# _output/dockerized/bin/linux/amd64/ and the control-plane image archives
# (registry.k8s.io/<name>-amd64:<version>) in _output/release-images/amd64/,
# plus what the user guide tells a maintainer to add there: kubeadm's pause
# image, which kind's nodes lack (a build makes no etcd, CoreDNS or pause
# archive).
build_kube_tree() {
  local out="$1" kube="$2" cp_dirs="$3" pause="$4"
  local bin="${out}/_output/dockerized/bin/linux/amd64" images="${out}/_output/release-images/amd64"
  mkdir -p "${bin}" "${images}"
  local b d comp
  for b in kubeadm kubelet kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy; do
    link_or_copy "${kube}/${b}" "${bin}/${b}"
  done
  for d in ${cp_dirs}; do
    comp="$(sed -n '1s|^registry\.k8s\.io/\(.*\)-amd64:.*$|\1|p' "${d}/image-names")"
    [[ -n "${comp}" ]] || die "unexpected image name in ${d}"
    link_or_copy "${d}/image.tar" "${images}/${comp}.tar"
  done
  link_or_copy "${pause}/image.tar" "${images}/pause.tar"
}

# unless_same FROM_DIR TO_DIR: TO_DIR, or nothing when both entries hold
# the same image (a patch upgrade keeps etcd, CoreDNS and pause).
unless_same() {
  if [[ "$(cat "$1/image-names")" != "$(cat "$2/image-names")" ]]; then
    printf '%s' "$2"
  fi
}

# ---------------------------------------------------------------- main

# lock_free NAME: true when no run holds the lock of cache entry NAME.
lock_free() {
  local f="${E2E_CACHE}/locks/$1.lock" fd
  [[ -e "${f}" ]] || return 0
  exec {fd}<"${f}"
  if flock -n "${fd}"; then
    exec {fd}<&-
    return 0
  fi
  exec {fd}<&-
  return 1
}

# cleanup_leftovers removes what interrupted runs left in Docker: the
# mirror, kind's node build containers and temporary base tags, unless a
# build holds their entry's lock.
cleanup_leftovers() {
  local c
  if lock_free images_kind-base && lock_free images_node-"${E2E_FROM}"; then
    stop_mirror
    for c in $(docker ps -a --format '{{.Names}}' | grep '^kind-build-' || true); do
      log "removing leftover build container ${c}"
      docker rm -f "${c}" >/dev/null 2>&1 || true
    done
    for c in $(docker images --format '{{.Repository}}:{{.Tag}}' "${E2E_IMAGE_PREFIX}/kind-base-rootfs"); do
      log "removing leftover image ${c}"
      remove_images "${c}"
    done
  fi
}

# images_for VERSION: kubeadm's image list for VERSION (one per line).
images_for() {
  "${E2E_CACHE}/bin/kubernetes/$1/kubeadm" config images list --kubernetes-version "$1" 2>/dev/null
}

# tag_of LIST COMPONENT: the tag of registry.k8s.io/COMPONENT in LIST.
tag_of() {
  sed -n "s|^registry\.k8s\.io/$2:\(.*\)$|\1|p" <<<"$1" | head -n 1
}

# ensure_static_image OUT_VAR BIN ENTRYPOINT CMD NAME...: cached image tar.
ensure_static_image() {
  local var="$1" bin="$2" entrypoint="$3" cmd="$4"
  shift 4
  local entry_name
  entry_name="$(sed 's|^registry\.k8s\.io/||; s|/|_|g; s|:|_|' <<<"$1")"
  local path
  path="$(cached images "${entry_name}" build_static_image_tar "${bin}" "${entrypoint}" "${cmd}" "$@")"
  printf -v "${var}" '%s' "${path}"
}

# version_images VERSION SUFFIX: builds the image archives VERSION needs
# (control-plane names get SUFFIX, e.g. -amd64) and sets the globals
# CP_DIRS (apiserver, controller-manager, scheduler, proxy), ETCD_DIR,
# COREDNS_DIR, PAUSE_DIR.
version_images() {
  local version="$1" suffix="$2"
  local kube="${E2E_CACHE}/bin/kubernetes/${version}"
  local list
  list="$(images_for "${version}")"
  [[ -n "${list}" ]] || die "kubeadm ${version} lists no images"
  local etcd_tag coredns_tag pause_tag
  etcd_tag="$(tag_of "${list}" etcd)"
  coredns_tag="$(tag_of "${list}" coredns/coredns)"
  pause_tag="$(tag_of "${list}" pause)"
  [[ -n "${etcd_tag}" && -n "${coredns_tag}" && -n "${pause_tag}" ]] || die "cannot parse kubeadm's image list: ${list}"
  log "${version}: etcd ${etcd_tag}, coredns ${coredns_tag}, pause ${pause_tag}"

  local etcd_ver="${etcd_tag%-*}" d built=""
  d="$(cached bin/etcd "${etcd_ver}" build_etcd "${etcd_ver}")"
  ensure_static_image ETCD_DIR "${d}/etcd" '[]' '["/usr/local/bin/etcd"]' "registry.k8s.io/etcd:${etcd_tag}"

  d="$(cached bin/coredns "${coredns_tag}" build_coredns "${coredns_tag}")"
  ensure_static_image COREDNS_DIR "${d}/coredns" '["/coredns"]' '[]' "registry.k8s.io/coredns/coredns:${coredns_tag}"

  ensure_static_image PAUSE_DIR "${HELPERS_DIR}/pause" '["/pause"]' '[]' "registry.k8s.io/pause:${pause_tag}"

  CP_DIRS=""
  local c out
  for c in kube-apiserver kube-controller-manager kube-scheduler; do
    ensure_static_image out "${kube}/${c}" '[]' "[\"/usr/local/bin/${c}\"]" "registry.k8s.io/${c}${suffix}:${version}"
    CP_DIRS+="${out} "
  done
  local pname="registry.k8s.io/kube-proxy${suffix}:${version}"
  local pentry="kube-proxy${suffix}_${version}"
  out="$(cached images "${pentry}" build_debian_tool_tar "${kube}/kube-proxy" '[]' '["/usr/local/bin/kube-proxy"]' "${pname}")"
  CP_DIRS+="${out}"

  # Cross-check: every image kubeadm wants is among what was built.
  local built want
  for d in ${CP_DIRS} "${ETCD_DIR}" "${COREDNS_DIR}" "${PAUSE_DIR}"; do
    built+="$(sed "s|${suffix}:|:|" "${d}/image-names")"$'\n'
  done
  while read -r want; do
    grep -qxF "${want}" <<<"${built}" || die "kubeadm ${version} wants ${want}, which was not built"
  done <<<"${list}"
}


# ensure_proxy_rootfs: the cached Debian tree of the kube-proxy and kindnetd
# images.
ensure_proxy_rootfs() {
  cached rootfs "proxy-${DEBIAN_SUITE}" build_rootfs "${DEBIAN_SUITE}" "$(
      IFS=,
      echo "${PROXY_PACKAGES[*]}"
    )"
}

# ensure_kind_rootfs: the cached Debian tree of kind's base image: kind's
# suite and package list.
ensure_kind_rootfs() {
  local packages
  packages="$(kind_base packages)"
  cached rootfs "kind-base-${KIND_BASE_SUITE}" build_rootfs "${KIND_BASE_SUITE}" "${packages}"
}

# ensure_component VAR NAME ARG FUNC [ARGS...]: a cached Go build of one of
# the base image's components, keyed by the recipe and the Go version.
ensure_component() {
  local var="$1" name="$2" version="$3" fn="$4"
  shift 4
  local path
  path="$(cached "bin/${name}" "${version}" "${fn}" "${version}" "$@")"
  printf -v "${var}" '%s' "${path}"
}

# ------------------------------------------------- Kubernetes' upgrade tests

# upgrades_suite_inputs MODULE_DIR: the folders of this checkout's
# packages that the upgrade tests' binary links, as go list resolves them
# (its replace line makes them this checkout's), one per line: a change in
# any of them (pkg/cluster's events, say) rebuilds the binary.
upgrades_suite_inputs() {
  local dirs
  dirs="$(cd "$1" && go list -deps -test -f '{{if not .Standard}}{{.Dir}}{{end}}' ./suite)" ||
    die "go list could not resolve the packages of $1/suite"
  while IFS= read -r dir; do
    if [[ "${dir}" == "${KEY_REPO}"/* ]]; then
      printf '%s\n' "${dir}"
    fi
  done <<<"${dirs}" | LC_ALL=C sort -u
}

# build_upgrades_suite OUT VERSION MODULE_DIR [KEYED...]: the upgrade tests
# of MODULE_DIR (test/upgrades) against k8s.io/kubernetes VERSION, as
# OUT/upgrades.test; agnhost from that module's own source (OUT/agnhost,
# for the test images); OUT/images, the images the tests run (`ROLE NAME`
# lines). The module uses this checkout ($KEY_REPO) through its replace
# line; KEYED are the files of the checkout the binary is also made of
# (the key leaves _test.go files out of folders).
build_upgrades_suite() {
  local out="$1" version="$2" module="$3"
  local work="${out}/.work"
  mkdir -p "${work}"
  cp -a "${module}/." "${work}/"
  (
    cd "${work}"
    go mod edit -replace "github.com/kindupgrade/kind-upgrade=${KEY_REPO}"
    if [[ "$(go list -m -f '{{.Version}}' k8s.io/kubernetes)" != "${version}" ]]; then
      ARTIFACTS_TOOL_DIR="${E2E_DIR}/artifacts" "${E2E_DIR}/upgrades-module.sh" . "${version}"
    fi
    go test -c -trimpath -o "${out}/upgrades.test" ./suite
    go build -trimpath -ldflags "-s -w" -o "${out}/agnhost" k8s.io/kubernetes/test/images/agnhost
  )
  rm -rf "${work}"
  "${out}/upgrades.test" --list-kind-images >"${out}/images"
  [[ -s "${out}/images" ]] || die "upgrades.test --list-kind-images listed nothing"
}

# build_test_images OUT SUITE_DIR: the images of SUITE_DIR/images, built
# here under the names the tests ask for, by role: agnhost, the module's
# own agnhost on the Debian proxy base (Debian's sh and coreutils for the
# commands the tests run in its pods; the real image is Alpine's with
# bash, curl and more); busybox, Debian's busybox-static with its applets
# linked (the real one is busybox built by Kubernetes); nginx, agnhost
# serving HTTP on port 80 (the tests only run it and wait for it to be
# ready). OUT/image.tar and OUT/image-names.
build_test_images() {
  ensure_host_packages busybox-static
  with_file_lock "${DOCKER_TAG_LOCK}" test_images "$@"
}
test_images() {
  local out="$1" suite="$2" ctx="$1/.context" agnhost="${E2E_IMAGE_PREFIX}/agnhost:test"
  mkdir -p "${ctx}/agnhost" "${ctx}/nginx"
  install -m 0755 "${suite}/agnhost" "${ctx}/agnhost/agnhost"
  printf 'FROM %s\nCOPY agnhost /agnhost\nENTRYPOINT ["/agnhost"]\nCMD ["pause"]\n' \
    "${E2E_IMAGE_PREFIX}/proxy-base:${DEBIAN_SUITE}" >"${ctx}/agnhost/Dockerfile"
  docker_build "${ctx}/agnhost" "${agnhost}"
  printf 'FROM %s\nENTRYPOINT ["/agnhost", "netexec", "--http-port=80"]\nCMD []\n' "${agnhost}" >"${ctx}/nginx/Dockerfile"
  docker_build "${ctx}/nginx" "${agnhost}-nginx"

  local root="${ctx}/busybox" applet
  minimal_root "${root}"
  mkdir -p "${root}/bin"
  install -m 0755 /bin/busybox "${root}/bin/busybox"
  for applet in $(/bin/busybox --list); do
    [[ -e "${root}/bin/${applet}" ]] || ln -s busybox "${root}/bin/${applet}"
  done
  import_dir "${root}" "${agnhost}-busybox" 'ENV PATH=/usr/local/bin:/usr/bin:/bin' 'CMD ["sh"]'

  local role name names=()
  while read -r role name; do
    case "${role}" in
    agnhost) docker tag "${agnhost}" "${name}" ;;
    nginx | busybox) docker tag "${agnhost}-${role}" "${name}" ;;
    *) die "no stand-in for the test image ${name} (role ${role})" ;;
    esac
    names+=("${name}")
  done <"${suite}/images"
  save_images "${out}/image.tar" "${names[@]}"
  printf '%s\n' "${names[@]}" >"${out}/image-names"
  remove_images "${names[@]}" "${agnhost}" "${agnhost}-nginx" "${agnhost}-busybox"
  rm -rf "${ctx}"
}

ensure_canary() {
  CANARY_DIR="$(cached images canary_v1 build_static_image_tar "${HELPERS_DIR}/canary" '["/canary"]' '["serve"]' "${CANARY_IMAGE}")"
  # The tests may also want it in Docker (kind load docker-image).
  if [[ -z "$(image_id "${CANARY_IMAGE}")" ]]; then
    docker load -i "${CANARY_DIR}/image.tar" >/dev/null
  fi
}

# build_local_path_helper_tar OUT NAME: the helper image kind's storage
# manifest runs for volume set-up and teardown (sh, mkdir, rm): Debian's
# static busybox.
build_local_path_helper_tar() {
  with_file_lock "${DOCKER_TAG_LOCK}" local_path_helper_tar "$@"
}
local_path_helper_tar() {
  local out="$1" name="$2" root="$1/.root"
  ensure_host_packages busybox-static
  minimal_root "${root}"
  install -D -m 0755 /bin/busybox "${root}/bin/busybox"
  local applet
  for applet in sh mkdir rm ls cat; do
    ln -s busybox "${root}/bin/${applet}"
  done
  import_dir "${root}" "${name}" 'ENV PATH=/usr/local/bin:/usr/bin:/bin' 'CMD ["/bin/sh"]'
  rm -rf "${root}"
  save_images "${out}/image.tar" "${name}"
  printf '%s\n' "${name}" >"${out}/image-names"
  remove_images "${name}"
}

# build_mirror_archives OUT DIR...: the archives the mirror serves to kind's
# node builder, as hard links to the cached image entries.
build_mirror_archives() {
  local out="$1" d
  shift
  for d in "$@"; do
    link_or_copy "${d}/image.tar" "${out}/$(basename "${d}").tar"
  done
}

# ensure_addon_images: kindnetd, local-path-provisioner and its helper under
# the names kind's manifests use (read from the kind module); sets
# KINDNETD_DIR, LOCAL_PATH_DIR, LOCAL_PATH_HELPER_DIR.
ensure_addon_images() {
  local nodeimage="${KIND_MODULE}/pkg/build/nodeimage" name entry
  name="$(kind_go_const "${nodeimage}/const_cni.go" kindnetdImage)"
  entry="$(sed 's|/|_|g; s|:|_|' <<<"${name}")"
  KINDNETD_DIR="$(cached images "${entry}" build_debian_tool_tar "${HELPERS_DIR}/kindnetd" '["/usr/local/bin/kindnetd"]' '[]' "${name}")"

  local lpp
  ensure_component lpp local-path-provisioner "${LOCAL_PATH_PROVISIONER_VERSION}" build_local_path_provisioner
  name="$(kind_go_const "${nodeimage}/const_storage.go" storageProvisionerImage)"
  ensure_static_image LOCAL_PATH_DIR "${lpp}/local-path-provisioner" '[]' '["/usr/local/bin/local-path-provisioner"]' "${name}"

  name="$(kind_go_const "${nodeimage}/const_storage.go" storageHelperImage)"
  entry="$(sed 's|/|_|g; s|:|_|' <<<"${name}")"
  LOCAL_PATH_HELPER_DIR="$(cached images "${entry}" build_local_path_helper_tar "${name}")"
}

# build_local_path_provisioner OUT VERSION
build_local_path_provisioner() {
  go_module_build "$1" local-path-provisioner github.com/rancher/local-path-provisioner \
    github.com/rancher/local-path-provisioner "$2" "" "" "-X main.VERSION=$2"
}

main() {
  [[ "$(id -u)" == 0 ]] || die "must run as root (debootstrap, Docker)"
  local start=${SECONDS}
  docker info >/dev/null 2>&1 || die "no Docker engine answers: run make host-setup (hack/e2e/docker-setup.sh) first"
  mkdir -p "${E2E_CACHE}"
  log "cache: ${E2E_CACHE}"
  [[ -x "${KIND}" ]] || die "no kind binary at ${KIND}: run make build"

  KIND_MODULE="$(kind_module_dir)"
  KIND_BASE="${KIND_MODULE}/images/base"
  KIND_BASE_SUITE="${KIND_BASE_SUITE:-$(kind_base suite)}"
  log "kind's recipe: ${KIND_MODULE} (Debian ${KIND_BASE_SUITE})"
  cleanup_leftovers

  # The Debian trees mostly download: build them while Kubernetes compiles.
  local rootfs_pid
  (ensure_kind_rootfs && ensure_proxy_rootfs) >/dev/null &
  rootfs_pid=$!

  # Kubernetes first: by far the longest build.
  local v replaces
  for v in "${E2E_FROM}" "${E2E_TO}"; do
    replaces="$(kubernetes_replaces "${v}")"
    cached bin/kubernetes "${v}" build_kubernetes "${v}" "${replaces}" >/dev/null
  done
  local kube_node="${E2E_CACHE}/bin/kubernetes/${E2E_FROM}"
  local kube_up="${E2E_CACHE}/bin/kubernetes/${E2E_TO}"

  # keyed by the programs' sources (derive_key leaves tests out: editing a
  # test rebuilds nothing)
  HELPERS_DIR="$(cached bin helpers build_helpers)"

  # kind's base image components, at the versions its Dockerfile names
  local containerd runc crictl cni fuse
  local -A arg=()
  for v in CONTAINERD_VERSION BUILDTAGS RUNC_VERSION CRICTL_VERSION CNI_PLUGINS_VERSION CONTAINERD_FUSE_OVERLAYFS_VERSION; do
    arg["${v}"]="$(kind_base arg "${v}")"
  done
  ensure_component containerd containerd "${arg[CONTAINERD_VERSION]}" build_containerd "${arg[BUILDTAGS]}"
  ensure_component runc runc "${arg[RUNC_VERSION]}" build_runc
  ensure_component crictl crictl "${arg[CRICTL_VERSION]}" build_crictl
  ensure_component cni cni-plugins "${arg[CNI_PLUGINS_VERSION]}" build_cni_plugins
  ensure_component fuse fuse-overlayfs "${arg[CONTAINERD_FUSE_OVERLAYFS_VERSION]}" build_fuse_overlayfs

  wait "${rootfs_pid}" || die "building the Debian root file systems failed"
  local kind_rootfs proxy_rootfs
  kind_rootfs="$(ensure_kind_rootfs)"
  proxy_rootfs="$(ensure_proxy_rootfs)"
  PROXY_BASE_DIR="$(cached images proxy-base build_proxy_base_image "${proxy_rootfs}")"

  local ca base_dir d
  ca="$(cached certs mirror-ca build_mirror_ca)"
  base_dir="$(cached images kind-base build_kind_base_image "${KIND_BASE}" "${kind_rootfs}" "${containerd} ${runc} ${crictl} ${cni} ${fuse}" \
    "${E2E_IMAGE_PREFIX}/base:${KIND_BASE_SUITE}" "${ca}/ca.pem")"

  ensure_canary
  ensure_addon_images

  # Kubernetes' upgrade tests, built from the target's module, and the
  # images they run
  local suite_dir test_images_dir suite_inputs
  suite_inputs="$(upgrades_suite_inputs "${KEY_REPO}/test/upgrades")"
  # shellcheck disable=SC2086 # one folder of this checkout per word
  suite_dir="$(cached bin "upgrades-${E2E_TO}" build_upgrades_suite "${E2E_TO}" "${KEY_REPO}/test/upgrades" \
    "${KEY_REPO}/test/upgrades/suite/suite_test.go" ${suite_inputs})"
  test_images_dir="$(cached images "test-images-${E2E_TO}" build_test_images "${suite_dir}")"

  # kind's HA load balancer image: the stand-in under kind's name, in Docker
  local envoy_name envoy_entry
  envoy_name="$(envoy_image_name)"
  envoy_entry="$(sed 's|/|_|g; s|:|_|' <<<"${envoy_name}")"
  cached images "${envoy_entry}" build_envoy_image "${HELPERS_DIR}/envoy" "${envoy_name}" >/dev/null

  # The node image: kind's builder, fed by the mirror with the images it
  # does not build (etcd, CoreDNS, the sandbox image, the add-ons).
  version_images "${E2E_FROM}" "-amd64"
  local sandbox sandbox_dir
  sandbox="$(kind_base sandbox)"
  ensure_static_image sandbox_dir "${HELPERS_DIR}/pause" '["/pause"]' '[]' "${sandbox}"
  local mirror_dirs=("${ETCD_DIR}" "${COREDNS_DIR}" "${sandbox_dir}" "${KINDNETD_DIR}" "${LOCAL_PATH_DIR}" "${LOCAL_PATH_HELPER_DIR}")
  local archives
  archives="$(cached artifacts "mirror-${E2E_FROM}" build_mirror_archives "${mirror_dirs[@]}")"
  local release
  release="$(cached artifacts "release-${E2E_FROM}" build_release_tarball "${E2E_FROM}" "${kube_node}" "${CP_DIRS}")"
  local node_dir
  node_dir="$(cached images "node-${E2E_FROM}" build_kind_node_image "${release}/kubernetes-server-linux-amd64.tar.gz" "${base_dir}" \
    "${NODE_IMAGE_REPO}:${E2E_FROM}" "${archives}" "${ca}")"

  local from_etcd="${ETCD_DIR}" from_coredns="${COREDNS_DIR}" from_pause="${PAUSE_DIR}"
  local downgrade_dir
  downgrade_dir="$(cached artifacts "binaries-${E2E_FROM}" build_binaries_dir "${kube_node}")"

  # The folder a user would bring for the upgrade: the release's server/bin
  # plus the etcd, CoreDNS and pause archives that change.
  version_images "${E2E_TO}" "-amd64"
  local new_etcd new_coredns new_pause
  new_etcd="$(unless_same "${from_etcd}" "${ETCD_DIR}")"
  new_coredns="$(unless_same "${from_coredns}" "${COREDNS_DIR}")"
  # kind's node image holds its containerd sandbox image, not kubeadm's
  # pause, which kubeadm's upgrade health check runs
  new_pause="$(unless_same "${sandbox_dir}" "${PAUSE_DIR}")"
  local image_dir entry="${E2E_TO}-from-${E2E_FROM}"
  image_dir="$(cached artifacts "${entry}" build_image_dir "${E2E_TO}" "${kube_up}" "${CP_DIRS}" "${new_etcd}" "${new_coredns}" "${new_pause}")"
  local build_tree
  build_tree="$(cached artifacts "tree-${E2E_TO}" build_kube_tree "${kube_up}" "${CP_DIRS}" "${PAUSE_DIR}")"

  # The target's node image, made as kind's CI and kubeadm's maintainers
  # make one (kind's builder on the target's release tarball), and the
  # folder the user guide says to add to it offline: kubeadm's pause, which
  # kind's builder replaces by containerd's sandbox image.
  local to_archives to_release to_node_dir extras_dir
  to_archives="$(cached artifacts "mirror-${E2E_TO}" build_mirror_archives "${ETCD_DIR}" "${COREDNS_DIR}" "${sandbox_dir}" \
    "${KINDNETD_DIR}" "${LOCAL_PATH_DIR}" "${LOCAL_PATH_HELPER_DIR}")"
  to_release="$(cached artifacts "release-${E2E_TO}" build_release_tarball "${E2E_TO}" "${kube_up}" "${CP_DIRS}")"
  to_node_dir="$(cached images "node-${E2E_TO}" build_kind_node_image "${to_release}/kubernetes-server-linux-amd64.tar.gz" "${base_dir}" \
    "${NODE_IMAGE_REPO}:${E2E_TO}" "${to_archives}" "${ca}")"
  extras_dir="$(cached artifacts "extras-${E2E_TO}" build_mirror_archives "${PAUSE_DIR}")"

  # What a registry serves to the nodes of the e2e cluster that pulls
  # through the mirror: the target's etcd, CoreDNS and kubeadm's pause.
  local mirror_image_dir pull_archives
  mirror_image_dir="$(cached images mirror build_mirror_image "${HELPERS_DIR}")"
  pull_archives="$(cached artifacts "pull-${E2E_TO}" build_mirror_archives "${ETCD_DIR}" "${COREDNS_DIR}" "${PAUSE_DIR}")"

  log "done in $((SECONDS - start))s"
  local manifest="${E2E_CACHE}/manifests/${E2E_FROM}-to-${E2E_TO}.json"
  artifacts_tool manifest-write "${manifest}" \
    from "${E2E_FROM}" \
    to "${E2E_TO}" \
    nodeImage "$(cat "${node_dir}/image-name")" \
    targetNodeImage "$(cat "${to_node_dir}/image-name")" \
    imageExtrasDir "${extras_dir}" \
    targetRelease "${to_release}/kubernetes-server-linux-amd64.tar.gz" \
    mirrorImage "$(cat "${mirror_image_dir}/image-name")" \
    mirrorCA "${ca}" \
    pullArchives "${pull_archives}" \
    imageDir "${image_dir}" \
    buildTree "${build_tree}" \
    downgradeImageDir "${downgrade_dir}" \
    sourceRelease "${release}/kubernetes-server-linux-amd64.tar.gz" \
    fromEtcdImage "$(head -n1 "${from_etcd}/image-names")" \
    fromCoreDNSImage "$(head -n1 "${from_coredns}/image-names")" \
    fromPauseImage "$(head -n1 "${from_pause}/image-names")" \
    toEtcdImage "$(head -n1 "${ETCD_DIR}/image-names")" \
    toCoreDNSImage "$(head -n1 "${COREDNS_DIR}/image-names")" \
    toPauseImage "$(head -n1 "${PAUSE_DIR}/image-names")" \
    canaryImage "${CANARY_IMAGE}" \
    canaryArchive "${CANARY_DIR}/image.tar" \
    upgradesSuite "${suite_dir}/upgrades.test" \
    testImagesArchive "${test_images_dir}/image.tar" \
    kubectl "${kube_node}/kubectl"
  printf '%s\n' "${manifest}"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  main "$@"
  exit
fi
