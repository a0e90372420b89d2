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

package fakenode

import (
	"fmt"
	"strings"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/imageref"
)

// runCrictl simulates `crictl pull IMAGE` through the node's containerd:
// it succeeds for an image of the cluster's Registry and fails, as crictl
// fails on a node that cannot reach the registry, for any other.
func (n *Node) runCrictl(args []string) (string, int) {
	if len(args) != 2 || args[0] != "pull" {
		return "crictl: unknown command " + strings.Join(args, " "), 1
	}
	ref := imageref.Normalize(args[1])
	if !n.cluster.Registry[ref] {
		// what crictl prints on a kind node that reaches no registry
		host, rest, _ := strings.Cut(strings.TrimPrefix(ref, "docker.io/"), "/")
		repo, tag, _ := strings.Cut(rest, ":")
		why := fmt.Sprintf(`failed to pull and unpack image \"%s\": failed to resolve reference \"%s\": failed to do request: Head \"https://%s/v2/%s/manifests/%s\": dial tcp: lookup %s on 172.18.0.1:53: no such host`, ref, ref, host, repo, tag, host)
		return fmt.Sprintf("E1202 04:04:31.265326    1455 remote_image.go:250] \"PullImage from image service failed\" err=\"rpc error: code = Unknown desc = %s\" image=\"%s\"\n"+
			"time=\"2026-12-02T04:04:31Z\" level=fatal msg=\"pulling image: %s\"\n", why, ref, why), 1
	}
	n.Images[ref] = false
	return "Image is up to date for sha256:" + digest([]byte(ref)) + "\n", 0
}
