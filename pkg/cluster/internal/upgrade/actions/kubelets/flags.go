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

package kubelets

import (
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// KubeadmFlagsEnv is the file kubeadm writes the kubelet's flags to, at
// join and at upgrade.
const KubeadmFlagsEnv = "/var/lib/kubelet/kubeadm-flags.env"

// droppedFlags are kubelet flags kubeadm wrote to KubeadmFlagsEnv that
// kubelets from a minor version on refuse at start ("unknown flag"), and
// which the kubeadm upgrade to that minor version removes:
// --pod-infra-container-image, written by kubeadm up to v1.34, is removed
// by kubeadm v1.35's post-upgrade phase. A kubelet moved across several
// minor versions at once (a chain's workers, a node left behind by
// --nodes) misses that kubeadm, so the kubelets phase removes them as it
// would have.
var droppedFlags = []struct {
	name  string
	minor uint64
}{
	{"pod-infra-container-image", 35},
}

// flagsEdit is what the flags step found: the stale flags and the file.
type flagsEdit struct {
	stale   []string
	content string
}

// staleFlags returns the flags of the flags file content that a kubelet
// at target refuses, in the order they are written.
func staleFlags(content string, target *semver.Version) []string {
	var stale []string
	for _, line := range strings.Split(content, "\n") {
		value, _ := argsOf(line)
		for _, arg := range strings.Fields(value) {
			name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
			for _, d := range droppedFlags {
				if name == d.name && target.Major() == 1 && target.Minor() >= d.minor {
					stale = append(stale, "--"+name)
				}
			}
		}
	}
	return stale
}

// argsOf returns the value of KUBELET_KUBEADM_ARGS if line sets it.
func argsOf(line string) (string, bool) {
	value, ok := strings.CutPrefix(strings.TrimSpace(line), "KUBELET_KUBEADM_ARGS=")
	return strings.Trim(value, `"`), ok
}

// withoutFlags returns the flags file content without the flags named
// (as "--name"), every other line and flag as it was.
func withoutFlags(content string, names []string) string {
	lines := strings.Split(content, "\n")
	for i, line := range lines {
		value, ok := argsOf(line)
		if !ok {
			continue
		}
		var kept []string
		for _, arg := range strings.Fields(value) {
			if name, _, _ := strings.Cut(arg, "="); !slices.Contains(names, name) {
				kept = append(kept, arg)
			}
		}
		lines[i] = `KUBELET_KUBEADM_ARGS="` + strings.Join(kept, " ") + `"`
	}
	return strings.Join(lines, "\n")
}
