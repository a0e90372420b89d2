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

package nodecapture

import (
	"context"
	"fmt"
	"io"

	"sigs.k8s.io/kind/pkg/exec"
)

// Replay is a node whose every command prints a real node's captured
// output (Read): on stdout, or, when Failed, on stderr and as the error's
// output, as kind's exec reports a failed command.
type Replay struct {
	Out    []byte
	Failed bool
}

// String names the node.
func (Replay) String() string { return "replay" }

// Role is a control plane's.
func (Replay) Role() (string, error) { return "control-plane", nil }

// IP is a kind node's.
func (Replay) IP() (string, string, error) { return "172.18.0.2", "", nil }

// SerialLogs has nothing to say.
func (Replay) SerialLogs(io.Writer) error { return nil }

// Command replays the capture whatever the command.
func (r Replay) Command(c string, a ...string) exec.Cmd {
	return r.CommandContext(context.Background(), c, a...)
}

// CommandContext replays the capture whatever the command.
func (r Replay) CommandContext(_ context.Context, c string, a ...string) exec.Cmd {
	return &replayCmd{Replay: r, argv: append([]string{c}, a...)}
}

type replayCmd struct {
	Replay
	argv           []string
	stdout, stderr io.Writer
}

func (c *replayCmd) SetEnv(...string) exec.Cmd      { return c }
func (c *replayCmd) SetStdin(io.Reader) exec.Cmd    { return c }
func (c *replayCmd) SetStdout(w io.Writer) exec.Cmd { c.stdout = w; return c }
func (c *replayCmd) SetStderr(w io.Writer) exec.Cmd { c.stderr = w; return c }

// Run prints the capture.
func (c *replayCmd) Run() error {
	if c.Failed {
		if c.stderr != nil {
			_, _ = c.stderr.Write(c.Out)
		}
		return &exec.RunError{Command: c.argv, Output: c.Out, Inner: fmt.Errorf("exit status 1")}
	}
	if c.stdout != nil {
		_, _ = c.stdout.Write(c.Out)
	}
	return nil
}
