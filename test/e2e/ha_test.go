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
	"crypto/x509"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/internal/lab/etcdcheck"
	"github.com/kindupgrade/kind-upgrade/internal/lab/kindtest"
	"github.com/kindupgrade/kind-upgrade/internal/lab/timeline"
	"github.com/kindupgrade/kind-upgrade/test/e2e/probe"
)

// haClusterName differs from the single control-plane test's cluster, so
// both can be kept (-keep-cluster) side by side.
const haClusterName = "kind-upgrade-e2e-ha"

// haClusterConfig: three control-plane nodes, which makes kind put its
// load balancer in front of their API servers, and two workers.
const haClusterConfig = `kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
- role: control-plane
- role: control-plane
- role: control-plane
- role: worker
- role: worker
`

// haWorkloads: a 2-replica HTTP canary behind a Service, on the two
// workers (one replica each: required anti-affinity, no control-plane
// node), a PodDisruptionBudget that keeps one replica available during
// drains, and a preStop pause so that a replica being evicted keeps
// answering while kube-proxy takes it out of the Service; a pod on the
// first worker writing to a PersistentVolume (kind's local-path
// provisioner).
const haWorkloads = `apiVersion: apps/v1
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
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: node-role.kubernetes.io/control-plane, operator: DoesNotExist}
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector:
              matchLabels: {app: canary}
            topologyKey: kubernetes.io/hostname
      containers:
      - name: canary
        image: IMAGE
        imagePullPolicy: Never
        args: [serve]
        ports:
        - containerPort: 8080
        readinessProbe:
          httpGet: {path: /healthz, port: 8080}
          periodSeconds: 1
        lifecycle:
          preStop:
            sleep: {seconds: 5}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: canary
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: canary}
---
` + canaryServiceAndVolume

// canaryProbers measures the canary Service from inside the cluster.
//
// The probers must keep running while the upgrade drains and restarts
// every node, control-plane nodes included, so they are a DaemonSet that
// tolerates every taint: kubectl drain --ignore-daemonsets leaves its pods
// in place and a kubelet restart does not stop running containers, so a
// prober sits out its own node's upgrade. A new kubelet may still restart
// a container once; its log then has a gap, which counts as "prober
// down", never as a failed request (measure only counts requests that were
// sent). With five probers, one per node, every request any of them sends
// counts: a failure is the canary missing a request, and the canary is
// down only while no prober gets an answer. They probe the Service's
// ClusterIP, not its DNS name, so CoreDNS's own restart is not counted
// against the canary (DNS is checked on its own).
const canaryProbers = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: canary-prober
spec:
  selector:
    matchLabels: {app: canary-prober}
  template:
    metadata:
      labels: {app: canary-prober}
    spec:
      tolerations:
      - operator: Exists
      terminationGracePeriodSeconds: 5
      containers:
      - name: prober
        image: IMAGE
        imagePullPolicy: Never
        args: [probe, "URL", INTERVAL]
`

func TestIntegrationUpgradeHA(t *testing.T) {
	m := integration(t)
	from, to := m.From, m.To
	h := newHarness(t, m, haClusterName, 5, "ha")
	// kind create and kind alpha upgrade of five nodes on a small machine
	h.Timeout = 45 * time.Minute
	imageDir := m.ImageDir
	etcdImage, corednsImage := m.ToEtcdImage, m.ToCoreDNSImage
	controlPlanes := []string{h.CP, h.Name + "-control-plane2", h.Name + "-control-plane3"}
	workers := []string{h.Name + "-worker", h.Name + "-worker2"}

	createTime := h.CreateCluster(from, haClusterConfig)
	h.Must("nodes Ready at "+from, func() error {
		return h.NodesReadyAt(from, 5*time.Minute, func() error {
			return h.nodeNames(append(append([]string{}, controlPlanes...), workers...))
		})
	})
	before := h.Versions("Before the upgrade")
	t.Log(before)

	// the control-plane nodes' addresses: to reach each API server on its
	// own, and to tell from its certificate which one answered
	cpIPs := map[string]string{}
	h.Must("find the control-plane nodes' addresses", func() error {
		for _, cp := range controlPlanes {
			ip, err := h.containerIP(cp)
			if err != nil {
				return err
			}
			cpIPs[cp] = ip
		}
		return nil
	})
	identify := func(c *x509.Certificate) string { return probe.IdentifyServer(c, cpIPs) }

	h.Must("deploy the canaries", func() error { return h.DeployCanaries(haWorkloads, workers[0]) })
	h.Must("the canary runs one replica on each worker", func() error {
		return kindtest.Eventually(time.Minute, func() error { return h.canaryOnWorkers(workers) })
	})
	token := fmt.Sprintf("written-before-the-upgrade-%d", time.Now().UnixNano())
	h.Must("write to the PersistentVolume", func() error {
		_, err := h.Canary("write", "/data/canary.txt", token)
		return err
	})
	h.Must(fmt.Sprintf("write %d ConfigMaps to etcd (namespace e2e-etcd)", etcdcheck.Keys), func() error { return h.WriteEtcdKeys(token) })
	// not a must: the measured upgrade is worth running even if this way
	// of asking etcd fails
	h.Check("etcd has a healthy member on each control-plane node before the upgrade", func() error {
		status, err := h.etcdStatus(controlPlanes)
		if err != nil {
			return err
		}
		version := ""
		for _, s := range status {
			version = s.Version
		}
		members, err := h.etcdMembers()
		if err != nil {
			return err
		}
		return etcdcheck.CheckMembers(members, status, controlPlanes, version)
	})
	addonsBefore, _ := h.addonImages()
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

	// the probes run from here until the upgrade returned
	api := h.startAPIProbe("start probing the API through the load balancer's host port", identify)
	stopAPI := func() []probe.Sample {
		if api == nil {
			return nil
		}
		samples := api.Stop()
		api = nil
		return samples
	}
	defer stopAPI()
	var canaryIP string
	h.Must("start the canary probers on every node", func() error {
		var err error
		if canaryIP, err = h.Kubectl("get", "service", "canary", "-o", "jsonpath={.spec.clusterIP}"); err != nil {
			return err
		}
		r := strings.NewReplacer("IMAGE", "docker.io/"+m.CanaryImage, "URL", "http://"+strings.TrimSpace(canaryIP)+"/", "INTERVAL", probe.Interval.String())
		if err := h.Apply(r.Replace(canaryProbers)); err != nil {
			return err
		}
		if _, err := h.Kubectl("rollout", "status", "daemonset/canary-prober", "--timeout=180s"); err != nil {
			return err
		}
		return kindtest.Eventually(time.Minute, func() error {
			samples, probers, err := h.canaryProbes()
			if err != nil {
				return err
			}
			if len(probers) != h.NodeCount {
				return fmt.Errorf("%d probers, want one on each of the %d nodes", len(probers), h.NodeCount)
			}
			_, split := probe.BySource(samples)
			for node := range probers {
				if len(probe.AnsweredBy(split[node])) == 0 {
					return fmt.Errorf("the prober on %s has not reached the canary yet", node)
				}
			}
			return nil
		})
	})

	// one run, measured: no interruption, no --skip-phases
	upgradeStart := time.Now()
	events, upgradeErr := h.RunStdout(h.Kind, "alpha", "upgrade", "--name", h.Name, "--image-dir", imageDir, "--output", "json", "-v", "1")
	h.Record("kind alpha upgrade to "+to, time.Since(upgradeStart), upgradeErr, "")
	kindtest.WriteFile(t, h.Artifacts, "upgrade-events.jsonl", events)
	apiSamples := stopAPI()
	canarySamples, probers, canaryErr := h.canaryProbes()
	if canaryErr == nil {
		_, canaryErr = h.Kubectl("delete", "daemonset", "canary-prober", "--wait=false")
	}
	kindtest.WriteFile(t, h.Artifacts, "api-probe.log", probe.FormatSamples(apiSamples))
	kindtest.WriteFile(t, h.Artifacts, "canary-probe.log", probe.FormatSamples(canarySamples))

	// the report first: it is what tells a failure apart
	parsed, eventsErr := timeline.Parse(events)
	var spans []timeline.Span
	if eventsErr == nil {
		spans, eventsErr = timeline.SpansOf(parsed)
	}
	if eventsErr == nil {
		// where the time went, step by step (the bench's split)
		var steps string
		if steps, eventsErr = timeline.StepsText(parsed); eventsErr == nil {
			kindtest.WriteFile(t, h.Artifacts, "ha-steps.txt", steps)
			t.Log("\n" + steps)
		}
	}
	ha := probe.HAReport{
		From: from, To: to, Create: createTime, Events: events, Spans: spans,
		API: apiSamples, Canary: canarySamples, Probers: probers, CanaryURL: "http://" + strings.TrimSpace(canaryIP) + "/",
		Workers: workers,
	}
	report := h.writeHAReport(ha)
	t.Log("\n" + report)
	if upgradeErr != nil {
		t.Fatalf("kind alpha upgrade to %s: %v", to, upgradeErr)
	}
	h.Check("read the upgrade's JSON events", func() error { return eventsErr })
	h.Check("read the canary probers' logs", func() error { return canaryErr })
	for _, c := range timeline.UpgradeOrder(spans, h.CP, controlPlanes, workers) {
		h.Check(c.Name, c.Fn)
	}
	h.Check(fmt.Sprintf("the API through the load balancer was never unreachable for more than %s (longest: %s)", probe.APIOutageBound, ha.APIAvailability().Longest().Duration().Round(time.Millisecond)), func() error {
		a := ha.APIAvailability()
		if a.Total == 0 {
			return fmt.Errorf("the API probe sent no request during the upgrade")
		}
		if l := a.Longest(); l.Duration() > probe.APIOutageBound {
			return fmt.Errorf("the API was unreachable for %s (%d requests) from %s", l.Duration().Round(time.Millisecond), l.Missed, timeline.Locate(spans, l.Start))
		}
		return nil
	})
	h.Check("the canary answered every request while a worker was drained (from its drain to its uncordoning)", ha.CanaryDuringDrains)

	after := h.Versions("After the upgrade")
	kindtest.WriteFile(t, h.Artifacts, "ha-report.txt", report+"\n"+before+"\n"+after)

	// the drains moved the pods that test from the first worker
	h.Check("the pod with the PersistentVolume is back on "+workers[0], func() error {
		_, err := h.Kubectl("wait", "--for=condition=Available", "--timeout=180s", "deployment/pv-canary")
		return err
	})
	h.checkAfterUpgrade(afterUpgrade{
		to: to, coreDNS: corednsImage, kubeProxy: true, canaryHTTP: httpCheck,
		volumeToken: token, addonsBefore: addonsBefore, dns: true,
	})
	h.Check("every control-plane node's static pods run "+to+"'s images and are Ready", func() error {
		return kindtest.Eventually(2*time.Minute, func() error {
			return h.staticPods(controlPlanes, map[string]string{
				"kube-apiserver":          "registry.k8s.io/kube-apiserver:" + to,
				"kube-controller-manager": "registry.k8s.io/kube-controller-manager:" + to,
				"kube-scheduler":          "registry.k8s.io/kube-scheduler:" + to,
				"etcd":                    etcdImage,
			})
		})
	})
	h.Check(fmt.Sprintf("etcd has %d healthy voting members, one per control-plane node, at %s", len(controlPlanes), etcdcheck.VersionOf(etcdImage)), func() error {
		return kindtest.Eventually(2*time.Minute, func() error {
			status, err := h.etcdStatus(controlPlanes)
			if err != nil {
				return err
			}
			members, err := h.etcdMembers()
			if err != nil {
				return err
			}
			return etcdcheck.CheckMembers(members, status, controlPlanes, etcdcheck.VersionOf(etcdImage))
		})
	})
	for _, cp := range controlPlanes {
		h.Check("the API server of "+cp+", asked directly, is ready (etcd included) and reads every ConfigMap written before", func() error {
			for _, path := range []string{"/readyz", "/readyz/etcd"} {
				if _, err := h.directKubectl(cp, cpIPs[cp], "get", "--raw="+path); err != nil {
					return err
				}
			}
			out, err := h.directKubectl(cp, cpIPs[cp], "get", "configmaps", "--namespace=e2e-etcd", "-o", "json")
			if err != nil {
				return err
			}
			return etcdcheck.CheckKeys(out, token)
		})
	}
	h.Check("the load balancer routes to all three API servers", func() error {
		return kindtest.Eventually(time.Minute, func() error { return h.balancedAcross(controlPlanes, identify) })
	})
	h.Check("the canary Deployment is available with one replica on each worker", func() error {
		if _, err := h.Kubectl("wait", "--for=condition=Available", "--timeout=120s", "deployment/canary"); err != nil {
			return err
		}
		return kindtest.Eventually(time.Minute, func() error { return h.canaryOnWorkers(workers) })
	})
	h.checkNoOpRerun(imageDir, to)
}

// nodeNames checks that the cluster's nodes are exactly names.
func (h *harness) nodeNames(names []string) error {
	nodes, err := h.Nodes()
	if err != nil {
		return err
	}
	var got []string
	for _, n := range nodes {
		got = append(got, n.Name)
	}
	want := append([]string{}, names...)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		return fmt.Errorf("the nodes are %v, want %v", got, want)
	}
	return nil
}

// containerIP is the IPv4 address of a node container.
func (h *harness) containerIP(name string) (string, error) {
	out, err := h.RunStdout(h.Provider, "inspect", "--format", "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}", name)
	if err != nil {
		return "", err
	}
	fields := strings.Fields(out)
	if len(fields) == 0 {
		return "", fmt.Errorf("container %s has no IPv4 address", name)
	}
	return fields[0], nil
}

// directKubectl runs kubectl on control-plane node cp against its own API
// server, not through the load balancer its admin.conf names.
func (h *harness) directKubectl(cp, ip string, args ...string) (string, error) {
	return h.RunStdout(h.Provider, append([]string{"exec", cp, "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf", "--server=https://" + ip + ":6443"}, args...)...)
}

// canaryOnWorkers checks that the canary's Ready replicas run one on each
// of workers.
func (h *harness) canaryOnWorkers(workers []string) error {
	out, err := h.Kubectl("get", "pods", "--selector=app=canary", "-o",
		`jsonpath={range .items[*]}{.spec.nodeName} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}`)
	if err != nil {
		return err
	}
	var nodes []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if fields := strings.Fields(line); len(fields) == 2 && fields[1] == "True" {
			nodes = append(nodes, fields[0])
		}
	}
	sort.Strings(nodes)
	if strings.Join(nodes, " ") != strings.Join(workers, " ") {
		return fmt.Errorf("the canary's Ready replicas run on %v, want one on each of %v", nodes, workers)
	}
	return nil
}

// staticPods checks that on each control-plane node the static pods of
// images' components run those images and are Ready.
func (h *harness) staticPods(controlPlanes []string, images map[string]string) error {
	var names []string
	for _, cp := range controlPlanes {
		for component := range images {
			names = append(names, component+"-"+cp)
		}
	}
	sort.Strings(names)
	out, err := h.Kubectl(append([]string{"get", "pods", "--namespace=kube-system", "-o", "json"}, names...)...)
	if err != nil {
		return err
	}
	var list struct {
		Items []struct {
			Metadata struct {
				Name   string            `json:"name"`
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
			Spec struct {
				NodeName   string                   `json:"nodeName"`
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
	var problems []string
	for _, p := range list.Items {
		want := images[p.Metadata.Labels["component"]]
		ready := false
		for _, c := range p.Status.Conditions {
			ready = ready || (c.Type == "Ready" && c.Status == "True")
		}
		if len(p.Spec.Containers) == 0 || p.Spec.Containers[0].Image != want || !ready {
			image := ""
			if len(p.Spec.Containers) > 0 {
				image = p.Spec.Containers[0].Image
			}
			problems = append(problems, fmt.Sprintf("%s on %s runs %s (Ready=%v), want %s", p.Metadata.Name, p.Spec.NodeName, image, ready, want))
		}
	}
	if len(list.Items) != len(names) {
		problems = append(problems, fmt.Sprintf("%d of the %d static pods found", len(list.Items), len(names)))
	}
	return timeline.JoinProblems("static pods", problems)
}

// etcdStatus asks the etcd member on each control-plane node for its
// health and status.
func (h *harness) etcdStatus(controlPlanes []string) (map[string]etcdcheck.Status, error) {
	statuses := map[string]etcdcheck.Status{}
	for _, cp := range controlPlanes {
		out, err := h.RunStdout(h.Provider, "exec", cp, "curl", "-fsS", "--max-time", "10", etcdcheck.HealthURL)
		if err != nil {
			return nil, err
		}
		if err := etcdcheck.ParseHealth([]byte(out)); err != nil {
			return nil, fmt.Errorf("%s: %v", cp, err)
		}
		if out, err = h.RunStdout(h.Provider, append([]string{"exec", cp}, etcdcheck.Curl(etcdcheck.StatusURL)...)...); err != nil {
			return nil, err
		}
		s, err := etcdcheck.ParseStatus([]byte(out))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", cp, err)
		}
		statuses[cp] = s
	}
	return statuses, nil
}

// etcdMembers is etcd's member list, as the bootstrap node's member sees
// it.
func (h *harness) etcdMembers() ([]etcdcheck.Member, error) {
	out, err := h.RunStdout(h.Provider, append([]string{"exec", h.CP}, etcdcheck.Curl(etcdcheck.MembersURL)...)...)
	if err != nil {
		return nil, err
	}
	return etcdcheck.ParseMembers([]byte(out))
}

// balancedAcross sends requests through the load balancer's host port for
// a few seconds and checks that every one succeeded and that each of the
// control-plane nodes' API servers answered some.
func (h *harness) balancedAcross(controlPlanes []string, identify func(*x509.Certificate) string) error {
	creds, err := h.hostCredentials()
	if err != nil {
		return err
	}
	p, err := probe.StartAPIProbe(creds, "/api/v1/namespaces/default", 100*time.Millisecond, identify)
	if err != nil {
		return err
	}
	// not a wait: how long to send requests, about 30, 10 per server
	time.Sleep(3 * time.Second)
	samples := p.Stop()
	if len(samples) == 0 {
		return fmt.Errorf("no request sent")
	}
	counts := probe.AnsweredBy(samples)
	a := probe.Measure(samples, samples[0].Time, samples[len(samples)-1].Time)
	if a.OK != a.Total {
		return fmt.Errorf("through the load balancer: %s", a)
	}
	for _, cp := range controlPlanes {
		if counts[cp] == 0 {
			return fmt.Errorf("%s's API server answered none of %d requests through the load balancer (answers: %v)", cp, a.Total, counts)
		}
	}
	return nil
}

// canaryProbes reads the canary probers' logs (the current container's
// and, after a restart, the previous one's). It returns their samples,
// whose From is the prober's node, and each prober's restart count by node.
func (h *harness) canaryProbes() ([]probe.Sample, map[string]int, error) {
	out, err := h.Kubectl("get", "pods", "--selector=app=canary-prober", "-o",
		`jsonpath={range .items[*]}{.metadata.name} {.spec.nodeName} {.status.containerStatuses[0].restartCount}{"\n"}{end}`)
	if err != nil {
		return nil, nil, err
	}
	var samples []probe.Sample
	probers := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		pod, node := fields[0], fields[1]
		restarts := 0
		if len(fields) == 3 {
			if restarts, err = strconv.Atoi(fields[2]); err != nil {
				return nil, nil, fmt.Errorf("pod %s: restart count %q", pod, fields[2])
			}
		}
		probers[node] = restarts
		logs, err := h.RunStdout(h.Provider, "exec", h.CP, "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf", "logs", pod)
		if err != nil {
			return nil, nil, err
		}
		if restarts > 0 {
			previous, err := h.RunStdout(h.Provider, "exec", h.CP, "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf", "logs", "--previous", pod)
			if err == nil {
				logs = previous + logs
			}
		}
		s, err := probe.ParseProbeLog(node, logs)
		if err != nil {
			return nil, nil, err
		}
		samples = append(samples, s...)
	}
	return samples, probers, nil
}

// writeHAReport stores the report as ha-report.txt and its figures as
// phase-times.json, records the figures in the JUnit suite (test cases
// that pass, named after them) and returns the report.
func (h *harness) writeHAReport(r probe.HAReport) string {
	text := r.Text()
	kindtest.WriteFile(h.t, h.Artifacts, "ha-report.txt", text)
	if b, err := json.MarshalIndent(r.Summary(), "", "  "); err == nil {
		kindtest.WriteFile(h.t, h.Artifacts, "phase-times.json", string(b)+"\n")
	}
	times, order, phases, total := r.TimesText()
	var parts []string
	for _, p := range order {
		parts = append(parts, fmt.Sprintf("%s %.1fs", p, phases[p]))
	}
	h.Record(fmt.Sprintf("wall time: kind create cluster %.1fs, kind alpha upgrade %.1fs (%s)", r.Create.Seconds(), total, strings.Join(parts, ", ")), 0, nil, times)
	h.Record("availability: API through the load balancer: "+r.Describe(r.APIAvailability()), 0, nil, r.APIText())
	h.Record("availability: canary Service from every node: "+r.Describe(r.CanaryAvailability()), 0, nil, r.CanaryText())
	return text
}
