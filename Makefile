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

# Builds and tests kind with `kind alpha upgrade`.
#
#   make build     bin/kind
#   make install   bin/kind into INSTALL_DIR (default: $(go env GOPATH)/bin)
#   make unit      unit tests, with the race detector
#   make host-setup  a running Docker engine (installed if needed), the runc
#                  wrapper this kind of VM needs, kind's inotify limits
#                  (needs root; every target below that creates clusters
#                  runs it first)
#   make e2e       the end-to-end test on a real Docker engine: 1 control plane
#                  and 1 worker (needs root)
#   make e2e-ha    the end-to-end test on 3 control planes behind kind's load
#                  balancer and 2 workers, with availability probes (needs root)
#   make e2e-faults  the end-to-end test that stops the upgrade at every point
#                  of a chain (signals, killed docker exec, restarted node)
#                  and resumes it (needs root)
#   make e2e-faults-short  the same with a short chain (part of make test)
#   make e2e-pinned  the end-to-end test of a cluster whose kubeadmConfigPatches
#                  pin etcd's and CoreDNS's images (needs root)
#   make e2e-compat  the end-to-end test of compatibility versions: the control
#                  plane upgraded emulating the old minor, kubelets and
#                  kube-proxy left behind, the emulation removed, the rest
#                  upgraded (needs root)
#   make e2e-chain  the end-to-end test of a chain of targets in one command:
#                  v1.34.4 -> v1.35.4 -> v1.36.3 -> v1.37.2 (E2E_CHAIN),
#                  killed in the second target and finished by Kubernetes'
#                  upgrade tests, one worker's kubelet left at v1.34 (N-3),
#                  then moved through the Go API with a hook (needs root)
#   make e2e-chain-compat  the same chain emulating its first version,
#                  kubelets and kube-proxy left behind, then the emulation
#                  raised a minor at a time and removed, the emulated
#                  version's [sig-api-machinery] conformance tests after
#                  each step (E2E_CONFORMANCE=0: without them; needs root)
#   make e2e-podman  make e2e's upgrade on a cluster kind created with podman
#                  (KIND_EXPERIMENTAL_PROVIDER=podman; installs and sets up
#                  podman, hack/e2e/podman-setup.sh; needs root)
#   make e2e-k8s-upgrade  Kubernetes' own upgrade tests across kind alpha
#                  upgrade as a CI job runs them (hack/ci/e2e-k8s-upgrade.sh):
#                  1 control plane and 2 workers, a master then a node
#                  upgrade (needs root)
#   make e2e-k8s-upgrade-ha  the same on 3 control planes behind kind's load
#                  balancer and 2 workers, one cluster upgrade (needs root)
#   make test      unit, then e2e, e2e-pinned (which runs Kubernetes' upgrade
#                  tests), e2e-ha and the short fault chain
#   make bench     kind alpha upgrade against the hand-typed kubeadm sequence and
#                  upstream kind load, side by side (needs root; hours)
#   make verify    gofmt, go vet, go mod tidy, shellcheck, license headers, lint
#   make lint      golangci-lint only
#   make e2e-matrix  the e2e for every version pair of the matrix (needs root)
#   make demo      create a v1.36 cluster and upgrade it to v1.37 (needs root)
#   make clean     remove bin/
#
# E2E_FROM and E2E_TO choose the versions of the e2e targets, the benchmark
# and make demo (default v1.36.3 -> v1.37.2), e.g. make e2e E2E_FROM=v1.35.4
# E2E_TO=v1.36.3. ARGS go to the test after -args, or to the benchmark:
# make e2e ARGS=-keep-cluster, make bench ARGS="-rounds 1 -loading none".

################################################################################
# ============================== Environment ===================================
REPO_ROOT := $(CURDIR)
OUT_DIR := $(REPO_ROOT)/bin
# Go from PATH, else where the machine image installs it
export PATH := $(PATH):/usr/local/go/bin
GO ?= go
# the e2e's versions, when given (hack/e2e/artifacts-env.sh has the defaults)
export E2E_FROM E2E_TO
# flags for the e2e test or the benchmark
ARGS ?=
################################################################################
# ================================ Options =====================================
INSTALL ?= install
INSTALL_DIR ?= $(shell $(GO) env GOPATH)/bin
KIND_BINARY_NAME ?= kind
# the version baked into the binary: `git describe` of a tagged commit,
# else the default in pkg/cmd/kind/version
VERSION ?= $(shell git describe --tags --dirty 2>/dev/null)
VERSION_PKG := github.com/kindupgrade/kind-upgrade/pkg/cmd/kind/version
# reproducible (-trimpath, no build id), small (-s -w) and static (no cgo)
KIND_LD_FLAGS := -buildid= -s -w $(if $(VERSION),-X=$(VERSION_PKG).Version=$(VERSION))
KIND_BUILD_FLAGS ?= -trimpath -ldflags="$(KIND_LD_FLAGS)"
################################################################################
# ================================ Building ====================================
all: build

build:
	CGO_ENABLED=0 $(GO) build $(KIND_BUILD_FLAGS) -o "$(OUT_DIR)/$(KIND_BINARY_NAME)" ./cmd/kind

# use: make install INSTALL_DIR=/usr/local/bin
install: build
	$(INSTALL) -d "$(INSTALL_DIR)"
	$(INSTALL) "$(OUT_DIR)/$(KIND_BINARY_NAME)" "$(INSTALL_DIR)/$(KIND_BINARY_NAME)"
################################################################################
# ================================= Testing ====================================
unit:
	hack/make-rules/unit.sh

host-setup:
	hack/make-rules/host-setup.sh

e2e: build host-setup
	hack/make-rules/e2e.sh upgrade $(ARGS)

e2e-matrix: build host-setup
	hack/make-rules/e2e-matrix.sh

e2e-ha: build host-setup
	hack/make-rules/e2e.sh ha $(ARGS)

e2e-faults: build host-setup
	hack/make-rules/e2e.sh faults $(ARGS)

e2e-faults-short: build host-setup
	hack/make-rules/e2e.sh faults-short $(ARGS)

e2e-pinned: build host-setup
	hack/make-rules/e2e.sh pinned $(ARGS)

e2e-compat: build host-setup
	hack/make-rules/e2e.sh compat $(ARGS)

e2e-chain: build host-setup
	hack/make-rules/e2e.sh chain $(ARGS)

e2e-chain-compat: build host-setup
	hack/make-rules/e2e.sh chain-compat $(ARGS)

e2e-podman: build host-setup
	hack/make-rules/e2e.sh podman $(ARGS)

e2e-k8s-upgrade: build host-setup
	TOPOLOGY=1cp-2w hack/ci/e2e-k8s-upgrade.sh

e2e-k8s-upgrade-ha: build host-setup
	TOPOLOGY=ha hack/ci/e2e-k8s-upgrade.sh

e2e-compatibility-versions: build host-setup
	hack/ci/e2e-compatibility-versions.sh

bench: build host-setup
	hack/make-rules/e2e.sh bench $(ARGS)

# unit, then the end-to-end tests (not in parallel, even under make -j)
test:
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory e2e
	@$(MAKE) --no-print-directory e2e-pinned
	@$(MAKE) --no-print-directory e2e-ha
	@$(MAKE) --no-print-directory e2e-faults-short

demo: build host-setup
	hack/make-rules/demo.sh
################################################################################
# ================================ Checking ====================================
verify:
	hack/make-rules/verify.sh

lint:
	hack/make-rules/lint.sh

shellcheck:
	hack/make-rules/verify.sh shellcheck
################################################################################
# ================================ Cleanup =====================================
clean:
	rm -rf "$(OUT_DIR)"
################################################################################
.PHONY: all build install unit host-setup e2e e2e-matrix e2e-ha e2e-faults e2e-faults-short e2e-pinned e2e-compat e2e-chain e2e-chain-compat e2e-podman e2e-k8s-upgrade e2e-k8s-upgrade-ha e2e-compatibility-versions bench test demo verify lint shellcheck clean
