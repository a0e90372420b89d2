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
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kindupgrade/kind-upgrade/internal/lab/kindtest"
)

// TestIntegrationUpgradeChainEmulation (make e2e-chain-compat) is SIG API
// Machinery's skip-version job through a chain: a cluster created at the
// chain's first version emulating it (1 control plane, 2 workers); one
// command takes the control plane through every target to the last,
// still emulating the first version, kube-apiserver forward compatible,
// the kubelets and kube-proxy left at the first version (N-3 with the
// default chain); then the emulation is raised one minor at a time at the
// last version and removed, each a run of its own, checked between the
// runs; then the node side finishes. With -chain-conformance, after each
// of the control plane's steps the [sig-api-machinery] conformance tests
// (but [Slow]) of the version the control plane emulates run against it
// (v1.34's at 1.34 ..., the last version's once the emulation is
// removed), as the skip-version jobs run them. The API server is probed
// from the host throughout.
func TestIntegrationUpgradeChainEmulation(t *testing.T) {
	c := loadChain(t)
	m, from, to := c.m, c.from, c.to
	h := newHarness(t, &m, "kind-upgrade-chain-compat", 3, "chain-compat")
	emulated := fmt.Sprintf("1.%d", kindtest.MinorOf(from))
	leaveBehind := []string{"--skip-phases", "kubelets,control-plane/kube-proxy"}
	lastDir := c.dirs[len(c.dirs)-1]

	suites := chainConformanceSuites(t)
	h.createEmulating(from, emulated, h.chainConfig(faultsClusterConfig, c))
	api := h.startAPIProbe("start probing the API from the host", nil)
	var runs []compatRun
	defer func() { h.writeCompatReport(from, to, emulated, runs, api.Stop()) }()
	upgrade := func(name string, args ...string) error {
		r := compatRun{name: name, start: time.Now()}
		out, err := h.RunStdout(h.Kind, append([]string{"alpha", "upgrade", "--name", h.Name, "--output", "json", "-v", "1"}, args...)...)
		r.end, r.events = time.Now(), out
		runs = append(runs, r)
		kindtest.WriteFile(t, h.Artifacts, fmt.Sprintf("chain-compat-run-%d-events.jsonl", len(runs)), out)
		return err
	}
	// between the runs: what the job's tests need of the cluster, the
	// node side where it was left, every node Ready, every kube-system
	// pod Running; then, with tests, the conformance tests of the version
	// the control plane emulates
	between := func(e emulation, nodesAt string, tests bool) {
		h.Check(fmt.Sprintf("the control plane runs %s emulating %q (manifests, mirror pods, /version)", e.version, e.emulated), func() error {
			return h.controlPlaneEmulates(e)
		})
		h.Check("every kubelet and the kube-proxy DaemonSet at "+nodesAt+", every node Ready, every kube-system pod Running", func() error {
			if err := h.AllAt(nodesAt); err != nil {
				return err
			}
			if err := h.kubeProxyAt(nodesAt); err != nil {
				return err
			}
			return kindtest.Eventually(2*time.Minute, func() error {
				out, err := h.Kubectl("get", "pods", "--namespace=kube-system", "-o", `jsonpath={range .items[*]}{.metadata.name} {.status.phase}{"\n"}{end}`)
				if err != nil {
					return err
				}
				for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
					if !strings.HasSuffix(line, " Running") {
						return fmt.Errorf("kube-system: %s", line)
					}
				}
				return nil
			})
		})
		// the tests of the version the control plane emulates, as the
		// skip-version jobs run them between their steps
		if !tests || len(suites) == 0 {
			return
		}
		label, minor := "emulating-"+e.emulated, kindtest.MinorOf("v"+e.emulated)
		if e.emulated == "" {
			label, minor = e.version, kindtest.MinorOf(e.version)
		}
		s, ok := suites[minor]
		if !ok {
			t.Fatalf("-chain-conformance has no suite of v1.%d, which the control plane runs as", minor)
		}
		h.conformanceStep(s, "chain-compat-"+label+"-", conformanceSkipSlow, &runs)
	}

	// the chain, emulating the first version all along
	emulate := append(append(imageDirArgs(c.dirs), "--emulated-version", emulated, "--emulation-forward-compatible"), leaveBehind...)
	h.Must("kind alpha upgrade through "+strings.Join(c.targets, ", ")+" emulating "+emulated+", kubelets and kube-proxy left at "+from, func() error {
		return upgrade("the chain to "+to+" emulating "+emulated, emulate...)
	})
	between(emulation{version: to, emulated: emulated, forward: true}, from, true)

	// the emulation raised one minor at a time at the last version, then
	// removed
	for minor := kindtest.MinorOf(from) + 1; minor < kindtest.MinorOf(to); minor++ {
		raised := fmt.Sprintf("1.%d", minor)
		h.Must("kind alpha upgrade --emulated-version "+raised+" at "+to, func() error {
			return upgrade("the emulation raised to "+raised, append([]string{"--image-dir", lastDir, "--emulated-version", raised}, leaveBehind...)...)
		})
		// forward compatibility is kept while the emulation is older
		between(emulation{version: to, emulated: raised, forward: true}, from, true)
	}
	h.Must("kind alpha upgrade --emulated-version none at "+to, func() error {
		return upgrade("the emulation removed", append([]string{"--image-dir", lastDir, "--emulated-version", "none"}, leaveBehind...)...)
	})
	between(emulation{version: to}, from, true)

	// the node side
	h.Must("kind alpha upgrade to "+to+" without --skip-phases finishes the upgrade", func() error {
		return upgrade("the kubelets and kube-proxy", "--image-dir", lastDir)
	})
	// the last version's tests ran once the emulation was removed; the
	// job's last step is the node side alone
	between(emulation{version: to}, to, false)
}
