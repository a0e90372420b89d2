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

# podman-images.sh IMAGE...: makes each image, built offline into Docker's
# store by build-artifacts.sh, present in podman's store under the name
# kind's podman provider looks for (docker.io/ completed, as `podman pull
# kindest/node:...` stores it), streamed with `docker save IMAGE | podman
# load`, no file in between; podman load's own localhost/ name is removed.
# An image podman already holds with the same ID (its config's digest) is
# skipped. Says what it loads and how long it took.

set -o errexit -o nounset -o pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $# -gt 0 ]] || die "usage: podman-images.sh IMAGE..."
# podman_name IMAGE: the name kind's podman provider gives IMAGE.
podman_name() {
  local first="${1%%/*}"
  if [[ "$1" == */* && ("${first}" == *[.:]* || "${first}" == localhost) ]]; then
    printf '%s\n' "$1"
  elif [[ "$1" == */* ]]; then
    printf 'docker.io/%s\n' "$1"
  else
    printf 'docker.io/library/%s\n' "$1"
  fi
}

for image in "$@"; do
  name="$(podman_name "${image}")"
  want="$(docker image inspect --format '{{.Id}}' "${image}")" || die "${image} is not in Docker's store: build the artifacts first (hack/e2e/build-artifacts.sh)"
  have="$(podman image inspect --format '{{.Id}}' "${name}" 2>/dev/null || true)"
  if [[ "sha256:${have#sha256:}" == "${want}" ]]; then
    log "podman holds ${name} (${want:7:12})"
    continue
  fi
  start="${SECONDS}"
  log "loading ${image} into podman's store as ${name} (docker save | podman load) ..."
  loaded="$(docker save "${image}" | podman load --quiet)" || die "podman load of ${image} failed"
  loaded="${loaded##*: }"
  if [[ "${loaded}" != "${name}" ]]; then
    podman tag "${loaded}" "${name}"
    podman untag "${name}" "${loaded}"
  fi
  have="$(podman image inspect --format '{{.Id}}' "${name}")" || die "podman load did not store ${name}"
  [[ "sha256:${have#sha256:}" == "${want}" ]] || die "podman holds ${name} as ${have}, Docker ${image} as ${want}"
  log "loaded ${name} into podman in $((SECONDS - start))s"
done
