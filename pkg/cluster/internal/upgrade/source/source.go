/*
Copyright 2026 The kind-upgrade Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package source defines where an upgrade's target comes from: one small
// interface, Source, that preflight, the planner and the loaders use
// without knowing whether the target is a folder (--image-dir), a kind node
// image (--image) or both, and Open, which makes the Source the user's
// choices name.
package source

import (
	"context"
	"io"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts"
)

// Source holds the target Kubernetes version's kubeadm, kubelet and kubectl
// and some of the images its kubeadm needs, each readable as a stream. Its
// methods are safe for concurrent use.
type Source interface {
	// Name is how messages name the source, as the user gave it:
	// "--image-dir /tmp/v1.37.2", "--image kindest/node:v1.37.2".
	Name() string
	// Version is the Kubernetes version the source says it holds
	// ("v1.37.2"), or "" when only its kubeadm can tell.
	Version() string
	// Binary returns kubeadm, kubelet or kubectl (artifacts.Binaries).
	Binary(name string) *artifacts.Artifact
	// ArchiveFor returns the archive that provides image (compared in
	// fully qualified form), or nil when the source has none.
	ArchiveFor(image string) *artifacts.Artifact
	// Lacks says, for an image ArchiveFor does not provide, why the
	// source does not hold it when the source knows ("" otherwise).
	Lacks(image string) string
	// ForArch is what the user should give instead for nodes of the
	// architecture arch (a GOARCH).
	ForArch(arch string) string
	// Walk calls fn for each artifact of the source for which want
	// returns true, with a reader of its content that is valid until fn
	// returns and that fn must not close. It returns fn's errors
	// unchanged. Cancelling ctx stops it.
	Walk(ctx context.Context, want func(*artifacts.Artifact) bool, fn func(a *artifacts.Artifact, r io.Reader) error) error
	// Describe says what the source uses: a headline worth showing
	// always ("" for none), and details for a verbose log.
	Describe() (headline string, details []string)
	// Close removes what the source made to be read (an unpacked
	// tarball, a helper container). It is safe to call more than once.
	Close() error
}
