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
	"github.com/Masterminds/semver/v3"

	"sigs.k8s.io/kind/pkg/errors"
)

// Hop is what a chain of targets does at one of them.
type Hop struct {
	// Target is the hop's version.
	Target *semver.Version
	// Done is true when the control plane is already past Target: a
	// later hop has begun, the hop is not run again.
	Done bool
	// MoveKubelets is true when the kubelets move at this hop: it is the
	// last, or the next one would leave a kubelet more than 3 minor
	// versions behind the API server.
	MoveKubelets bool
}

// Chain plans a chain of targets from the cluster's current versions: the
// control plane steps through every target, one minor version at a time;
// the kubelets move once, at the last hop, unless the skew policy makes
// them move earlier. The kubelets of the nodes stay names never move: it
// refuses, naming the policy, a chain that would leave one more than 3
// minor versions behind. It refuses, naming the rule, a chain whose
// targets are not each one minor version above the one before, or that
// starts more than one minor version above the control plane.
func Chain(targets []*semver.Version, current ClusterVersions, stay func(node string) bool) ([]Hop, error) {
	cp := current.ControlPlane
	if cp == nil {
		return nil, errors.New("failed to determine the cluster's current Kubernetes version")
	}
	hops := make([]Hop, len(targets))
	for i, t := range targets {
		hops[i] = Hop{Target: t, Done: t.LessThan(cp)}
		if i == 0 {
			continue
		}
		prev := targets[i-1]
		if t.Major() != prev.Major() || t.Minor() != prev.Minor()+1 {
			return nil, errors.Errorf("target %d of the chain is %s, but the one before it is %s: each target must be one minor version above the one before (kubeadm upgrades the control plane one minor version at a time)", i+1, v(t), v(prev))
		}
	}
	for _, h := range hops {
		if h.Done {
			continue
		}
		if h.Target.Major() != cp.Major() || h.Target.Minor() > cp.Minor()+1 {
			return nil, errors.Errorf("cannot upgrade from %s through %s: the chain's first target to run must be at most one minor version above the control plane (add v%d.%d.x before it)", v(cp), v(h.Target), cp.Major(), cp.Minor()+1)
		}
		break
	}
	// the oldest kubelet that moves, as it will be before each hop
	var oldest *semver.Version
	last := targets[len(targets)-1]
	for _, name := range sortedKeys(current.Kubelets) {
		kv := current.Kubelets[name]
		if stay != nil && stay(name) {
			if kv.Major() != last.Major() || kv.Minor()+maxKubeletSkew < last.Minor() {
				return nil, errors.Errorf("the kubelet of node %q would stay at %s while the API server goes to %s: a kubelet may be at most %d minor versions older than the API server (Kubernetes' version skew policy); let it move, or end the chain at v%d.%d", name, v(kv), v(last), maxKubeletSkew, kv.Major(), kv.Minor()+maxKubeletSkew)
			}
			continue
		}
		if oldest == nil || kv.LessThan(oldest) {
			oldest = kv
		}
	}
	for i := range hops {
		if hops[i].Done {
			continue
		}
		last := i == len(hops)-1
		if last || oldest == nil || hops[i+1].Target.Minor() > oldest.Minor()+maxKubeletSkew {
			hops[i].MoveKubelets = true
			oldest = hops[i].Target
		}
	}
	return hops, nil
}
