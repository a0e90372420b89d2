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
	"regexp"
	"strings"

	"github.com/Masterminds/semver/v3"

	"sigs.k8s.io/kind/pkg/errors"
)

// ParseVersion parses a Kubernetes version such as "v1.34.4".
func ParseVersion(s string) (*semver.Version, error) {
	s = strings.TrimSpace(s)
	v, err := semver.NewVersion(s)
	if err != nil {
		return nil, errors.Wrapf(err, "failed to parse Kubernetes version %q", s)
	}
	return v, nil
}

// binaryVersionPrefixes start the line that holds the version in the output
// of `kubelet --version` and of `kubectl version --client`.
var binaryVersionPrefixes = []string{"Kubernetes ", "Client Version: "}

// ParseBinaryVersion reads the version from `kubelet --version`
// ("Kubernetes v1.34.4") or `kubectl version --client` ("Client Version:
// v1.34.4") and returns it as Kubernetes prints versions ("v1.34.4").
func ParseBinaryVersion(out string) (string, error) {
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		for _, prefix := range binaryVersionPrefixes {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				ver, err := ParseVersion(rest)
				if err != nil {
					return "", err
				}
				return v(ver), nil
			}
		}
	}
	return "", errors.Errorf("no version in %q", strings.TrimSpace(out))
}

// Decision is the outcome of the version-skew policy.
type Decision int

const (
	// Upgrade means the cluster can and should be upgraded to the target.
	Upgrade Decision = iota
	// NothingToDo means the whole cluster already runs the target version.
	NothingToDo
)

// ClusterVersions is what preflight observed on the cluster.
type ClusterVersions struct {
	// ControlPlane is the kubernetesVersion of the cluster's
	// ClusterConfiguration (what the last kubeadm init/upgrade apply set).
	ControlPlane *semver.Version
	// Kubelets maps node name to the kubeletVersion the node reports.
	Kubelets map[string]*semver.Version
	// Installed maps node name to the content of its /kind/version.
	Installed map[string]*semver.Version
	// KubeProxy is the version of kube-proxy's image, nil when unknown
	// (no kube-proxy, or a tag that names no version).
	KubeProxy *semver.Version
	// LeavesKubeProxy is true when the upgrade leaves kube-proxy at its
	// version: then kube-proxy behind the target is nothing to do.
	LeavesKubeProxy bool
}

// maxKubeletSkew is how many minor versions a kubelet may lag behind the
// API server (Kubernetes version skew policy since v1.28).
const maxKubeletSkew = 3

// Decide applies the version-skew policy: no downgrades, one minor version at
// a time, kubelets never newer than the target API server nor too old for it.
func Decide(target *semver.Version, current ClusterVersions) (Decision, error) {
	cp := current.ControlPlane
	if cp == nil {
		return 0, errors.New("failed to determine the cluster's current Kubernetes version")
	}
	if target.Major() != cp.Major() {
		return 0, errors.Errorf("cannot upgrade from %s to %s: the major version differs", v(cp), v(target))
	}
	if target.LessThan(cp) {
		return 0, errors.Errorf("cannot upgrade from %s to %s: that is a downgrade; the target must be a newer Kubernetes version (downgrades are not supported: create a new cluster instead)", v(cp), v(target))
	}
	if target.Minor() > cp.Minor()+1 {
		return 0, errors.Errorf("cannot upgrade from %s to %s: that skips a minor version; upgrade to v%d.%d.x first, then to %s", v(cp), v(target), cp.Major(), cp.Minor()+1, v(target))
	}
	for _, name := range sortedKeys(current.Kubelets) {
		kv := current.Kubelets[name]
		if kv.GreaterThan(target) {
			return 0, errors.Errorf("cannot upgrade to %s: the kubelet on node %q is %s, newer than the target; a kubelet must never be newer than the API server", v(target), name, v(kv))
		}
		if kv.Major() != target.Major() || kv.Minor()+maxKubeletSkew < target.Minor() {
			return 0, errors.Errorf("cannot upgrade to %s: the kubelet on node %q is %s, more than %d minor versions older than the target", v(target), name, v(kv), maxKubeletSkew)
		}
	}
	if !cp.Equal(target) {
		return Upgrade, nil
	}
	for _, versions := range []map[string]*semver.Version{current.Kubelets, current.Installed} {
		for _, ver := range versions {
			if !ver.Equal(target) {
				return Upgrade, nil
			}
		}
	}
	if kp := current.KubeProxy; kp != nil && !current.LeavesKubeProxy && !SameRelease(kp, target) {
		// an earlier run left it behind: kubeadm upgrades it now
		return Upgrade, nil
	}
	return NothingToDo, nil
}

// CheckKubeletStays applies the version-skew policy to the kubelet of
// node at kubelet, which stays while the API server goes to target: it
// may be up to 3 minor versions older, never newer.
func CheckKubeletStays(node string, kubelet, target *semver.Version) error {
	if kubelet.GreaterThan(target) {
		return errors.Errorf("the kubelet of node %q runs %s, newer than the target %s: a kubelet must never be newer than the API server", node, v(kubelet), v(target))
	}
	if kubelet.Major() != target.Major() || kubelet.Minor()+maxKubeletSkew < target.Minor() {
		return errors.Errorf("the kubelet of node %q would stay at %s while the API server goes to %s: a kubelet may be at most %d minor versions older than the API server (Kubernetes' version skew policy); let it move", node, v(kubelet), v(target), maxKubeletSkew)
	}
	return nil
}

// maxKubeProxySkew is how many minor versions kube-proxy may lag behind
// the API server (Kubernetes version skew policy).
const maxKubeProxySkew = 3

// CheckKubeProxy applies the version-skew policy to kube-proxy at
// kubeProxy (nil: unknown, nothing to check) when the upgrade to target
// leaves it at its version: it may be up to 3 minor versions older than
// the API server, never newer.
func CheckKubeProxy(target, kubeProxy *semver.Version) error {
	if kubeProxy == nil {
		return nil
	}
	if kubeProxy.Major() != target.Major() || kubeProxy.Minor() > target.Minor() {
		return errors.Errorf("kube-proxy runs v%d.%d, newer than the target %s: kube-proxy must never be newer than the API server", kubeProxy.Major(), kubeProxy.Minor(), v(target))
	}
	if kubeProxy.Minor()+maxKubeProxySkew < target.Minor() {
		return errors.Errorf("kube-proxy would stay at %s while the API server goes to %s: kube-proxy may be at most %d minor versions older than the API server (Kubernetes' version skew policy)", v(kubeProxy), v(target), maxKubeProxySkew)
	}
	return nil
}

// SameRelease reports whether a and b have the same major, minor and
// patch versions.
func SameRelease(a, b *semver.Version) bool {
	return a.Major() == b.Major() && a.Minor() == b.Minor() && a.Patch() == b.Patch()
}

// imageVersion is the version an image tag begins with: v1.36.3,
// v1.37.0-alpha.1.123_0123456789abcd (a build's tag: "+" is not allowed in
// tags), v1.36.3-amd64.
var imageVersion = regexp.MustCompile(`:v?([0-9]+)\.([0-9]+)\.([0-9]+)`)

// ImageVersion returns the release an image's tag names (major, minor and
// patch), nil when its tag names none.
func ImageVersion(image string) *semver.Version {
	m := imageVersion.FindStringSubmatch(image)
	if m == nil {
		return nil
	}
	ver, err := semver.NewVersion(m[1] + "." + m[2] + "." + m[3])
	if err != nil {
		return nil
	}
	return ver
}

// v prints a version the way Kubernetes does, with a leading "v".
func v(ver *semver.Version) string {
	return "v" + ver.String()
}
