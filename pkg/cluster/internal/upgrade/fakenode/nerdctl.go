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

package fakenode

// NerdctlWording is what nerdctl v2.3 prints for each message the fake
// provider plays, as its source writes it (no nerdctl runs on this
// project's machines: its module is not served and Debian has no
// package): an error is one logrus record at level fatal, exit code 1, its
// message quoted as logrus's text formatter quotes it when stderr is not a
// terminal.
var NerdctlWording = map[message]struct {
	text string
	code int
}{
	noSuchImage:     {`time="2026-12-02T15:40:00Z" level=fatal msg="1 errors:\nno such image: %[1]s"` + "\n", 1},
	pullFailed:      {`time="2026-12-02T15:40:00Z" level=fatal msg="failed to resolve image: failed to do request: Head \"https://registry.k8s.io/v2/%[1]s/manifests/latest\": dial tcp: lookup registry.k8s.io on 10.255.255.53:53: no such host"` + "\n", 1},
	noSuchContainer: {`time="2026-12-02T15:40:00Z" level=fatal msg="no container found for: %s"` + "\n", 1},
	nameInUse:       {`time="2026-12-02T15:40:00Z" level=fatal msg="name-store error\nname \"%s\" is already used by ID \"84fbcc1061225f8daa6cf14cdd4f0f3d2e9b1eeb0418f459d1b5f5dd486b5b4e\""` + "\n", 1},
	noEntrypoint:    {`time="2026-12-02T15:40:00Z" level=fatal msg="failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: exec: \"%s\": executable file not found in $PATH"` + "\n", 1},
	noSuchFile:      {`time="2026-12-02T15:40:00Z" level=fatal msg="source does not exist"` + "\n", 1},
	notRunning:      {`time="2026-12-02T15:40:00Z" level=fatal msg="cannot exec in a stopped state"` + "\n", 1},
}
