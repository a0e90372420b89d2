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

package kindupgrades

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/kubernetes/test/e2e/upgrades"
	"k8s.io/kubernetes/test/utils/junit"
)

// recorder marks a test's case in the junit suite failed when the test
// fails: RunUpgradeSuite adds a case per test but leaves every one passed
// (its GCE caller recorded only the upgrade's own); the spec's failure
// message is in Ginkgo's own report (junit_<prefix>01.xml) and the log.
type recorder struct {
	mu    sync.Mutex
	suite *junit.TestSuite
}

// fail records a failure of the case named name.
func (r *recorder) fail(name, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, tc := range r.suite.TestCases {
		if tc.Name == name {
			tc.Failures = append(tc.Failures, &junit.Failure{Type: "Failure", Message: message})
			return
		}
	}
}

// wrap returns tests whose failures r records; each keeps its name and,
// when it has one, its Skip.
func (r *recorder) wrap(tests []upgrades.Test) []upgrades.Test {
	wrapped := make([]upgrades.Test, 0, len(tests))
	for _, t := range tests {
		w := &recorded{inner: t, r: r}
		if s, ok := t.(upgrades.Skippable); ok {
			wrapped = append(wrapped, &recordedSkippable{recorded: w, skippable: s})
			continue
		}
		wrapped = append(wrapped, w)
	}
	return wrapped
}

// recorded is a test whose failures (Ginkgo's panics) are recorded before
// they go on.
type recorded struct {
	inner upgrades.Test
	r     *recorder
}

func (t *recorded) Name() string { return t.inner.Name() }

func (t *recorded) watch(stage string) {
	if p := recover(); p != nil {
		t.r.fail(t.Name(), fmt.Sprintf("failed in %s: %v (the failure is in the spec's report)", stage, p))
		panic(p)
	}
}

func (t *recorded) Setup(ctx context.Context, f *framework.Framework) {
	defer t.watch("Setup")
	t.inner.Setup(ctx, f)
}

func (t *recorded) Test(ctx context.Context, f *framework.Framework, done <-chan struct{}, u upgrades.UpgradeType) {
	defer t.watch("Test")
	t.inner.Test(ctx, f, done, u)
}

func (t *recorded) Teardown(ctx context.Context, f *framework.Framework) {
	defer t.watch("Teardown")
	t.inner.Teardown(ctx, f)
}

type recordedSkippable struct {
	*recorded
	skippable upgrades.Skippable
}

func (t *recordedSkippable) Skip(c upgrades.UpgradeContext) bool {
	return t.skippable.Skip(c)
}
