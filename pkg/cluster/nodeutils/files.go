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

// streamScript creates the folder of $1 and writes stdin to $1.
const streamScript = `mkdir -p "$(dirname "$1")" && cat > "$1"`

// finishScript gives $2 mode $1 and renames it over $3.
const finishScript = `chmod "$1" "$2" && mv -f "$2" "$3"`

// WriteFile streams r into dest on the node. The content is written to a
// temporary file beside dest which is renamed over dest once complete, so
// dest is either absent, the old content or the whole new content. (kind's
// nodeutils.WriteFile takes the content as a string, writes dest in place
// and takes no context.) Two commands: the rename is never part of the
// command that reads r, because a command whose client goes away (Ctrl-C)
// keeps running in the node and would rename a partial file.
func WriteFile(ctx context.Context, n nodes.Node, dest string, mode os.FileMode, r io.Reader) error {
	tmp := dest + ".tmp"
	if err := n.CommandContext(ctx, "sh", "-c", streamScript, "sh", tmp).SetStdin(r).Run(); err != nil {
		return errors.Wrapf(err, "failed to write %s on %s", tmp, n)
	}
	if err := n.CommandContext(ctx, "sh", "-c", finishScript, "sh", fmt.Sprintf("%04o", mode.Perm()), tmp, dest).Run(); err != nil {
		return errors.Wrapf(err, "failed to rename %s to %s on %s", tmp, dest, n)
	}
	return nil
}

// writeStringScript writes $3 to $1 with mode $2 through a temporary file
// renamed over $1.
const writeStringScript = `set -e; mkdir -p "$(dirname "$1")"; printf '%s' "$3" > "$1.tmp"; chmod "$2" "$1.tmp"; mv -f "$1.tmp" "$1"`

// WriteString writes content, a few bytes, to dest on the node in one
// command, as WriteFile does: dest is either the old or the new content.
// The content travels as an argument, so the command completes even when
// its client goes away.
func WriteString(ctx context.Context, n nodes.Node, dest string, mode os.FileMode, content string) error {
	if err := n.CommandContext(ctx, "sh", "-c", writeStringScript, "sh", dest, fmt.Sprintf("%04o", mode.Perm()), content).Run(); err != nil {
		return errors.Wrapf(err, "failed to write %s on %s", dest, n)
	}
	return nil
}

// existsScript prints, for each argument, whether it exists; unlike
// `test -e` it tells "no" apart from a failure to run anything at all.
const existsScript = `for p; do if [ -e "$p" ]; then echo yes; else echo no; fi; done`

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
	lines, err := exec.OutputLines(n.CommandContext(ctx, "sh", append([]string{"-c", existsScript, "sh"}, paths...)...))
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

// readScript prints "yes" and the content of $1, or "no" when $1 does not
// exist.
const readScript = `if [ -e "$1" ]; then echo yes; cat "$1"; else echo no; fi`

// ReadFile returns the content of p on the node, and false when p does not
// exist.
func ReadFile(ctx context.Context, n nodes.Node, p string) (string, bool, error) {
	out, err := exec.Output(n.CommandContext(ctx, "sh", "-c", readScript, "sh", p))
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

// compareScript prints, for each pair of arguments (src, dest), "missing"
// when src does not exist, "same" when dest is src (a hard link) or has
// its content, and "differ" otherwise; it fails when a file cannot be
// read.
const compareScript = `while [ $# -ge 2 ]; do
if [ ! -e "$1" ]; then echo missing
elif [ ! -e "$2" ]; then echo differ
elif [ "$1" -ef "$2" ]; then echo same
elif cmp -s "$1" "$2"; then echo same
else
	case $? in 1) echo differ ;; *) echo "cannot compare $1 and $2" >&2; exit 2 ;; esac
fi
shift 2
done`

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
	args := []string{"-c", compareScript, "sh"}
	for _, p := range pairs {
		args = append(args, p[0], p[1])
	}
	lines, err := exec.OutputLines(n.CommandContext(ctx, "sh", args...))
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

// installScript installs each pair of arguments (src, dest) as
// InstallBinaries describes.
const installScript = `set -e
while [ $# -ge 2 ]; do
ln -f "$1" "$2.new" 2>/dev/null || cp "$1" "$2.new"
chmod 0755 "$2.new"
if [ -e "$2" ]; then ln -f "$2" "$2.old"; fi
mv -f "$2.new" "$2"
shift 2
done`

// InstallBinaries installs each pair {src, dest} of files on the node
// atomically, in one command: the new binary is linked (or, across file
// systems, copied) beside dest and renamed over it, so dest is never a
// partial file. The previous dest, if any, is kept as dest.old (a hard
// link) for rollback. The command runs to its end even when its client goes
// away.
func InstallBinaries(ctx context.Context, n nodes.Node, pairs ...[2]string) error {
	args := []string{"-c", installScript, "sh"}
	var dests []string
	for _, p := range pairs {
		args = append(args, p[0], p[1])
		dests = append(dests, p[1])
	}
	if err := n.CommandContext(ctx, "sh", args...).Run(); err != nil {
		if ctx.Err() != nil {
			return errors.Wrapf(err, "cancelled while installing %s on %s", strings.Join(dests, ", "), n)
		}
		return errors.Wrapf(err, "failed to install %s on %s", strings.Join(dests, ", "), n)
	}
	return nil
}
