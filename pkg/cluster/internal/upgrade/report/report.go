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

package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/kind/pkg/exec"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/stepid"
)

// Event kinds and outcomes, as they appear in JSON events.
const (
	KindUpgrade = "upgrade"
	KindPhase   = "phase"
	KindNode    = "node"
	KindStep    = "step"
	KindPlan    = "plan"

	EventStarted  = "started"
	EventFinished = "finished"
	// EventInfo carries a message (e.g. "nothing to do") or the plan.
	EventInfo = "info"

	OutcomeSuccess = "success"
	OutcomeFailure = "failure"
	OutcomeSkipped = "skipped"
)

// MaxEventOutput bounds the command output a JSON event carries.
const MaxEventOutput = 4096

// tail returns the last n bytes of s, marked as cut when it is longer.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "[...]" + s[len(s)-n:]
}

// Schema is the version of the events' JSON contract, on every event: a
// field is only ever added within one version.
const Schema = "v1"

// Event is one line of `--output json`.
type Event struct {
	// Schema is the contract's version (Schema).
	Schema string    `json:"schema"`
	Time   time.Time `json:"time"`
	Kind   string    `json:"kind"`
	Event  string    `json:"event"`
	// Hop is, in a chain of targets, the 1-based position of the target
	// the event belongs to; 0 (left out) for a single target and for
	// the chain as a whole.
	Hop   int    `json:"hop,omitempty"`
	Phase string `json:"phase,omitempty"`
	Node  string `json:"node,omitempty"`
	// StepID is the step's stable identifier, "<phase>/<step>" (e.g.
	// "kubelets/drain"): what programs match on. Step is its display
	// text, which may change and carries versions, paths and counts.
	StepID  stepid.ID `json:"stepID,omitempty"`
	Step    string    `json:"step,omitempty"`
	Outcome string    `json:"outcome,omitempty"`
	// DurationSeconds is set on finished events.
	DurationSeconds float64 `json:"durationSeconds,omitempty"`
	Error           string  `json:"error,omitempty"`
	// Command and Output are, on a failed step's finished event, the
	// command that failed and the end of its output (at most
	// MaxEventOutput bytes), as the text mode prints them.
	Command string `json:"command,omitempty"`
	Output  string `json:"output,omitempty"`
	// Message carries free text, e.g. why a step was skipped.
	Message string `json:"message,omitempty"`
	// Plan is the dry-run plan, on the event of kind "plan".
	Plan interface{} `json:"plan,omitempty"`
	// Wait is, on the finished event of a step that waited for a
	// condition, how the wait went.
	Wait *WaitStats `json:"wait,omitempty"`
}

// WaitStats say how a step's wait for a condition went: how many times it
// asked (polls; 1 when the condition was already so) and within how long
// it noticed the condition had become so: from the start of the last poll
// that found it not yet so to the end of the one that found it so (0 when
// the first poll found it so). The condition became so somewhere in that
// window: it bounds the time the wait's polling added to the Kubernetes
// work it waited for.
type WaitStats struct {
	Polls                int     `json:"polls"`
	NoticedWithinSeconds float64 `json:"noticedWithinSeconds"`
}

// Scope names what an event is about. A scope with a Step is a step, with a
// Node (and no Step) a node within a phase, with only a Phase a phase, and
// an empty scope the whole upgrade.
type Scope struct {
	Phase string
	Node  string
	Step  string
	// StepID is the step's stable identifier (package stepid).
	StepID stepid.ID
}

func (s Scope) kind() string {
	switch {
	case s.Step != "":
		return KindStep
	case s.Node != "":
		return KindNode
	case s.Phase != "":
		return KindPhase
	}
	return KindUpgrade
}

func (s Scope) String() string {
	var parts []string
	for _, p := range []string{s.Phase, s.Node, s.Step} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ": ")
}

// Reporter reports progress. It is safe for concurrent use. Its status
// lines and spinner mirror kind's cli.Status, which is internal to kind.
type Reporter struct {
	logger    log.Logger
	spinner   *spinner
	heartbeat time.Duration
	now       func() time.Time
	// hop stamps the events (see Event.Hop)
	hop int

	// mu guards json and waits; shared by the Reporters ForHop derives
	mu   *sync.Mutex
	json *json.Encoder
	// waits are, by node name ("" for a step of none), the wait
	// statistics of the steps running there, the latest last
	waits map[string][]*WaitStats
}

// Option configures a Reporter.
type Option func(*Reporter)

// WithJSON writes one JSON event per line to w.
func WithJSON(w io.Writer) Option {
	return func(r *Reporter) { r.json = json.NewEncoder(w) }
}

// WithSpinner animates the running step on tty, the terminal the logger
// writes to. The logger itself is left as it is: the Reporter's Logger
// clears the spinner line before each line it logs and redraws it after.
// Close stops the spinner and leaves tty at the start of an empty line.
func WithSpinner(tty io.Writer) Option {
	return func(r *Reporter) {
		r.spinner = newSpinner(tty)
		r.logger = spinnerLogger{Logger: r.logger, spinner: r.spinner}
	}
}

// WithHeartbeat logs, every interval while a step runs, that it still
// runs and for how long: the progress a terminal gets from WithSpinner,
// for a log or CI output. It does nothing beside a spinner.
func WithHeartbeat(interval time.Duration) Option {
	return func(r *Reporter) { r.heartbeat = interval }
}

// WithClock replaces time.Now, for tests.
func WithClock(now func() time.Time) Option {
	return func(r *Reporter) { r.now = now }
}

// New returns a Reporter logging status lines to logger.
func New(logger log.Logger, options ...Option) *Reporter {
	r := &Reporter{logger: logger, now: time.Now, mu: &sync.Mutex{}, waits: map[string][]*WaitStats{}}
	for _, o := range options {
		o(r)
	}
	return r
}

// Logger returns the logger to log through while the Reporter reports: the
// one New was given, wrapped when there is a spinner so that log lines and
// the spinner do not mix.
func (r *Reporter) Logger() log.Logger {
	return r.logger
}

// ForHop returns a Reporter that writes to the same places as r and
// stamps its events with hop, a chain's 1-based hop (see Event.Hop).
func (r *Reporter) ForHop(hop int) *Reporter {
	derived := *r
	derived.hop = hop
	return &derived
}

// Close stops the spinner, if any.
func (r *Reporter) Close() {
	if r.spinner != nil {
		r.spinner.stop()
	}
}

// Run reports scope as started, runs fn and reports how it finished. fn
// returns skipped=true when it found its work already done; message says
// why. Steps get a status line; phases, nodes and the whole upgrade only
// JSON events and debug logs.
func (r *Reporter) Run(scope Scope, fn func() (skipped bool, message string, err error)) error {
	start := r.now()
	r.emit(Event{Time: start, Kind: scope.kind(), Event: EventStarted, Phase: scope.Phase, Node: scope.Node, StepID: scope.StepID, Step: scope.Step})
	isStep := scope.kind() == KindStep
	stopBeating := func() {}
	if isStep {
		r.started(scope.String())
		stopBeating = r.beat(scope.String())
	} else if scope.kind() != KindUpgrade {
		r.logger.V(1).Infof("%s: started", scope)
	}
	var waited *WaitStats
	if isStep {
		waited = r.openWaits(scope.Node)
	}
	skipped, message, err := fn()
	stopBeating()
	end := r.now()
	ev := Event{
		Time: end, Kind: scope.kind(), Event: EventFinished,
		Phase: scope.Phase, Node: scope.Node, StepID: scope.StepID, Step: scope.Step,
		Outcome: OutcomeSuccess, DurationSeconds: end.Sub(start).Seconds(),
		Message: message,
	}
	switch {
	case err != nil:
		ev.Outcome = OutcomeFailure
		ev.Error = err.Error()
		if re := exec.RunErrorForError(err); re != nil && isStep {
			ev.Command = strings.Join(re.Command, " ")
			ev.Output = tail(string(re.Output), MaxEventOutput)
		}
	case skipped:
		ev.Outcome = OutcomeSkipped
	}
	if isStep {
		ev.Wait = r.closeWaits(scope.Node, waited)
	}
	r.emit(ev)
	if isStep {
		r.finished(scope.String(), ev)
	} else if scope.kind() != KindUpgrade {
		r.logger.V(1).Infof("%s: %s after %s", scope, ev.Outcome, round(end.Sub(start)))
	}
	return err
}

// openWaits starts collecting the wait statistics of a step on node.
func (r *Reporter) openWaits(node string) *WaitStats {
	w := &WaitStats{}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waits[node] = append(r.waits[node], w)
	return w
}

// closeWaits stops collecting w and returns it, nil when the step did not
// wait.
func (r *Reporter) closeWaits(node string, w *WaitStats) *WaitStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	open := r.waits[node]
	for i := range open {
		if open[i] == w {
			r.waits[node] = append(open[:i:i], open[i+1:]...)
			break
		}
	}
	if w.Polls == 0 {
		return nil
	}
	return w
}

// Waited records a finished wait for a condition on node in the latest
// step running there, else in the latest step running on no node (verify
// waits for every node's pods): a step that waits more than once sums its
// polls and windows. A wait outside any step is not recorded.
func (r *Reporter) Waited(node string, polls int, noticedWithin time.Duration) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	open := r.waits[node]
	if len(open) == 0 {
		open = r.waits[""]
	}
	if len(open) == 0 {
		return
	}
	w := open[len(open)-1]
	w.Polls += polls
	w.NoticedWithinSeconds += noticedWithin.Seconds()
}

// Info reports a line of text that is not a step (e.g. "nothing to do").
func (r *Reporter) Info(scope Scope, message string) {
	r.emit(Event{Time: r.now(), Kind: scope.kind(), Event: EventInfo, Phase: scope.Phase, Node: scope.Node, StepID: scope.StepID, Step: scope.Step, Message: message})
	r.logger.V(0).Info(message)
}

// Plan writes the dry-run plan as a JSON event of kind "plan".
func (r *Reporter) Plan(p interface{}) {
	r.emit(Event{Time: r.now(), Kind: KindPlan, Event: EventInfo, Plan: p})
}

func (r *Reporter) emit(ev Event) {
	if r.json == nil {
		return
	}
	ev.Schema = Schema
	ev.Hop = r.hop
	r.mu.Lock()
	defer r.mu.Unlock()
	// an error writing events must not fail the upgrade; the logger still
	// has the status lines
	if err := r.json.Encode(ev); err != nil {
		r.logger.Warnf("failed to write JSON event: %v", err)
	}
}

func (r *Reporter) started(text string) {
	if r.spinner != nil {
		r.spinner.start(text)
		return
	}
	r.logger.V(0).Infof(" • %s ...", text)
}

// beat logs the heartbeat of the step text, which starts now, until the
// function it returns is called.
func (r *Reporter) beat(text string) func() {
	if r.spinner != nil || r.heartbeat <= 0 {
		return func() {}
	}
	start := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ticker := time.NewTicker(r.heartbeat)
		defer ticker.Stop()
		for {
			select {
			case <-done:
				return
			case <-ticker.C:
				r.logger.V(0).Infof(" • %s ... (%s so far)", text, round(time.Since(start)))
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

func (r *Reporter) finished(text string, ev Event) {
	if r.spinner != nil {
		r.spinner.done(text)
	}
	d := round(time.Duration(ev.DurationSeconds * float64(time.Second)))
	ok, failed := "✓", "✗"
	if r.spinner != nil {
		// a terminal: coloured as kind's own status lines are
		ok, failed = "\x1b[32m✓\x1b[0m", "\x1b[31m✗\x1b[0m"
	}
	switch ev.Outcome {
	case OutcomeFailure:
		r.logger.V(0).Infof(" %s %s (%s)", failed, text, d)
	case OutcomeSkipped:
		if ev.Message != "" {
			r.logger.V(0).Infof(" %s %s (skipped: %s)", ok, text, ev.Message)
		} else {
			r.logger.V(0).Infof(" %s %s (skipped: already done)", ok, text)
		}
	default:
		r.logger.V(0).Infof(" %s %s (%s)", ok, text, d)
	}
}

func round(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return d.Round(100 * time.Millisecond).String()
}
