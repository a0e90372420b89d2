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

package upgrade

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/Masterminds/semver/v3"

	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/exec"
)

// hostKubectl returns the version of the kubectl on the host's PATH.
func hostKubectl(ctx context.Context, cmder exec.Cmder) (*semver.Version, error) {
	if cmder == nil {
		cmder = exec.DefaultCmder
	}
	out, err := exec.Output(cmder.CommandContext(ctx, "kubectl", "version", "--client", "-o", "json"))
	if err != nil {
		return nil, err
	}
	return parseKubectlVersion(out)
}

// parseKubectlVersion reads `kubectl version --client -o json`.
func parseKubectlVersion(out []byte) (*semver.Version, error) {
	var v struct {
		ClientVersion *struct {
			GitVersion string `json:"gitVersion"`
		} `json:"clientVersion"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, errors.Wrap(err, "failed to read kubectl's version")
	}
	if v.ClientVersion == nil || v.ClientVersion.GitVersion == "" {
		return nil, errors.New("kubectl's version output has no clientVersion.gitVersion")
	}
	return semver.NewVersion(v.ClientVersion.GitVersion)
}

// kubectlSkewHint is what to tell the user when kubectl (client) is
// outside kubectl's version skew policy against the cluster's version
// (within one minor version of the API server), "" when it is within it.
// copyFrom is a control-plane node, whose kubectl is at the cluster's
// version; provider the node provider's command.
func kubectlSkewHint(client, cluster *semver.Version, provider, copyFrom string) string {
	if client == nil || cluster == nil || client.Major() != cluster.Major() {
		return ""
	}
	diff := int64(cluster.Minor()) - int64(client.Minor())
	if diff >= -1 && diff <= 1 {
		return ""
	}
	return fmt.Sprintf("kubectl v%s on this host is more than one minor version away from the cluster's v%s, outside kubectl's version skew policy: use the cluster's own, e.g. `%s cp %s:/usr/bin/kubectl <a folder on your PATH>`", client, cluster, provider, copyFrom)
}
