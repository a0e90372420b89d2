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

package kube

import (
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/nodecapture"
)

func str(s string) *string { return &s }

// emulate are the changes that make the three components emulate v.
func emulate(v *string) ArgChanges {
	return ArgChanges{
		SectionAPIServer:         {"emulated-version": v},
		SectionControllerManager: {"emulated-version": v},
		SectionScheduler:         {"emulated-version": v},
	}
}

// withoutArgs returns doc as fields, the sections' extraArgs left out.
func withoutArgs(t *testing.T, doc []byte) map[string]interface{} {
	t.Helper()
	var m map[string]interface{}
	if err := yaml.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	for _, section := range []string{SectionAPIServer, SectionControllerManager, SectionScheduler} {
		if sec, ok := m[section].(map[string]interface{}); ok {
			delete(sec, "extraArgs")
		}
	}
	return m
}

// TestSetExtraArgsOnRealConfigurations edits the ClusterConfiguration of
// real kind clusters: only the arguments change, the user's (kind's)
// arguments stay, and editing again changes nothing.
func TestSetExtraArgsOnRealConfigurations(t *testing.T) {
	t.Parallel()
	for _, version := range append(nodecapture.Versions, "v1.36.3") {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			doc := nodecapture.Read(t, version, "cluster-configuration.yaml")
			edited, err := SetExtraArgs(doc, emulate(str("1.35")))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(withoutArgs(t, doc), withoutArgs(t, edited)) {
				t.Errorf("fields other than extraArgs changed:\n%s\nwas:\n%s", edited, doc)
			}
			cfg, err := ParseClusterConfiguration(edited)
			if err != nil {
				t.Fatal(err)
			}
			for _, section := range []string{SectionAPIServer, SectionControllerManager, SectionScheduler} {
				if v, ok := cfg.Section(section).ExtraArgs.Get("emulated-version"); !ok || v != "1.35" {
					t.Errorf("%s extraArgs %v", section, cfg.Section(section).ExtraArgs)
				}
			}
			if got := cfg.APIServer.ExtraArgs; len(got) != 2 || got[0] != (Arg{"runtime-config", ""}) {
				t.Errorf("apiServer extraArgs %v, want kind's runtime-config first, kept", got)
			}
			if got := cfg.ControllerManager.ExtraArgs; len(got) != 2 || got[0] != (Arg{"enable-hostpath-provisioner", "true"}) {
				t.Errorf("controllerManager extraArgs %v, want kind's enable-hostpath-provisioner first, kept", got)
			}
			again, err := SetExtraArgs(edited, emulate(str("1.35")))
			if err != nil || string(again) != string(edited) {
				t.Errorf("editing again changed the document (%v):\n%s\nwas:\n%s", err, again, edited)
			}
			// removing gives back the original arguments
			removed, err := SetExtraArgs(edited, emulate(nil))
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseClusterConfiguration(removed)
			if err != nil {
				t.Fatal(err)
			}
			orig, _ := ParseClusterConfiguration(doc)
			if !reflect.DeepEqual(back, orig) || !reflect.DeepEqual(withoutArgs(t, removed), withoutArgs(t, doc)) {
				t.Errorf("removing the arguments left:\n%s\nwas:\n%s", removed, doc)
			}
			if strings.Contains(string(removed), "scheduler:\n  extraArgs") {
				t.Errorf("an emptied extraArgs stayed:\n%s", removed)
			}
		})
	}
}

func TestSetExtraArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		doc     string
		changes ArgChanges
		want    string
		errHas  string
	}{
		{
			name:    "v1beta3 maps stay maps",
			doc:     "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.33.1\napiServer:\n  extraArgs:\n    v: \"4\"\n",
			changes: ArgChanges{SectionAPIServer: {"emulated-version": str("1.32")}, SectionScheduler: {"emulated-version": str("1.32")}},
			want:    "apiServer:\n  extraArgs:\n    emulated-version: \"1.32\"\n    v: \"4\"\napiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.33.1\nscheduler:\n  extraArgs:\n    emulated-version: \"1.32\"\n",
		},
		{
			name:    "v1beta4 lists: set in place, a second occurrence dropped, others kept",
			doc:     "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\napiServer:\n  extraArgs:\n  - name: emulated-version\n    value: \"1.33\"\n  - name: v\n    value: \"4\"\n  - name: emulated-version\n    value: \"1.34\"\n",
			changes: ArgChanges{SectionAPIServer: {"emulated-version": str("1.35"), "emulation-forward-compatible": str("true")}},
			want:    "apiServer:\n  extraArgs:\n  - name: emulated-version\n    value: \"1.35\"\n  - name: v\n    value: \"4\"\n  - name: emulation-forward-compatible\n    value: \"true\"\napiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n",
		},
		{
			name:    "removing what is not there adds no section",
			doc:     "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.36.3\n",
			changes: emulate(nil),
			want:    "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.36.3\n",
		},
		{
			name:    "numbers stay as written",
			doc:     "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\netcd:\n  local:\n    extraArgs:\n    - name: quota-backend-bytes\n      value: \"8589934592\"\n    snapshotCount: 10000000000000001\n",
			changes: ArgChanges{SectionScheduler: {"emulated-version": str("1.35")}},
			want:    "apiVersion: kubeadm.k8s.io/v1beta4\netcd:\n  local:\n    extraArgs:\n    - name: quota-backend-bytes\n      value: \"8589934592\"\n    snapshotCount: 10000000000000001\nkind: ClusterConfiguration\nscheduler:\n  extraArgs:\n  - name: emulated-version\n    value: \"1.35\"\n",
		},
		{
			name:    "extraArgs of another shape",
			doc:     "apiVersion: kubeadm.k8s.io/v1beta4\napiServer:\n  extraArgs: 4\n",
			changes: emulate(str("1.35")),
			errHas:  "apiServer.extraArgs is neither a list nor a map",
		},
		{
			name:    "not a document of fields",
			doc:     "- a\n- b\n",
			changes: emulate(str("1.35")),
			errHas:  "is not a document of fields",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := SetExtraArgs([]byte(tc.doc), tc.changes)
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("error %v, want one containing %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestExtraArgsShapes(t *testing.T) {
	t.Parallel()
	list, err := ParseClusterConfiguration([]byte("kubernetesVersion: v1.36.3\nscheduler:\n  extraArgs:\n  - name: b\n    value: \"1\"\n  - name: a\n    value: \"2\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := list.Scheduler.ExtraArgs; !reflect.DeepEqual(got, ExtraArgs{{"b", "1"}, {"a", "2"}}) {
		t.Errorf("a list parsed as %v", got)
	}
	m, err := ParseClusterConfiguration([]byte("kubernetesVersion: v1.33.1\nscheduler:\n  extraArgs:\n    b: \"1\"\n    a: \"2\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Scheduler.ExtraArgs; !reflect.DeepEqual(got, ExtraArgs{{"a", "2"}, {"b", "1"}}) {
		t.Errorf("a map parsed as %v", got)
	}
	if _, err := ParseClusterConfiguration([]byte("kubernetesVersion: v1.33.1\nscheduler:\n  extraArgs: 4\n")); err == nil || !strings.Contains(err.Error(), "neither a list") {
		t.Errorf("extraArgs of another shape: %v", err)
	}
}
