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

// Package cmd holds what kind-upgrade's commands share: provider detection
// and the default cluster name, as kind's commands do them.
package cmd

import (
	"os"

	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/log"
)

// ProviderEnv selects the node provider, as in kind.
const ProviderEnv = "KIND_EXPERIMENTAL_PROVIDER"

// ClusterNameEnv sets the default cluster name, as in kind.
const ClusterNameEnv = "KIND_CLUSTER_NAME"

// ProviderOption returns the node provider named by KIND_EXPERIMENTAL_PROVIDER,
// or nil when it names none: then cluster.NewProvider detects one, as kind
// does.
//
// It mirrors kind's internal runtime.GetDefault, which kind's commands use:
// sigs.k8s.io/kind/pkg/internal/runtime cannot be imported from here.
func ProviderOption(logger log.Logger) cluster.ProviderOption {
	switch p := os.Getenv(ProviderEnv); p {
	case "":
		return nil
	case "docker":
		return cluster.ProviderWithDocker()
	case "podman":
		logger.Warn("using podman due to KIND_EXPERIMENTAL_PROVIDER")
		return cluster.ProviderWithPodman()
	case "nerdctl", "finch", "nerdctl.lima":
		logger.Warnf("using %s due to KIND_EXPERIMENTAL_PROVIDER", p)
		return cluster.ProviderWithNerdctl(p)
	default:
		logger.Warnf("ignoring unknown value %q for KIND_EXPERIMENTAL_PROVIDER", p)
		return nil
	}
}

// DefaultClusterName is KIND_CLUSTER_NAME, or kind's default name.
//
// It mirrors kind's internal cli.OverrideDefaultName: the package
// sigs.k8s.io/kind/pkg/internal/cli cannot be imported from here.
func DefaultClusterName() string {
	if name := os.Getenv(ClusterNameEnv); name != "" {
		return name
	}
	return cluster.DefaultName
}
