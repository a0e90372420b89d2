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

// Package availability holds upgrade tests (upgrades.Test) that measure
// while the upgrade runs what Kubernetes' own upgrade tests only check
// before and after it: that the API server answers, and that a Service
// answers clients on every node. Each fails when the longest outage it
// saw exceeds its bound, and reports its figures in the log and, with
// the framework's --report-dir, in a file there.
package availability

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/onsi/ginkgo/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/kubernetes/test/e2e/upgrades"

	"github.com/kindupgrade/kind-upgrade/test/e2e/probe"
)

// SingleControlPlaneAPIOutageBound is the longest the API may stay
// unreachable while a cluster with fewer than three control-plane nodes
// upgrades: `kubeadm upgrade apply` replaces the static pods of its one
// etcd and its one API server, each down until its new container answers
// (the pinned e2e's 1+2 cluster on 2 cores, in two runs: outages of 7.8 s
// and 22.3 s, then of 34 s and less; the bound leaves room for a slower
// machine).
const SingleControlPlaneAPIOutageBound = 90 * time.Second

// APIAvailability probes the API server through the kubeconfig's server
// (kind's load balancer on a cluster with several control-plane nodes)
// every probe.Interval, each request on a new connection, while the
// upgrade runs. The longest outage may be Bound; zero picks the bound
// from the cluster: probe.APIOutageBound (the HA e2e's, reasoned there)
// with three control-plane nodes or more, else
// SingleControlPlaneAPIOutageBound.
type APIAvailability struct {
	Bound time.Duration

	creds probe.Credentials
	bound time.Duration
}

// Name is the test's name.
func (*APIAvailability) Name() string { return "[sig-cluster-lifecycle] kind-upgrade-api-availability" }

// Setup reads the kubeconfig and picks the bound.
func (t *APIAvailability) Setup(ctx context.Context, f *framework.Framework) {
	data, err := os.ReadFile(framework.TestContext.KubeConfig)
	framework.ExpectNoError(err, "reading --kubeconfig")
	t.creds, err = probe.ParseKubeconfig(data)
	framework.ExpectNoError(err, "reading --kubeconfig")
	t.bound = t.Bound
	if t.bound == 0 {
		nodes, err := f.ClientSet.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "node-role.kubernetes.io/control-plane"})
		framework.ExpectNoError(err, "listing the control-plane nodes")
		t.bound = SingleControlPlaneAPIOutageBound
		if len(nodes.Items) >= 3 {
			t.bound = probe.APIOutageBound
		}
		framework.Logf("%d control-plane node(s): the API's longest outage may be %s", len(nodes.Items), t.bound)
	}
}

// Test probes until the upgrade is done, then measures.
func (t *APIAvailability) Test(ctx context.Context, f *framework.Framework, done <-chan struct{}, _ upgrades.UpgradeType) {
	start := time.Now()
	p, err := probe.StartAPIProbe(t.creds, "/api/v1/namespaces/default", probe.Interval, func(*x509.Certificate) string { return "api-server" })
	framework.ExpectNoError(err, "starting the API probe")
	<-done
	end := time.Now()
	samples := p.Stop()
	a := probe.Measure(samples, start, end)
	line := fmt.Sprintf("API server through %s during the upgrade (%s): %s; %d outage(s), the longest %s (bound %s)", t.creds.Server, end.Sub(start).Round(time.Second), a, len(a.Outages), a.Longest().Duration().Round(time.Millisecond), t.bound)
	report(line, "kind-upgrade-api-probe", probe.FormatSamples(samples))
	if a.Total == 0 {
		framework.Failf("the API probe sent no request during the upgrade")
	}
	if longest := a.Longest(); longest.Duration() > t.bound {
		framework.Failf("the API server was unreachable for %s (from %s), longer than the bound %s: %s", longest.Duration().Round(time.Millisecond), longest.Start.Format(time.RFC3339Nano), t.bound, line)
	}
}

// Teardown has nothing to remove.
func (*APIAvailability) Teardown(context.Context, *framework.Framework) {}

// report logs line and, with --report-dir, writes it and detail to
// <report dir>/<report prefix><name>.txt.
func report(line, name, detail string) {
	ginkgo.By(line)
	framework.Logf("%s", line)
	dir := framework.TestContext.ReportDir
	if dir == "" {
		return
	}
	file := filepath.Join(dir, framework.TestContext.ReportPrefix+name+".txt")
	if err := os.WriteFile(file, []byte(line+"\n\n"+detail), 0o644); err != nil {
		framework.Logf("failed to write %s: %v", file, err)
	}
}
