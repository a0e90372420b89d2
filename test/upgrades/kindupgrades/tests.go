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

package kindupgrades

import (
	"k8s.io/kubernetes/test/e2e/upgrades"
	"k8s.io/kubernetes/test/e2e/upgrades/apps"
	"k8s.io/kubernetes/test/e2e/upgrades/auth"
	"k8s.io/kubernetes/test/e2e/upgrades/node"
	"k8s.io/kubernetes/test/e2e/upgrades/storage"
	imageutils "k8s.io/kubernetes/test/utils/image"
)

// KubernetesTests are the tests of Kubernetes' own upgrade suite
// (k8s.io/kubernetes/test/e2e/upgrades) that run on a kind cluster for
// an upgrade of type t, new values each call. Left out: the Service test
// (needs a LoadBalancer), the HPA test (metrics-server and its consumer
// images), AppArmor (skips itself unless the nodes run GCE's images), the
// etcd, MySQL and Cassandra StatefulSet tests (their images and manifests
// come from registries this suite cannot build offline), the
// volume-mode test (downgrades only) and the sysctl test (it has no Name
// method, so it is not an upgrades.Test: no suite can run it). Two run
// across a master upgrade only, as the kubelets' drains defeat them: the
// service-account migration test keeps a pod no controller recreates
// (preflight refuses to drain it; --force would delete it), and the Job
// test counts the Job's running pods the moment the upgrade ends, when
// the Job controller, which counts each pod a drain deleted as a failure,
// is still backing off before it makes new ones (seen on the pinned
// e2e: 0 of 2 running right after a node upgrade).
func KubernetesTests(t Type) []upgrades.Test {
	tests := []upgrades.Test{
		&apps.DaemonSetUpgradeTest{},
		&apps.DeploymentUpgradeTest{},
		&apps.ReplicaSetUpgradeTest{},
		&apps.StatefulSetUpgradeTest{},
		&node.ConfigMapUpgradeTest{},
		&node.SecretUpgradeTest{},
		&storage.PersistentVolumeUpgradeTest{},
	}
	if t == Master {
		tests = append(tests, &apps.JobUpgradeTest{}, &auth.ServiceAccountAdmissionControllerMigrationTest{})
	}
	return tests
}

// Image is an image KubernetesTests run, by the role it plays.
type Image struct {
	// Role is agnhost (Kubernetes' test server, whose commands the tests
	// run), busybox (a shell and its tools) or nginx (a long-running
	// server).
	Role string
	// Name is the name test/utils/image gives it, KUBE_TEST_REPO_LIST
	// applied.
	Name string
}

// Images are the images KubernetesTests run (read in the tests' and
// their framework helpers' code for this version), for a cluster that
// cannot pull them.
func Images() []Image {
	return []Image{
		{"agnhost", imageutils.GetE2EImage(imageutils.Agnhost)},
		// the StatefulSet helpers' web server
		{"agnhost", imageutils.GetE2EImage(imageutils.AgnhostPrev)},
		{"busybox", imageutils.GetE2EImage(imageutils.BusyBox)},
		// the Deployment and ReplicaSet tests
		{"nginx", imageutils.GetE2EImage(imageutils.Nginx)},
	}
}
