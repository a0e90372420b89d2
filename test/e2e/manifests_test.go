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

	"sigs.k8s.io/yaml"

	"github.com/kindupgrade/kind-upgrade/internal/lab/kindtest"
	"github.com/kindupgrade/kind-upgrade/test/e2e/probe"
)

// TestHAManifests checks that the HA test's manifests, as the test fills
// them in, are the objects it means.
func TestHAManifests(t *testing.T) {
	t.Parallel()
	docs := func(manifest string) map[string]map[string]interface{} {
		objs := map[string]map[string]interface{}{}
		for _, doc := range strings.Split(manifest, "---\n") {
			var obj map[string]interface{}
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
				t.Fatalf("not YAML: %v\n%s", err, doc)
			}
			objs[fmt.Sprintf("%s/%v", obj["kind"], obj["metadata"].(map[string]interface{})["name"])] = obj
		}
		return objs
	}
	// path walks maps and lists (by index) down to a value
	path := func(v interface{}, keys ...interface{}) interface{} {
		for _, k := range keys {
			switch k := k.(type) {
			case string:
				v = v.(map[string]interface{})[k]
			case int:
				v = v.([]interface{})[k]
			}
		}
		return v
	}

	probers := docs(strings.NewReplacer("IMAGE", "docker.io/kind-upgrade-e2e/canary:v1", "URL", "http://10.96.0.20/", "INTERVAL", probe.Interval.String()).Replace(canaryProbers))
	ds := probers["DaemonSet/canary-prober"]
	if got := fmt.Sprint(path(ds, "spec", "template", "spec", "containers", 0, "args")); got != "[probe http://10.96.0.20/ 250ms]" {
		t.Errorf("prober args %s", got)
	}
	if got := fmt.Sprint(path(ds, "spec", "template", "spec", "tolerations")); got != "[map[operator:Exists]]" {
		t.Errorf("prober tolerations %s: it must stay on drained and tainted nodes", got)
	}

	workloads := docs(strings.ReplaceAll(strings.ReplaceAll(haWorkloads, "IMAGE", "docker.io/kind-upgrade-e2e/canary:v1"), "WORKER", "ha-worker"))
	if len(workloads) != 5 {
		t.Errorf("objects %v", workloads)
	}
	canary := path(workloads["Deployment/canary"], "spec", "template", "spec")
	if got := fmt.Sprint(path(canary, "containers", 0, "lifecycle", "preStop", "sleep", "seconds")); got != "5" {
		t.Errorf("preStop sleep %s", got)
	}
	if got := fmt.Sprint(path(canary, "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution", 0, "topologyKey")); got != "kubernetes.io/hostname" {
		t.Errorf("anti-affinity topology %s", got)
	}
	if got := fmt.Sprint(path(workloads["PodDisruptionBudget/canary"], "spec", "minAvailable")); got != "1" {
		t.Errorf("PodDisruptionBudget minAvailable %s", got)
	}
	if got := fmt.Sprint(path(workloads["Deployment/pv-canary"], "spec", "template", "spec", "nodeSelector")); got != "map[kubernetes.io/hostname:ha-worker]" {
		t.Errorf("pv-canary nodeSelector %s", got)
	}

	for _, config := range []string{haClusterConfig, kindtest.WithPatch(haClusterConfig, kindtest.CgroupV1Patch)} {
		var c struct {
			Nodes []struct {
				Role string `json:"role"`
			} `json:"nodes"`
			Patches []string `json:"kubeadmConfigPatches"`
		}
		if err := yaml.Unmarshal([]byte(config), &c); err != nil {
			t.Fatalf("the kind config is not YAML: %v\n%s", err, config)
		}
		if got := fmt.Sprint(c.Nodes); got != "[{control-plane} {control-plane} {control-plane} {worker} {worker}]" {
			t.Errorf("nodes %s", got)
		}
		if strings.Contains(config, "failCgroupV1") && (len(c.Patches) != 1 || !strings.Contains(c.Patches[0], "failCgroupV1: false")) {
			t.Errorf("the cgroup v1 patch is lost: %q", c.Patches)
		}
	}
}

// TestPinnedConfig checks the pinned-images test's kind config, with the
// cgroup v1 patch added as on a cgroup v1 host: both patches, in one
// kubeadmConfigPatches list.
func TestPinnedConfig(t *testing.T) {
	t.Parallel()
	patch := strings.NewReplacer("ETCD_TAG", "3.6.8-0", "COREDNS_TAG", "v1.14.2").Replace(pinnedPatch)
	config := kindtest.WithPatch(kindtest.WithPatch(pinnedClusterConfig, patch), kindtest.CgroupV1Patch)
	var c struct {
		Nodes   []struct{ Role string } `json:"nodes"`
		Patches []string                `json:"kubeadmConfigPatches"`
	}
	if err := yaml.Unmarshal([]byte(config), &c); err != nil {
		t.Fatalf("the kind config is not YAML: %v\n%s", err, config)
	}
	if len(c.Nodes) != 3 || c.Nodes[0].Role != "control-plane" || c.Nodes[1].Role != "worker" || c.Nodes[2].Role != "worker" || len(c.Patches) != 2 {
		t.Fatalf("nodes %v, patches %q", c.Nodes, c.Patches)
	}
	var cluster struct {
		Kind string `json:"kind"`
		Etcd struct {
			Local struct {
				ImageTag string `json:"imageTag"`
			} `json:"local"`
		} `json:"etcd"`
		DNS struct {
			ImageTag string `json:"imageTag"`
		} `json:"dns"`
	}
	if err := yaml.UnmarshalStrict([]byte(c.Patches[0]), &cluster); err != nil {
		t.Fatalf("the ClusterConfiguration patch: %v\n%s", err, c.Patches[0])
	}
	if cluster.Kind != "ClusterConfiguration" || cluster.Etcd.Local.ImageTag != "3.6.8-0" || cluster.DNS.ImageTag != "v1.14.2" {
		t.Errorf("the ClusterConfiguration patch is %+v", cluster)
	}
	if !strings.Contains(c.Patches[1], "failCgroupV1: false") {
		t.Errorf("the cgroup v1 patch is %q", c.Patches[1])
	}
}
