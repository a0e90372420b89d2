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

package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
)

func TestChain(t *testing.T) {
	t.Parallel()
	vs := func(s ...string) []*semver.Version {
		var out []*semver.Version
		for _, x := range s {
			out = append(out, semver.MustParse(x))
		}
		return out
	}
	// each hop as "<target>[ done][ kubelets]"
	show := func(hops []Hop) string {
		var parts []string
		for _, h := range hops {
			s := h.Target.String()
			if h.Done {
				s += " done"
			}
			if h.MoveKubelets {
				s += " kubelets"
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, ", ")
	}
	for _, tc := range []struct {
		name, cp string
		kubelets []string
		targets  []string
		stay     string
		want     string
		errHas   string
	}{
		{name: "kubelets move at the last", cp: "1.34.4", kubelets: []string{"1.34.4", "1.34.4"}, targets: []string{"1.35.4", "1.36.3", "1.37.2"},
			want: "1.35.4, 1.36.3, 1.37.2 kubelets"},
		{name: "kubelets move where the next would leave them 4 behind", cp: "1.33.13", kubelets: []string{"1.33.13"}, targets: []string{"1.34.4", "1.35.4", "1.36.3", "1.37.2"},
			want: "1.34.4, 1.35.4, 1.36.3 kubelets, 1.37.2 kubelets"},
		{name: "the oldest kubelet decides", cp: "1.35.4", kubelets: []string{"1.35.4", "1.33.13"}, targets: []string{"1.36.3", "1.37.2"},
			want: "1.36.3 kubelets, 1.37.2 kubelets"},
		{name: "a rerun skips the targets passed", cp: "1.36.3", kubelets: []string{"1.34.4"}, targets: []string{"1.35.4", "1.36.3", "1.37.2"},
			want: "1.35.4 done, 1.36.3, 1.37.2 kubelets"},
		{name: "a node that stays", cp: "1.34.4", kubelets: []string{"1.34.4", "1.34.4"}, targets: []string{"1.35.4", "1.36.3", "1.37.2"}, stay: "n1",
			want: "1.35.4, 1.36.3, 1.37.2 kubelets"},
		{name: "a node that stays too far behind", cp: "1.33.13", kubelets: []string{"1.33.13", "1.33.13"}, targets: []string{"1.34.4", "1.35.4", "1.36.3", "1.37.2"}, stay: "n1",
			errHas: `the kubelet of node "n1" would stay at v1.33.13 while the API server goes to v1.37.2`},
		{name: "a gap", cp: "1.34.4", kubelets: []string{"1.34.4"}, targets: []string{"1.35.4", "1.37.2"},
			errHas: "target 2 of the chain is v1.37.2, but the one before it is v1.35.4"},
		{name: "a start too far", cp: "1.34.4", kubelets: []string{"1.34.4"}, targets: []string{"1.36.3", "1.37.2"},
			errHas: "the chain's first target to run must be at most one minor version above the control plane (add v1.35.x before it)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			current := ClusterVersions{ControlPlane: semver.MustParse(tc.cp), Kubelets: map[string]*semver.Version{}}
			for i, k := range tc.kubelets {
				current.Kubelets[fmt.Sprintf("n%d", i)] = semver.MustParse(k)
			}
			hops, err := Chain(vs(tc.targets...), current, func(n string) bool { return n == tc.stay })
			switch {
			case tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)):
				t.Errorf("got %v, want an error containing %q", err, tc.errHas)
			case tc.errHas == "" && err != nil:
				t.Errorf("got %v", err)
			case tc.errHas == "" && show(hops) != tc.want:
				t.Errorf("got %s, want %s", show(hops), tc.want)
			}
		})
	}
}
