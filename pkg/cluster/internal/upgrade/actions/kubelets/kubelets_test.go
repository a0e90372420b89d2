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

package kubelets

import (
	"strings"
	"testing"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/nodecapture"
)

func TestLastKubeletError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		lines []string
		want  string
	}{
		{
			name: "the last error line, not the info after it",
			lines: []string{
				`I1201 21:00:00.000000     123 server.go:530] "Kubelet version" kubeletVersion="v1.37.2"`,
				`E1201 21:00:00.500000     123 file.go:104] "Unable to read config path" err="unable to create inotify: too many open files"`,
				`E1201 21:00:00.600000     123 kubelet.go:1804] "Failed to start cAdvisor" err="inotify_init: too many open files"`,
				`I1201 21:00:00.700000     123 server.go:1000] "Shutting down"`,
			},
			want: `E1201 21:00:00.600000     123 kubelet.go:1804] "Failed to start cAdvisor" err="inotify_init: too many open files"`,
		},
		{
			name:  "a fatal line",
			lines: []string{`I1201 x`, `F1201 21:00:00.000000     123 server.go:1] "boom"`},
			want:  `F1201 21:00:00.000000     123 server.go:1] "boom"`,
		},
		{
			name:  "no klog error: the last line",
			lines: []string{"Error: unknown flag: --foo", "kubelet.service: Main process exited, code=exited, status=1/FAILURE"},
			want:  "kubelet.service: Main process exited, code=exited, status=1/FAILURE",
		},
		{
			name:  "words that start with E are not klog errors",
			lines: []string{"E1201 x", "Error 1201 is not klog", "Exiting"},
			want:  "E1201 x",
		},
		{name: "nothing", want: ""},
	}
	for _, tc := range cases {
		if got := LastKubeletError(tc.lines); got != tc.want {
			t.Errorf("%s: LastKubeletError = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLastKubeletRun(t *testing.T) {
	t.Parallel()
	started := "Started kubelet.service - kubelet: The Kubernetes Node Agent."
	exited := "kubelet.service: Main process exited, code=exited, status=1/FAILURE"
	failed := "kubelet.service: Failed with result 'exit-code'."
	cases := []struct {
		name    string
		journal []string
		want    []string
	}{
		{"the last run that ended, not the one starting", []string{started, "a1", "E1 a", exited, failed, started, "b1", "E1 b", exited, failed, started, "c1"}, []string{"b1", "E1 b"}},
		{"a run that goes on", []string{started, "a1", "a2"}, []string{"a1", "a2"}},
		{"the journal's start cut the run's start", []string{"a2", "E1 a", exited, failed, started}, []string{"a2", "E1 a"}},
		{"nothing", nil, nil},
	}
	for _, tc := range cases {
		if got := LastKubeletRun(tc.journal); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: LastKubeletRun = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestKubeletOnARealHostAtItsLimit reads the journal of a real kubelet
// restarted on a host whose inotify instances were exhausted (see
// testdata/nodes/kubelet-inotify/SOURCE.txt): its current run, started
// again by systemd, has not yet failed and ends in errors that are not
// the cause; the run before it says why it exited.
func TestKubeletOnARealHostAtItsLimit(t *testing.T) {
	t.Parallel()
	journal := nodecapture.Lines(t, nodecapture.KubeletInotify, "kubelet-journal-exhausted.txt")
	if current := LastKubeletError(journal); strings.Contains(current, "cAdvisor") {
		t.Fatalf("the capture's last line is already the cause (%q): it does not test picking the run", current)
	}
	got := LastKubeletError(LastKubeletRun(journal))
	if !strings.Contains(got, `"Failed to start cAdvisor" err="inotify_init: too many open files"`) || !strings.HasPrefix(got, "E1201 ") {
		t.Errorf("LastKubeletError of the last run = %q, want the kubelet's cAdvisor error", got)
	}
}
