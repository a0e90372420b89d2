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

package loadartifacts

import (
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/nodecapture"
)

// TestParseSnapshotterOnRealNodes reads `containerd config dump` captured
// from kind nodes (containerd 2.3.4, which migrates kind's version 2 file
// to version 4; see testdata/nodes/README.md).
func TestParseSnapshotterOnRealNodes(t *testing.T) {
	t.Parallel()
	for _, version := range nodecapture.Versions {
		got, err := ParseSnapshotter(nodecapture.Read(t, version, "containerd-config-dump.toml"))
		if err != nil || got != "overlayfs" {
			t.Errorf("%s: ParseSnapshotter = %q, %v; want overlayfs", version, got, err)
		}
	}
}

// TestLocalImportOnRealNodes reads `ctr images import --help` captured from
// kind nodes (containerd 2.3.4 offers --local); containerd 1.6's ctr had no
// such flag.
func TestLocalImportOnRealNodes(t *testing.T) {
	t.Parallel()
	for _, version := range nodecapture.Versions {
		if !LocalImport(string(nodecapture.Read(t, version, "ctr-images-import-help.txt"))) {
			t.Errorf("%s: ctr offers no --local", version)
		}
	}
	old := "OPTIONS:\n   --all-platforms   Imports content for all platforms\n   --local-only-not-a-flag\n"
	if LocalImport(old) {
		t.Error("LocalImport found --local in a help without it")
	}
}
