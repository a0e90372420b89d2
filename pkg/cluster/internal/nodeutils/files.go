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
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/exec"
)

// WriteFile streams r into dest on the node. The content is written to a
// temporary file beside dest which is renamed over dest once complete, so
// dest is either absent, the old content or the whole new content. (kind's
// nodeutils.WriteFile takes the content as a string, writes dest in place
// and takes no context.) Two commands: the rename is never part of the
// command that reads r, because a command whose client goes away (Ctrl-C)
// keeps running in the node and would rename a partial file.
func WriteFile(ctx context.Context, n nodes.Node, dest string, mode os.FileMode, r io.Reader) error {
	tmp := dest + ".tmp"
	if err := StreamScript.Command(ctx, n, tmp).SetStdin(r).Run(); err != nil {
		return errors.Wrapf(err, "failed to write %s on %s", tmp, n)
	}
	if err := FinishScript.Command(ctx, n, fmt.Sprintf("%04o", mode.Perm()), tmp, dest).Run(); err != nil {
		return errors.Wrapf(err, "failed to rename %s to %s on %s", tmp, dest, n)
	}
	return nil
}

// WriteString writes content, a few bytes, to dest on the node in one
// command, as WriteFile does: dest is either the old or the new content.
// The content travels as an argument, so the command completes even when
// its client goes away.
func WriteString(ctx context.Context, n nodes.Node, dest string, mode os.FileMode, content string) error {
	if err := WriteStringScript.Command(ctx, n, dest, fmt.Sprintf("%04o", mode.Perm()), content).Run(); err != nil {
		return errors.Wrapf(err, "failed to write %s on %s", dest, n)
	}
	return nil
}

// Exists reports whether p exists on the node.
func Exists(ctx context.Context, n nodes.Node, p string) (bool, error) {
	found, err := ExistAll(ctx, n, p)
	if err != nil {
		return false, err
	}
	return found[0], nil
}

// ExistAll reports whether each of paths exists on the node, in one
// command.
func ExistAll(ctx context.Context, n nodes.Node, paths ...string) ([]bool, error) {
	what := strings.Join(paths, ", ")
	lines, err := exec.OutputLines(ExistsScript.Command(ctx, n, paths...))
	if err != nil {
		return nil, errors.Wrapf(err, "failed to check for %s on %s", what, n)
	}
	if len(lines) != len(paths) {
		return nil, errors.Errorf("failed to check for %s on %s: unexpected output %q", what, n, strings.Join(lines, "\n"))
	}
	found := make([]bool, len(paths))
	for i, line := range lines {
		switch strings.TrimSpace(line) {
		case "yes":
			found[i] = true
		case "no":
		default:
			return nil, errors.Errorf("failed to check for %s on %s: unexpected output %q", what, n, strings.Join(lines, "\n"))
		}
	}
	return found, nil
}

// ReadFile returns the content of p on the node, and false when p does not
// exist.
func ReadFile(ctx context.Context, n nodes.Node, p string) (string, bool, error) {
	out, err := exec.Output(ReadScript.Command(ctx, n, p))
	if err != nil {
		return "", false, errors.Wrapf(err, "failed to read %s on %s", p, n)
	}
	head, content, _ := strings.Cut(string(out), "\n")
	switch head {
	case "yes":
		return content, true, nil
	case "no":
		return "", false, nil
	}
	return "", false, errors.Errorf("failed to read %s on %s: unexpected output %q", p, n, out)
}

// Comparison is what Compare found for a pair of files.
type Comparison string

const (
	// Missing means the source does not exist.
	Missing Comparison = "missing"
	// Same means the destination is the source or has its content.
	Same Comparison = "same"
	// Differ means the destination is absent or has other content.
	Differ Comparison = "differ"
)

// Compare compares each pair {src, dest} of files on the node, in one
// command. A destination installed by InstallBinaries is a hard link to
// its source, so comparing it reads no data.
func Compare(ctx context.Context, n nodes.Node, pairs ...[2]string) ([]Comparison, error) {
	var args []string
	for _, p := range pairs {
		args = append(args, p[0], p[1])
	}
	lines, err := exec.OutputLines(CompareScript.Command(ctx, n, args...))
	if err != nil {
		return nil, errors.Wrapf(err, "failed to compare files on %s", n)
	}
	if len(lines) != len(pairs) {
		return nil, errors.Errorf("failed to compare files on %s: unexpected output %q", n, strings.Join(lines, "\n"))
	}
	out := make([]Comparison, len(pairs))
	for i, line := range lines {
		switch c := Comparison(strings.TrimSpace(line)); c {
		case Missing, Same, Differ:
			out[i] = c
		default:
			return nil, errors.Errorf("failed to compare files on %s: unexpected output %q", n, line)
		}
	}
	return out, nil
}

// InstallBinaries installs each pair {src, dest} of files on the node
// atomically, in one command: the new binary is linked (or, across file
// systems, copied) beside dest and renamed over it, so dest is never a
// partial file. The previous dest, if any, is kept as dest.old (a hard
// link) for rollback. The command runs to its end even when its client goes
// away.
func InstallBinaries(ctx context.Context, n nodes.Node, pairs ...[2]string) error {
	var args, dests []string
	for _, p := range pairs {
		args = append(args, p[0], p[1])
		dests = append(dests, p[1])
	}
	if err := InstallScript.Command(ctx, n, args...).Run(); err != nil {
		if ctx.Err() != nil {
			return errors.Wrapf(err, "cancelled while installing %s on %s", strings.Join(dests, ", "), n)
		}
		return errors.Wrapf(err, "failed to install %s on %s", strings.Join(dests, ", "), n)
	}
	return nil
}
