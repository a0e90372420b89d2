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
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/report"
)

func TestTodoHandsWhatFindFoundToRun(t *testing.T) {
	t.Parallel()
	found := [][]string{{"kubelet"}, {"kubeadm", "kubectl"}}
	var ran [][]string
	step := Todo[[]string]{
		Name: "installing",
		Find: func() ([]string, bool, string, error) {
			todo := found[0]
			found = found[1:]
			return todo, false, "", nil
		},
		Run: func(todo []string) error {
			ran = append(ran, todo)
			return nil
		},
	}
	// two checks, then their work: each runs with what its own check found
	first, _, err := step.check()
	if err != nil {
		t.Fatal(err)
	}
	second, _, err := step.check()
	if err != nil {
		t.Fatal(err)
	}
	if err := second(); err != nil {
		t.Fatal(err)
	}
	if err := first(); err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"kubeadm", "kubectl"}, {"kubelet"}}; !reflect.DeepEqual(ran, want) {
		t.Errorf("Run got %v, want %v", ran, want)
	}
}

func TestRunSteps(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// step builds the step; its work calls record
		step    func(record func(string) error) Step
		wantRan []string
		// wantOutcome and wantMessage are those of the step's finished event
		wantOutcome string
		wantMessage string
		wantErr     string
	}{
		{
			name: "a task without Done always runs",
			step: func(record func(string) error) Step {
				return Task{Name: "pinning", Run: func() error { return record("pinning") }}
			},
			wantRan:     []string{"pinning"},
			wantOutcome: report.OutcomeSuccess,
		},
		{
			name: "a task whose work is done is skipped",
			step: func(record func(string) error) Step {
				return Task{
					Name: "draining",
					Done: func() (bool, string, error) { return true, "no other node can take its pods", nil },
					Run:  func() error { return record("draining") },
				}
			},
			wantOutcome: report.OutcomeSkipped,
			wantMessage: "no other node can take its pods",
		},
		{
			name: "a todo runs with what Find found",
			step: func(record func(string) error) Step {
				return Todo[[]string]{
					Name: "installing",
					Find: func() ([]string, bool, string, error) { return []string{"kubelet", "kubectl"}, false, "", nil },
					Run:  func(todo []string) error { return record(strings.Join(todo, ",")) },
				}
			},
			wantRan:     []string{"kubelet,kubectl"},
			wantOutcome: report.OutcomeSuccess,
		},
		{
			name: "a todo with nothing left is skipped",
			step: func(record func(string) error) Step {
				return Todo[[]string]{
					Name: "installing",
					Find: func() ([]string, bool, string, error) { return nil, true, "", nil },
					Run:  func([]string) error { return record("installing") },
				}
			},
			wantOutcome: report.OutcomeSkipped,
		},
		{
			name: "a todo whose Find fails does not run",
			step: func(record func(string) error) Step {
				return Todo[[]string]{
					Name: "installing",
					Find: func() ([]string, bool, string, error) { return nil, false, "", errors.New("sha256sum failed") },
					Run:  func([]string) error { return record("installing") },
				}
			},
			wantOutcome: report.OutcomeFailure,
			wantErr:     "sha256sum failed",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var ran []string
			record := func(what string) error {
				ran = append(ran, what)
				return nil
			}
			var out bytes.Buffer
			c := &Context{Report: report.New(log.NoopLogger{}, report.WithJSON(&out))}
			err := c.RunSteps("kubelets", "kind-worker", []Step{tc.step(record)})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("RunSteps = %v, want error %q", err, tc.wantErr)
			}
			if !reflect.DeepEqual(ran, tc.wantRan) {
				t.Errorf("ran %v, want %v", ran, tc.wantRan)
			}
			var finished report.Event
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				var ev report.Event
				if err := json.Unmarshal([]byte(line), &ev); err != nil {
					t.Fatal(err)
				}
				if ev.Kind == report.KindStep && ev.Event == report.EventFinished {
					finished = ev
				}
			}
			if finished.Outcome != tc.wantOutcome || finished.Message != tc.wantMessage {
				t.Errorf("step finished %q (%q), want %q (%q)", finished.Outcome, finished.Message, tc.wantOutcome, tc.wantMessage)
			}
		})
	}
}
