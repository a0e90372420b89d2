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

package suite

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/kubernetes/test/e2e/upgrades"

	"github.com/kindupgrade/kind-upgrade/test/upgrades/availability"
	"github.com/kindupgrade/kind-upgrade/test/upgrades/kindupgrades"
)

var (
	clusterFlag      = flag.String("kind-cluster", "kind", "the kind cluster to upgrade")
	kindFlag         = flag.String("kind-binary", "kind", "the kind binary with `kind alpha upgrade`")
	typeFlag         = flag.String("upgrade-type", "cluster", "master (the control plane only: --skip-phases kubelets), node (the kubelets, after a master upgrade) or cluster (both)")
	canaryFlag       = flag.String("canary-image", availability.DefaultImage, "the image of the Service availability test (hack/e2e/canary), on the nodes already")
	serviceFlag      = flag.Bool("service-availability", true, "measure a Service's availability from every node during the upgrade (needs two schedulable workers)")
	apiBoundFlag     = flag.Duration("api-outage-bound", 0, "the longest the API may be unreachable during the upgrade (0: from the number of control-plane nodes)")
	listImagesFlag   = flag.Bool("list-kind-images", false, "print the images the tests run, one per line as `ROLE NAME` (ROLE: agnhost, busybox or nginx), and exit: hack/e2e builds them under these names")
	serviceBoundFlag = flag.Duration("service-outage-bound", 0, fmt.Sprintf("the longest the Service may be unreachable from every node (0: %s)", availability.ServiceOutageBound))
)

func TestMain(m *testing.M) {
	framework.RegisterCommonFlags(flag.CommandLine)
	framework.RegisterClusterFlags(flag.CommandLine)
	flag.Parse()
	if *listImagesFlag {
		for _, i := range kindupgrades.Images() {
			fmt.Println(i.Role, i.Name)
		}
		os.Exit(0)
	}

	t, err := kindupgrades.ParseType(*typeFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	u := kindupgrades.Upgrade{Cluster: *clusterFlag, Type: t, Kind: *kindFlag, Args: flag.Args()}
	if err := u.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	tests := append(kindupgrades.KubernetesTests(t), &availability.APIAvailability{Bound: *apiBoundFlag})
	if *serviceFlag {
		tests = append(tests, &availability.ServiceAvailability{Image: *canaryFlag, Bound: *serviceBoundFlag})
	}
	describe(t, tests, u)

	framework.AfterReadingAllFlags(&framework.TestContext)
	os.Exit(m.Run())
}

// describe declares the one spec, before Ginkgo reads the tree.
func describe(t kindupgrades.Type, tests []upgrades.Test, u kindupgrades.Upgrade) {
	kindupgrades.Describe(fmt.Sprintf("[sig-cluster-lifecycle] Kubernetes' upgrade tests across a %s upgrade by kind alpha upgrade", t), tests,
		func() (kindupgrades.Upgrade, error) { return u, nil })
}

func TestUpgrades(t *testing.T) {
	gomega.RegisterFailHandler(framework.Fail)
	suiteConfig, reporterConfig := framework.CreateGinkgoConfig()
	kindupgrades.Focus(&suiteConfig)
	ginkgo.RunSpecs(t, "Kubernetes upgrade tests on kind", suiteConfig, reporterConfig)
}
