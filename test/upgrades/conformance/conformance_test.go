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

package conformance

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"k8s.io/component-base/version"
	conformancetestdata "k8s.io/kubernetes/test/conformance/testdata"
	"k8s.io/kubernetes/test/e2e"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/kubernetes/test/e2e/framework/config"
	"k8s.io/kubernetes/test/e2e/framework/testfiles"
	e2etestingmanifests "k8s.io/kubernetes/test/e2e/testing-manifests"
	testfixtures "k8s.io/kubernetes/test/fixtures"
	imageutils "k8s.io/kubernetes/test/utils/image"

	// the tests
	_ "k8s.io/kubernetes/test/e2e/apimachinery"

	// what e2e.test links to reconfigure the framework
	_ "k8s.io/kubernetes/test/e2e/framework/debug/init"
	_ "k8s.io/kubernetes/test/e2e/framework/metrics/init"
	_ "k8s.io/kubernetes/test/e2e/framework/node/init"
)

var (
	listImagesFlag = flag.Bool("list-kind-images", false, "print the test images hack/e2e builds stand-ins for, one per line as `ROLE NAME` (ROLE: agnhost, busybox or nginx), and exit")
	versionFlag    = flag.Bool("version", false, "print the Kubernetes version the tests were built from and exit")
)

// images are the test images of the [sig-api-machinery] conformance tests
// hack/e2e builds under these names. Not here: kubeadm's pause image
// (imageutils.GetPauseImageName, the same name), and the sample API server
// with its etcd, which the Aggregator test runs.
func images() [][2]string {
	return [][2]string{
		{"agnhost", imageutils.GetE2EImage(imageutils.Agnhost)},
		{"busybox", imageutils.GetE2EImage(imageutils.BusyBox)},
		{"nginx", imageutils.GetE2EImage(imageutils.Nginx)},
	}
}

func TestMain(m *testing.M) {
	config.CopyFlags(config.Flags, flag.CommandLine)
	framework.RegisterCommonFlags(flag.CommandLine)
	framework.RegisterClusterFlags(flag.CommandLine)
	flag.Parse()
	switch {
	case *versionFlag:
		fmt.Println(version.Get())
		os.Exit(0)
	case *listImagesFlag:
		for _, i := range images() {
			fmt.Println(i[0], i[1])
		}
		os.Exit(0)
	case flag.NArg() > 0:
		fmt.Fprintf(os.Stderr, "unknown arguments: %v\n", flag.Args())
		os.Exit(2)
	}
	testfiles.AddFileSource(e2etestingmanifests.GetE2ETestingManifestsFS())
	testfiles.AddFileSource(testfixtures.GetTestFixturesFS())
	testfiles.AddFileSource(conformancetestdata.GetConformanceTestdataFS())
	framework.AfterReadingAllFlags(&framework.TestContext)
	os.Exit(m.Run())
}

func TestConformance(t *testing.T) {
	e2e.RunE2ETests(t)
}
