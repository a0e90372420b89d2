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

// UpgradeWaitStats are, on the finished event of a step that waited for a
// condition, how many polls it took and within how long of becoming so the
// condition was noticed.
//
// Alpha: this type may change.
type UpgradeWaitStats = report.WaitStats

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

// UpgradeStepID is the stable identifier of one of the upgrade's steps,
// "<phase>/<step>" (e.g. "kubelets/drain"): UpgradeEvent's StepID, what
// programs match on. UpgradeStepIDs lists them all; ParseUpgradeStepID
// checks a name, e.g. one a program was configured with. Comparing a
// StepID with a string constant compiles without that check: a typo then
// matches nothing, so prefer parsing names once, up front.
//
// Alpha: steps may be added, renamed or removed between releases; the
// values of the steps that stay do not change.
type UpgradeStepID = stepid.ID

// UpgradeStepCallerHook is the step of a hook given with UpgradeWithHook:
// the one step identifier that names no phase, since the hook runs after
// any phase, node or target (its event's Phase and Node say which).
const UpgradeStepCallerHook = stepid.CallerHook

// UpgradeStepIDs lists every step identifier in the order the steps run.
func UpgradeStepIDs() []UpgradeStepID {
	return stepid.All()
}

// ParseUpgradeStepID returns the step identifier named s, e.g.
// "kubelets/drain", refusing a name that is none of UpgradeStepIDs.
func ParseUpgradeStepID(s string) (UpgradeStepID, error) {
	return stepid.Parse(s)
}
