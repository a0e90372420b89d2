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

# build-kubernetes.sh: the recipe of the seven Kubernetes binaries of one
# version (build_kubernetes), from the Go module k8s.io/kubernetes, offline
# except for the Go module proxy. Sourced with lib.sh by hack/e2e/artifacts
# (go -C hack/e2e/artifacts run . explain bin/kubernetes/VERSION shows what
# its entry's key is made of); not run on its own.

export GOTOOLCHAIN=local CGO_ENABLED=0 GOOS=linux GOARCH=amd64 GOFLAGS=-mod=mod

K8S_COMMANDS=(kubeadm kubelet kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy)

# build_kubernetes OUT VERSION REPLACES: REPLACES are the go mod edit
# -replace flags of VERSION's staging modules (hack/e2e/artifacts/staging).
build_kubernetes() {
  local out="$1" version="$2" replaces="$3"
  local minor major
  IFS=. read -r major minor _ <<<"${version#v}"
  local work="${out}/.work"
  go_scratch_module "${work}" kindupgrade.local/e2e/kubernetes

  # shellcheck disable=SC2086 # one go mod edit flag per word
  (cd "${work}" && go mod edit "-require=k8s.io/kubernetes@${version}" ${replaces})
  log "kubernetes ${version}: $(wc -w <<<"${replaces}") staging modules replaced"
  {
    printf '//go:build tools\n\npackage tools\n\nimport (\n'
    local c
    for c in "${K8S_COMMANDS[@]}"; do
      printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "${c}"
    done
    printf ')\n'
  } >"${work}/tools.go"
  (cd "${work}" && go mod tidy)

  local ldflags="-s -w" pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X ${pkg}.gitVersion=${version}"
    ldflags+=" -X ${pkg}.gitMajor=${major}"
    ldflags+=" -X ${pkg}.gitMinor=${minor}"
    ldflags+=" -X ${pkg}.gitCommit=0000000000000000000000000000000000000000"
    ldflags+=" -X ${pkg}.gitTreeState=clean"
    ldflags+=" -X ${pkg}.buildDate=2026-01-01T00:00:00Z"
  done
  local pkgs=()
  for c in "${K8S_COMMANDS[@]}"; do
    pkgs+=("k8s.io/kubernetes/cmd/${c}")
  done
  (cd "${work}" && go build -trimpath -ldflags "${ldflags}" -o "${out}/" "${pkgs[@]}")
  rm -rf "${work}"

  local got
  got="$("${out}/kubeadm" version -o short)"
  [[ "${got}" == "${version}" ]] || die "kubeadm reports ${got}, want ${version}"
}
