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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster"
	"github.com/kindupgrade/kind-upgrade/test/e2e/timeline"
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

// cgroupV1Patch is what a kind user adds on a cgroup v1 host: from v1.35
// the kubelet refuses cgroup v1 unless its configuration allows it.
const cgroupV1Patch = `kind: KubeletConfiguration
failCgroupV1: false
`

// withPatch returns the kind config with patch added to its
// kubeadmConfigPatches, which must be its last key when it has them.
func withPatch(config, patch string) string {
	if !strings.Contains(config, "\nkubeadmConfigPatches:\n") {
		config += "kubeadmConfigPatches:\n"
	}
	config += "- |\n"
	for _, line := range strings.SplitAfter(strings.TrimSuffix(patch, "\n"), "\n") {
		config += "  " + line
	}
	return config + "\n"
}

// cgroupV1Host reports whether Docker runs on a cgroup v1 host.
func (h *harness) cgroupV1Host() (bool, error) {
	out, err := h.run(nil, "docker", "info", "--format", "{{.CgroupVersion}}")
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(out) == "1", nil
}

// configForHost returns config, with cgroupV1Patch on a cgroup v1 host
// when the cluster starts at v1.35 or later (kubelets before v1.35 run on
// cgroup v1 as they are, and a kind user has no reason to add it).
func (h *harness) configForHost(config, from string) (string, error) {
	v1, err := h.cgroupV1Host()
	if err != nil {
		return "", err
	}
	if v1 && minorOf(from) >= 35 {
		h.t.Log("cgroup v1 host: the cluster's kubelets get failCgroupV1: false")
		h.cgroupPatched = true
		return withPatch(config, cgroupV1Patch), nil
	}
	return config, nil
}

// minorOf returns 37 for "v1.37.2", -1 when it cannot tell.
func minorOf(version string) int {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 {
		return -1
	}
	m, err := strconv.Atoi(parts[1])
	if err != nil {
		return -1
	}
	return m
}

// createCluster deletes a cluster of the same name left by an interrupted
// run, then creates the cluster at the node image's version from config
// (with cgroupV1Patch on a cgroup v1 host), which it keeps in the
// artifacts. It returns how long `kind create cluster` took.
func (h *harness) createCluster(from, config string) time.Duration {
	h.t.Helper()
	h.must("delete a leftover cluster", func() error {
		_, err := h.run(nil, h.kind, "delete", "cluster", "--name", h.name)
		return err
	})
	var took time.Duration
	h.must("create a cluster at "+from, func() error {
		config, err := h.configForHost(config, from)
		if err != nil {
			return err
		}
		writeFile(h.t, h.artifacts, "kind-config.yaml", config)
		start := time.Now()
		_, err = h.run([]byte(config), h.kind, "create", "cluster", "--name", h.name, "--image", getenv(h.t, envNodeImage), "--config", "-")
		took = time.Since(start)
		return err
	})
	return took
}

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

func TestIntegrationUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Docker and the offline artifacts (make e2e)")
	}
	from, to := getenv(t, envFrom), getenv(t, envTo)
	h := newHarness(t, "kind-upgrade-e2e", 2, "kind-alpha-upgrade-e2e "+from+"-"+to)
	imageDir := getenv(t, envImageDir)
	worker := h.name + "-worker"

	h.createCluster(from, clusterConfig)
	h.must("nodes Ready at "+from, func() error { return h.nodesReadyAt(from, 3*time.Minute) })
	before := h.versions("Before the upgrade")
	t.Log(before)

	h.must("deploy the canaries", func() error { return h.deployCanaries(workloads, worker) })
	token := fmt.Sprintf("written-before-the-upgrade-%d", time.Now().UnixNano())
	h.must("the claim is bound to a volume the local-path provisioner made", func() error {
		out, err := h.kubectl("get", "pv", "-o", `jsonpath={range .items[*]}{.spec.claimRef.name} {.metadata.annotations.pv\.kubernetes\.io/provisioned-by}{"\n"}{end}`)
		if err == nil && !strings.Contains(out, "canary-pvc rancher.io/local-path") {
			err = fmt.Errorf("no PersistentVolume of canary-pvc provisioned by rancher.io/local-path:\n%s", out)
		}
		return err
	})
	h.must("kind's add-ons are available: kindnet and the local-path provisioner", func() error {
		_, err := h.addonImages()
		return err
	})
	addonsBefore, _ := h.addonImages()
	h.must("write to the PersistentVolume", func() error {
		_, err := h.canary("write", "/data/canary.txt", token)
		return err
	})
	serviceURL := "http://canary.default.svc.cluster.local/"
	httpCheck := func() error {
		return eventually(time.Minute, func() error {
			out, err := h.canary("get", serviceURL)
			if err != nil {
				return err
			}
			if !strings.HasPrefix(strings.TrimSpace(out), "canary-") {
				return fmt.Errorf("the canary Service answered %q", out)
			}
			return nil
		})
	}
	h.must("the canary answers HTTP through its Service before", httpCheck)

	if skipping := os.Getenv(envSkippedMinor); skipping != "" {
		h.check("an --image-dir that skips a minor version is refused and changes nothing", func() error {
			out, err := h.run(nil, h.kind, "alpha", "upgrade", "--name", h.name, "--image-dir", skipping)
			if err == nil {
				return fmt.Errorf("the upgrade was not refused:\n%s", out)
			}
			if !strings.Contains(out, "skips a minor version") {
				return fmt.Errorf("the refusal does not say it skips a minor version:\n%s", out)
			}
			return h.allAt(from)
		})
	}

	// a host at its inotify limit: a kubelet restarted there may not come
	// back, so preflight refuses before anything changes; the runs below
	// upgrade the same cluster once the limit is restored
	h.check("refused, nothing changed: the host's inotify instances at their limit (fs.inotify.max_user_instances lowered to what the host's root processes hold, plus 2)", func() error {
		nodes := []string{h.cp, worker}
		msg, err := h.atInotifyLimit(func(limit int) (string, error) {
			return h.refusedChangingNothing(nodes, []string{"alpha", "upgrade", "--name", h.name, "--image-dir", imageDir}, []string{
				"the host's inotify limits leave too little room for the kubelets this upgrade restarts",
				fmt.Sprintf("fs.inotify.max_user_instances is %d, of which the root processes of kind's nodes on this host hold", limit),
				"sysctl -w fs.inotify.max_user_instances=",
				"then run this command again",
			})
		})
		writeFile(t, h.artifacts, "inotify-refusal.txt", msg+"\n")
		return err
	})

	// an upgrade interrupted (Ctrl-C) while kubeadm upgrades the control
	// plane: kubeadm goes on inside the node; running the same command
	// again must finish the upgrade
	var interruptedEvents string
	h.must("interrupt kind alpha upgrade during kubeadm upgrade apply", func() error {
		events, err := h.interruptedUpgrade(imageDir, cluster.UpgradeStepControlPlaneApply, 20*time.Second)
		interruptedEvents = events
		writeFile(t, h.artifacts, "interrupted-upgrade-events.jsonl", events)
		return err
	})

	if unchanged := strings.Fields(os.Getenv(envUnchanged)); len(unchanged) > 0 {
		h.check("--image-dir holds no archive of the images that do not change", func() error {
			return noArchiveOf(imageDir, unchanged)
		})
	}

	// the same command again, told to stop at kubeadm's skew point: the
	// control plane at the target, every kubelet still at the source
	var cpEvents string
	h.must("kind alpha upgrade to "+to+" again, control plane only (--skip-phases kubelets)", func() error {
		var err error
		cpEvents, err = h.runStdout(h.kind, "alpha", "upgrade", "--name", h.name, "--image-dir", imageDir, "--skip-phases", "kubelets", "--output", "json", "-v", "1")
		writeFile(t, h.artifacts, "control-plane-upgrade-events.jsonl", cpEvents)
		return err
	})
	h.check("at the skew stop, the API server runs "+to, func() error { return h.serverAt(to) })
	h.check("at the skew stop, etcd, CoreDNS and kube-proxy run the target's images", func() error {
		for _, c := range []struct{ selector, image string }{
			{"component=etcd", getenv(t, envEtcd)},
			{"k8s-app=kube-dns", getenv(t, envCoreDNS)},
			{"k8s-app=kube-proxy", "registry.k8s.io/kube-proxy:" + to},
		} {
			if err := h.podImage(c.selector, c.image); err != nil {
				return err
			}
		}
		return nil
	})
	h.check("at the skew stop, every kubelet and /kind/version are still at "+from, func() error { return h.allAt(from) })
	h.check("at the skew stop, the canary answers HTTP through its Service", httpCheck)
	skewState := h.versions("At the skew stop (control plane " + to + ", kubelets " + from + ")")

	// a plain run finishes the job: the kubelets
	var kubeletEvents string
	h.must("kind alpha upgrade to "+to+" again, to finish", func() error {
		var err error
		kubeletEvents, err = h.runStdout(h.kind, "alpha", "upgrade", "--name", h.name, "--image-dir", imageDir, "--output", "json", "-v", "1")
		writeFile(t, h.artifacts, "upgrade-events.jsonl", kubeletEvents)
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
	after := h.versions("After the upgrade")
	report.WriteString("\n" + before + "\n" + skewState + "\n" + after)
	writeFile(t, h.artifacts, "upgrade-report.txt", report.String())
	if b, err := json.MarshalIndent(map[string]interface{}{"from": from, "to": to, "phases": times, "order": order, "totalSeconds": total}, "", "  "); err == nil {
		writeFile(t, h.artifacts, "phase-times.json", string(b)+"\n")
	}
	t.Log("\n" + report.String())

	h.check("every node Ready at "+to+" (kubelet and /kind/version)", func() error { return h.allAt(to) })
	h.check("the API server runs "+to, func() error { return h.serverAt(to) })
	h.check("etcd runs "+getenv(t, envEtcd), func() error {
		return h.podImage("component=etcd", getenv(t, envEtcd))
	})
	h.check("CoreDNS runs "+getenv(t, envCoreDNS), func() error {
		return h.podImage("k8s-app=kube-dns", getenv(t, envCoreDNS))
	})
	h.check("the canary answers HTTP through its Service after", httpCheck)
	h.check("the canary Deployment is available with 2 replicas", func() error {
		_, err := h.kubectl("wait", "--for=condition=Available", "--timeout=120s", "deployment/canary")
		return err
	})
	h.check("the PersistentVolume data reads back", func() error {
		out, err := h.canary("read", "/data/canary.txt")
		if err == nil && strings.TrimSpace(out) != token {
			err = fmt.Errorf("read %q, want %q", out, token)
		}
		return err
	})
	h.check("kind's add-ons are still available and were not changed", func() error {
		after, err := h.addonImages()
		if err == nil && after != addonsBefore {
			err = fmt.Errorf("the add-ons' images changed: before %s, after %s", addonsBefore, after)
		}
		return err
	})
	h.check("cluster DNS resolves", func() error {
		return eventually(time.Minute, func() error {
			_, err := h.canary("lookup", "kubernetes.default.svc.cluster.local")
			return err
		})
	})
	if downgrade := os.Getenv(envDowngrade); downgrade != "" {
		h.check("a downgrade (--image-dir at "+from+") is refused and changes nothing", func() error {
			out, err := h.run(nil, h.kind, "alpha", "upgrade", "--name", h.name, "--image-dir", downgrade)
			if err == nil {
				return fmt.Errorf("the downgrade was not refused:\n%s", out)
			}
			if !strings.Contains(out, "downgrade") {
				return fmt.Errorf("the refusal does not say it is a downgrade:\n%s", out)
			}
			return h.allAt(to)
		})
	}
	if refusing := os.Getenv(envCgroupRefusal); refusing != "" {
		h.cgroupRefusal(refusing, to)
	}
	h.check("a second upgrade changes nothing and exits 0", func() error {
		out, err := h.runStdout(h.kind, "alpha", "upgrade", "--name", h.name, "--image-dir", imageDir, "--output", "json")
		if err != nil {
			return err
		}
		writeFile(t, h.artifacts, "second-upgrade-events.jsonl", out)
		if !strings.Contains(out, "nothing to do") {
			return fmt.Errorf("the second upgrade did not say there was nothing to do:\n%s", out)
		}
		order, _, _, err := timeline.PhaseTimes(out)
		if err != nil {
			return err
		}
		if strings.Join(order, ",") != "preflight" {
			return fmt.Errorf("the second upgrade ran phases %v", order)
		}
		return h.allAt(to)
	})
}

// podImage checks that the kube-system pods with selector run image and are
// Ready.
func (h *harness) podImage(selector, image string) error {
	return eventually(2*time.Minute, func() error {
		out, err := h.kubectl("get", "pods", "--namespace=kube-system", "--selector="+selector, "-o", "json")
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
		err := eventually(2*time.Minute, func() error {
			if w.kind == "deployment" {
				_, err := h.kubectl("wait", "--namespace="+w.namespace, "--for=condition=Available", "--timeout=10s", w.kind+"/"+w.name)
				return err
			}
			_, err := h.kubectl("rollout", "status", "--namespace="+w.namespace, "--timeout=10s", w.kind+"/"+w.name)
			return err
		})
		if err != nil {
			return "", err
		}
		out, err := h.kubectl("get", "--namespace="+w.namespace, w.kind, w.name, "-o", "jsonpath={.spec.template.spec.containers[*].image}")
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
	v1, err := h.cgroupV1Host()
	switch {
	case err != nil:
		h.t.Errorf("failed to read the host's cgroup version: %v", err)
		return
	case !v1 || h.cgroupPatched:
		h.t.Logf("not checking the cgroup v1 refusal: cgroup v1 host %v, failCgroupV1: false set at create %v", v1, h.cgroupPatched)
		return
	}
	h.check("an upgrade to a kubelet that refuses cgroup v1 is refused and changes nothing", func() error {
		out, err := h.run(nil, h.kind, "alpha", "upgrade", "--name", h.name, "--image-dir", dir)
		if err == nil {
			return fmt.Errorf("the upgrade was not refused:\n%s", out)
		}
		for _, want := range []string{"run on cgroup v1", "failCgroupV1: false", "edit configmap kubelet-config"} {
			if !strings.Contains(out, want) {
				return fmt.Errorf("the refusal does not say %q:\n%s", want, out)
			}
		}
		return h.allAt(at)
	})
}
