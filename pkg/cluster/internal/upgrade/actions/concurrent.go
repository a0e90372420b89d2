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
	"sync"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/errors"
)

// OnNodes runs fn for each of ns at once, i being n's index in ns, and
// waits until every one has returned, whatever failed. It is for work that
// reads, or touches only its own node: fn keeps its results apart by i
// and its error names n. The errors come back in the order of ns, not in
// the order the nodes answered: a failure on several nodes reads the same
// every time.
func OnNodes(ns []nodes.Node, fn func(i int, n nodes.Node) error) error {
	errs := make([]error, len(ns))
	var wg sync.WaitGroup
	for i, n := range ns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(i, n)
		}()
	}
	wg.Wait()
	var failed []error
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) == 1 {
		return failed[0]
	}
	return errors.NewAggregate(failed)
}
