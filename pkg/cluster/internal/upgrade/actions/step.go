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

package actions

import (
	"context"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/errors"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/report"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/stepid"
)

// Step is one re-entrant unit of work on a node: it looks at the node's
// real state and does only the work that is left. It is a Task, or a Todo
// when the work is what the look found.
type Step interface {
	// id is the step's stable identifier (package stepid).
	id() stepid.ID
	// name names the step in status lines and the dry-run plan.
	name() string
	// check looks at the node's real state and returns the work left to
	// do, or nil when there is none and why ("" means already done).
	check() (work func() error, reason string, err error)
}

// Task is a step whose work needs nothing from its check.
type Task struct {
	// ID is the step's stable identifier (package stepid), Name its
	// display text.
	ID   stepid.ID
	Name string
	// Done reports whether the work is already done, and if so why (an
	// empty reason means "already done"). Nil means always run.
	Done func() (done bool, reason string, err error)
	// Run does the work.
	Run func() error
}

func (t Task) id() stepid.ID { return t.ID }
func (t Task) name() string  { return t.Name }

func (t Task) check() (func() error, string, error) {
	if t.Done != nil {
		done, reason, err := t.Done()
		if err != nil || done {
			return nil, reason, err
		}
	}
	return t.Run, "", nil
}

// Todo is a step whose check finds the work left, of type T, and hands
// exactly that to its run: Run depends on Find only through its argument.
type Todo[T any] struct {
	// ID is the step's stable identifier (package stepid), Name its
	// display text.
	ID   stepid.ID
	Name string
	// Find looks at the node's real state and returns the work left, or
	// done when there is none, and why (an empty reason means "already
	// done").
	Find func() (todo T, done bool, reason string, err error)
	// Run does the work Find returned.
	Run func(todo T) error
}

func (t Todo[T]) id() stepid.ID { return t.ID }
func (t Todo[T]) name() string  { return t.Name }

func (t Todo[T]) check() (func() error, string, error) {
	todo, done, reason, err := t.Find()
	if err != nil || done {
		return nil, reason, err
	}
	return func() error { return t.Run(todo) }, "", nil
}

// RunSteps runs steps for node in phase in order, reporting each, and
// stops at the first failure.
func (c *Context) RunSteps(phase, node string, steps []Step) error {
	return c.RunStepsWith(phase, node, steps, StepHooks{})
}

// StepHooks are called by RunStepsWith at points of a node's run, for a
// scheduler of several nodes: each one that is set.
type StepHooks struct {
	// Started is called once the node's start is reported.
	Started func()
	// Failing is called when a step failed, before the node's failure is
	// reported.
	Failing func()
}

// RunStepsWith is RunSteps calling hooks. In the control-plane and
// kubelets phases, a node done is followed by the caller's hook (RunHook).
func (c *Context) RunStepsWith(phase, node string, steps []Step, hooks StepHooks) error {
	if err := c.runSteps(phase, node, steps, hooks); err != nil {
		return err
	}
	if phase != PhaseControlPlane && phase != PhaseKubelets {
		return nil
	}
	if err := c.RunHook(HookPoint{Phase: phase, Node: node}); err != nil {
		if hooks.Failing != nil {
			hooks.Failing()
		}
		return err
	}
	return nil
}

func (c *Context) runSteps(phase, node string, steps []Step, hooks StepHooks) error {
	return c.Report.Run(report.Scope{Phase: phase, Node: node}, func() (bool, string, error) {
		if hooks.Started != nil {
			hooks.Started()
		}
		ran := false
		for _, s := range steps {
			if err := c.runStep(phase, node, s, &ran); err != nil {
				if hooks.Failing != nil {
					hooks.Failing()
				}
				return false, "", err
			}
		}
		return !ran, "", nil
	})
}

// runStep runs step s of node, reporting it, and sets ran when it did
// work.
func (c *Context) runStep(phase, node string, s Step, ran *bool) error {
	return c.Report.Run(report.Scope{Phase: phase, Node: node, StepID: s.id(), Step: s.name()}, func() (bool, string, error) {
		work, reason, err := s.check()
		if err != nil {
			return false, "", c.Cancelled(err)
		}
		if work == nil {
			return true, reason, nil
		}
		*ran = true
		return false, "", c.Cancelled(work())
	})
}

// RunStepFor runs step s of phase for node, reported as node's step, from
// another node's run: for a step that acts on node with commands run
// elsewhere, while node's own run does other work (the drain of the
// bootstrap control-plane node while it loads). Its events are the step's
// alone: node's run (its node events) is its own.
func (c *Context) RunStepFor(phase, node string, s Step) error {
	ran := false
	return c.runStep(phase, node, s, &ran)
}

// Cancelled returns err, saying that the run was cancelled when its
// context is done: a command stopped by Ctrl-C fails with an error of its
// own ("exit status 1", "signal: killed") that does not say why.
func (c *Context) Cancelled(err error) error {
	if err == nil || c.Context == nil || c.Err() == nil || strings.Contains(err.Error(), "cancelled") {
		return err
	}
	return errors.Wrap(err, "cancelled")
}

// StepNames lists the names of steps, for the dry-run plan.
func StepNames(phase string, steps []Step) []string {
	names := make([]string, 0, len(steps))
	for _, s := range steps {
		names = append(names, phase+": "+s.name())
	}
	return names
}

// Check is a step of a phase that concerns the whole cluster, not one node.
type Check struct {
	// ID is the check's stable identifier (package stepid), Name its
	// display text.
	ID   stepid.ID
	Name string
	Run  func(*Context) error
}

// RunChecks runs checks of phase in order, reporting each, until one fails
// or stop (if not nil) returns true.
func (c *Context) RunChecks(phase string, checks []Check, stop func() bool) error {
	for _, check := range checks {
		err := c.Report.Run(report.Scope{Phase: phase, StepID: check.ID, Step: check.Name}, func() (bool, string, error) {
			return false, "", c.Cancelled(check.Run(c))
		})
		if err != nil {
			return err
		}
		if stop != nil && stop() {
			return nil
		}
	}
	return nil
}

// WaitFor polls cond every Options.PollInterval for at most Options.Wait;
// what cond reports as not yet so is logged at V(1) each time it changes.
// cond gets a Context that ends at the wait's deadline: run its commands
// with it.
func (c *Context) WaitFor(what string, cond func(ctx *Context) (bool, error)) error {
	return c.WaitOn("", what, cond)
}

// WaitOn is WaitFor in a step on node ("" for a step on none): when the
// condition comes true, the step's finished event says how many polls it
// took and within how long of becoming true it was noticed
// (report.WaitStats).
func (c *Context) WaitOn(node, what string, cond func(ctx *Context) (bool, error)) error {
	last := ""
	polls := 0
	var notYet time.Time // the start of the last poll that found it not so
	return nodeutils.WaitFor(c, c.Options.PollInterval, c.Options.Wait, what, func(deadline context.Context) (bool, error) {
		start := time.Now()
		polls++
		ok, err := cond(c.WithContext(deadline))
		if err == nil && ok {
			var within time.Duration
			if !notYet.IsZero() {
				within = time.Since(notYet)
			}
			c.Report.Waited(node, polls, within)
			return true, nil
		}
		notYet = start
		if err != nil && err.Error() != last {
			last = err.Error()
			c.Logger.V(1).Infof("waiting for %s: %v", what, err)
		}
		return ok, err
	})
}
