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

// Package version implements `kind version`: upstream kind's version and
// kind-upgrade's.
package version

import (
	"fmt"

	"github.com/spf13/cobra"

	"sigs.k8s.io/kind/pkg/cmd"
	kindversion "sigs.k8s.io/kind/pkg/cmd/kind/version"
	"sigs.k8s.io/kind/pkg/log"
)

// Version is kind-upgrade's version; releases set it with
// -ldflags "-X github.com/kindupgrade/kind-upgrade/pkg/cmd/kind/version.Version=...".
var Version = "v0.1.0-alpha"

// String is the one-line version both `kind version` and `kind --version`
// print.
func String() string {
	return fmt.Sprintf("%s (kind-upgrade %s)", kindversion.DisplayVersion(), Version)
}

// NewCommand returns the `kind version` command.
func NewCommand(_ log.Logger, streams cmd.IOStreams) *cobra.Command {
	return &cobra.Command{
		Args:  cobra.NoArgs,
		Use:   "version",
		Short: "Prints the kind CLI version",
		Long:  "Prints the version of upstream kind this binary is built from and kind-upgrade's version",
		RunE: func(c *cobra.Command, args []string) error {
			_, err := fmt.Fprintln(streams.Out, String())
			return err
		},
	}
}
