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

package imageref

import (
	"path"
	"strings"

	"github.com/distribution/reference"
)

// Normalize returns ref fully qualified the way containerd stores and lists
// it: "busybox" becomes docker.io/library/busybox:latest and "foo/bar:v1"
// becomes docker.io/foo/bar:v1. A ref with a registry keeps it. A ref that
// does not parse is returned unchanged.
func Normalize(ref string) string {
	named, err := reference.ParseNormalizedNamed(strings.TrimSpace(ref))
	if err != nil {
		return ref
	}
	return reference.TagNameOnly(named).String()
}

// Component returns the last element of ref's repository path:
// "kube-apiserver" for registry.k8s.io/kube-apiserver:v1.34.4 and "coredns"
// for registry.k8s.io/coredns/coredns:v1.12.1. A ref that does not parse is
// returned unchanged.
func Component(ref string) string {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return ref
	}
	return path.Base(reference.Path(named))
}

// archSuffixes are the architectures Kubernetes release images carry as a
// -<arch> suffix on their repository, as in kube-apiserver-amd64.
var archSuffixes = map[string]bool{
	"amd64":   true,
	"arm64":   true,
	"arm":     true,
	"ppc64le": true,
	"s390x":   true,
	"386":     true,
	"riscv64": true,
}

// StripArchSuffix returns ref with a -<arch> suffix on the last element of
// its repository removed, keeping its tag and digest and leaving it
// otherwise as written: registry.k8s.io/kube-apiserver-amd64:v1.34.4 becomes
// registry.k8s.io/kube-apiserver:v1.34.4. Any other ref is returned as is.
func StripArchSuffix(ref string) string {
	parsed, err := reference.Parse(ref)
	if err != nil {
		return ref
	}
	named, ok := parsed.(reference.Named)
	if !ok {
		return ref
	}
	dir, last := path.Split(named.Name())
	base, arch, found := cutLast(last, "-")
	if !found || base == "" || !archSuffixes[arch] {
		return ref
	}
	stripped := dir + base
	if tagged, ok := named.(reference.Tagged); ok {
		stripped += ":" + tagged.Tag()
	}
	if digested, ok := named.(reference.Digested); ok {
		stripped += "@" + digested.Digest().String()
	}
	return stripped
}

// cutLast slices s around the last instance of sep.
func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}
