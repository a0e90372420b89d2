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

// Package alpha implements `kind alpha`, the parent of experimental
// commands.
package alpha

import (
	"github.com/spf13/cobra"

	"sigs.k8s.io/kind/pkg/cmd"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/kindupgrade/kind-upgrade/pkg/cmd/kind/alpha/upgrade"
)

// NewCommand returns the `kind alpha` command.
func NewCommand(logger log.Logger, streams cmd.IOStreams) *cobra.Command {
	c := &cobra.Command{
		Args:  cobra.NoArgs,
		Use:   "alpha",
		Short: "Experimental commands (they may change or go away)",
		Long: "Experimental commands that are not part of upstream kind yet.\n\n" +
			"WARNING: these commands are alpha: their flags, output and behaviour may change\n" +
			"between releases without notice.",
	}
	c.AddCommand(upgrade.NewCommand(logger, streams))
	return c
}
