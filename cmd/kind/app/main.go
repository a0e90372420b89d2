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

// Package app is the kind binary's entry point: upstream kind's command tree
// plus `kind alpha`.
package app

import (
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"sigs.k8s.io/kind/pkg/cmd"
	"sigs.k8s.io/kind/pkg/cmd/kind"
	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/exec"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/kindupgrade/kind-upgrade/pkg/cmd/kind/alpha"
	"github.com/kindupgrade/kind-upgrade/pkg/cmd/kind/version"
)

// Main runs the kind binary with the process's arguments and exits 1 on
// failure.
func Main() {
	if err := Run(cmd.NewLogger(), cmd.StandardIOStreams(), os.Args[1:]); err != nil {
		os.Exit(1)
	}
}

// Run runs the kind command line args with logger and streams, and reports
// a failure the way kind does: ERROR, the failed command's output, and a
// stack trace at -v 1.
func Run(logger log.Logger, streams cmd.IOStreams, args []string) error {
	if quiet(args) {
		logger = log.NoopLogger{}
		streams.ErrOut = io.Discard
	}
	c := NewCommand(logger, streams)
	c.SetArgs(args)
	if err := c.Execute(); err != nil {
		logError(logger, err)
		return err
	}
	return nil
}

// NewCommand returns kind's root command with kind-upgrade's additions.
func NewCommand(logger log.Logger, streams cmd.IOStreams) *cobra.Command {
	root := kind.NewCommand(logger, streams)
	for _, c := range root.Commands() {
		if c.Name() == "version" {
			root.RemoveCommand(c)
		}
	}
	root.Version = version.String()
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(version.NewCommand(logger, streams))
	root.AddCommand(alpha.NewCommand(logger, streams))
	return root
}

// quiet reports whether -q/--quiet is among args, before cobra parses them,
// so that nothing at all reaches stderr. It mirrors the quiet handling of
// sigs.k8s.io/kind/cmd/kind/app.Run, which runs only kind's own command
// tree (no alpha) and keeps its flag check unexported.
func quiet(args []string) bool {
	flags := pflag.NewFlagSet("quiet", pflag.ContinueOnError)
	flags.ParseErrorsWhitelist.UnknownFlags = true
	flags.Usage = func() {}
	q := flags.BoolP("quiet", "q", false, "")
	_ = flags.Parse(args)
	return *q
}

// logError reports err as kind's app.Run does; kind's logError is
// unexported, so it is mirrored here.
func logError(logger log.Logger, err error) {
	red := func(s string) string { return s }
	if cmd.ColorEnabled(logger) {
		red = func(s string) string { return "\x1b[31m" + s + "\x1b[0m" }
	}
	logger.Errorf("%s: %v", red("ERROR"), err)
	if runErr := exec.RunErrorForError(err); runErr != nil {
		logger.Errorf("%s:\n%s", red("Command Output"), runErr.Output)
	}
	if logger.V(1).Enabled() {
		if trace := errors.StackTrace(err); trace != nil {
			logger.Errorf("%s: %+v", red("Stack Trace"), trace)
		}
	}
}
