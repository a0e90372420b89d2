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

package nodeutils_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/fakenode"
)

func TestFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := fakenode.NewCluster("kind", "v1.33.13", 1, 0)
	n := c.Nodes[0]
	if err := nodeutils.WriteFile(ctx, n, "/kind/upgrade/v1.34.4/kubelet", 0o755, strings.NewReader("new kubelet")); err != nil {
		t.Fatal(err)
	}
	if f := n.Files["/kind/upgrade/v1.34.4/kubelet"]; f == nil || string(f.Content) != "new kubelet" || f.Mode != 0o755 {
		t.Fatalf("WriteFile wrote %+v", f)
	}
	if n.Files["/kind/upgrade/v1.34.4/kubelet.tmp"] != nil {
		t.Error("WriteFile left its temporary file")
	}
	for p, want := range map[string]bool{"/kind/version": true, "/nope": false} {
		if got, err := nodeutils.Exists(ctx, n, p); err != nil || got != want {
			t.Errorf("Exists(%s) = %v, %v", p, got, err)
		}
	}
	content, ok, err := nodeutils.ReadFile(ctx, n, "/kind/version")
	if err != nil || !ok || strings.TrimSpace(content) != "v1.33.13" {
		t.Errorf("ReadFile = %q, %v, %v", content, ok, err)
	}
	if _, ok, err := nodeutils.ReadFile(ctx, n, "/nope"); ok || err != nil {
		t.Errorf("ReadFile of a missing file = %v, %v", ok, err)
	}
	old := n.Files["/usr/bin/kubelet"]
	staged := "/kind/upgrade/v1.34.4/kubelet"
	if got, err := nodeutils.Compare(ctx, n, [2]string{staged, "/usr/bin/kubelet"}, [2]string{"/nope", "/usr/bin/kubelet"}); err != nil || fmt.Sprint(got) != "[differ missing]" {
		t.Errorf("Compare before installing = %v, %v", got, err)
	}
	if err := nodeutils.InstallBinaries(ctx, n, [2]string{staged, "/usr/bin/kubelet"}); err != nil {
		t.Fatal(err)
	}
	if string(n.Files["/usr/bin/kubelet"].Content) != "new kubelet" || n.Files["/usr/bin/kubelet.old"] != old {
		t.Error("InstallBinaries did not replace the binary and keep the old one")
	}
	if got, err := nodeutils.Compare(ctx, n, [2]string{staged, "/usr/bin/kubelet"}); err != nil || fmt.Sprint(got) != "[same]" {
		t.Errorf("Compare after installing = %v, %v", got, err)
	}
	if err := nodeutils.WriteString(ctx, n, "/kind/version", 0o644, "v1.34.4"); err != nil {
		t.Fatal(err)
	}
	if content, ok, err := nodeutils.ReadFile(ctx, n, "/kind/version"); err != nil || !ok || content != "v1.34.4" {
		t.Errorf("ReadFile after WriteString = %q, %v, %v", content, ok, err)
	}
}

func TestExistsTellsFailuresApart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := fakenode.NewCluster("kind", "v1.33.13", 1, 0)
	c.Nodes[0].Running = false
	if _, err := nodeutils.Exists(ctx, c.Nodes[0], "/kind/version"); err == nil {
		t.Error("a node that does not answer reported a file as absent")
	}
}

func TestWaitFor(t *testing.T) {
	t.Parallel()
	calls := 0
	err := nodeutils.WaitFor(context.Background(), time.Millisecond, time.Second, "three calls", func(context.Context) (bool, error) {
		calls++
		if calls < 3 {
			return false, errors.New("not yet")
		}
		return true, nil
	})
	if err != nil || calls != 3 {
		t.Errorf("WaitFor = %v after %d calls", err, calls)
	}
	err = nodeutils.WaitFor(context.Background(), time.Millisecond, 20*time.Millisecond, "never", func(context.Context) (bool, error) {
		return false, errors.New("still down")
	})
	if err == nil || !strings.Contains(err.Error(), "timed out after 20ms waiting for never: still down") {
		t.Errorf("WaitFor timeout error %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = nodeutils.WaitFor(ctx, time.Millisecond, time.Hour, "the node", func(context.Context) (bool, error) { return false, errors.New("not ready") })
	if err == nil || !strings.Contains(err.Error(), "cancelled while waiting for the node") || strings.Contains(err.Error(), "timed out") {
		t.Errorf("WaitFor on a cancelled context: %v", err)
	}
	// a permanent error ends the wait at once, as it is
	calls = 0
	start := time.Now()
	err = nodeutils.WaitFor(context.Background(), time.Millisecond, time.Hour, "a kubelet that keeps exiting", func(context.Context) (bool, error) {
		calls++
		if calls < 3 {
			return false, errors.New("not yet")
		}
		return false, nodeutils.Permanent(errors.New("it exited 5 times"))
	})
	if err == nil || err.Error() != "it exited 5 times" || calls != 3 || time.Since(start) > time.Minute {
		t.Errorf("WaitFor with a permanent error = %v after %d calls", err, calls)
	}
	// a poll that would outlast the wait (a request retried for half a
	// minute) is cut at the deadline: the condition gets it
	start = time.Now()
	calls = 0
	err = nodeutils.WaitFor(context.Background(), time.Millisecond, 50*time.Millisecond, "a slow API server", func(ctx context.Context) (bool, error) {
		calls++
		if calls == 1 {
			return false, errors.New("connection refused")
		}
		select {
		case <-ctx.Done():
			return false, errors.New("cancelled while retrying: " + ctx.Err().Error())
		case <-time.After(time.Minute):
			return false, errors.New("retried for a minute")
		}
	})
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("WaitFor ran %s past its 50ms deadline", took)
	}
	if err == nil || !strings.Contains(err.Error(), "timed out after 50ms waiting for a slow API server: connection refused") {
		t.Errorf("WaitFor cut at its deadline: %v (the poll the deadline cut short says less than the one before)", err)
	}
}

func TestParseUnitState(t *testing.T) {
	t.Parallel()
	cases := []struct {
		out     string
		want    nodeutils.UnitState
		running bool
		wantErr bool
	}{
		{out: "ActiveState=active\nSubState=running\nNRestarts=0\n", want: nodeutils.UnitState{ActiveState: "active", SubState: "running"}, running: true},
		{out: "NRestarts=17\nActiveState=activating\nSubState=auto-restart\n", want: nodeutils.UnitState{ActiveState: "activating", SubState: "auto-restart", NRestarts: 17}},
		{out: "ActiveState=failed\nSubState=failed\nNRestarts=3\nInvocationID=\n", want: nodeutils.UnitState{ActiveState: "failed", SubState: "failed", NRestarts: 3}},
		// systemd before v235 has no NRestarts
		{out: "ActiveState=active\nSubState=running\n", wantErr: true},
		{out: "ActiveState=active\nSubState=running\nNRestarts=x\n", wantErr: true},
		{out: "Failed to connect to bus: No such file or directory", wantErr: true},
		// captured on a real node (testdata/nodes/kubelet-inotify)
		{out: capture(t, "systemctl-show-kubelet-running.txt"), want: nodeutils.UnitState{ActiveState: "active", SubState: "running"}, running: true},
		{out: capture(t, "systemctl-show-kubelet-exhausted.txt"), want: nodeutils.UnitState{ActiveState: "activating", SubState: "start-pre", NRestarts: 4}},
	}
	for _, tc := range cases {
		got, err := nodeutils.ParseUnitState(tc.out)
		if tc.wantErr {
			if err == nil {
				t.Errorf("ParseUnitState(%q) = %+v, want an error", tc.out, got)
			}
			continue
		}
		if err != nil || got != tc.want || got.Running() != tc.running {
			t.Errorf("ParseUnitState(%q) = %+v (running %v), %v; want %+v (running %v)", tc.out, got, got.Running(), err, tc.want, tc.running)
		}
	}
}

func TestParseKubectlAll(t *testing.T) {
	t.Parallel()
	const mark = "\n" + nodeutils.KubectlExitMark + " "
	cases := []struct {
		name     string
		out      string
		requests int
		want     string
		wantErr  bool
	}{
		{name: "all answered", out: "ok" + mark + "0\n{\n  \"items\": []\n}\n" + mark + "0\n", requests: 2, want: `0 "ok"|0 "{\n  \"items\": []\n}\n"`},
		{name: "an empty answer", out: mark + "0\n", requests: 1, want: `0 ""`},
		{name: "the second fails", out: "ok" + mark + "0\npartial\n" + mark + "1\nThe connection to the server was refused\n", requests: 3, want: `0 "ok"|1 "partial\nThe connection to the server was refused"`},
		{name: "the first fails, saying nothing", out: mark + "127\n\n", requests: 2, want: `127 ""`},
		{name: "nothing", out: "", requests: 1, wantErr: true},
		{name: "cut short in an answer", out: "ok" + mark + "0\n{\"items\":", requests: 2, wantErr: true},
		{name: "cut short in a status line", out: "ok" + mark + "0", requests: 1, wantErr: true},
		{name: "a status that is no number", out: "ok" + mark + "zero\n", requests: 1, wantErr: true},
		{name: "more than asked", out: "ok" + mark + "0\nok" + mark + "0\n", requests: 1, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			answers, err := nodeutils.ParseKubectlAll([]byte(tc.out), tc.requests)
			if tc.wantErr {
				if err == nil {
					t.Errorf("ParseKubectlAll(%q) = %v, want an error", tc.out, answers)
				}
				return
			}
			var got []string
			for _, a := range answers {
				got = append(got, fmt.Sprintf("%d %q", a.ExitCode, a.Output))
			}
			if err != nil || strings.Join(got, "|") != tc.want {
				t.Errorf("ParseKubectlAll(%q) = %s, %v; want %s", tc.out, strings.Join(got, "|"), err, tc.want)
			}
		})
	}
}

func TestKubectlAllRefusesANewlineInAnArgument(t *testing.T) {
	t.Parallel()
	n := fakenode.NewCluster("kind", "v1.33.13", 1, 0).Nodes[0]
	if _, err := nodeutils.KubectlAll(context.Background(), n, []string{"get", "--raw=/readyz"}, []string{"get", "pods\nnodes"}); err == nil {
		t.Error("KubectlAll took an argument holding a newline, which would split it in two")
	}
}

// capture reads a file of testdata/nodes/kubelet-inotify.
func capture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "upgrade", "testdata", "nodes", "kubelet-inotify", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
