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

package app

import (
	"bytes"
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/cmd"
	"sigs.k8s.io/kind/pkg/log"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Run(log.NoopLogger{}, cmd.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
	return out.String(), err
}

func TestVersionNamesBothProjects(t *testing.T) {
	out, err := run(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "kind v0.33.") || !strings.Contains(out, "(kind-upgrade v") {
		t.Errorf("version printed %q", out)
	}
}

func TestUpstreamCommandsAreThere(t *testing.T) {
	root := NewCommand(log.NoopLogger{}, cmd.IOStreams{})
	for _, path := range [][]string{
		{"create", "cluster"}, {"delete", "cluster"}, {"delete", "clusters"}, {"get", "clusters"}, {"get", "nodes"},
		{"get", "kubeconfig"}, {"export", "logs"}, {"export", "kubeconfig"}, {"load", "docker-image"},
		{"load", "image-archive"}, {"build", "node-image"}, {"completion", "bash"}, {"version"}, {"alpha", "upgrade"},
	} {
		c, _, err := root.Find(path)
		if err != nil || c.Name() != path[len(path)-1] {
			t.Errorf("kind %s is missing", strings.Join(path, " "))
		}
	}
}

func TestUpgradeFlagErrors(t *testing.T) {
	cases := []struct {
		args   []string
		errHas string
	}{
		{[]string{"alpha", "upgrade"}, "--image or --image-dir is required"},
		{[]string{"alpha", "upgrade", "--image", "kindest/node:v1.37.2", "--image-pull-policy", "Always"}, `--image-pull-policy must be IfNotPresent or Never, not "Always"`},
		{[]string{"alpha", "upgrade", "--image", "kindest/node:v1.37.2", "--image-dir", "/does/not/exist"}, "--image-dir /does/not/exist does not exist: with --image, give a folder of image archives"},
		{[]string{"alpha", "upgrade", "--image-dir", t.TempDir(), "--skip-phases", "preflight"}, `phase "preflight" cannot be skipped`},
		{[]string{"alpha", "upgrade", "--image-dir", t.TempDir(), "--skip-phases", "kubelet"}, `unknown phase "kubelet"`},
		{[]string{"alpha", "upgrade", "--image-dir", t.TempDir(), "--output", "yaml"}, "--output must be text or json"},
		{[]string{"alpha", "upgrade", "--image-dir", t.TempDir(), "--wait", "0s"}, "must be positive"},
		{[]string{"alpha", "upgrade", "--image-dir", t.TempDir(), "--parallel-workers", "0"}, "the number of workers to upgrade at once must be at least 1, not 0"},
		{[]string{"alpha", "upgrade", "--image-dir", "/does/not/exist"}, "--image-dir /does/not/exist does not exist"},
		{[]string{"alpha", "upgrade", "--image-dir", t.TempDir(), "--emulated-version", "1.35.2"}, `--emulated-version must be a Kubernetes minor version such as 1.35 (no patch, no "v"), or "none" to remove the emulation; not "1.35.2"`},
		{[]string{"alpha", "upgrade", "--image-dir", t.TempDir(), "--emulated-version", "v1.35"}, `not "v1.35"`},
		{[]string{"alpha", "upgrade", "--image-dir", t.TempDir(), "--emulated-version=none", "--emulation-forward-compatible"}, "--emulation-forward-compatible=true needs an emulation: it cannot go with --emulated-version=none"},
		{[]string{"alpha", "upgrade", "--image-dir", t.TempDir(), "--patches", "/does/not/exist"}, "--patches /does/not/exist cannot be read"},
		// a known part of a phase passes to the next check
		{[]string{"alpha", "upgrade", "--image-dir", "/does/not/exist", "--skip-phases", "kubelets,control-plane/kube-proxy"}, "--image-dir /does/not/exist does not exist"},
		{[]string{"alpha", "upgrade", "--image-dir", t.TempDir(), "--skip-phases", "control-plane/kubeproxy"}, `unknown phase "control-plane/kubeproxy" in --skip-phases: the phases are load-artifacts, control-plane, control-plane/kube-proxy, kubelets, verify`},
	}
	for _, tc := range cases {
		_, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("kind %s: error %v, want one containing %q", strings.Join(tc.args, " "), err, tc.errHas)
		}
	}
}

func TestClusterNameFromEnvironment(t *testing.T) {
	t.Setenv("KIND_CLUSTER_NAME", "from-env")
	_, err := run(t, "alpha", "upgrade", "--image-dir", "/does/not/exist")
	if err == nil || !strings.Contains(err.Error(), `cluster "from-env"`) {
		t.Errorf("error %v does not name the cluster from KIND_CLUSTER_NAME", err)
	}
	_, err = run(t, "alpha", "upgrade", "--name", "flag", "--image-dir", "/does/not/exist")
	if err == nil || !strings.Contains(err.Error(), `cluster "flag"`) {
		t.Errorf("error %v: --name must override KIND_CLUSTER_NAME", err)
	}
}

func TestHelpListsPhases(t *testing.T) {
	out, err := run(t, "alpha", "upgrade", "--help")
	if err != nil {
		t.Fatal(err)
	}
	if want := "Phases: preflight, load-artifacts, control-plane, kubelets, verify (--skip-phases also takes control-plane/kube-proxy)\n"; !strings.Contains(out, want) {
		t.Errorf("help does not list the phases as %q:\n%s", want, out)
	}
	// kind's scale: a command's help is 15 to 40 lines (kind create
	// cluster's about 15, kubeadm upgrade apply's about 40)
	if lines := strings.Count(out, "\n"); lines > 40 {
		t.Errorf("help is %d lines, more than 40", lines)
	}
}
