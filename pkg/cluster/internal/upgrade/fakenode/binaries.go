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

package fakenode

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
)

// Images kubeadm lists for each minor version, as the real kubeadm does.
var kubeadmImages = map[string]struct{ etcd, coredns, pause string }{
	"1.32": {"3.5.24-0", "v1.11.3", "3.10"},
	"1.33": {"3.5.24-0", "v1.12.0", "3.10"},
	"1.34": {"3.6.5-0", "v1.12.1", "3.10.1"},
	"1.35": {"3.6.6-0", "v1.13.1", "3.10.1"},
	"1.36": {"3.6.8-0", "v1.14.2", "3.10.2"},
	"1.37": {"3.7.0-0", "v1.14.6", "3.10.2"},
}

// ImageConfig is what a cluster's ClusterConfiguration says about kubeadm's
// images (a kind user changes it with kubeadmConfigPatches); the zero value
// is kubeadm's defaults.
type ImageConfig struct {
	// Repository is imageRepository (default registry.k8s.io).
	Repository string
	// EtcdRepository and EtcdTag are etcd.local's imageRepository and
	// imageTag.
	EtcdRepository, EtcdTag string
	// DNSRepository and DNSTag are dns's imageRepository and imageTag.
	DNSRepository, DNSTag string
}

// KubeadmImages returns `kubeadm config images list` for version (e.g.
// "v1.34.4") and a cluster's image settings, with the real kubeadm's rules:
// etcd and CoreDNS use the cluster's repository unless their own is set,
// CoreDNS in the default repository lives under coredns/, and a set tag
// replaces the one kubeadm pairs with version.
func KubeadmImages(version string, cfg ImageConfig) []string {
	repository := cfg.Repository
	if repository == "" {
		repository = "registry.k8s.io"
	}
	v := kubeadmImages[minor(version)]
	etcdRepository, etcdTag := or(cfg.EtcdRepository, repository), or(cfg.EtcdTag, v.etcd)
	dnsRepository, dnsTag := or(cfg.DNSRepository, repository), or(cfg.DNSTag, v.coredns)
	if dnsRepository == "registry.k8s.io" {
		dnsRepository += "/coredns"
	}
	return []string{
		repository + "/kube-apiserver:" + version,
		repository + "/kube-controller-manager:" + version,
		repository + "/kube-scheduler:" + version,
		repository + "/kube-proxy:" + version,
		dnsRepository + "/coredns:" + dnsTag,
		repository + "/pause:" + v.pause,
		etcdRepository + "/etcd:" + etcdTag,
	}
}

// or returns value, or fallback when value is empty.
func or(value, fallback string) string {
	if value == "" {
		return fallback
	}
	return value
}

// minor returns "1.34" for "v1.34.4".
func minor(version string) string {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 {
		return version
	}
	return parts[0] + "." + parts[1]
}

// Binary returns a fake Kubernetes binary: an ELF header for arch (amd64 or
// arm64) followed by a marker naming the binary and its version, which the
// fake nodes read when the binary is "run".
func Binary(name, version, arch string) []byte {
	var b bytes.Buffer
	header := make([]byte, 64)
	copy(header, []byte{0x7f, 'E', 'L', 'F', 2, 1, 1})
	machine := uint16(62) // EM_X86_64
	if arch == "arm64" {
		machine = 183 // EM_AARCH64
	}
	binary.LittleEndian.PutUint16(header[16:], 2) // ET_EXEC
	binary.LittleEndian.PutUint16(header[18:], machine)
	b.Write(header)
	fmt.Fprintf(&b, "\nfake-binary %s %s\n", name, version)
	return b.Bytes()
}

// parseBinary reads the marker Binary writes.
func parseBinary(content []byte) (name, version string, ok bool) {
	i := bytes.Index(content, []byte("\nfake-binary "))
	if i < 0 {
		return "", "", false
	}
	fields := strings.Fields(string(content[i+1:]))
	if len(fields) < 3 {
		return "", "", false
	}
	return fields[1], fields[2], true
}
