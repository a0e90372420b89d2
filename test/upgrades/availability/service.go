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

package availability

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/kubernetes/test/e2e/upgrades"

	"github.com/kindupgrade/kind-upgrade/test/e2e/probe"
)

// ServiceOutageBound is the longest a Service with two ready endpoints on
// two workers and a PodDisruptionBudget may be unreachable from every
// node at once while the upgrade drains and restarts the nodes one at a
// time: zero failed windows are expected (a drain evicts one endpoint,
// which goes out of the Service while its preStop hook holds it up for
// 5 s); the bound leaves room for one probe interval of kube-proxy
// catching up on a loaded 2-core machine.
const ServiceOutageBound = 2 * time.Second

// DefaultImage is the e2e's canary image (hack/e2e/canary): `serve`
// answers HTTP with its pod's name, `probe URL INTERVAL` logs one line per
// request.
const DefaultImage = "kind-upgrade-e2e/canary:v1"

// ServiceAvailability runs a Service with two endpoints on different
// workers, kept by a PodDisruptionBudget, and a prober on every node (a
// DaemonSet tolerating every taint, so drains leave it) that requests the
// Service's ClusterIP every probe.Interval while the upgrade runs. The
// longest time every prober failed may be Bound (zero: ServiceOutageBound).
// The cluster needs two schedulable workers and Image on its nodes.
type ServiceAvailability struct {
	Image string
	Bound time.Duration

	ns    string
	nodes int
}

// Name is the test's name.
func (*ServiceAvailability) Name() string {
	return "[sig-cluster-lifecycle] kind-upgrade-service-availability"
}

func (t *ServiceAvailability) image() string {
	if t.Image == "" {
		return DefaultImage
	}
	return t.Image
}

// Setup starts the Service's endpoints and the probers, and waits until
// every prober has reached the Service.
func (t *ServiceAvailability) Setup(ctx context.Context, f *framework.Framework) {
	t.ns = f.Namespace.Name
	c := f.ClientSet
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	framework.ExpectNoError(err, "listing the nodes")
	t.nodes = len(nodes.Items)

	labels := map[string]string{"app": "canary"}
	replicas := int32(2)
	minAvailable := intstr.FromInt32(1)
	_, err = c.AppsV1().Deployments(t.ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "canary"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{
					Affinity: &v1.Affinity{
						NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
							NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{
								Key: "node-role.kubernetes.io/control-plane", Operator: v1.NodeSelectorOpDoesNotExist,
							}}}},
						}},
						PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
							LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
							TopologyKey:   "kubernetes.io/hostname",
						}}},
					},
					Containers: []v1.Container{{
						Name:            "canary",
						Image:           t.image(),
						ImagePullPolicy: v1.PullIfNotPresent,
						Args:            []string{"serve"},
						Ports:           []v1.ContainerPort{{ContainerPort: 8080}},
						ReadinessProbe: &v1.Probe{
							ProbeHandler:  v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
							PeriodSeconds: 1,
						},
						Lifecycle: &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 5}}},
					}},
				},
			},
		},
	}, metav1.CreateOptions{})
	framework.ExpectNoError(err, "creating the canary Deployment")
	_, err = c.PolicyV1().PodDisruptionBudgets(t.ns).Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "canary"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable, Selector: &metav1.LabelSelector{MatchLabels: labels}},
	}, metav1.CreateOptions{})
	framework.ExpectNoError(err, "creating the canary PodDisruptionBudget")
	svc, err := c.CoreV1().Services(t.ns).Create(ctx, &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "canary"},
		Spec: v1.ServiceSpec{
			Selector: labels,
			Ports:    []v1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}, metav1.CreateOptions{})
	framework.ExpectNoError(err, "creating the canary Service")
	framework.ExpectNoError(t.waitDeployment(ctx, f), "waiting for the canary Deployment")

	// the ClusterIP, not the name: CoreDNS's own restart is not the Service's
	url := "http://" + svc.Spec.ClusterIP + "/"
	grace := int64(5)
	proberLabels := map[string]string{"app": "canary-prober"}
	_, err = c.AppsV1().DaemonSets(t.ns).Create(ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "canary-prober"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: proberLabels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: proberLabels},
				Spec: v1.PodSpec{
					Tolerations:                   []v1.Toleration{{Operator: v1.TolerationOpExists}},
					TerminationGracePeriodSeconds: &grace,
					Containers: []v1.Container{{
						Name:            "prober",
						Image:           t.image(),
						ImagePullPolicy: v1.PullIfNotPresent,
						Args:            []string{"probe", url, probe.Interval.String()},
					}},
				},
			},
		},
	}, metav1.CreateOptions{})
	framework.ExpectNoError(err, "creating the probers")
	framework.ExpectNoError(wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		samples, err := t.samples(ctx, f)
		if err != nil {
			framework.Logf("the probers' logs: %v", err)
			return false, nil
		}
		reached := map[string]bool{}
		for _, s := range samples {
			if s.OK {
				reached[s.From] = true
			}
		}
		return len(reached) == t.nodes, nil
	}), "waiting for a prober on each of the %d nodes to reach the Service", t.nodes)
}

func (t *ServiceAvailability) waitDeployment(ctx context.Context, f *framework.Framework) error {
	return wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := f.ClientSet.AppsV1().Deployments(t.ns).Get(ctx, "canary", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return d.Status.ReadyReplicas == *d.Spec.Replicas, nil
	})
}

// samples reads every prober's log, its previous container's too when the
// kubelet restarted it; a sample's From is the prober's node.
func (t *ServiceAvailability) samples(ctx context.Context, f *framework.Framework) ([]probe.Sample, error) {
	pods, err := f.ClientSet.CoreV1().Pods(t.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=canary-prober"})
	if err != nil {
		return nil, err
	}
	var all []probe.Sample
	for _, p := range pods.Items {
		restarted := len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].RestartCount > 0
		for _, previous := range []bool{true, false} {
			if previous && !restarted {
				continue
			}
			out, err := f.ClientSet.CoreV1().Pods(t.ns).GetLogs(p.Name, &v1.PodLogOptions{Container: "prober", Previous: previous}).DoRaw(ctx)
			if err != nil {
				if previous {
					continue
				}
				return nil, fmt.Errorf("logs of %s: %w", p.Name, err)
			}
			samples, err := probe.ParseProbeLog(p.Spec.NodeName, string(out))
			if err != nil {
				return nil, err
			}
			all = append(all, samples...)
		}
	}
	return all, nil
}

// Test lets the probers run until the upgrade is done, then measures.
func (t *ServiceAvailability) Test(ctx context.Context, f *framework.Framework, done <-chan struct{}, _ upgrades.UpgradeType) {
	start := time.Now()
	<-done
	end := time.Now()
	samples, err := t.samples(ctx, f)
	framework.ExpectNoError(err, "reading the probers' logs")
	bound := t.Bound
	if bound == 0 {
		bound = ServiceOutageBound
	}
	a := probe.Measure(samples, start, end)
	names, bySource := probe.BySource(samples)
	var perNode []string
	for _, n := range names {
		perNode = append(perNode, fmt.Sprintf("%s %s", n, probe.Measure(bySource[n], start, end)))
	}
	sort.Strings(perNode)
	line := fmt.Sprintf("Service from probers on %d nodes during the upgrade (%s): %s; longest outage %s (bound %s); by node: %s", len(names), end.Sub(start).Round(time.Second), a, a.Longest().Duration().Round(time.Millisecond), bound, strings.Join(perNode, ", "))
	report(line, "kind-upgrade-service-probes", probe.FormatSamples(samples))
	if len(names) != t.nodes {
		framework.Failf("%d of the %d nodes' probers sent requests during the upgrade: %s", len(names), t.nodes, line)
	}
	if longest := a.Longest(); longest.Duration() > bound {
		framework.Failf("the Service was unreachable from every node for %s (from %s), longer than the bound %s: %s", longest.Duration().Round(time.Millisecond), longest.Start.Format(time.RFC3339Nano), bound, line)
	}
}

// Teardown leaves the objects to the namespace's deletion.
func (*ServiceAvailability) Teardown(context.Context, *framework.Framework) {}
