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

// Package faultchain is the fault chain of the e2e: where each run of
// `kind alpha upgrade` is stopped (a step boundary or a point inside a long
// step) and how (SIGINT, SIGKILL, a killed docker exec, a restarted node),
// which run the next fault stops, and whether finished work ran twice.
package faultchain

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kindupgrade/kind-upgrade/internal/lab/timeline"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster"
)

// Action is what a fault point does to a run of `kind alpha upgrade`.
type Action string

const (
	// SIGINT is Ctrl-C.
	SIGINT Action = "SIGINT"
	// SIGKILL kills the command: no cleanup, no last event.
	SIGKILL Action = "SIGKILL"
	// KillExec kills only the `docker exec` the command started for
	// the step: the command inside the node goes on and finishes, the
	// upgrade sees an error.
	KillExec Action = "kill docker exec"
	// RestartNode restarts the step's node container (docker restart).
	RestartNode Action = "docker restart"
)

// Point is where one run of the chain is stopped, and how.
type Point struct {
	// StepID is the step's identifier (timeline.StepID names one).
	StepID cluster.UpgradeStepID
	// Node is the suffix of the node's name after "<cluster>-"
	// ("control-plane", "worker", "worker2"), "" for a step of the whole
	// cluster.
	Node string
	// AtBoundary fires when the step finished having done its work: the
	// fault lands between it and the next step. Otherwise the fault fires
	// Delay after the step started, inside it.
	AtBoundary bool
	Delay      time.Duration
	Action     Action
	// Exec is a substring of the `docker exec` command line the step runs:
	// KillExec kills it; other faults wait until it runs, then Delay.
	Exec string
	// Hop is, in a chain of targets, the 1-based target whose step it is;
	// 0 for any.
	Hop int
}

func (p Point) String() string {
	where := string(p.StepID)
	if p.Node != "" {
		where += " on " + p.Node
	}
	if p.Hop != 0 {
		where += fmt.Sprintf(" (target %d)", p.Hop)
	}
	switch {
	case p.AtBoundary:
		where = "after " + where
	case p.Exec != "" && p.Action != KillExec:
		where = fmt.Sprintf("%s into the %q command of %s", p.Delay, strings.TrimSpace(p.Exec), where)
	case p.Delay > 0:
		where = fmt.Sprintf("%s into %s", p.Delay, where)
	default:
		where = "at the start of " + where
	}
	return string(p.Action) + " " + where
}

// Matches reports whether ev, an event of cluster's upgrade, is p's
// trigger: the step's successful finish for a boundary, else its start.
func (p Point) Matches(ev timeline.Event, clusterName string) bool {
	if ev.Kind != cluster.UpgradeEventKindStep || ev.StepID != p.StepID || (p.Hop != 0 && ev.Hop != p.Hop) {
		return false
	}
	node := ""
	if p.Node != "" {
		node = clusterName + "-" + p.Node
	}
	if ev.Node != node {
		return false
	}
	if p.AtBoundary {
		return ev.Event == "finished" && ev.Outcome == "success"
	}
	return ev.Event == "started"
}

// LandedInside checks that a fault fired at time at, inside p's step, came
// before the step finished: events are the run's, all of them.
func (p Point) LandedInside(events []timeline.Event, clusterName string, at time.Time) error {
	if p.AtBoundary {
		return nil
	}
	started := false
	for _, ev := range events {
		if p.Matches(ev, clusterName) {
			started = true
			continue
		}
		if started && ev.Kind == cluster.UpgradeEventKindStep && ev.Event == cluster.UpgradeEventFinished && ev.StepID == p.StepID && (p.Hop == 0 || ev.Hop == p.Hop) &&
			(p.Node == "" || ev.Node == clusterName+"-"+p.Node) && ev.Outcome == "success" && ev.Time.Before(at) {
			return fmt.Errorf("%s: the step had finished (%s) before the fault (%s)", p, ev.Time.Format(time.RFC3339Nano), at.Format(time.RFC3339Nano))
		}
	}
	if !started {
		return fmt.Errorf("%s: the step never started", p)
	}
	return nil
}

// Driver picks, for each run of a chain, the fault that stops it: the
// next of its explicit points when that point's event comes, else, with
// boundaries, the first step that finishes having done its work and has
// not stopped a run yet. Boundary faults alternate SIGKILL and SIGINT.
type Driver struct {
	cluster    string
	points     []Point
	next       int
	boundaries bool
	used       map[string]bool
}

// NewDriver drives a chain of points on cluster; with boundaries, every
// step that finishes having done its work also stops a run.
func NewDriver(cluster string, points []Point, boundaries bool) *Driver {
	return &Driver{cluster: cluster, points: points, boundaries: boundaries, used: map[string]bool{}}
}

// Pick returns the fault ev calls for, or nil.
func (d *Driver) Pick(ev timeline.Event) *Point {
	if d.next < len(d.points) && d.points[d.next].Matches(ev, d.cluster) {
		p := d.points[d.next]
		return &p
	}
	if !d.boundaries || ev.Kind != "step" || ev.Event != "finished" || ev.Outcome != "success" || d.used[BoundaryKey(ev)] {
		return nil
	}
	action := SIGKILL
	if len(d.used)%2 == 1 {
		action = SIGINT
	}
	return &Point{StepID: ev.StepID, Node: strings.TrimPrefix(ev.Node, d.cluster+"-"), AtBoundary: true, Action: action}
}

// Fired records that p stopped a run.
func (d *Driver) Fired(p Point) {
	if d.next < len(d.points) && p == d.points[d.next] {
		d.next++
		return
	}
	node := ""
	if p.Node != "" {
		node = d.cluster + "-" + p.Node
	}
	d.used[BoundaryKey(timeline.Event{Node: node, StepID: p.StepID})] = true
}

// ExplicitStep reports whether an explicit point fired inside ev's step:
// a step the chain stopped from within needs no boundary of its own.
func (d *Driver) ExplicitStep(ev timeline.Event) bool {
	for _, p := range d.points[:d.next] {
		if !p.AtBoundary && p.StepID == ev.StepID && (p.Node == "" && ev.Node == "" || ev.Node == d.cluster+"-"+p.Node) {
			return true
		}
	}
	return false
}

// Missed returns the explicit points no run reached.
func (d *Driver) Missed() []Point {
	return d.points[d.next:]
}

// BoundaryKey names the step boundary ev finishes: the step and its node.
func BoundaryKey(ev timeline.Event) string {
	return ev.Node + "/" + string(ev.StepID)
}

// workSteps are the steps that change a node or the cluster; they must do
// their work once in the whole chain. Checks, waits and pinning (which
// labels images every run) are left out.
var workSteps = map[cluster.UpgradeStepID]bool{
	timeline.StepID("load-artifacts/stage"):                true,
	timeline.StepID("load-artifacts/import"):               true,
	timeline.StepID("control-plane/kubeadm-upgrade-apply"): true,
	timeline.StepID("control-plane/kubeadm-upgrade-node"):  true,
	timeline.StepID("kubelets/kubeadm-upgrade-node"):       true,
	timeline.StepID("kubelets/drain"):                      true,
	timeline.StepID("kubelets/install"):                    true,
	timeline.StepID("kubelets/restart"):                    true,
	timeline.StepID("kubelets/uncordon"):                   true,
	timeline.StepID("kubelets/write-version"):              true,
}

// WorkKey names a work step on a node.
func WorkKey(ev timeline.Event) string {
	return string(ev.StepID) + "/" + ev.Node
}

// RepeatedWork returns the work steps that did their work (finished with
// outcome success) in more than one run of the chain. excused are work
// keys a fault may have undone (a node restarted, a step whose exec was
// killed): those may run again.
func RepeatedWork(runs [][]timeline.Event, excused map[string]bool) []string {
	doneIn := map[string]int{} // work key -> run that did it first
	var repeated []string
	for i, run := range runs {
		for _, ev := range run {
			if ev.Kind != cluster.UpgradeEventKindStep || ev.Event != cluster.UpgradeEventFinished || ev.Outcome != cluster.UpgradeOutcomeSuccess || !workSteps[ev.StepID] {
				continue
			}
			k := WorkKey(ev)
			if first, ok := doneIn[k]; ok && first != i && !excused[k] {
				repeated = append(repeated, fmt.Sprintf("%s (run %d, again in run %d)", k, first+1, i+1))
				continue
			}
			if _, ok := doneIn[k]; !ok {
				doneIn[k] = i
			}
		}
	}
	sort.Strings(repeated)
	return repeated
}

// ExecChild finds the child process of pid running `docker exec` whose
// command line contains match; 0 when there is none (yet).
func ExecChild(pid int, match string) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil || ParentOf(string(stat)) != pid {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if strings.Contains(args, " exec ") && strings.Contains(args, match) {
			return child
		}
	}
	return 0
}

// ParentOf returns the parent pid in a /proc/<pid>/stat line, -1 if it
// cannot be read. The command name, in parentheses, may hold spaces.
func ParentOf(stat string) int {
	i := strings.LastIndex(stat, ")")
	if i < 0 {
		return -1
	}
	fields := strings.Fields(stat[i+1:])
	if len(fields) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return -1
	}
	return ppid
}

// Used reports whether the boundary key (BoundaryKey) has stopped a run.
func (d *Driver) Used(key string) bool { return d.used[key] }

// Counts are how many step boundaries have stopped a run, and how many of
// the explicit points have fired.
func (d *Driver) Counts() (boundaries, explicit int) { return len(d.used), d.next }
