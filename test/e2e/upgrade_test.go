//go:build e2e

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
	"archive/tar"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/internal/lab/kindtest"
	"github.com/kindupgrade/kind-upgrade/internal/lab/manifest"
	"github.com/kindupgrade/kind-upgrade/internal/lab/timeline"
)

// clusterConfig is a plain kind config: kind's default CNI (kindnet) and
// storage (local-path-provisioner) come from the node image, as on any kind
// cluster.
const clusterConfig = `kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
- role: control-plane
- role: worker
`

// workloads: a 2-replica HTTP canary (tolerating the control plane, so a
// drain moves a replica), its Service and the PersistentVolume writer of
// canaryServiceAndVolume.
const workloads = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: canary
spec:
  replicas: 2
  selector:
    matchLabels: {app: canary}
  template:
    metadata:
      labels: {app: canary}
    spec:
      tolerations:
      - {key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}
      containers:
      - name: canary
        image: IMAGE
        imagePullPolicy: Never
        args: [serve]
        ports:
        - containerPort: 8080
        readinessProbe:
          httpGet: {path: /healthz, port: 8080}
          periodSeconds: 2
---
` + canaryServiceAndVolume

// canaryServiceAndVolume, shared by the tests' workloads: the canary's
// Service, and a pod on the worker WORKER writing to a PersistentVolume that
// kind's default StorageClass (the local-path provisioner) provisions for
// its claim.
const canaryServiceAndVolume = `apiVersion: v1
kind: Service
metadata:
  name: canary
spec:
  selector: {app: canary}
  ports:
  - port: 80
    targetPort: 8080
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: canary-pvc
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: standard
  resources:
    requests: {storage: 1Gi}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: pv-canary
spec:
  replicas: 1
  strategy: {type: Recreate}
  selector:
    matchLabels: {app: pv-canary}
  template:
    metadata:
      labels: {app: pv-canary}
    spec:
      nodeSelector: {kubernetes.io/hostname: WORKER}
      containers:
      - name: canary
        image: IMAGE
        imagePullPolicy: Never
        args: [sleep]
        volumeMounts:
        - {name: data, mountPath: /data}
      volumes:
      - name: data
        persistentVolumeClaim: {claimName: canary-pvc}
`

// TestIntegrationUpgrade (make e2e) upgrades 1 control plane and 1 worker
// from the manifest's source to its target; its checks are subtests of one
// named after the version pair, so that the version matrix's junit tells
// the pairs apart.
func TestIntegrationUpgrade(t *testing.T) {
	m := integration(t)
	t.Run(m.Pair(), func(t *testing.T) { testUpgrade(t, m) })
}

func testUpgrade(t *testing.T, m *manifest.Manifest) {
	testUpgradeOf(t, newHarness(t, m, "kind-upgrade-e2e", 2, ""), m)
}

// providerName is the name provider's commands get for image, as kind
// gives it: podman's provider completes docker.io/.
func providerName(provider, image string) string {
	if provider == "podman" {
		return "docker.io/" + image
	}
	return image
}

// testUpgradeOf is make e2e's upgrade, of h's cluster with h's provider.
func testUpgradeOf(t *testing.T, h *harness, m *manifest.Manifest) {
	from, to := m.From, m.To
	imageDir := imageDir(t, m)
	worker := h.Name + "-worker"

	h.CreateCluster(from, clusterConfig)
	h.Must("the cluster's nodes are "+h.Provider+"'s containers", func() error {
		out, err := h.RunStdout(h.Provider, "ps", "--filter", "label=io.x-k8s.kind.cluster="+h.Name, "--format", "{{.Names}}")
		if err == nil && len(strings.Fields(out)) != 2 {
			err = fmt.Errorf("%s ps lists %q, want the cluster's 2 nodes", h.Provider, out)
		}
		return err
	})
	h.Must("nodes Ready at "+from, func() error { return h.NodesReadyAt(from, 3*time.Minute) })
	before := h.Versions("Before the upgrade")
	t.Log(before)
	if *layoutFlag == "release" {
		imageDir = h.withOnePlatformArchive(imageDir)
	}

	h.Must("deploy the canaries", func() error { return h.DeployCanaries(workloads, worker) })
	token := fmt.Sprintf("written-before-the-upgrade-%d", time.Now().UnixNano())
	h.Must("the claim is bound to a volume the local-path provisioner made", func() error {
		out, err := h.Kubectl("get", "pv", "-o", `jsonpath={range .items[*]}{.spec.claimRef.name} {.metadata.annotations.pv\.kubernetes\.io/provisioned-by}{"\n"}{end}`)
		if err == nil && !strings.Contains(out, "canary-pvc rancher.io/local-path") {
			err = fmt.Errorf("no PersistentVolume of canary-pvc provisioned by rancher.io/local-path:\n%s", out)
		}
		return err
	})
	h.Must("kind's add-ons are available: kindnet and the local-path provisioner", func() error {
		_, err := h.addonImages()
		return err
	})
	addonsBefore, _ := h.addonImages()
	h.Must("write to the PersistentVolume", func() error {
		_, err := h.Canary("write", "/data/canary.txt", token)
		return err
	})
	serviceURL := "http://canary.default.svc.cluster.local/"
	httpCheck := func() error {
		return kindtest.Eventually(time.Minute, func() error {
			out, err := h.Canary("get", serviceURL)
			if err != nil {
				return err
			}
			if !strings.HasPrefix(strings.TrimSpace(out), "canary-") {
				return fmt.Errorf("the canary Service answered %q", out)
			}
			return nil
		})
	}
	h.Must("the canary answers HTTP through its Service before", httpCheck)

	if skipping := *skippedMinorFlag; skipping != "" {
		h.Check("an --image-dir that skips a minor version is refused and changes nothing", func() error {
			out, err := h.Run(nil, h.Kind, "alpha", "upgrade", "--name", h.Name, "--image-dir", skipping)
			if err == nil {
				return fmt.Errorf("the upgrade was not refused:\n%s", out)
			}
			if !strings.Contains(out, "skips a minor version") {
				return fmt.Errorf("the refusal does not say it skips a minor version:\n%s", out)
			}
			return h.AllAt(from)
		})
	}

	// a host at its inotify limit: a kubelet restarted there may not come
	// back, so preflight refuses before anything changes; the runs below
	// upgrade the same cluster once the limit is restored
	h.Check("refused, nothing changed: the host's inotify instances at their limit (fs.inotify.max_user_instances lowered to what the host's root processes hold, plus 2)", func() error {
		nodes := []string{h.CP, worker}
		msg, err := h.atInotifyLimit(func(limit int) (string, error) {
			return h.refusedChangingNothing(nodes, []string{"alpha", "upgrade", "--name", h.Name, "--image-dir", imageDir}, []string{
				"the host's inotify limits leave too little room for the kubelets this upgrade restarts",
				fmt.Sprintf("fs.inotify.max_user_instances is %d, of which the root processes of kind's nodes on this host hold", limit),
				"sysctl -w fs.inotify.max_user_instances=",
				"then run this command again",
			})
		})
		kindtest.WriteFile(t, h.Artifacts, "inotify-refusal.txt", msg+"\n")
		return err
	})

	// a node image the provider does not have, which cannot be pulled
	// here: the fixes are the provider's own commands
	h.Check("--image of a node image "+h.Provider+" does not have, offline: refused naming `"+h.Provider+" pull` and `"+h.Provider+" load`, nothing changed", func() error {
		missing := "kind-upgrade-e2e/not-built:" + to
		_, err := h.refusedChangingNothing([]string{h.CP, worker}, []string{"alpha", "upgrade", "--name", h.Name, "--image", missing}, []string{
			"--image " + missing + " is not on this host and pulling it failed",
			"`" + h.Provider + " pull " + providerName(h.Provider, missing) + "`",
			"`" + h.Provider + " load`",
		})
		return err
	})

	// the target's node image, as kind's builder made it, alone on nodes
	// that cannot pull: it lacks kubeadm's pause (kind's builder keeps
	// containerd's sandbox image), which the nodes then fail to pull at the
	// start of load-artifacts, before any other change (kind's nodes hold
	// the sandbox image, not kubeadm's pause, whatever the version)
	if h.imageOnNodes(m.ToPauseImage, false, h.CP, worker) == nil {
		h.Check("--image alone, offline: refused naming kubeadm's pause image and the fix, nothing changed", func() error {
			msg, err := h.refusedChangingNothing([]string{h.CP, worker}, []string{"alpha", "upgrade", "--name", h.Name, "--image", m.TargetNodeImage}, []string{
				"node " + h.CP + " cannot pull " + m.ToPauseImage + " (kind's node-image builder keeps containerd's sandbox image",
				"Nothing but pulls has changed yet.",
				"add it as --image-dir",
			})
			kindtest.WriteFile(t, h.Artifacts, "image-without-pause-refusal.txt", msg+"\n")
			return err
		})
	}

	// an upgrade from the target's node image (the binaries and kube-*
	// images streamed from it), with --image-dir adding what it lacks,
	// interrupted (Ctrl-C) while kubeadm upgrades the control plane:
	// kubeadm goes on inside the node; the runs below finish the upgrade
	// from the same version's --image-dir. A release-like folder's own
	// archives (kubeadm's pause, and etcd as Docker 29 saves it) are used
	// beside the image; a build tree's are not a folder of archives, so
	// the image's extras are.
	targetImage := []string{"--image", m.TargetNodeImage, "--image-dir", m.ImageExtrasDir}
	if *layoutFlag == "release" {
		targetImage = []string{"--image", m.TargetNodeImage, "--image-dir", imageDir}
	}
	var interruptedEvents string
	h.Must("interrupt kind alpha upgrade "+strings.Join(targetImage, " ")+" during kubeadm upgrade apply", func() error {
		events, err := h.InterruptedUpgrade(targetImage, timeline.StepID("control-plane/kubeadm-upgrade-apply"), 20*time.Second)
		interruptedEvents = events
		kindtest.WriteFile(t, h.Artifacts, "interrupted-upgrade-events.jsonl", events)
		return err
	})
	h.Check("the interrupted run imported the target's kube-apiserver on "+h.CP+" from "+m.TargetNodeImage+" (the --image-dir beside it holds no archive of it)", func() error {
		apiserver := "registry.k8s.io/kube-apiserver:" + to
		tars, err := filepath.Glob(filepath.Join(targetImage[3], "kube-apiserver*.tar"))
		if err != nil || len(tars) > 0 {
			return fmt.Errorf("the --image-dir beside --image holds %v (%v)", tars, err)
		}
		return h.imageOnNodes(apiserver, true, h.CP)
	})

	if unchanged := m.UnchangedImages(); len(unchanged) > 0 {
		h.Check("--image-dir holds no archive of the images that do not change", func() error {
			return noArchiveOf(imageDir, unchanged)
		})
	}

	// the same version again, from --image-dir, told to stop at
	// kubeadm's skew point: the control plane at the target, every
	// kubelet still at the source
	var cpEvents string
	h.Must("kind alpha upgrade to "+to+" again from --image-dir, control plane only (--skip-phases kubelets)", func() error {
		var err error
		cpEvents, err = h.RunStdout(h.Kind, "alpha", "upgrade", "--name", h.Name, "--image-dir", imageDir, "--skip-phases", "kubelets", "--output", "json", "-v", "1")
		kindtest.WriteFile(t, h.Artifacts, "control-plane-upgrade-events.jsonl", cpEvents)
		return err
	})
	h.Check("at the skew stop, the API server runs "+to, func() error { return h.ServerAt(to) })
	h.Check("at the skew stop, etcd, CoreDNS and kube-proxy run the target's images", func() error {
		for _, c := range []struct{ selector, image string }{
			{"component=etcd", m.ToEtcdImage},
			{"k8s-app=kube-dns", m.ToCoreDNSImage},
			{"k8s-app=kube-proxy", "registry.k8s.io/kube-proxy:" + to},
		} {
			if err := h.podImage(c.selector, c.image); err != nil {
				return err
			}
		}
		return nil
	})
	h.Check("at the skew stop, every kubelet and /kind/version are still at "+from, func() error { return h.AllAt(from) })
	h.Check("at the skew stop, the canary answers HTTP through its Service", httpCheck)
	skewState := h.Versions("At the skew stop (control plane " + to + ", kubelets " + from + ")")

	// a plain run finishes the job: the kubelets
	var kubeletEvents string
	h.Must("kind alpha upgrade to "+to+" again, to finish", func() error {
		var err error
		kubeletEvents, err = h.RunStdout(h.Kind, "alpha", "upgrade", "--name", h.Name, "--image-dir", imageDir, "--output", "json", "-v", "1")
		kindtest.WriteFile(t, h.Artifacts, "upgrade-events.jsonl", kubeletEvents)
		return err
	})
	order, times, total, err := timeline.PhaseTimes(interruptedEvents + cpEvents + kubeletEvents)
	if err != nil {
		t.Errorf("failed to read the upgrade's events: %v", err)
	}
	var report strings.Builder
	fmt.Fprintf(&report, "Upgrade %s -> %s, per-phase wall time summed over its three runs (interrupted 20 s into kubeadm upgrade apply, control plane only, kubelets):\n", from, to)
	for _, p := range order {
		fmt.Fprintf(&report, "  %-15s %7.1fs\n", p, times[p])
	}
	fmt.Fprintf(&report, "  %-15s %7.1fs\n", "total", total)
	after := h.Versions("After the upgrade")
	report.WriteString("\n" + before + "\n" + skewState + "\n" + after)
	kindtest.WriteFile(t, h.Artifacts, "upgrade-report.txt", report.String())
	if b, err := json.MarshalIndent(map[string]interface{}{"from": from, "to": to, "phases": times, "order": order, "totalSeconds": total}, "", "  "); err == nil {
		kindtest.WriteFile(t, h.Artifacts, "phase-times.json", string(b)+"\n")
	}
	t.Log("\n" + report.String())

	h.checkAfterUpgrade(afterUpgrade{
		to: to, etcd: m.ToEtcdImage, coreDNS: m.ToCoreDNSImage, canaryHTTP: httpCheck,
		volumeToken: token, addonsBefore: addonsBefore, dns: true,
	})
	h.Check("the canary Deployment is available with 2 replicas", func() error {
		_, err := h.Kubectl("wait", "--for=condition=Available", "--timeout=120s", "deployment/canary")
		return err
	})
	if downgrade := m.DowngradeImageDir; downgrade != "" {
		h.Check("a downgrade (--image-dir at "+from+") is refused and changes nothing", func() error {
			out, err := h.Run(nil, h.Kind, "alpha", "upgrade", "--name", h.Name, "--image-dir", downgrade)
			if err == nil {
				return fmt.Errorf("the downgrade was not refused:\n%s", out)
			}
			if !strings.Contains(out, "downgrade") {
				return fmt.Errorf("the refusal does not say it is a downgrade:\n%s", out)
			}
			return h.AllAt(to)
		})
	}
	if refusing := *cgroupRefusalFlag; refusing != "" {
		h.cgroupRefusal(refusing, to)
	}
	h.Check("no helper container of "+m.TargetNodeImage+" is left on the host", func() error {
		out, err := h.Run(nil, h.Provider, "ps", "--all", "--quiet", "--filter", "label=io.x-k8s.kind-upgrade.source")
		if err == nil && strings.TrimSpace(out) != "" {
			err = fmt.Errorf("containers left: %s", out)
		}
		return err
	})
	h.checkNoOpRerun(imageDir, to)
}

// podImage checks that the kube-system pods with selector run image and are
// Ready.
func (h *harness) podImage(selector, image string) error {
	return kindtest.Eventually(2*time.Minute, func() error {
		out, err := h.Kubectl("get", "pods", "--namespace=kube-system", "--selector="+selector, "-o", "json")
		if err != nil {
			return err
		}
		var list struct {
			Items []struct {
				Metadata struct{ Name string } `json:"metadata"`
				Spec     struct {
					Containers []struct{ Image string } `json:"containers"`
				} `json:"spec"`
				Status struct {
					Conditions []struct{ Type, Status string } `json:"conditions"`
				} `json:"status"`
			} `json:"items"`
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return fmt.Errorf("no pods match %s", selector)
		}
		for _, p := range list.Items {
			ready := false
			for _, c := range p.Status.Conditions {
				ready = ready || (c.Type == "Ready" && c.Status == "True")
			}
			if p.Spec.Containers[0].Image != image || !ready {
				return fmt.Errorf("pod %s runs %s (Ready=%v), want %s", p.Metadata.Name, p.Spec.Containers[0].Image, ready, image)
			}
		}
		return nil
	})
}

// addonImages checks kind's add-ons, which the upgrade must leave as they
// are: the kindnet DaemonSet and the local-path-provisioner Deployment are
// available. It returns their images.
func (h *harness) addonImages() (string, error) {
	var images []string
	for _, w := range []struct{ namespace, kind, name string }{
		{"kube-system", "daemonset", "kindnet"},
		{"local-path-storage", "deployment", "local-path-provisioner"},
	} {
		err := kindtest.Eventually(2*time.Minute, func() error {
			if w.kind == "deployment" {
				_, err := h.Kubectl("wait", "--namespace="+w.namespace, "--for=condition=Available", "--timeout=10s", w.kind+"/"+w.name)
				return err
			}
			_, err := h.Kubectl("rollout", "status", "--namespace="+w.namespace, "--timeout=10s", w.kind+"/"+w.name)
			return err
		})
		if err != nil {
			return "", err
		}
		out, err := h.Kubectl("get", "--namespace="+w.namespace, w.kind, w.name, "-o", "jsonpath={.spec.template.spec.containers[*].image}")
		if err != nil {
			return "", err
		}
		images = append(images, w.name+"="+out)
	}
	return strings.Join(images, " "), nil
}

// noArchiveOf checks that no image archive (*.tar) under dir names one of
// images: what does not change must not be demanded.
func noArchiveOf(dir string, images []string) error {
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".tar") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		r := tar.NewReader(f)
		for {
			hdr, err := r.Next()
			if err != nil {
				return nil // end of the archive (or not one)
			}
			if hdr.Name != "manifest.json" {
				continue
			}
			var manifest []struct{ RepoTags []string }
			if err := json.NewDecoder(r).Decode(&manifest); err != nil {
				return fmt.Errorf("%s: %v", p, err)
			}
			for _, m := range manifest {
				for _, tag := range m.RepoTags {
					for _, image := range images {
						if tag == image {
							return fmt.Errorf("%s holds %s, which the cluster already runs", p, image)
						}
					}
				}
			}
		}
	})
}

// cgroupRefusal checks, on a cgroup v1 host and a cluster created without
// failCgroupV1: false, that an upgrade to the kubelet in dir (v1.35 or
// later) is refused in preflight with the fix and changes nothing.
func (h *harness) cgroupRefusal(dir, at string) {
	v1, err := h.CgroupV1Host()
	switch {
	case err != nil:
		h.t.Errorf("failed to read the host's cgroup version: %v", err)
		return
	case !v1 || h.CgroupPatched:
		h.t.Logf("not checking the cgroup v1 refusal: cgroup v1 host %v, failCgroupV1: false set at create %v", v1, h.CgroupPatched)
		return
	}
	h.Check("an upgrade to a kubelet that refuses cgroup v1 is refused and changes nothing", func() error {
		out, err := h.Run(nil, h.Kind, "alpha", "upgrade", "--name", h.Name, "--image-dir", dir)
		if err == nil {
			return fmt.Errorf("the upgrade was not refused:\n%s", out)
		}
		for _, want := range []string{"run on cgroup v1", "failCgroupV1: false", "edit configmap kubelet-config"} {
			if !strings.Contains(out, want) {
				return fmt.Errorf("the refusal does not say %q:\n%s", want, out)
			}
		}
		return h.AllAt(at)
	})
}

// withOnePlatformArchive returns a copy (of symlinks) of the release-like
// imageDir whose etcd archive (pause's when etcd does not change) is
// written as Docker 29, with its containerd image store, saves an image
// pulled for one platform: a multi-platform index holding linux/amd64's
// content only. It first checks the premise on a real node: its containerd
// refuses such an archive for all platforms (as `kind load` would import
// it) and takes it for linux/amd64.
func (h *harness) withOnePlatformArchive(imageDir string) string {
	h.t.Helper()
	name := "etcd.tar"
	if _, err := os.Stat(filepath.Join(imageDir, name)); err != nil {
		name = "pause.tar"
	}
	dir := filepath.Join(h.t.TempDir(), "release with a one-platform archive")
	linkTree(h.t, imageDir, dir)
	archive := filepath.Join(dir, name)
	h.Must(name+" written as Docker 29 saves a one-platform pull (a multi-platform index without linux/arm64's and linux/s390x's content)", func() error {
		if err := os.Remove(archive); err != nil {
			return err
		}
		return onePlatformArchive(filepath.Join(imageDir, name), archive, "amd64", []string{"arm64", "s390x"})
	})
	h.Must("the node's containerd refuses that archive for all platforms and imports it for linux/amd64", func() error {
		data, err := os.ReadFile(archive)
		if err != nil {
			return err
		}
		ctr := []string{"exec", "-i", h.CP, "ctr", "--namespace=e2e-probe", "images", "import"}
		out, err := h.Run(data, h.Provider, append(ctr, "--all-platforms", "-")...)
		if err == nil || !strings.Contains(out, "not found") {
			return fmt.Errorf("ctr images import --all-platforms did not fail as expected (err %v):\n%s", err, out)
		}
		if _, err := h.Run(data, h.Provider, append(ctr, "--platform", "linux/amd64", "-")...); err != nil {
			return err
		}
		// leave the node's image store as it was
		refs, err := h.Run(nil, h.Provider, "exec", h.CP, "ctr", "--namespace=e2e-probe", "images", "ls", "--quiet")
		if err != nil {
			return err
		}
		_, err = h.Run(nil, h.Provider, append([]string{"exec", h.CP, "ctr", "--namespace=e2e-probe", "images", "rm", "--sync"}, strings.Fields(refs)...)...)
		return err
	})
	return dir
}
