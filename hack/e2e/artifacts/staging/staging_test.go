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

package staging

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

const gomod = `module k8s.io/kubernetes

go 1.25.0

require (
	k8s.io/api v0.0.0
	k8s.io/client-go v0.0.0
)

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/client-go => ./staging/src/k8s.io/client-go
	github.com/x/y => github.com/x/y v1.2.3
)
`

func TestReplaces(t *testing.T) {
	rs, err := Replaces("v1.37.2", []byte(gomod))
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, r := range rs {
		flags = append(flags, r.Flag())
	}
	want := "-replace=k8s.io/api=k8s.io/api@v0.37.2 -replace=k8s.io/client-go=k8s.io/client-go@v0.37.2"
	if got := strings.Join(flags, " "); got != want {
		t.Errorf("flags = %s, want %s", got, want)
	}
}

func TestReplacesRefuses(t *testing.T) {
	cases := []struct{ name, version, gomod, want string }{
		{"a bad version", "1.37.2", gomod, "bad Kubernetes version"},
		{"a pre-release", "v1.37.0-rc.1", gomod, "bad Kubernetes version"},
		{"no staging", "v1.37.2", "module k8s.io/kubernetes\n", "no staging module"},
		{"a folder elsewhere", "v1.37.2", strings.Replace(gomod, "./staging/src/k8s.io/api", "./vendor/api", 1), "not a staging folder"},
		{"not a go.mod", "v1.37.2", "replace (", "go.mod of"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Replaces(c.version, []byte(c.gomod)); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestRetarget(t *testing.T) {
	p := filepath.Join(t.TempDir(), "go.mod")
	// k8s.io/newer-staging: a staging module of a newer version that
	// v1.37.2 does not have; cgroups: what the other version needed
	before := "module example.com/suite\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes v1.36.3\n\nrequire (\n\tk8s.io/api v0.0.0\n\tk8s.io/newer-staging v0.0.0\n\tk8s.io/klog/v2 v2.130.1\n\tgithub.com/opencontainers/cgroups v0.0.6 // indirect\n)\n\nreplace (\n\tk8s.io/api => k8s.io/api v0.36.3\n\tk8s.io/old-staging => k8s.io/old-staging v0.36.3\n\tgithub.com/kindupgrade/kind-upgrade => ../..\n)\n"
	if err := os.WriteFile(p, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := Replaces("v1.37.2", []byte(gomod))
	if err != nil {
		t.Fatal(err)
	}
	if err := Retarget(p, "v1.37.2", rs); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	f, err := modfile.Parse(p, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range f.Replace {
		got[r.Old.Path] = r.New.Path + "@" + r.New.Version
	}
	want := map[string]string{
		"k8s.io/api":                          "k8s.io/api@v0.37.2",
		"k8s.io/client-go":                    "k8s.io/client-go@v0.37.2",
		"github.com/kindupgrade/kind-upgrade": "../..@",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("replaces = %v, want %v", got, want)
	}
	requires := map[string]string{}
	for _, r := range f.Require {
		requires[r.Mod.Path] = r.Mod.Version
	}
	if want := map[string]string{"k8s.io/kubernetes": "v1.37.2", "k8s.io/api": "v0.0.0", "k8s.io/klog/v2": "v2.130.1"}; !reflect.DeepEqual(requires, want) {
		t.Errorf("requires = %v, want %v", requires, want)
	}
}
