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

# build-envoy.sh: the stand-in for kind's HA load balancer image. Sourced by
# build-artifacts.sh; not run on its own.
#
# For clusters with several control planes kind runs a container of the
# image its loadbalancer.Image names (docker.io/envoyproxy/envoy:v1.36.2 in
# kind v0.33), which cannot be pulled here. kind never pulls it: its `docker
# run` takes a local image of that name, with kind's own command (a `bash -c`
# script that writes /home/envoy/envoy.yaml and loops on `envoy -c` it) in
# place of the image's CMD. So the image is built under kind's name on the
# Debian proxy base (bash, coreutils) with hack/e2e/envoy as `envoy`, no
# ENTRYPOINT, and kept in Docker; it is not saved to an archive.

# build_envoy_image OUT BIN NAME: the Docker image NAME, BIN at
# /usr/local/bin/envoy on the Debian proxy base; OUT records it.
build_envoy_image() {
  local out="$1" bin="$2" name="$3"
  # the stand-in says which image it was written for (kind_test.go pins it)
  reports "${bin} --version" "stand-in for ${name} "
  local ctx="${out}/.ctx" old
  old="$(image_id "${name}")"
  mkdir -p "${ctx}/files/usr/local/bin" "${ctx}/files/home/envoy"
  install -m 0755 "${bin}" "${ctx}/files/usr/local/bin/envoy"
  # the base as its entry named it (the entry is a declared input)
  cat >"${ctx}/Dockerfile" <<EOF
FROM ${PROXY_BASE_IMAGE:?}
COPY files/ /
WORKDIR /home/envoy
ENTRYPOINT []
CMD ["envoy", "--version"]
EOF
  docker_build "${ctx}" "${name}"
  rm -rf "${ctx}"
  # what kind's script runs besides envoy: bash, mkdir, sleep
  docker run --rm "${name}" bash -c 'command -v envoy mkdir sleep >/dev/null' ||
    die "${name} lacks what kind's load balancer script runs (bash, mkdir, sleep, envoy)"
  record_image "${out}" "${name}"
  drop_replaced "${old}" "${name}"
}
build_envoy_image_valid() { docker_image_entry_valid "$1"; }
