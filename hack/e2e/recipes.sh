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

# recipes.sh: how each entry of the offline lab's cache is made, one
# function per kind of entry (build_NAME OUT ARGS...). Sourced, with
# lib.sh and the other recipe scripts, by hack/e2e/artifacts, which
# decides what is built, keys each entry by the inputs it declares (these
# scripts among them) and passes every file, entry and value a recipe
# reads as an argument or a declared environment variable: a recipe runs
# with nounset and without E2E_DIR, so it cannot read an undeclared file
# of the checkout. Not run on its own.

# Prefix of the Docker images the recipes name (node, base, canary...).
E2E_IMAGE_PREFIX="${E2E_IMAGE_PREFIX:?hack/e2e/artifacts passes E2E_IMAGE_PREFIX}"
# registry.k8s.io/* tags exist in Docker only between import and save; runs
# with different caches must not interleave there.
DOCKER_TAG_LOCK="${TMPDIR:-/tmp}/kind-upgrade-e2e-docker-tags.lock"

export GOTOOLCHAIN=local CGO_ENABLED=0 GOOS=linux GOARCH=amd64 GOFLAGS=-mod=mod
export DOCKER_BUILDKIT=0
umask 022

debian_mirror() { # SUITE
  if [[ -n "${DEBIAN_MIRROR:-}" ]]; then
    echo "${DEBIAN_MIRROR}"
    return
  fi
  local uri
  uri="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
    awk '/^URIs:/ && $2 ~ /debian\/?$/ {print $2; exit}' || true)"
  if [[ -z "${uri}" ]]; then
    uri="$(awk '$1 == "deb" && $3 == "'"$1"'" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)"
  fi
  echo "${uri:-http://deb.debian.org/debian}"
}

# image_id NAME: Docker's id of an image, empty when absent.
image_id() {
  docker image inspect -f '{{.Id}}' "$1" 2>/dev/null || true
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
  go_module_build "$1" coredns . github.com/coredns/coredns "$2" "" "$3"
  reports "$1/coredns -version" "CoreDNS-${2#v}"
}

build_crictl() {
  go_module_build "$1" crictl sigs.k8s.io/cri-tools/cmd/crictl sigs.k8s.io/cri-tools "$2" "" "" \
    "-X sigs.k8s.io/cri-tools/pkg/version.Version=$2"
  reports "$1/crictl --version" "version $2"
}

# build_rootfs OUT SUITE PACKAGES: a debootstrapped Debian tree as
# OUT/rootfs.tar.
build_rootfs() {
  local out="$1" suite="$2" packages="$3"
  command -v debootstrap >/dev/null || {
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap
  }
  local root="${out}/root" mirror
  mirror="$(debian_mirror "${suite}")"
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

build_proxy_base_image() {
  local out="$1" rootfs="$2" name="$3"
  local old
  old="$(image_id "${name}")"
  docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    - "${name}" <"${rootfs}/rootfs.tar" >/dev/null
  record_image "${out}" "${name}"
  drop_replaced "${old}" "${name}"
}

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
  install -m 0755 "${IPTABLES_AUTO:?}" "${ctx}/files/usr/local/sbin/iptables-auto"
  local c
  for c in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
    ln -s /usr/local/sbin/iptables-auto "${ctx}/files/usr/sbin/${c}"
  done
  # the base as its entry named it (the entry is a declared input)
  cat >"${ctx}/Dockerfile" <<EOF
FROM ${PROXY_BASE_IMAGE:?}
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
    "${PROXY_BASE_IMAGE:?}" >"${ctx}/agnhost/Dockerfile"
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

# build_local_path_provisioner OUT VERSION
build_local_path_provisioner() {
  go_module_build "$1" local-path-provisioner github.com/rancher/local-path-provisioner \
    github.com/rancher/local-path-provisioner "$2" "" "" "-X main.VERSION=$2"
}
