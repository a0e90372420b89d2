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

package nodeutils

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/exec"
)

// WriteFile streams r into dest on the node. The content is written to a
// temporary file beside dest which is renamed over dest once complete, so
// dest is either absent, the old content or the whole new content. (kind's
// nodeutils.WriteFile takes the content as a string, writes dest in place
// and takes no context.)
func WriteFile(ctx context.Context, n nodes.Node, dest string, mode os.FileMode, r io.Reader) error {
	tmp := dest + ".tmp"
	if err := n.CommandContext(ctx, "mkdir", "-p", path.Dir(dest)).Run(); err != nil {
		return errors.Wrapf(err, "failed to create %s on %s", path.Dir(dest), n)
	}
	if err := n.CommandContext(ctx, "cp", "/dev/stdin", tmp).SetStdin(r).Run(); err != nil {
		return errors.Wrapf(err, "failed to write %s on %s", tmp, n)
	}
	if err := n.CommandContext(ctx, "chmod", fmt.Sprintf("%04o", mode.Perm()), tmp).Run(); err != nil {
		return errors.Wrapf(err, "failed to chmod %s on %s", tmp, n)
	}
	if err := n.CommandContext(ctx, "mv", "-f", tmp, dest).Run(); err != nil {
		return errors.Wrapf(err, "failed to rename %s to %s on %s", tmp, dest, n)
	}
	return nil
}

// existsScript prints whether $1 exists; unlike `test -e` it tells "no"
// apart from a failure to run anything at all.
const existsScript = `if [ -e "$1" ]; then echo yes; else echo no; fi`

// Exists reports whether p exists on the node.
func Exists(ctx context.Context, n nodes.Node, p string) (bool, error) {
	out, err := exec.Output(n.CommandContext(ctx, "sh", "-c", existsScript, "sh", p))
	if err != nil {
		return false, errors.Wrapf(err, "failed to check for %s on %s", p, n)
	}
	switch strings.TrimSpace(string(out)) {
	case "yes":
		return true, nil
	case "no":
		return false, nil
	}
	return false, errors.Errorf("failed to check for %s on %s: unexpected output %q", p, n, out)
}

// ReadFile returns the content of p on the node, and false when p does not
// exist.
func ReadFile(ctx context.Context, n nodes.Node, p string) (string, bool, error) {
	ok, err := Exists(ctx, n, p)
	if err != nil || !ok {
		return "", false, err
	}
	out, err := exec.Output(n.CommandContext(ctx, "cat", p))
	if err != nil {
		return "", false, errors.Wrapf(err, "failed to read %s on %s", p, n)
	}
	return string(out), true, nil
}

// FileDigests returns the sha256 of each path on the node; a path that does
// not exist has an empty digest.
func FileDigests(ctx context.Context, n nodes.Node, paths ...string) ([]string, error) {
	digests := make([]string, len(paths))
	var present []string
	index := map[string]int{}
	for i, p := range paths {
		ok, err := Exists(ctx, n, p)
		if err != nil {
			return nil, err
		}
		if ok {
			present = append(present, p)
			index[p] = i
		}
	}
	if len(present) == 0 {
		return digests, nil
	}
	lines, err := exec.OutputLines(n.CommandContext(ctx, "sha256sum", present...))
	if err != nil {
		return nil, errors.Wrapf(err, "failed to hash files on %s", n)
	}
	sums, err := parseSHA256Sum(lines)
	if err != nil {
		return nil, err
	}
	for p, sum := range sums {
		if i, ok := index[p]; ok {
			digests[i] = sum
		}
	}
	return digests, nil
}

// parseSHA256Sum parses sha256sum output lines into path -> digest.
func parseSHA256Sum(lines []string) (map[string]string, error) {
	sums := map[string]string{}
	for _, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 || len(fields[0]) != sha256.Size*2 {
			return nil, errors.Errorf("failed to parse sha256sum output line %q", line)
		}
		sums[strings.TrimPrefix(fields[1], "*")] = fields[0]
	}
	return sums, nil
}

// InstallBinary installs src over dest on the node atomically: the new
// binary is linked (or, across file systems, copied) beside dest and renamed
// over it, so dest is never a partial file. The previous dest, if any, is
// kept as dest.old (a hard link) for rollback.
func InstallBinary(ctx context.Context, n nodes.Node, src, dest string) error {
	tmp := dest + ".new"
	if err := n.CommandContext(ctx, "ln", "-f", src, tmp).Run(); err != nil {
		if ctx.Err() != nil {
			return errors.Wrapf(err, "cancelled while linking %s to %s on %s", src, tmp, n)
		}
		if err := n.CommandContext(ctx, "cp", src, tmp).Run(); err != nil {
			return errors.Wrapf(err, "failed to copy %s to %s on %s", src, tmp, n)
		}
	}
	if err := n.CommandContext(ctx, "chmod", "0755", tmp).Run(); err != nil {
		return errors.Wrapf(err, "failed to chmod %s on %s", tmp, n)
	}
	exists, err := Exists(ctx, n, dest)
	if err != nil {
		return err
	}
	if exists {
		if err := n.CommandContext(ctx, "ln", "-f", dest, dest+".old").Run(); err != nil {
			return errors.Wrapf(err, "failed to keep %s as %s.old on %s", dest, dest, n)
		}
	}
	if err := n.CommandContext(ctx, "mv", "-f", tmp, dest).Run(); err != nil {
		return errors.Wrapf(err, "failed to rename %s to %s on %s", tmp, dest, n)
	}
	return nil
}
