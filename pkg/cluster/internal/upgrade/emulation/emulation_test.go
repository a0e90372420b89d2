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

package emulation

import (
	"fmt"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/kube"
)

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// all is an emulation of v on the three components, with kube-apiserver
// forward compatible when fc.
func all(v string, fc bool) Args {
	a := Args{}
	for _, c := range Components {
		a.set(c.Section, EmulatedVersion, v)
	}
	if fc {
		a.set(kube.SectionAPIServer, ForwardCompatible, "true")
	}
	return a
}

func TestCheckChoice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		choice Choice
		errHas string
	}{
		{Choice{}, ""},
		{Choice{Version: "1.35"}, ""},
		{Choice{Version: None}, ""},
		{Choice{Version: "1.35", ForwardCompatible: yes()}, ""},
		{Choice{Version: None, ForwardCompatible: no()}, ""},
		{Choice{Version: "1.35.1"}, `--emulated-version must be a Kubernetes minor version such as 1.35 (no patch, no "v"), or "none" to remove the emulation; not "1.35.1"`},
		{Choice{Version: "v1.35"}, `not "v1.35"`},
		{Choice{Version: "kube=1.35"}, `not "kube=1.35"`},
		{Choice{Version: "off"}, `not "off"`},
		{Choice{Version: None, ForwardCompatible: yes()}, "--emulation-forward-compatible=true needs an emulation: it cannot go with --emulated-version=none"},
	} {
		t.Run(fmt.Sprintf("%+v", tc.choice), func(t *testing.T) {
			t.Parallel()
			err := CheckChoice(tc.choice, "--emulated-version", "--emulation-forward-compatible")
			switch {
			case tc.errHas == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)):
				t.Errorf("error %v, want one containing %q", err, tc.errHas)
			}
		})
	}
}

func TestDesired(t *testing.T) {
	t.Parallel()
	target := semver.MustParse("v1.36.3")
	kcmOnly := Args{kube.SectionControllerManager: {EmulatedVersion: "1.34", "v": "4"}}
	for _, tc := range []struct {
		name    string
		current Args
		choice  Choice
		want    Args
	}{
		{"nothing asked, nothing set", Args{}, Choice{}, Args{}},
		{"nothing asked keeps the cluster's", all("1.35", true), Choice{}, all("1.35", true)},
		{"nothing asked keeps even one component's", kcmOnly, Choice{}, kcmOnly},
		{"a version on all three", Args{}, Choice{Version: "1.35"}, all("1.35", false)},
		{"a new version keeps forward compatibility", all("1.34", true), Choice{Version: "1.35"}, all("1.35", true)},
		{"the binary's own version drops forward compatibility", all("1.35", true), Choice{Version: "1.36"}, all("1.36", false)},
		{"forward compatibility asked", all("1.34", false), Choice{ForwardCompatible: yes()}, all("1.34", true)},
		{"forward compatibility removed", all("1.34", true), Choice{ForwardCompatible: no()}, all("1.34", false)},
		{"a version and forward compatibility", Args{}, Choice{Version: "1.33", ForwardCompatible: yes()}, all("1.33", true)},
		{"none removes both", all("1.34", true), Choice{Version: None}, Args{}},
		{"none leaves other arguments", kcmOnly, Choice{Version: None}, Args{}},
		{"forward compatibility only on kube-apiserver", Args{kube.SectionScheduler: {ForwardCompatible: "true", EmulatedVersion: "1.35"}}, Choice{}, Args{kube.SectionScheduler: {EmulatedVersion: "1.35"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// the arguments this package does not decide are not its own
			current := tc.current.clone()
			for _, args := range current {
				delete(args, "v")
			}
			got := Desired(current, tc.choice, target)
			want := tc.want.clone()
			for _, args := range want {
				delete(args, "v")
			}
			for section, args := range want {
				if len(args) == 0 {
					delete(want, section)
				}
			}
			if !got.Equal(want) {
				t.Errorf("Desired(%v, %+v) = %v, want %v", current, tc.choice, got, want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	origin := func(name string) string { return "--" + name }
	for _, tc := range []struct {
		target  string
		desired Args
		errHas  string
	}{
		{"v1.36.3", Args{}, ""},
		{"v1.36.3", all("1.33", false), ""},
		{"v1.36.3", all("1.36", false), ""},
		{"v1.36.3", all("1.32", false), "--emulated-version: kube-apiserver v1.36.3 refuses --emulated-version=1.32: the allowed range is 1.33..1.36 (the target's minor version and the 3 before it, never below 1.31)"},
		{"v1.36.3", all("1.37", false), "the allowed range is 1.33..1.36"},
		{"v1.33.1", all("1.31", false), ""},
		{"v1.33.1", all("1.30", false), "the allowed range is 1.31..1.33"},
		{"v1.32.0", all("1.31", false), ""},
		{"v1.31.4", all("1.31", false), ""},
		{"v1.30.2", all("1.30", false), "emulates no other version (compatibility versions begin with 1.31)"},
		{"v1.37.0-alpha.1", all("1.34", false), ""},
		{"v1.37.0-alpha.1", all("1.33", false), "the allowed range is 1.34..1.37"},
		{"v1.36.3", Args{kube.SectionScheduler: {EmulatedVersion: "kube=1.32"}}, "kube-scheduler v1.36.3 refuses --emulated-version=kube=1.32"},
		{"v1.36.3", Args{kube.SectionScheduler: {EmulatedVersion: "1.35.2"}}, `"1.35.2" is not a minor version`},
		{"v1.36.3", Args{kube.SectionScheduler: {EmulatedVersion: ""}}, ""},
		{"v1.36.3", all("1.35", true), ""},
		{"v1.33.0", all("1.32", true), ""},
		{"v1.32.5", all("1.31", true), "kube-apiserver v1.32.5 has no --emulation-forward-compatible (it came with v1.33)"},
		{"v1.36.3", all("1.36", true), "kube-apiserver v1.36.3 refuses --emulation-forward-compatible=true unless it emulates an older version (set emulated-version below 1.36)"},
		{"v1.36.3", Args{kube.SectionAPIServer: {ForwardCompatible: "true"}}, "unless it emulates an older version"},
		{"v1.36.3", Args{kube.SectionAPIServer: {ForwardCompatible: "false"}}, ""},
		{"v1.36.3", Args{kube.SectionAPIServer: {ForwardCompatible: "maybe"}}, `emulation-forward-compatible="maybe" is not a boolean`},
	} {
		t.Run(fmt.Sprintf("%s %v", tc.target, tc.desired), func(t *testing.T) {
			t.Parallel()
			err := Check(tc.desired, semver.MustParse(tc.target), origin)
			switch {
			case tc.errHas == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)):
				t.Errorf("error %v, want one containing %q", err, tc.errHas)
			}
		})
	}
}

func TestChanges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		current, desired Args
		want             []string
	}{
		{"none", all("1.35", true), all("1.35", true), nil},
		{"set", Args{}, all("1.36", false), []string{"apiServer, controllerManager, scheduler extraArgs emulated-version=1.36 (was: none)"}},
		{"bumped, forward compatibility kept", all("1.34", true), all("1.35", true), []string{"apiServer, controllerManager, scheduler extraArgs emulated-version=1.35 (was: 1.34)"}},
		{"removed", all("1.35", true), Args{}, []string{
			"apiServer, controllerManager, scheduler extraArgs emulated-version removed (was: 1.35)",
			"apiServer extraArgs emulation-forward-compatible removed (was: true)",
		}},
		{"components set apart", Args{kube.SectionScheduler: {EmulatedVersion: "1.34"}}, all("1.35", false), []string{
			"apiServer, controllerManager extraArgs emulated-version=1.35 (was: none)",
			"scheduler extraArgs emulated-version=1.35 (was: 1.34)",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, c := range Changes(tc.current, tc.desired) {
				got = append(got, c.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			// the edit they make gets desired from current
			edits := ArgChanges(tc.current, tc.desired)
			after := tc.current.clone()
			for section, args := range edits {
				for name, value := range args {
					if value == nil {
						after.unset(section, name)
					} else {
						after.set(section, name, *value)
					}
				}
			}
			if !after.Equal(tc.desired) {
				t.Errorf("ArgChanges make %v, want %v", after, tc.desired)
			}
		})
	}
}

func TestFromConfig(t *testing.T) {
	t.Parallel()
	cfg, err := kube.ParseClusterConfiguration([]byte(`apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: v1.36.3
apiServer:
  extraArgs:
  - name: runtime-config
    value: ""
  - name: emulated-version
    value: "1.35"
  - name: emulation-forward-compatible
    value: "true"
controllerManager:
  extraArgs:
  - name: emulated-version
    value: "1.34"
  - name: emulated-version
    value: "1.35"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := Args{
		kube.SectionAPIServer:         {EmulatedVersion: "1.35", ForwardCompatible: "true"},
		kube.SectionControllerManager: {EmulatedVersion: "1.35"},
	}
	if got := FromConfig(cfg); !got.Equal(want) {
		t.Errorf("FromConfig = %v, want %v", got, want)
	}
	v1beta3, err := kube.ParseClusterConfiguration([]byte("apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.33.1\nscheduler:\n  extraArgs:\n    emulated-version: \"1.32\"\n    v: \"4\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := FromConfig(v1beta3); !got.Equal(Args{kube.SectionScheduler: {EmulatedVersion: "1.32"}}) {
		t.Errorf("FromConfig of a v1beta3 map = %v", got)
	}
}

func TestMismatch(t *testing.T) {
	t.Parallel()
	apiServer := func(flags ...string) []string {
		return append([]string{"kube-apiserver", "--secure-port=6443"}, flags...)
	}
	for _, tc := range []struct {
		name      string
		desired   Args
		component string
		command   []string
		want      string
	}{
		{"no emulation, none run", Args{}, "kube-apiserver", apiServer(), ""},
		{"no emulation, an empty flag", Args{}, "kube-apiserver", apiServer("--emulated-version="), ""},
		{"no emulation, one runs", Args{}, "kube-apiserver", apiServer("--emulated-version=1.35"), "kube-apiserver runs --emulated-version=1.35, not without --emulated-version"},
		{"the same", all("1.35", true), "kube-apiserver", apiServer("--emulated-version=1.35", "--emulation-forward-compatible=true"), ""},
		{"the same, spelled kube=", all("1.35", false), "kube-apiserver", apiServer("--emulated-version=kube=1.35"), ""},
		{"the last flag counts", all("1.35", false), "kube-apiserver", apiServer("--emulated-version=1.34", "--emulated-version=1.35"), ""},
		{"another version", all("1.35", false), "kube-scheduler", []string{"kube-scheduler", "--emulated-version=1.34"}, "kube-scheduler runs --emulated-version=1.34, not --emulated-version=1.35"},
		{"not yet", all("1.35", false), "kube-controller-manager", []string{"kube-controller-manager"}, "kube-controller-manager runs without --emulated-version, not --emulated-version=1.35"},
		{"forward compatibility missing", all("1.35", true), "kube-apiserver", apiServer("--emulated-version=1.35"), "kube-apiserver runs without --emulation-forward-compatible, not --emulation-forward-compatible=true"},
		{"forward compatibility left", all("1.35", false), "kube-apiserver", apiServer("--emulated-version=1.35", "--emulation-forward-compatible=true"), "kube-apiserver runs --emulation-forward-compatible=true, not without --emulation-forward-compatible"},
		{"false is none", all("1.35", false), "kube-apiserver", apiServer("--emulated-version=1.35", "--emulation-forward-compatible=false"), ""},
		{"etcd has nothing to match", all("1.35", true), "etcd", []string{"etcd"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Mismatch(tc.desired, tc.component, tc.command); got != tc.want {
				t.Errorf("Mismatch = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRangeText(t *testing.T) {
	t.Parallel()
	for target, want := range map[string]string{"v1.36.3": "1.33..1.36", "v1.37.2": "1.34..1.37", "v1.32.0": "1.31..1.32", "v1.31.0": "1.31..1.31", "v1.30.0": "none"} {
		if got := RangeText(semver.MustParse(target)); got != want {
			t.Errorf("RangeText(%s) = %s, want %s", target, got, want)
		}
	}
}
