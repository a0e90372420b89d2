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

package fakenode_test

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/kubelets"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/loadartifacts"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/actions/preflight"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/emulation"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/fakenode"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/nodecapture"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/nodeimage"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/plan"
)

// A contract holds one answer of the fake against a real node's: the
// product's own code (the command it runs and the parser it reads the
// output with) runs on a node that replays the capture and on a fake
// node, and both must lead to the same decision. Decisions are printed,
// not bytes compared: the fake need not print what a real node prints,
// only what makes the product decide the same.
type contract struct {
	name string
	// capture is the real answer: a file of testdata/nodes (see its
	// README), printed by a command that failed when failed is set.
	capture, file string
	failed        bool
	// fake returns the fake node to ask, set up as the captured node was.
	fake func(t *testing.T) nodes.Node
	// decide runs the product's code on n and prints what it decided.
	decide func(t *testing.T, n nodes.Node) string
	// script is the registered node script the contract holds, if any.
	script string
	// known is a divergence the product has yet to handle: the contract
	// is skipped with it while it diverges, and fails once it no longer
	// does, so that known is removed.
	known string
}

// The clusters the captures were made on (see each SOURCE.txt).
const (
	fresh     = "v1.36.3" // fake-capture, a cgroup v1 host, right after create
	freshName = "fake-capture"
	oldName   = "capture" // v1.33.13 and v1.34.4
	target    = "v1.37.2"
)

func contracts() []contract {
	cs := []contract{
		{
			name: "cat /kind/version", capture: fresh, file: "kind-version.txt",
			fake: controlPlane(freshName, fresh),
			decide: func(t *testing.T, n nodes.Node) string {
				v, err := plan.ParseVersion(string(output(t, n.Command("cat", "/kind/version"))))
				return fmt.Sprint(v, err)
			},
		},
		{
			name: "uname -m", capture: fresh, file: "uname-m.txt",
			fake: controlPlane(freshName, fresh),
			decide: func(t *testing.T, n nodes.Node) string {
				return preflight.GoArch(strings.TrimSpace(string(output(t, n.Command("uname", "-m")))))
			},
		},
		{
			name: "stat the cgroup file system", capture: fresh, file: "stat-cgroup.txt",
			fake: func(t *testing.T) nodes.Node {
				n := fakenode.NewCluster(freshName, fresh, 1, 1).Nodes[0]
				n.CgroupV1 = true
				return n
			},
			decide: func(t *testing.T, n nodes.Node) string {
				return fmt.Sprint("cgroup v1: ", preflight.IsCgroupV1(string(output(t, n.Command("stat", "-f", "-c", "%T", "/sys/fs/cgroup")))))
			},
		},
		{
			name: "cat /proc/swaps", capture: fresh, file: "proc-swaps.txt",
			fake: controlPlane(freshName, fresh),
			decide: func(t *testing.T, n nodes.Node) string {
				return fmt.Sprint("swap: ", preflight.HasSwap(string(output(t, n.Command("cat", "/proc/swaps")))))
			},
		},
		{
			// before anything is staged, /kind/upgrade is on /kind's file
			// system, where the real df was asked
			name: "df of preflight's paths", capture: fresh, file: "df-preflight.txt", script: nodeutils.DFScript.Name,
			fake: controlPlane(freshName, fresh),
			decide: func(t *testing.T, n nodes.Node) string {
				return decideDF(t, n, actions.StagingRoot, "/var/lib/containerd")
			},
		},
		{
			name: "df of the node's layout", capture: fresh, file: "df-layout.txt",
			fake: controlPlane(freshName, fresh),
			decide: func(t *testing.T, n nodes.Node) string {
				return decideDF(t, n, "/", "/kind", "/usr/bin", "/var", "/var/lib/containerd", "/var/tmp", "/tmp")
			},
		},
		{
			name: "kubeadm probe", capture: fresh, file: "kubeadm-probe.txt", script: nodeutils.KubeadmProbeScript.Name,
			fake: controlPlane(freshName, fresh),
			decide: func(t *testing.T, n nodes.Node) string {
				// the probe of the cluster's own kubeadm, with the cluster's
				// (default) image settings, as the capture ran it
				cfg, err := (&kube.ClusterConfiguration{APIVersion: "kubeadm.k8s.io/v1beta4"}).ImagesConfig()
				if err != nil {
					t.Fatal(err)
				}
				cmd := nodeutils.KubeadmProbeScript.Command(context.Background(), n, string(cfg))
				cmd.SetStdin(strings.NewReader(string(fakenode.Binary("kubeadm", fresh, "amd64"))))
				v, images, err := preflight.ParseProbe(string(output(t, cmd)))
				return fmt.Sprint(v, " ", images, " ", err)
			},
		},
		{
			name: "kubelet-config ConfigMap", capture: fresh, file: "kubelet-config.yaml",
			fake: func(t *testing.T) nodes.Node {
				// the capture's cluster was made with failCgroupV1: false
				c := fakenode.NewCluster(freshName, fresh, 1, 1)
				c.KubeletConfig += "failCgroupV1: false\n"
				return c.Nodes[0]
			},
			decide: func(t *testing.T, n nodes.Node) string {
				cfg, err := kube.Client{On: n}.KubeletConfiguration(context.Background())
				if err != nil {
					return err.Error()
				}
				v, _ := plan.ParseVersion(target)
				return fmt.Sprint("refusal: ", preflight.HostRefusal(v, cfg, []string{"node"}, []string{"node"}, freshName))
			},
		},
		{
			name: "local-path-storage workloads", capture: fresh, file: "local-path-storage-workloads.json",
			fake: controlPlane(freshName, fresh),
			decide: func(t *testing.T, n nodes.Node) string {
				return decideWorkloads(t, n, "local-path-storage")
			},
		},
		{
			name: "/readyz", capture: fresh, file: "readyz.txt",
			fake: controlPlane(freshName, fresh),
			decide: func(t *testing.T, n nodes.Node) string {
				return fmt.Sprint(kube.Client{On: n}.Readyz(context.Background()))
			},
		},
		{
			name: "pods of every namespace, a bare pod on the worker", capture: fresh, file: "all-pods-bare-on-worker.json",
			fake: func(t *testing.T) nodes.Node {
				c := fakenode.NewCluster(freshName, fresh, 1, 1)
				c.BarePods = map[string][]string{freshName + "-worker": {"default/kind-upgrade-capture-bare"}}
				return c.Nodes[0]
			},
			decide: func(t *testing.T, n nodes.Node) string {
				pods, err := kube.Client{On: n}.Pods(context.Background())
				if err != nil {
					return err.Error()
				}
				// the nodes as the capture's nodes.json lists them: what the
				// pods decide, with the same nodes
				list, err := kube.ParseNodeList(nodecapture.Read(t, fresh, "nodes.json"))
				if err != nil {
					t.Fatal(err)
				}
				return fmt.Sprint(preflight.UnmanagedOnDrained(list, pods, target, func(string) bool { return true }))
			},
		},
		{
			name: "crictl pull on an offline node", capture: fresh, file: "crictl-pull-offline.txt", failed: true,
			fake: worker(freshName, fresh),
			decide: func(t *testing.T, n nodes.Node) string {
				// the pull's error quotes crictl's last line
				image := "registry.k8s.io/kind-upgrade-capture-missing:v0"
				out, err := actions.PullImage(context.Background(), n, image)
				lines := strings.Split(strings.TrimSpace(out), "\n")
				last := lines[len(lines)-1]
				return fmt.Sprint("failed: ", err != nil, ", last line crictl's fatal one: ", strings.Contains(last, `level=fatal msg="pulling image: `),
					", names the image: ", strings.Contains(last, image), ", says why: ", strings.HasSuffix(last, `no such host"`))
			},
		},
		{
			name: "systemctl show kubelet, running", capture: nodecapture.KubeletInotify, file: "systemctl-show-kubelet-running.txt",
			fake:   controlPlane(freshName, fresh),
			decide: decideUnit,
		},
		{
			name: "systemctl show kubelet, exiting at every start", capture: nodecapture.KubeletInotify, file: "systemctl-show-kubelet-exhausted.txt",
			fake:   exhausted,
			decide: decideUnit,
		},
		{
			name: "the kubelet's journal, exiting at every start", capture: nodecapture.KubeletInotify, file: "kubelet-journal-exhausted.txt", script: nodeutils.UnitLogScript.Name,
			fake: exhausted,
			decide: func(t *testing.T, n nodes.Node) string {
				journal, err := nodeutils.UnitLog(context.Background(), n, "kubelet", 50)
				if err != nil {
					return err.Error()
				}
				why := kubelets.LastKubeletError(kubelets.LastKubeletRun(journal))
				return fmt.Sprint("why: inotify exhausted: ", strings.Contains(why, "too many open files") && strings.Contains(why, "inotify"))
			},
		},
		{
			name: "node image platform", capture: fresh, file: "docker-image-inspect-platform.txt",
			fake: func(t *testing.T) nodes.Node {
				c := fakenode.NewCluster(freshName, fresh, 1, 0)
				p := c.Provider()
				p.Images["kind-upgrade-e2e/node:"+fresh] = fakenode.NewNodeImage(fresh, "amd64")
				return hostNode{p}
			},
			decide: func(t *testing.T, n nodes.Node) string {
				out := output(t, n.Command("docker", "image", "inspect", "--format", "{{.Os}}/{{.Architecture}}", "kind-upgrade-e2e/node:"+fresh))
				return strings.TrimSpace(string(out))
			},
		},
		{
			name: "node image's ctr images list", capture: fresh, file: "ctr-images-list.txt", script: nodeutils.NodeImageScript.Name,
			fake: func(t *testing.T) nodes.Node {
				return imageListNode{fakenode.NewNodeImage(fresh, "amd64")}
			},
			decide: func(t *testing.T, n nodes.Node) string {
				list := nodeimage.ParseImageList(string(output(t, n.Command("ctr", "--namespace=k8s.io", "images", "list"))))
				var refs []string
				sized := true
				for _, img := range list {
					refs = append(refs, img.Ref)
					sized = sized && img.Size > 0
				}
				// what kubeadm needs at that version, but its pause (kind's
				// builder imports its own sandbox image)
				_, needed, err := preflight.ParseProbe(string(nodecapture.Read(t, fresh, "kubeadm-probe.txt")))
				if err != nil {
					t.Fatal(err)
				}
				var noPause []string
				for _, image := range needed {
					if !strings.Contains(image, "/pause:") {
						noPause = append(noPause, image)
					}
				}
				return fmt.Sprint("missing: ", plan.Missing(noPause, plan.ImageSet(refs)), ", sizes read: ", sized)
			},
		},
		{
			name: "the kubelet's own pods, settled", capture: nodecapture.KubeletRestart, file: "kubelet-pods-settled.json",
			fake: controlPlane("prof", target),
			decide: func(t *testing.T, n nodes.Node) string {
				pods, err := kube.Client{On: n}.KubeletPods(context.Background(), "prof-control-plane")
				return decidePods(pods, err)
			},
		},
		{
			name: "the API server's control-plane pods, settled", capture: nodecapture.KubeletRestart, file: "control-plane-pods-settled.json",
			fake: controlPlane("prof", target),
			decide: func(t *testing.T, n nodes.Node) string {
				pods, err := kube.Client{On: n}.ControlPlanePods(context.Background())
				return decidePods(pods, err)
			},
		},
		{
			name: "inotify listing, control plane", capture: nodecapture.KubeletInotify, file: "inotify-control-plane.txt", script: nodeutils.InotifyScript.Name,
			fake:   controlPlane(freshName, fresh),
			decide: decideInotify,
		},
		{
			name: "inotify listing, worker", capture: nodecapture.KubeletInotify, file: "inotify-worker.txt",
			fake:   worker(freshName, fresh),
			decide: decideInotify,
		},
	}
	// what every capture of a cluster's life holds
	for _, version := range []string{nodecapture.Before, nodecapture.After, fresh} {
		name := oldName
		if version == fresh {
			name = freshName
		}
		cs = append(cs,
			contract{
				name: "containerd config dump", capture: version, file: "containerd-config-dump.toml",
				fake: controlPlane(name, version),
				decide: func(t *testing.T, n nodes.Node) string {
					s, err := loadartifacts.ParseSnapshotter(output(t, n.Command("containerd", "config", "dump")))
					return fmt.Sprint(s, err)
				},
			},
			contract{
				name: "ctr images import --help", capture: version, file: "ctr-images-import-help.txt",
				fake: controlPlane(name, version),
				decide: func(t *testing.T, n nodes.Node) string {
					return fmt.Sprint("--local: ", loadartifacts.LocalImport(string(output(t, n.Command("ctr", "--namespace=k8s.io", "images", "import", "--help")))))
				},
			},
			contract{
				name: "df /var/lib/containerd", capture: version, file: "df-var-lib-containerd.txt",
				fake: controlPlane(name, version),
				decide: func(t *testing.T, n nodes.Node) string {
					return decideDF(t, n, "/var/lib/containerd")
				},
			},
			contract{
				name: "kubelet --version", capture: version, file: "kubelet-version.txt",
				fake: staged(name, version),
				decide: func(t *testing.T, n nodes.Node) string {
					v, err := plan.ParseBinaryVersion(string(output(t, n.Command(stagedDir+"kubelet", "--version"))))
					return fmt.Sprint(v, err)
				},
			},
			contract{
				name: "kubectl version --client", capture: version, file: "kubectl-version-client.txt",
				fake: staged(name, version),
				decide: func(t *testing.T, n nodes.Node) string {
					v, err := plan.ParseBinaryVersion(string(output(t, n.Command(stagedDir+"kubectl", "version", "--client"))))
					return fmt.Sprint(v, err)
				},
			},
			contract{
				name: "nodes", capture: version, file: "nodes.json",
				fake: controlPlane(name, version),
				decide: func(t *testing.T, n nodes.Node) string {
					list, err := kube.Client{On: n}.Nodes(context.Background())
					if err != nil {
						return err.Error()
					}
					var b strings.Builder
					for _, kn := range list {
						needed, why := actions.DrainNeeded(list, kn, target)
						fmt.Fprintf(&b, "%s %s ready=%v unschedulable=%v noschedule=%v drain=%v %s\n", kn.Name, kn.KubeletVersion, kn.Ready, kn.Unschedulable, kn.NoSchedule, needed, why)
					}
					return b.String()
				},
			},
			contract{
				name: "control-plane pods", capture: version, file: "control-plane-pods.json",
				fake: controlPlane(name, version),
				decide: func(t *testing.T, n nodes.Node) string {
					pods, err := kube.Client{On: n}.ControlPlanePods(context.Background())
					return decidePods(pods, err)
				},
			},
			contract{
				name: "kube-system workloads", capture: version, file: "kube-system-workloads.json",
				fake: controlPlane(name, version),
				decide: func(t *testing.T, n nodes.Node) string {
					return decideWorkloads(t, n, "kube-system")
				},
			},
			contract{
				name: "kubeadm-config ClusterConfiguration", capture: version, file: "cluster-configuration.yaml",
				fake: controlPlane(name, version),
				decide: func(t *testing.T, n nodes.Node) string {
					cfg, err := kube.Client{On: n}.ClusterConfiguration(context.Background())
					if err != nil {
						return err.Error()
					}
					images, err := cfg.ImagesConfig()
					return fmt.Sprintf("%s %s\n%s%v\nemulation: %v\n%s", cfg.KubernetesVersion, cfg.ImageRepository, images, err, emulation.FromConfig(cfg), decideEmulationEdit(t, n))
				},
			},
			contract{
				name: "kube-apiserver manifest", capture: version, file: "kube-apiserver.yaml",
				fake: controlPlane(name, version),
				decide: func(t *testing.T, n nodes.Node) string {
					pod, err := kube.ParsePod(output(t, n.Command("cat", "/etc/kubernetes/manifests/kube-apiserver.yaml")))
					if err != nil {
						return err.Error()
					}
					return fmt.Sprintf("%v command of kube-apiserver: %v, emulation: %q", pod.Images, len(pod.Command) > 0 && pod.Command[0] == "kube-apiserver",
						emulation.Mismatch(emulation.Args{}, "kube-apiserver", pod.Command))
				},
			},
			contract{
				name: "API server version", capture: version, file: "version.json",
				fake: controlPlane(name, version),
				decide: func(t *testing.T, n nodes.Node) string {
					v, err := kube.Client{On: n}.ServerVersion(context.Background())
					return fmt.Sprint(v, err)
				},
			},
		)
		for _, role := range []string{"control-plane", "worker"} {
			fake := controlPlane(name, version)
			if role == "worker" {
				fake = worker(name, version)
			}
			cs = append(cs, contract{
				name: "ctr images ls on the " + role, capture: version, file: "ctr-images-ls-quiet-" + role + ".txt",
				fake: fake,
				decide: func(t *testing.T, n nodes.Node) string {
					lines, err := exec.OutputLines(n.Command("ctr", "--namespace=k8s.io", "images", "ls", "--quiet"))
					if err != nil {
						return err.Error()
					}
					// what the role needs of kubeadm's list at that version,
					// its pause left out: kind's nodes run kind's own
					_, needed, err := preflight.ParseProbe(string(nodecapture.Read(t, version, "kubeadm-probe.txt")))
					if err != nil {
						t.Fatal(err)
					}
					var noPause []string
					for _, image := range plan.NeededOn(needed, role) {
						if !strings.Contains(image, "/pause:") {
							noPause = append(noPause, image)
						}
					}
					return fmt.Sprint("missing: ", plan.Missing(noPause, plan.ImageSet(lines)))
				},
			})
		}
	}
	return cs
}

// TestFakeAnswersLikeARealNode holds every contract.
func TestFakeAnswersLikeARealNode(t *testing.T) {
	t.Parallel()
	for _, c := range contracts() {
		t.Run(c.capture+"/"+c.name, func(t *testing.T) {
			t.Parallel()
			onReal := c.decide(t, nodecapture.Replay{Out: nodecapture.Read(t, c.capture, c.file), Failed: c.failed})
			fake := c.decide(t, c.fake(t))
			switch {
			case c.known != "" && onReal != fake:
				t.Skipf("known divergence: %s\nreal node: %s\nfake node: %s", c.known, onReal, fake)
			case c.known != "":
				t.Errorf("the fake and the real node now lead to the same decision: remove the known divergence %q", c.known)
			case onReal != fake:
				t.Errorf("the product decides differently on the fake's answer than on the real node's (%s/%s):\nreal node: %s\nfake node: %s", c.capture, c.file, onReal, fake)
			}
		})
	}
}

// TestEveryScriptHasAContract: a script the product runs on nodes, and the
// fake answers, is held against a real answer or says why not.
func TestEveryScriptHasAContract(t *testing.T) {
	t.Parallel()
	held := map[string]bool{}
	for _, c := range contracts() {
		if c.script != "" {
			held[c.script] = true
		}
	}
	for _, s := range nodeutils.Scripts() {
		_, why := unheldScripts[s.Name]
		switch {
		case held[s.Name] && why:
			t.Errorf("script %s has a contract: remove it from unheldScripts", s.Name)
		case !held[s.Name] && !why:
			t.Errorf("script %s has no contract: add one with a capture from a real node, or say in unheldScripts why none is needed", s.Name)
		}
	}
}

// unheldScripts are the scripts without a contract, and why.
var unheldScripts = map[string]string{
	nodeutils.StreamScript.Name:          "mutates; prints nothing the product reads",
	nodeutils.FinishScript.Name:          "mutates; prints nothing the product reads",
	nodeutils.WriteStringScript.Name:     "mutates; prints nothing the product reads",
	nodeutils.InstallScript.Name:         "mutates; prints nothing the product reads",
	nodeutils.PinScript.Name:             "mutates; prints nothing the product reads",
	nodeutils.KubeadmWaitScript.Name:     "only its exit code is read",
	nodeutils.ContainerdReadyScript.Name: "runs in a node image's helper container; only its exit code is read",
	nodeutils.ExistsScript.Name:          "its output is the script's own words (yes/no), run on a real shell by nodeutils' TestEveryScriptOnARealShell",
	nodeutils.ReadScript.Name:            "its output is the script's own words (yes/no) and a file, run on a real shell by nodeutils' TestEveryScriptOnARealShell",
	nodeutils.CompareScript.Name:         "its output is the script's own words (same/differ/missing), run on a real shell by nodeutils' TestEveryScriptOnARealShell",
	nodeutils.KubeadmBusyScript.Name:     "its output is the script's own word (busy), run on a real shell by nodeutils' TestEveryScriptOnARealShell",
	nodeutils.KubectlAllScript.Name:      "its answers are kubectl's, each held by the contract of the same request made alone (control-plane pods, the kubelet's own pods, /readyz, workloads); around them, its own words (the exit status lines), run on a real shell with a stand-in kubectl by nodeutils' TestEveryScriptOnARealShell",
}

func controlPlane(cluster, version string) func(t *testing.T) nodes.Node {
	return func(t *testing.T) nodes.Node {
		return fakenode.NewCluster(cluster, version, 1, 1).Nodes[0]
	}
}

func worker(cluster, version string) func(t *testing.T) nodes.Node {
	return func(t *testing.T) nodes.Node {
		return fakenode.NewCluster(cluster, version, 1, 1).Nodes[1]
	}
}

// stagedDir is where the product runs the new binaries from to read
// their versions.
const stagedDir = actions.StagingRoot + "/" + target + "/"

// staged is a control-plane node with its binaries staged, as
// load-artifacts leaves them.
func staged(cluster, version string) func(t *testing.T) nodes.Node {
	return func(t *testing.T) nodes.Node {
		n := fakenode.NewCluster(cluster, version, 1, 1).Nodes[0]
		for _, b := range []string{"kubelet", "kubectl"} {
			n.Files[stagedDir+b] = n.Files["/usr/bin/"+b]
		}
		return n
	}
}

// exhausted is a worker whose kubelet exits at every start, the host's
// inotify instances exhausted, as in the capture.
func exhausted(t *testing.T) nodes.Node {
	c := fakenode.NewCluster(freshName, fresh, 1, 1)
	n := c.Nodes[1]
	c.Host.SetLimit(fakenode.InotifyCount{Instances: 31, Watches: 524288})
	if err := n.Command("systemctl", "restart", "kubelet").Run(); err != nil {
		t.Fatal(err)
	}
	return n
}

func output(t *testing.T, cmd exec.Cmd) []byte {
	t.Helper()
	out, err := exec.Output(cmd)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return out
}

// decideDF is what preflight's disk check reads of df for paths: which
// file system each is on, and which of them it counts as one (the same
// device and size, or, across devices, the same size).
func decideDF(t *testing.T, n nodes.Node, paths ...string) string {
	out := output(t, nodeutils.DFScript.Command(context.Background(), n, paths...))
	fss, err := preflight.ParseDF(string(out))
	if err != nil || len(fss) != len(paths) {
		return fmt.Sprintf("%d file systems for %d paths: %v", len(fss), len(paths), err)
	}
	var b strings.Builder
	for i, fs := range fss {
		fmt.Fprintf(&b, "%s on %s (%s, %s)", paths[i], fs.Mount, fs.Device, sizeUnit(fs.Size))
		for j := 0; j < i; j++ {
			if fss[j].Size == fs.Size {
				fmt.Fprintf(&b, ", as large as %s's", paths[j])
				if fss[j].Device == fs.Device {
					b.WriteString(" and the same")
				}
				break
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// sizeUnit names a file system's size coarsely: the fake's host disk need
// not be the capture's.
func sizeUnit(bytes int64) string {
	if bytes >= 64<<30 {
		return "a host disk"
	}
	return "a small file system"
}

func decideWorkloads(t *testing.T, n nodes.Node, namespace string) string {
	ws, err := kube.Client{On: n}.Workloads(context.Background(), namespace)
	if err != nil {
		return err.Error()
	}
	var unavailable []string
	for _, w := range ws {
		if !w.Available {
			unavailable = append(unavailable, w.Kind+"/"+w.Name+": "+w.Detail)
		}
	}
	return fmt.Sprintf("any: %v, unavailable: %v, kube-proxy: %v", len(ws) > 0, unavailable, plan.ImageVersion(kube.KubeProxyImage(ws)))
}

// decideEmulationEdit is what the control-plane phase's kubeadm-config
// step makes of the node's ClusterConfiguration: an emulation set, read
// back as set, the other fields as they were.
func decideEmulationEdit(t *testing.T, n nodes.Node) string {
	doc, err := kube.Client{On: n}.ClusterConfigurationDocument(context.Background())
	if err != nil {
		return err.Error()
	}
	cfg, err := kube.ParseClusterConfiguration(doc)
	if err != nil {
		return err.Error()
	}
	v, _ := plan.ParseVersion(cfg.KubernetesVersion)
	now := emulation.FromConfig(cfg)
	want := emulation.Desired(now, emulation.Choice{Version: fmt.Sprintf("%d.%d", v.Major(), v.Minor()-1)}, v)
	edited, err := kube.SetExtraArgs(doc, emulation.ArgChanges(now, want))
	if err != nil {
		return err.Error()
	}
	back, err := kube.ParseClusterConfiguration(edited)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("edited: %v, version kept: %v", emulation.FromConfig(back).Equal(want), back.KubernetesVersion == cfg.KubernetesVersion)
}

// decidePods is what the control-plane waits read of static pods: which
// component runs where, with which image, Ready, with containers.
func decidePods(pods []kube.Pod, err error) string {
	if err != nil {
		return err.Error()
	}
	var lines []string
	for _, p := range pods {
		if p.Component == "" {
			// not a static pod of kubeadm's: the waits look for none
			continue
		}
		started := len(p.ContainerIDs) > 0
		for _, id := range p.ContainerIDs {
			started = started && id != ""
		}
		own := len(p.Command) > 0 && p.Command[0] == p.Component
		lines = append(lines, fmt.Sprintf("%s on %s: %v ready=%v containers=%v command=%v emulation=%q", p.Component, p.NodeName, p.Images, p.Ready, started, own, emulation.Mismatch(emulation.Args{}, p.Component, p.Command)))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func decideUnit(t *testing.T, n nodes.Node) string {
	u, err := nodeutils.ShowUnit(context.Background(), n, "kubelet")
	return fmt.Sprint("running: ", u.Running(), ", restarted: ", u.NRestarts > 0, " ", err)
}

// decideInotify is what the inotify check reads of a node: its limit, and
// how many instances its root processes and its kubelet hold (the fake's
// are those counted on the capture's nodes).
func decideInotify(t *testing.T, n nodes.Node) string {
	ni, err := preflight.ParseInotify(string(output(t, nodeutils.InotifyScript.Command(context.Background(), n))))
	return fmt.Sprintf("limit %d instances, root %d, kubelet %d %v", ni.Limit.Instances, ni.Root.Instances, ni.Kubelet.Instances, err)
}

// hostNode runs commands with the fake provider's CLI, on the host.
type hostNode struct{ p *fakenode.Provider }

func (hostNode) String() string               { return "host" }
func (hostNode) Role() (string, error)        { return "", nil }
func (hostNode) IP() (string, string, error)  { return "", "", nil }
func (hostNode) SerialLogs(w io.Writer) error { return nil }
func (h hostNode) Command(c string, a ...string) exec.Cmd {
	return h.p.Command(c, a...)
}
func (h hostNode) CommandContext(ctx context.Context, c string, a ...string) exec.Cmd {
	return h.p.CommandContext(ctx, c, a...)
}

// imageListNode answers `ctr images list` as the fake provider's helper
// container of a node image does (NodeImageScript writes it to a file the
// provider copies out).
type imageListNode struct{ img *fakenode.NodeImage }

func (imageListNode) String() string               { return "node-image" }
func (imageListNode) Role() (string, error)        { return "", nil }
func (imageListNode) IP() (string, string, error)  { return "", "", nil }
func (imageListNode) SerialLogs(w io.Writer) error { return nil }
func (n imageListNode) Command(c string, a ...string) exec.Cmd {
	return n.CommandContext(context.Background(), c, a...)
}
func (n imageListNode) CommandContext(ctx context.Context, c string, a ...string) exec.Cmd {
	return nodecapture.Replay{Out: []byte(fakenode.ImageList(n.img))}.CommandContext(ctx, c, a...)
}
