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

package artifacts

import (
	"strings"

	"github.com/distribution/reference"
)

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

// splitRef splits ref into its repository and the rest: ":tag", "@digest",
// ":tag@digest" or "". A colon before the last slash belongs to a registry
// port, not to a tag.
func splitRef(ref string) (repository, rest string) {
	repository = ref
	if at := strings.IndexByte(repository, '@'); at >= 0 {
		repository, rest = repository[:at], repository[at:]
	}
	slash := strings.LastIndexByte(repository, '/')
	if colon := strings.LastIndexByte(repository, ':'); colon > slash {
		repository, rest = repository[:colon], repository[colon:]+rest
	}
	return repository, rest
}

// StripArchSuffix returns ref with a -<arch> suffix on the repository's last
// element removed: registry.k8s.io/kube-apiserver-amd64:v1.34.4 becomes
// registry.k8s.io/kube-apiserver:v1.34.4. Any other ref is returned as is.
func StripArchSuffix(ref string) string {
	repository, rest := splitRef(ref)
	slash := strings.LastIndexByte(repository, '/')
	last := repository[slash+1:]
	dash := strings.LastIndexByte(last, '-')
	if dash <= 0 || !archSuffixes[last[dash+1:]] {
		return ref
	}
	return repository[:slash+1] + last[:dash] + rest
}

// Normalize returns ref fully qualified the way containerd stores it:
// "busybox" becomes docker.io/library/busybox:latest and
// "foo/bar:v1" becomes docker.io/foo/bar:v1. A ref with a registry keeps it.
// A ref that does not parse is returned unchanged.
func Normalize(ref string) string {
	named, err := reference.ParseNormalizedNamed(strings.TrimSpace(ref))
	if err != nil {
		return ref
	}
	return reference.TagNameOnly(named).String()
}
