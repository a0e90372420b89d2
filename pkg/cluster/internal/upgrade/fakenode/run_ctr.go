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
	"bytes"
	"slices"
	"strings"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/imageref"
)

func (n *Node) runCtr(args []string, stdin []byte) (string, int) {
	if len(args) < 3 || args[0] != "--namespace=k8s.io" || args[1] != "images" {
		return "fakenode: unsupported ctr command", 127
	}
	switch args[2] {
	case "ls":
		var b strings.Builder
		for image := range n.Images {
			b.WriteString(image + "\n")
		}
		return b.String(), 0
	case "import":
		if slices.Contains(args, "--help") {
			help := "NAME:\n   ctr images import - Import images\n\nOPTIONS:\n   --all-platforms   Imports content for all platforms, false by default (default: false)\n"
			if !n.OldCtr {
				help += "   --local           Run import locally rather than through transfer API (default: false)\n"
			}
			return help, 0
		}
		if n.OldCtr && slices.Contains(args, "--local") {
			return "Incorrect Usage: flag provided but not defined: -local", 1
		}
		if n.cluster.CutImports > 0 {
			// containerd's words for the cut stream, as the CI run printed them
			n.cluster.CutImports--
			if n.cluster.CutAtAnEntry {
				return "ctr: unrecognized image format", 1
			}
			return `ctr: failed to ingest "index.json": short read: expected 382 bytes but got 0: unexpected EOF`, 1
		}
		content, err := readArchive(bytes.NewReader(stdin))
		if err != nil {
			return "ctr: failed to import: " + err.Error(), 1
		}
		// as containerd does: all platforms need every platform's content,
		// one platform needs that platform's
		if slices.Contains(args, "--all-platforms") {
			for digest := range content.missing {
				return "ctr: content digest " + digest + ": not found", 1
			}
		}
		if i := slices.Index(args, "--platform"); i >= 0 && i+1 < len(args) && len(content.arches)+len(content.missing) > 0 {
			if arch := strings.TrimPrefix(args[i+1], "linux/"); !content.arches[arch] {
				return "ctr: no match for platform in manifest: not found", 1
			}
		}
		for _, ref := range content.refs {
			n.Images[imageref.Normalize(ref)] = false
		}
		return "", 0
	case "tag":
		src, dst := args[len(args)-2], args[len(args)-1]
		pinned, ok := n.Images[src]
		if !ok {
			return "ctr: image " + src + ": not found", 1
		}
		n.Images[dst] = pinned
		return "", 0
	case "label":
		ref := args[3]
		if _, ok := n.Images[ref]; !ok {
			return "ctr: image " + ref + ": not found", 1
		}
		n.Images[ref] = true
		return "", 0
	}
	return "fakenode: unsupported ctr command", 127
}
