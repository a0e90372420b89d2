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

package upgrade_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/exec"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeprovider"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/fakenode"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/plan"
)

// digestOf is the digest the fake records of a command's stdin.
func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// runOutput runs cmd and returns what it printed.
func runOutput(cmd exec.Cmd) (string, error) {
	out, err := exec.CombinedOutputLines(cmd)
	return strings.Join(out, "\n"), err
}

// nodeImage is the target's node image as kind's builder makes it.
const nodeImage = "kindest/node:" + target

// newImageEnv is newEnv whose target is the node image nodeImage on the
// host's provider, with --image-dir a folder holding only kubeadm's pause
// image for the target, which the node image lacks (kind's builder keeps
// containerd's sandbox image instead).
func newImageEnv(t *testing.T, controlPlanes, workers int) *env {
	t.Helper()
	e := &env{t: t, cluster: fakenode.NewCluster("kind", from, controlPlanes, workers)}
	e.image = nodeImage
	e.cluster.Provider().Images[nodeImage] = fakenode.NewNodeImage(target, runtime.GOARCH)
	e.imageDir = pauseDir(t)
	return e
}

// pauseDir is a folder holding an archive of the target's kubeadm pause
// image.
func pauseDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pause.tar"), fakenode.ImageArchive(kubeadmPause()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// kubeadmPause is the pause image kubeadm lists for the target.
func kubeadmPause() string {
	for _, image := range fakenode.KubeadmImages(target, fakenode.ImageConfig{}) {
		if strings.Contains(image, "/pause:") {
			return image
		}
	}
	panic("kubeadm lists no pause image")
}

// noHelperLeft fails when a container of the provider is left.
func noHelperLeft(t *testing.T, e *env) {
	t.Helper()
	if left := e.cluster.Provider().Containers(); len(left) > 0 {
		t.Errorf("containers left on the host: %v", left)
	}
}

// TestUpgradeFromANodeImage: --image with --image-dir adding the pause
// archive upgrades the cluster; the binaries come from the image's
// /usr/bin, the images from its containerd store, exported and imported
// for the node's platform (the image's indexes list platforms whose
// content is not there), each read with the provider's copy command; the
// helper container is gone afterwards.
func TestUpgradeFromANodeImage(t *testing.T) {
	t.Parallel()
	for _, tool := range tools {
		t.Run(tool, func(t *testing.T) {
			t.Parallel()
			testUpgradeFromANodeImage(t, tool)
		})
	}
}

// tools are the providers' commands the fake plays.
var tools = []string{"docker", "podman", "nerdctl"}

// withTool makes e's provider tool, and the upgrade use it.
func withTool(e *env, tool string) func(*upgrade.Options) {
	e.cluster.Provider().Tool = tool
	return func(o *upgrade.Options) { o.ProviderCommand = tool }
}

func testUpgradeFromANodeImage(t *testing.T, tool string) {
	e := newImageEnv(t, 1, 1)
	if _, err := e.run(withTool(e, tool)); err != nil {
		t.Fatalf("upgrade failed: %v\ncalls:\n%s", err, dump(e.cluster.Calls))
	}
	assertUpgraded(t, e.cluster)
	noHelperLeft(t, e)
	var exports, catted int
	for _, c := range e.cluster.Calls {
		argv := strings.Join(c.Argv, " ")
		switch {
		case c.Node == "host" && strings.Contains(argv, "images export --platform linux/"+runtime.GOARCH+" /tmp/kind-upgrade/"):
			exports++
		case c.Node == "host" && strings.HasPrefix(argv, tool+" cp kind-upgrade-source:/usr/bin/"):
			catted++
		case c.Node != "host" && strings.Contains(argv, "images import") && strings.Contains(argv, "--all-platforms") && !strings.Contains(argv, "--help"):
			// a pause.tar of the fake is a complete docker-archive: only
			// it may be imported for all platforms
			if c.Stdin != digestOf(fakenode.ImageArchive(kubeadmPause())) {
				t.Errorf("an image exported from the node image was imported for all platforms: %s", argv)
			}
		}
	}
	// three binaries per node, and kubeadm for preflight's probe
	if exports == 0 || catted != 3*len(e.cluster.Nodes)+1 {
		t.Errorf("%d exports and %d binaries read from the image, want some and %d", exports, catted, 3*len(e.cluster.Nodes)+1)
	}
}

// TestNodeImageRefusals: what is wrong with --image is refused before
// anything changes on the nodes, with the reason and the fix, and no
// helper container is left.
func TestNodeImageRefusals(t *testing.T) {
	t.Parallel()
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	for _, tool := range tools {
		t.Run(tool, func(t *testing.T) {
			t.Parallel()
			testNodeImageRefusals(t, tool, other)
		})
	}
}

func testNodeImageRefusals(t *testing.T, tool, other string) {
	save := map[string]string{
		"docker":  "docker image save --platform linux/amd64 -o <dir>/<name>.tar <image>",
		"podman":  "podman save -o <dir>/<name>.tar <image>",
		"nerdctl": "nerdctl save --platform linux/amd64 -o <dir>/<name>.tar <image>",
	}[tool]
	cases := []struct {
		name   string
		setup  func(e *env)
		errHas []string
	}{
		{
			name:   "kubeadm's pause image is not in the image",
			setup:  func(e *env) { e.imageDir = "" },
			errHas: []string{"node kind-control-plane cannot pull " + kubeadmPause() + " (kind's node-image builder keeps containerd's sandbox image, " + fakenode.KindSandboxImage + ", in place of kubeadm's pause image)", "Nothing but pulls has changed yet.", "add it as --image-dir", save},
		},
		{
			name: "not on the host and the pull fails",
			setup: func(e *env) {
				delete(e.cluster.Provider().Images, nodeImage)
			},
			errHas: []string{"--image " + nodeImage + " is not on this host and pulling it failed", "no such host", "`" + tool + " pull " + nodeprovider.ImageName(tool, nodeImage) + "`"},
		},
		{
			name:   "another architecture",
			setup:  func(e *env) { e.cluster.Provider().Images[nodeImage].Arch = other },
			errHas: []string{"--image " + nodeImage + " is built for linux/" + other + " but this host's kind nodes run linux/" + runtime.GOARCH, tool + " pull --platform linux/" + runtime.GOARCH + " " + nodeprovider.ImageName(tool, nodeImage)},
		},
		{
			name:   "not a node image: no containerd",
			setup:  func(e *env) { e.cluster.Provider().Images[nodeImage].NoContainerd = true },
			errHas: []string{"--image " + nodeImage + " is not a kind node image: it has no containerd", "executable file not found"},
		},
		{
			name:   "not a node image: no /kind/version",
			setup:  func(e *env) { delete(e.cluster.Provider().Images[nodeImage].Files, "/kind/version") },
			errHas: []string{"--image " + nodeImage + " is not a kind node image", "/kind/version: No such file or directory"},
		},
		{
			name:   "not a node image: no kubeadm",
			setup:  func(e *env) { delete(e.cluster.Provider().Images[nodeImage].Files, "/usr/bin/kubeadm") },
			errHas: []string{"--image " + nodeImage + " is not a kind node image", "/usr/bin/kubeadm': No such file or directory"},
		},
		{
			name: "its /kind/version is not its kubeadm's",
			setup: func(e *env) {
				e.cluster.Provider().Images[nodeImage].Files["/kind/version"] = []byte("v1.34.9")
			},
			errHas: []string{"--image " + nodeImage + " with --image-dir ", " says it holds Kubernetes v1.34.9 but its kubeadm is " + target},
		},
		{
			name: "a downgrade",
			setup: func(e *env) {
				e.cluster.Provider().Images[nodeImage] = fakenode.NewNodeImage("v1.32.5", runtime.GOARCH)
			},
			errHas: []string{"v1.32.5"},
		},
		{
			name: "a skipped minor",
			setup: func(e *env) {
				e.cluster.Provider().Images[nodeImage] = fakenode.NewNodeImage("v1.35.1", runtime.GOARCH)
			},
			errHas: []string{"v1.35.1"},
		},
		{
			name:   "--image-dir without archives",
			setup:  func(e *env) { e.imageDir = t.TempDir() },
			errHas: []string{"holds no image archives (*.tar): beside a node image, it adds archives to the image's images"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newImageEnv(t, 1, 1)
			tc.setup(e)
			use := withTool(e, tool)
			snapshotUnchanged(t, e, func() {
				_, err := e.run(use)
				if err == nil {
					t.Fatal("the upgrade was not refused")
				}
				for _, want := range tc.errHas {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("the refusal does not say %q:\n%v", want, err)
					}
				}
			})
			noHelperLeft(t, e)
		})
	}
}

// TestNodeImageIsPulledWhenMissing: an image that is not on the host is
// pulled through the provider, as kind create cluster pulls its node
// image.
func TestNodeImageIsPulledWhenMissing(t *testing.T) {
	t.Parallel()
	e := newImageEnv(t, 1, 0)
	p := e.cluster.Provider()
	p.Registry[nodeImage] = p.Images[nodeImage]
	delete(p.Images, nodeImage)
	mustUpgrade(t, e)
	assertUpgraded(t, e.cluster)
	noHelperLeft(t, e)
	if p.Images[nodeImage] == nil {
		t.Error("the image was not pulled")
	}
}

// TestNodeImageDryRunNamesTheSource: a dry run says the target comes from
// the image, changes nothing and leaves no helper.
func TestNodeImageDryRunNamesTheSource(t *testing.T) {
	t.Parallel()
	e := newImageEnv(t, 1, 1)
	snapshotUnchanged(t, e, func() {
		rec, err := e.run(func(o *upgrade.Options) { o.DryRun = true })
		if err != nil {
			t.Fatal(err)
		}
		var p *plan.Plan
		for _, line := range rec.lines {
			var ev struct {
				Kind string     `json:"kind"`
				Plan *plan.Plan `json:"plan"`
			}
			if err := json.Unmarshal([]byte(line), &ev); err == nil && ev.Kind == "plan" {
				p = ev.Plan
			}
		}
		if p == nil || p.Source != "--image "+nodeImage+" with --image-dir "+e.imageDir {
			t.Fatalf("the plan does not name the source: %+v", p)
		}
		for _, n := range p.Nodes {
			if n.Name == "kind-worker" && !strings.Contains(strings.Join(n.Load, " "), "kube-proxy:"+target) {
				t.Errorf("the worker's plan does not load the image's kube-proxy: %v", n.Load)
			}
		}
	})
	noHelperLeft(t, e)
}

// TestResumeAcrossSources: a run started from --image-dir and interrupted
// is finished from --image of the same version, and the reverse.
func TestResumeAcrossSources(t *testing.T) {
	t.Parallel()
	for _, first := range []string{"--image-dir", "--image"} {
		t.Run("started from "+first, func(t *testing.T) {
			t.Parallel()
			e := newImageEnv(t, 1, 1)
			release, err := fakenode.WriteRelease(t.TempDir(), target, "amd64", fakenode.Flat)
			if err != nil {
				t.Fatal(err)
			}
			fromDir := func(o *upgrade.Options) { o.Image, o.ImageDir = "", release }
			fromImage := func(o *upgrade.Options) {}
			start, finish := fromDir, fromImage
			if first == "--image" {
				start, finish = fromImage, fromDir
			}
			// interrupted half-way: the control plane upgraded, the
			// kubelets not
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			e.cluster.CancelOn(fakenode.Call{Node: "kind-control-plane", Argv: []string{"systemctl", "restart", "kubelet"}}, 1, cancel)
			if _, err := e.run(func(o *upgrade.Options) { start(o); o.Context = ctx }); err == nil || ctx.Err() == nil {
				t.Fatalf("the first run was not interrupted: %v", err)
			}
			if e.cluster.KubernetesVersion != target {
				t.Fatalf("the first run stopped before the control plane was upgraded (%s)", e.cluster.KubernetesVersion)
			}
			if _, err := e.run(finish); err != nil {
				t.Fatalf("the run from the other source failed: %v", err)
			}
			assertUpgraded(t, e.cluster)
			noHelperLeft(t, e)
		})
	}
}

// TestNodeImageHelperRemovedAfterCtrlC: cancelling the upgrade at any of
// the provider's commands stops it, leaves no helper container, and the
// same command run again finishes the upgrade.
func TestNodeImageHelperRemovedAfterCtrlC(t *testing.T) {
	t.Parallel()
	clean := newImageEnv(t, 1, 1)
	mustUpgrade(t, clean)
	seen := map[string]bool{}
	for i, call := range clean.cluster.Calls {
		if call.Node != "host" || seen[call.Key()] || call.Argv[1] == "rm" {
			continue
		}
		seen[call.Key()] = true
		occurrence := clean.cluster.Occurrence(i)
		t.Run(fmt.Sprintf("%03d %s", i+1, call), func(t *testing.T) {
			t.Parallel()
			e := newImageEnv(t, 1, 1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			e.cluster.CancelOn(call, occurrence, cancel)
			_, err := e.run(func(o *upgrade.Options) { o.Context = ctx })
			if err == nil || !strings.Contains(err.Error(), "cancel") {
				t.Fatalf("want a cancelled run, got %v", err)
			}
			noHelperLeft(t, e)
			mustUpgrade(t, e)
			assertUpgraded(t, e.cluster)
			noHelperLeft(t, e)
		})
	}
}

// TestNodeImageHelperLeftByAKilledRunIsRemoved: a helper a killed run left
// (its label names the cluster) is removed by the next run.
func TestNodeImageHelperLeftByAKilledRunIsRemoved(t *testing.T) {
	t.Parallel()
	e := newImageEnv(t, 1, 0)
	p := e.cluster.Provider()
	if out, err := runOutput(p.Command("docker", "run", "--detach", "--name", "kind-upgrade-source", "--label", "io.x-k8s.kind-upgrade.source=kind", "--network", "none", "--entrypoint", "containerd", nodeImage)); err != nil {
		t.Fatal(out, err)
	}
	mustUpgrade(t, e)
	noHelperLeft(t, e)
}

// TestNodeImageCopyCutShortIsImportedAgain: an image whose copy out of the
// helper ended early (the tar stream cut, the copy command content) is
// copied and imported once more, and the upgrade finishes.
func TestNodeImageCopyCutShortIsImportedAgain(t *testing.T) {
	t.Parallel()
	e := newImageEnv(t, 1, 1)
	e.cluster.Provider().CutCopies = 1
	mustUpgrade(t, e)
	assertUpgraded(t, e.cluster)
	noHelperLeft(t, e)
	if e.cluster.Provider().CutCopies != 0 {
		t.Error("no copy was cut short")
	}
}
