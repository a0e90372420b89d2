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

package kindtest

import (
	"errors"
	"strings"
	"testing"
)

func TestLineClock(t *testing.T) {
	t.Parallel()
	c := &LineClock{}
	for _, w := range []string{"[upgrade] one", "\n[upgr", "ade] two\n", "three\nfour"} {
		if n, err := c.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	var texts []string
	for _, l := range c.Lines() {
		texts = append(texts, l.Text)
		if l.At.IsZero() {
			t.Errorf("line %q has no time", l.Text)
		}
	}
	if got := strings.Join(texts, "|"); got != "[upgrade] one|[upgrade] two|three" {
		t.Errorf("lines %q", got)
	}
	if c.String() != "[upgrade] one\n[upgrade] two\nthree\nfour" {
		t.Errorf("String() = %q", c.String())
	}
}

func TestRetryPortRace(t *testing.T) {
	t.Parallel()
	race := errors.New("docker run ... failed: Bind for 127.0.0.1:40619 failed: port is already allocated")
	other := errors.New("docker run ... failed: no space left on device")
	for _, tc := range []struct {
		name    string
		results []error
		calls   int
		want    error
		logged  int
	}{
		{name: "first try", results: []error{nil}, calls: 1},
		{name: "lost the race once", results: []error{race, nil}, calls: 2, logged: 1},
		{name: "lost it every time", results: []error{race, race, race}, calls: 3, want: race, logged: 2},
		{name: "another error is not retried", results: []error{other, nil}, calls: 1, want: other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calls, logged := 0, 0
			err := retryPortRace(3, func(string, ...any) { logged++ }, func() error {
				calls++
				return tc.results[calls-1]
			})
			if err != tc.want || calls != tc.calls || logged != tc.logged {
				t.Errorf("err %v after %d calls, %d logged; want %v, %d, %d", err, calls, logged, tc.want, tc.calls, tc.logged)
			}
		})
	}
}
