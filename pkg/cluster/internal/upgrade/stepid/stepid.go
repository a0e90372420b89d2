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

import "sigs.k8s.io/kind/pkg/errors"

// ID is a step's stable identifier, "<phase>/<step>". Its values are the
// constants below: the JSON contract, never to be renamed casually.
type ID string

// The steps of each phase, in the order they run.
const (
	PreflightNodes       ID = "preflight/nodes"
	PreflightSource      ID = "preflight/source"
	PreflightBinaries    ID = "preflight/binaries"
	PreflightKubeadmLock ID = "preflight/kubeadm-lock"
	PreflightCluster     ID = "preflight/cluster"
	PreflightProbe       ID = "preflight/kubeadm-probe"
	PreflightConfig      ID = "preflight/kubeadm-config"
	PreflightSkew        ID = "preflight/version-skew"
	PreflightHost        ID = "preflight/host"
	PreflightDrains      ID = "preflight/drains"
	PreflightImages      ID = "preflight/images"
	PreflightDisk        ID = "preflight/disk"
	PreflightPhases      ID = "preflight/phases"

	LoadStage          ID = "load-artifacts/stage"
	LoadStagedVersions ID = "load-artifacts/staged-versions"
	LoadPatches        ID = "load-artifacts/patches"
	// LoadImportHealthCheck imports kubeadm's pause image first on a node
	// loaded beside the control-plane phase that lacks it.
	LoadImportHealthCheck ID = "load-artifacts/import-health-check-image"
	// LoadDrainBootstrap drains the bootstrap control-plane node, from
	// another node, beside the bootstrap node's loading: the kubelets
	// phase's drain then finds nothing left to evict.
	LoadDrainBootstrap ID = "load-artifacts/drain-bootstrap"
	LoadImport         ID = "load-artifacts/import"
	LoadPull           ID = "load-artifacts/pull"
	LoadPin            ID = "load-artifacts/pin"

	ControlPlaneConfig ID = "control-plane/kubeadm-config"
	ControlPlaneApply  ID = "control-plane/kubeadm-upgrade-apply"
	// ControlPlaneLoaded waits, before a control-plane node's kubeadm
	// upgrade node, for its loading, which ran beside the phase.
	ControlPlaneLoaded ID = "control-plane/wait-loaded"
	ControlPlaneNode   ID = "control-plane/kubeadm-upgrade-node"
	ControlPlaneWait   ID = "control-plane/wait-pods"
	// ControlPlaneInstall installs kubeadm and kubectl on a control-plane
	// node whose kubelet does not move in this run (a chain's earlier
	// hops): they move with the control plane.
	ControlPlaneInstall ID = "control-plane/install-kubeadm-kubectl"

	KubeletsUpgradeNode ID = "kubelets/kubeadm-upgrade-node"
	KubeletsDrain       ID = "kubelets/drain"
	KubeletsInstall     ID = "kubelets/install"
	// KubeletsFlags removes from kubeadm's kubelet flags file the flags a
	// kubelet moved across several minor versions would refuse.
	KubeletsFlags ID = "kubelets/kubelet-flags"
	// KubeletsWaitPrevious waits, before a control-plane node's kubelet
	// restart, for the previous control-plane node's settle, which ran
	// beside this node's drain (three control-plane nodes or more).
	KubeletsWaitPrevious ID = "kubelets/wait-previous-settled"
	KubeletsRestart      ID = "kubelets/restart"
	KubeletsWaitReady    ID = "kubelets/wait-ready"
	KubeletsWaitSettled  ID = "kubelets/wait-settled"
	// KubeletsWaitServing waits, on the last control-plane node before
	// its uncordoning and the workers, until its new kubelet runs its etcd
	// and API server and /readyz answers; its wait-settled runs beside the
	// workers.
	KubeletsWaitServing  ID = "kubelets/wait-serving"
	KubeletsUncordon     ID = "kubelets/uncordon"
	KubeletsWriteVersion ID = "kubelets/write-version"

	VerifyServerVersion    ID = "verify/server-version"
	VerifyControlPlanePods ID = "verify/control-plane-pods"
	VerifyNodes            ID = "verify/nodes"
	VerifyWorkloads        ID = "verify/workloads"

	// CallerHook is a Go caller's hook (UpgradeWithHook), run after a
	// phase, a node or a hop.
	CallerHook ID = "hook/caller"
)

// All lists every step identifier, phase by phase, in the order the steps
// run.
func All() []ID {
	return []ID{
		PreflightNodes, PreflightSource, PreflightBinaries, PreflightKubeadmLock, PreflightCluster, PreflightProbe,
		PreflightConfig, PreflightSkew, PreflightHost, PreflightDrains, PreflightImages, PreflightDisk, PreflightPhases,
		LoadStage, LoadStagedVersions, LoadPatches, LoadImportHealthCheck, LoadDrainBootstrap, LoadImport, LoadPull, LoadPin,
		ControlPlaneConfig, ControlPlaneApply, ControlPlaneLoaded, ControlPlaneNode, ControlPlaneWait, ControlPlaneInstall,
		KubeletsUpgradeNode, KubeletsDrain, KubeletsInstall, KubeletsFlags, KubeletsWaitPrevious, KubeletsRestart,
		KubeletsWaitReady, KubeletsWaitSettled, KubeletsWaitServing, KubeletsUncordon, KubeletsWriteVersion,
		VerifyServerVersion, VerifyControlPlanePods, VerifyNodes, VerifyWorkloads,
		CallerHook,
	}
}

// Parse returns the step identifier named s, refusing a name that is no
// step's (All lists them).
func Parse(s string) (ID, error) {
	for _, id := range All() {
		if string(id) == s {
			return id, nil
		}
	}
	return "", errors.Errorf("unknown upgrade step %q: a step is named \"<phase>/<step>\" as the JSON events' stepID says, e.g. %q", s, KubeletsDrain)
}
