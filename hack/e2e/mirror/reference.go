// Copyright 2026 The kind-upgrade Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package main

import (
	"fmt"
	"net"
	"strings"
)

// normalizeReference splits a reference as `docker save` records it in
// RepoTags into the fully qualified repository and the tag, as Docker reads
// it: "kindest/kindnetd:v1" is docker.io/kindest/kindnetd and v1, "busybox"
// is docker.io/library/busybox and latest, "registry.k8s.io/pause:3.10" is
// registry.k8s.io/pause and 3.10.
func normalizeReference(ref string) (repo, tag string, err error) {
	if strings.Contains(ref, "@") {
		return "", "", fmt.Errorf("reference %q: digest references are not supported", ref)
	}
	name, tag := ref, "latest"
	// a colon after the last slash separates the tag; one before it is a port
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	domain, path := "docker.io", name
	if i := strings.Index(name, "/"); i >= 0 && isDomain(name[:i]) {
		domain, path = name[:i], name[i+1:]
	}
	if domain == "index.docker.io" {
		domain = "docker.io"
	}
	if domain == "docker.io" && !strings.Contains(path, "/") {
		path = "library/" + path
	}
	if path == "" || tag == "" || strings.HasSuffix(path, "/") || path != strings.ToLower(path) {
		return "", "", fmt.Errorf("reference %q is not a valid image reference", ref)
	}
	return domain + "/" + path, tag, nil
}

// isDomain tells whether the first component of a name is a registry host,
// by Docker's rule: it has a dot or a port, is localhost, or is not all
// lower-case (repository paths are).
func isDomain(component string) bool {
	return strings.ContainsAny(component, ".:") || component == "localhost" ||
		component != strings.ToLower(component)
}

// registryHost turns the host of a request into the registry part of a
// repository key: without the default HTTPS or HTTP port, and with Docker
// Hub's API hosts as the "docker.io" of references.
func registryHost(hostport string) string {
	host := strings.ToLower(hostport)
	if h, port, err := net.SplitHostPort(host); err == nil && (port == "443" || port == "80") {
		host = h
	}
	switch host {
	case "registry-1.docker.io", "index.docker.io":
		return "docker.io"
	}
	return host
}
