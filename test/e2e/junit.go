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

package e2e

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// junitSuite records checks as JUnit test cases.
type junitSuite struct {
	mu    sync.Mutex
	name  string
	start time.Time
	cases []junitCase
}

type junitCase struct {
	XMLName   xml.Name      `xml:"testcase"`
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      float64       `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

func (s *junitSuite) add(name string, d time.Duration, err error) {
	s.addWithOutput(name, d, err, "")
}

// addWithOutput records a test case with text for its system-out.
func (s *junitSuite) addWithOutput(name string, d time.Duration, err error, out string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := junitCase{Name: name, ClassName: s.name, Time: d.Seconds(), SystemOut: out}
	if err != nil {
		c.Failure = &junitFailure{Message: firstLine(err.Error()), Text: err.Error()}
	}
	s.cases = append(s.cases, c)
}

// write stores the suite as dir/junit_e2e.xml.
func (s *junitSuite) write(dir string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	failures := 0
	for _, c := range s.cases {
		if c.Failure != nil {
			failures++
		}
	}
	doc := struct {
		XMLName  xml.Name    `xml:"testsuite"`
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Time     float64     `xml:"time,attr"`
		Cases    []junitCase `xml:"testcase"`
	}{Name: s.name, Tests: len(s.cases), Failures: failures, Time: time.Since(s.start).Seconds(), Cases: s.cases}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "junit_e2e.xml"), append([]byte(xml.Header), b...), 0o644)
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
