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

// Package stepid holds the stable identifiers of the upgrade's steps:
// "<phase>/<step>", the machine contract of `--output json` (its stepID
// field) beside the display text, which may change and carries versions,
// paths and counts.
package stepid

// The steps of each phase, in the order they run.
const (
	PreflightNodes       = "preflight/nodes"
	PreflightSource      = "preflight/source"
	PreflightBinaries    = "preflight/binaries"
	PreflightKubeadmLock = "preflight/kubeadm-lock"
	PreflightCluster     = "preflight/cluster"
	PreflightProbe       = "preflight/kubeadm-probe"
	PreflightSkew        = "preflight/version-skew"
	PreflightHost        = "preflight/host"
	PreflightDrains      = "preflight/drains"
	PreflightImages      = "preflight/images"
	PreflightDisk        = "preflight/disk"
	PreflightPhases      = "preflight/phases"

	LoadStage          = "load-artifacts/stage"
	LoadStagedVersions = "load-artifacts/staged-versions"
	LoadImport         = "load-artifacts/import"
	LoadPull           = "load-artifacts/pull"
	LoadPin            = "load-artifacts/pin"

	ControlPlaneApply = "control-plane/kubeadm-upgrade-apply"
	ControlPlaneNode  = "control-plane/kubeadm-upgrade-node"
	ControlPlaneWait  = "control-plane/wait-pods"

	KubeletsUpgradeNode  = "kubelets/kubeadm-upgrade-node"
	KubeletsDrain        = "kubelets/drain"
	KubeletsInstall      = "kubelets/install"
	KubeletsRestart      = "kubelets/restart"
	KubeletsWaitReady    = "kubelets/wait-ready"
	KubeletsWaitSettled  = "kubelets/wait-settled"
	KubeletsUncordon     = "kubelets/uncordon"
	KubeletsWriteVersion = "kubelets/write-version"

	VerifyServerVersion    = "verify/server-version"
	VerifyControlPlanePods = "verify/control-plane-pods"
	VerifyNodes            = "verify/nodes"
	VerifyWorkloads        = "verify/workloads"
)

// All lists every step identifier, phase by phase, in the order the steps
// run.
func All() []string {
	return []string{
		PreflightNodes, PreflightSource, PreflightBinaries, PreflightKubeadmLock, PreflightCluster, PreflightProbe,
		PreflightSkew, PreflightHost, PreflightDrains, PreflightImages, PreflightDisk, PreflightPhases,
		LoadStage, LoadStagedVersions, LoadImport, LoadPull, LoadPin,
		ControlPlaneApply, ControlPlaneNode, ControlPlaneWait,
		KubeletsUpgradeNode, KubeletsDrain, KubeletsInstall, KubeletsRestart,
		KubeletsWaitReady, KubeletsWaitSettled, KubeletsUncordon, KubeletsWriteVersion,
		VerifyServerVersion, VerifyControlPlanePods, VerifyNodes, VerifyWorkloads,
	}
}
