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

package cluster

import (
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/report"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/stepid"
)

// UpgradeEvent is one line of `kind alpha upgrade --output json` (and of
// UpgradeWithOutput's JSON): decode each line into one. Programs match on
// Kind, Event, Phase, Node, StepID and Outcome; Step and Message are
// display text, which may change.
//
// Alpha: this type may change.
type UpgradeEvent = report.Event

// The values of UpgradeEvent's Kind, Event and Outcome.
const (
	UpgradeEventKindUpgrade = report.KindUpgrade
	UpgradeEventKindPhase   = report.KindPhase
	UpgradeEventKindNode    = report.KindNode
	UpgradeEventKindStep    = report.KindStep
	UpgradeEventKindPlan    = report.KindPlan

	UpgradeEventStarted  = report.EventStarted
	UpgradeEventFinished = report.EventFinished
	UpgradeEventInfo     = report.EventInfo

	UpgradeOutcomeSuccess = report.OutcomeSuccess
	UpgradeOutcomeFailure = report.OutcomeFailure
	UpgradeOutcomeSkipped = report.OutcomeSkipped
)

// The stable identifiers of the upgrade's steps, UpgradeEvent's StepID:
// "<phase>/<step>". UpgradeStepIDs lists them in the order they run.
const (
	UpgradeStepPreflightNodes       = stepid.PreflightNodes
	UpgradeStepPreflightBinaries    = stepid.PreflightBinaries
	UpgradeStepPreflightKubeadmLock = stepid.PreflightKubeadmLock
	UpgradeStepPreflightCluster     = stepid.PreflightCluster
	UpgradeStepPreflightProbe       = stepid.PreflightProbe
	UpgradeStepPreflightSkew        = stepid.PreflightSkew
	UpgradeStepPreflightHost        = stepid.PreflightHost
	UpgradeStepPreflightDrains      = stepid.PreflightDrains
	UpgradeStepPreflightImages      = stepid.PreflightImages
	UpgradeStepPreflightDisk        = stepid.PreflightDisk
	UpgradeStepPreflightPhases      = stepid.PreflightPhases

	UpgradeStepLoadStage          = stepid.LoadStage
	UpgradeStepLoadStagedVersions = stepid.LoadStagedVersions
	UpgradeStepLoadImport         = stepid.LoadImport
	UpgradeStepLoadPull           = stepid.LoadPull
	UpgradeStepLoadPin            = stepid.LoadPin

	UpgradeStepControlPlaneApply = stepid.ControlPlaneApply
	UpgradeStepControlPlaneNode  = stepid.ControlPlaneNode
	UpgradeStepControlPlaneWait  = stepid.ControlPlaneWait

	UpgradeStepKubeletsUpgradeNode  = stepid.KubeletsUpgradeNode
	UpgradeStepKubeletsDrain        = stepid.KubeletsDrain
	UpgradeStepKubeletsInstall      = stepid.KubeletsInstall
	UpgradeStepKubeletsRestart      = stepid.KubeletsRestart
	UpgradeStepKubeletsWaitReady    = stepid.KubeletsWaitReady
	UpgradeStepKubeletsWaitSettled  = stepid.KubeletsWaitSettled
	UpgradeStepKubeletsUncordon     = stepid.KubeletsUncordon
	UpgradeStepKubeletsWriteVersion = stepid.KubeletsWriteVersion

	UpgradeStepVerifyServerVersion    = stepid.VerifyServerVersion
	UpgradeStepVerifyControlPlanePods = stepid.VerifyControlPlanePods
	UpgradeStepVerifyNodes            = stepid.VerifyNodes
	UpgradeStepVerifyWorkloads        = stepid.VerifyWorkloads
)

// UpgradeStepIDs lists every step identifier in the order the steps run.
//
// Alpha: steps may be added, renamed or removed between releases.
func UpgradeStepIDs() []string {
	return stepid.All()
}
