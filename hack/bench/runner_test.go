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

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/internal/lab/kindtest"
)

var _ kindtest.T = &runner{}

func quietRunner(t *testing.T) *runner {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &runner{out: f}
}

func TestRunnerFailNowStopsTheRunAndCleansUpLastFirst(t *testing.T) {
	r := quietRunner(t)
	var order []string
	reached := false
	ok := r.run(func() {
		r.Cleanup(func() { order = append(order, "first") })
		r.Cleanup(func() { order = append(order, "second") })
		r.Fatalf("stop here")
		reached = true
	})
	if ok || !r.Failed() {
		t.Errorf("a Fatalf run reported ok=%v failed=%v", ok, r.Failed())
	}
	if reached {
		t.Errorf("the run went on after Fatalf")
	}
	if strings.Join(order, ",") != "second,first" {
		t.Errorf("cleanups ran %v, want second then first", order)
	}
}

func TestRunnerErrorfGoesOn(t *testing.T) {
	r := quietRunner(t)
	reached := false
	ok := r.run(func() {
		r.Errorf("one run failed")
		reached = true
	})
	if ok || !reached {
		t.Errorf("Errorf: ok=%v, went on=%v; want a failed run that went on", ok, reached)
	}
	if ok := quietRunner(t).run(func() {}); !ok {
		t.Errorf("an empty run failed")
	}
}

func TestWorkerCounts(t *testing.T) {
	if got, err := workerCounts("-workers", "1 3"); err != nil || len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Errorf(`"1 3": %v, %v`, got, err)
	}
	if got, err := workerCounts("-workers", "none"); err != nil || got != nil {
		t.Errorf(`"none": %v, %v`, got, err)
	}
	for _, bad := range []string{"x", "-1", " "} {
		if _, err := workerCounts("-workers", bad); err == nil || !strings.Contains(err.Error(), "-workers") {
			t.Errorf("%q: err = %v, want one naming -workers", bad, err)
		}
	}
}
