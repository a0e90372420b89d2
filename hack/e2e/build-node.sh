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

# build-node.sh: node images made by kind's own builder, offline. Sourced
# by build-artifacts.sh; not run on its own.
#
# `kind build node-image` (this repository's binary, i.e. kind's builder
# unchanged) takes a Kubernetes release tarball and the base image. Inside
# its build container it fetches the images it does not build (etcd,
# CoreDNS, the sandbox image, kindnetd, local-path-provisioner and its
# helper) with `ctr content fetch`, through HTTPS_PROXY when that is set in
# its environment. No registry is reachable here, so the images built on
# this machine are served by hack/e2e/mirror: an HTTPS proxy that answers
# for registry.k8s.io and docker.io itself, from `docker save` archives,
# with a CA the base image trusts (see build-base.sh's host_overlay).

MIRROR_CONTAINER="${E2E_IMAGE_PREFIX}-mirror"
MIRROR_IMAGE="${E2E_IMAGE_PREFIX}/mirror:v1"
MIRROR_PORT=3128
# the same program under its own name for the e2e clusters that pull
# through it (start_mirror imports MIRROR_IMAGE again for every build)
PULL_MIRROR_IMAGE="${E2E_IMAGE_PREFIX}/registry-mirror:v1"

# start_mirror ARCHIVES_DIR CA_DIR: runs the mirror container serving every
# archive below ARCHIVES_DIR; prints the proxy URL.
start_mirror() {
  stop_mirror
  # from the current helpers build, every time (an import of one binary)
  local root
  root="$(mktemp -d)"
  minimal_root "${root}"
  install -m 0755 "${MIRROR_BIN:?}" "${root}/usr/local/bin/mirror"
  import_dir "${root}" "${MIRROR_IMAGE}" 'ENTRYPOINT ["/usr/local/bin/mirror"]'
  rm -rf "${root}"
  docker run -d --name "${MIRROR_CONTAINER}" \
    -v "$1:/archives:ro" -v "$2:/ca:ro" "${MIRROR_IMAGE}" \
    serve --listen ":${MIRROR_PORT}" --ca-dir /ca --archives /archives >/dev/null
  # ready once it has indexed the archives and listens
  local deadline=$((SECONDS + 60))
  until docker logs "${MIRROR_CONTAINER}" 2>&1 | grep -q 'proxy listening'; do
    if ((SECONDS > deadline)) || [[ "$(docker inspect -f '{{.State.Running}}' "${MIRROR_CONTAINER}")" != true ]]; then
      docker logs "${MIRROR_CONTAINER}" >&2 || true
      die "the mirror did not start"
    fi
    sleep 0.2
  done
  local ip
  ip="$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "${MIRROR_CONTAINER}")"
  [[ -n "${ip}" ]] || die "the mirror container has no IP address"
  printf 'http://%s:%s\n' "${ip}" "${MIRROR_PORT}"
}

# build_mirror_image OUT MIRROR_BIN: the mirror as a Docker image, for the
# e2e clusters whose nodes pull through it (its own cache entry, so that a
# Docker that lost the image gets it again).
build_mirror_image() {
  local root old
  old="$(image_id "${PULL_MIRROR_IMAGE}")"
  root="$(mktemp -d)"
  minimal_root "${root}"
  install -m 0755 "$2" "${root}/usr/local/bin/mirror"
  import_dir "${root}" "${PULL_MIRROR_IMAGE}" 'ENTRYPOINT ["/usr/local/bin/mirror"]'
  rm -rf "${root}"
  record_image "$1" "${PULL_MIRROR_IMAGE}"
  drop_replaced "${old}" "${PULL_MIRROR_IMAGE}"
}
build_mirror_image_valid() { docker_image_entry_valid "$1"; }

stop_mirror() {
  docker rm -f "${MIRROR_CONTAINER}" >/dev/null 2>&1 || true
}

# build_release_tarball OUT VERSION KUBE_DIR CP_DIRS: what kind's builder
# takes: kubernetes-server-linux-amd64.tar.gz with kubernetes/version and
# kubernetes/server/bin/ holding kubeadm, kubelet, kubectl and the four
# kube-* image archives (+ .docker_tag), as a Kubernetes release has them.
build_release_tarball() {
  local out="$1" version="$2" kube="$3" cp_dirs="$4"
  local tree="${out}/.tree"
  build_image_dir "${tree}" "${version}" "${kube}" "${cp_dirs}" "" "" ""
  printf '%s\n' "${version}" >"${tree}/kubernetes/version"
  local gz=gzip
  command -v pigz >/dev/null && gz=pigz
  tar -C "${tree}" --numeric-owner --owner=0 --group=0 -cf - kubernetes | "${gz}" -1 >"${out}/kubernetes-server-linux-amd64.tar.gz.part"
  mv "${out}/kubernetes-server-linux-amd64.tar.gz.part" "${out}/kubernetes-server-linux-amd64.tar.gz"
  rm -rf "${tree}"
}

# build_kind_node_image OUT TARBALL BASE_ENTRY NAME ARCHIVES_DIR CA_DIR:
# `kind build node-image` of TARBALL on the base image of the cache entry
# BASE_ENTRY, fed by the mirror.
build_kind_node_image() {
  local out="$1" tarball="$2" base name="$4" archives="$5" ca="$6"
  base="$(cat "$3/image-name")"
  local old proxy
  old="$(image_id "${name}")"
  proxy="$(start_mirror "${archives}" "${ca}")"
  log "kind build node-image ${name} (images through the mirror at ${proxy})"
  local rc=0
  HTTPS_PROXY="${proxy}" HTTP_PROXY="${proxy}" NO_PROXY="" \
    "${KIND:?}" build node-image --type file --base-image "${base}" --image "${name}" "${tarball}" \
    >"${out}/build.log" 2>&1 || rc=$?
  docker logs "${MIRROR_CONTAINER}" >"${out}/mirror.log" 2>&1 || true
  stop_mirror
  if ((rc != 0)); then
    tail -n 40 "${out}/build.log" >&2
    tail -n 20 "${out}/mirror.log" >&2
    return "${rc}"
  fi
  # kind's builder names the result; label it so the cache can tell it is ours
  record_image "${out}" "${name}"
  drop_replaced "${old}" "${name}"
}
build_kind_node_image_valid() { docker_image_entry_valid "$1"; }
