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

# build-base.sh: kind's base image, rebuilt offline from kind's own recipe.
# Sourced by build-artifacts.sh; not run on its own.
#
# The recipe is read at build time from the sigs.k8s.io/kind module this
# repository depends on (images/base/ in the module): the Debian suite and
# package list and the containerd, runc, crictl and CNI plugin versions come
# from its Dockerfile, the entrypoint, systemd units, kubelet drop-ins,
# containerd config, sysctl files and helper scripts from its files/ folder.
# Nothing of kind is copied into this repository; a kind bump changes the
# base image by itself.
#
# What kind fetches (git clones, release tarballs) is built here from the Go
# module proxy instead, with the versions and build tags kind's Dockerfile
# names. What has to differ on this host is a small overlay, applied last
# and listed in host_overlay.

# go_cmd_build OUT MODULE VERSION CGO TAGS LDFLAGS PKG... builds the main
# packages PKG (full import paths) of MODULE@VERSION from a scratch module
# into OUT, named after the last path element.
go_cmd_build() {
  local out="$1" module="$2" version="$3" cgo="$4" tags="$5" ldflags="$6"
  shift 6
  local work="${out}/.work" pkg
  go_scratch_module "${work}" kindupgrade.local/e2e/build
  printf '\nrequire %s %s\n' "${module}" "${version}" >>"${work}/go.mod"
  {
    printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for pkg in "$@"; do
      printf '\t_ "%s"\n' "${pkg}"
    done
    printf ')\n'
  } >"${work}/tools.go"
  (cd "${work}" && go mod tidy)
  for pkg in "$@"; do
    log "go build ${pkg}@${version} (cgo=${cgo})"
    (cd "${work}" && CGO_ENABLED="${cgo}" go build -trimpath -tags "${tags}" \
      -ldflags "-s -w ${ldflags}" -o "${out}/$(basename "${pkg}")" "${pkg}")
  done
  rm -rf "${work}"
}

# build_containerd OUT VERSION TAGS: containerd, ctr (cgo, as kind builds
# them) and the runc shim (static, as containerd's Makefile builds it).
build_containerd() {
  local out="$1" version="$2" tags="$3"
  local m=github.com/containerd/containerd/v2
  local ldflags="-X ${m}/version.Version=${version} -X ${m}/version.Package=${m}"
  go_cmd_build "${out}" "${m}" "${version}" 1 "${tags}" "${ldflags}" "${m}/cmd/containerd" "${m}/cmd/ctr"
  go_cmd_build "${out}" "${m}" "${version}" 0 "${tags}" "${ldflags}" "${m}/cmd/containerd-shim-runc-v2"
  reports "${out}/containerd --version" "${version}"
}

# build_runc OUT VERSION: runc with seccomp (cgo + libseccomp), like kind's.
build_runc() {
  local out="$1" version="$2"
  ensure_host_packages libseccomp-dev pkg-config
  go_cmd_build "${out}" github.com/opencontainers/runc "${version}" 1 "seccomp urfave_cli_no_docs" \
    "-X main.version=${version#v}" github.com/opencontainers/runc
  reports "${out}/runc --version" "libseccomp"
}

# build_cni_plugins OUT VERSION: the four plugins kind's base ships.
build_cni_plugins() {
  local out="$1" version="$2" m=github.com/containernetworking/plugins
  go_cmd_build "${out}" "${m}" "${version}" 0 "" \
    "-X ${m}/pkg/utils/buildversion.BuildVersion=${version}" \
    "${m}/plugins/ipam/host-local" "${m}/plugins/main/loopback" "${m}/plugins/main/ptp" "${m}/plugins/meta/portmap"
}

# build_fuse_overlayfs OUT VERSION: containerd's fuse-overlayfs snapshotter
# (kind uses it for rootless nodes only).
build_fuse_overlayfs() {
  local out="$1" version="$2" m=github.com/containerd/fuse-overlayfs-snapshotter/v2
  go_cmd_build "${out}" "${m}" "${version}" 1 "" "" "${m}/cmd/containerd-fuse-overlayfs-grpc"
}

# ensure_host_packages PKG...: installs Debian packages the builds need.
ensure_host_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg -s "${p}" >/dev/null 2>&1 || missing+=("${p}")
  done
  ((${#missing[@]} == 0)) && return 0
  log "installing ${missing[*]}"
  with_lock apt sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null' sh "${missing[@]}"
}

# install_kind_files KIND_BASE ROOT: kind's files/ tree into ROOT with the
# modes kind's Dockerfile gives them: scripts (usr/local/bin, kind/bin)
# 0755, everything else 0644, folders 0755.
install_kind_files() {
  local files="$1/files" root="$2" f rel mode
  while IFS= read -r -d '' f; do
    rel="${f#"${files}"/}"
    case "${rel}" in
    LICENSES/* | kind/README.txt) mode=0644 ;;
    usr/local/bin/* | kind/bin/*) mode=0755 ;;
    *) mode=0644 ;;
    esac
    install -D -m "${mode}" "${f}" "${root}/${rel}"
  done < <(find "${files}" -type f -print0)
  chmod 0755 "${root}/kind" "${root}/kind/bin"
}

# systemd_units_like_kind ROOT: the unit clean-up and enables of kind's
# Dockerfile: no services but the ones kind enables (containerd, kubelet,
# undo-mount-hacks), no tmpfiles set-up at boot, no kmsg in the journal,
# systemd as /sbin/init.
systemd_units_like_kind() {
  local root="$1" lib="$1/lib/systemd/system"
  rm -f "${lib}/sysinit.target.wants/systemd-tmpfiles-setup.service" \
    "${lib}"/multi-user.target.wants/* "${root}"/etc/systemd/system/*.wants/* \
    "${lib}"/local-fs.target.wants/* "${lib}"/sockets.target.wants/*udev* \
    "${lib}"/sockets.target.wants/*initctl* "${lib}"/basic.target.wants/*
  echo "ReadKMsg=no" >>"${root}/etc/systemd/journald.conf"
  [[ -e "${root}/sbin/init" || -L "${root}/sbin/init" ]] || ln -s /usr/lib/systemd/systemd "${root}/sbin/init"
  systemctl --root="${root}" --quiet enable kubelet.service containerd.service undo-mount-hacks.service
  systemctl --root="${root}" --quiet mask systemd-binfmt.service
  mkdir -p "${root}/etc/kubernetes/manifests"
}

# the label that ties the base image to its cache entry
KEY_LABEL="io.kind-upgrade-e2e.key"

# HOST_OVERLAY_NOTE is written into the image as /kind/e2e-overlay.txt, so
# anyone who looks at a node sees what differs from kind's base and why.
HOST_OVERLAY_NOTE="kind-upgrade e2e: what this base image changes on top of kind's recipe
- containerd CRI restrict_oom_score_adj = true: this host's capability
  bounding set lacks CAP_SYS_RESOURCE, so a pod sandbox may not lower its
  oom_score_adj (kind sets it to true itself for rootless/userns nodes)
- /etc/ssl/certs/kind-upgrade-e2e-mirror.pem: the CA of the offline image
  mirror that \`kind build node-image\` fetches images through (HTTPS_PROXY),
  since no container registry is reachable here"

# host_overlay ROOT CA_PEM: the only changes to kind's recipe this host
# needs (see HOST_OVERLAY_NOTE).
host_overlay() {
  local root="$1" ca="$2" config="$1/etc/containerd/config.toml"
  grep -q '^[[:space:]]*restrict_oom_score_adj = false' "${config}" ||
    die "kind's containerd config no longer sets restrict_oom_score_adj = false: review host_overlay"
  sed -i 's/^\([[:space:]]*restrict_oom_score_adj = \)false/\1true/' "${config}"
  install -m 0644 "${ca}" "${root}/etc/ssl/certs/kind-upgrade-e2e-mirror.pem"
  printf '%s\n' "${HOST_OVERLAY_NOTE}" >"${root}/kind/e2e-overlay.txt"
}

# build_kind_base_image OUT KIND_BASE ROOTFS_DIR BIN_DIRS NAME CA_PEM
# BIN_DIRS: "containerd runc crictl cni fuse" entry folders, in that order.
build_kind_base_image() {
  local out="$1" kind_base="$2" rootfs="$3" bins="$4" name="$5" ca="$6"
  local containerd runc crictl cni fuse
  read -r containerd runc crictl cni fuse <<<"${bins}"
  local root="${out}/root" old
  old="$(image_id "${name}")"
  mkdir -p "${root}"
  tar -C "${root}" --numeric-owner -xf "${rootfs}/rootfs.tar"

  install_kind_files "${kind_base}" "${root}"
  systemd_units_like_kind "${root}"

  install -m 0755 "${containerd}/containerd" "${containerd}/ctr" "${containerd}/containerd-shim-runc-v2" "${root}/usr/local/bin/"
  install -D -m 0755 "${runc}/runc" "${root}/usr/local/sbin/runc"
  install -m 0755 "${crictl}/crictl" "${root}/usr/local/bin/"
  install -d -m 0755 "${root}/opt/cni/bin"
  install -m 0755 "${cni}/host-local" "${cni}/loopback" "${cni}/ptp" "${cni}/portmap" "${root}/opt/cni/bin/"
  install -m 0755 "${fuse}/containerd-fuse-overlayfs-grpc" "${root}/usr/local/bin/"
  # the runtime spec template kind generates at build time: containerd's
  # default spec, with kind's product-files hook and without rlimits
  chroot "${root}" /usr/local/bin/ctr oci spec |
    chroot "${root}" jq '.hooks.createContainer += [{"path": "/kind/bin/mount-product-files.sh"}] | del(.process.rlimits)' \
      >"${root}/etc/containerd/cri-base.json"
  chroot "${root}" /usr/local/bin/containerd --version >&2
  chroot "${root}" /usr/local/sbin/runc --version >&2

  host_overlay "${root}" "${ca}"

  local tmp_name="${E2E_IMAGE_PREFIX}/kind-base-rootfs:build-$$"
  tar -C "${root}" --numeric-owner --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -cf - . |
    docker import --change 'ENV container=docker' - "${tmp_name}" >/dev/null
  rm -rf "${root}"
  local ctx="${out}/.ctx"
  mkdir -p "${ctx}"
  # docker import cannot set STOPSIGNAL
  cat >"${ctx}/Dockerfile" <<DOCKERFILE
FROM ${tmp_name}
STOPSIGNAL SIGRTMIN+3
LABEL ${KEY_LABEL}="$(basename "${out}")"
ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]
DOCKERFILE
  docker_build "${ctx}" "${name}"
  remove_images "${tmp_name}"
  rm -rf "${ctx}"
  record_image "${out}" "${name}"
  drop_replaced "${old}" "${name}"
}
build_kind_base_image_valid() { docker_image_entry_valid "$1"; }
