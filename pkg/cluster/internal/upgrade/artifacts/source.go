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

// The methods that, with Walk, ArchiveFor, Describe and Close, make an
// ImageDir a source.Source.

// Name is "--image-dir <path>".
func (s *ImageDir) Name() string {
	return s.name() + " " + s.Path
}

// Version is "": a folder says its version through its kubeadm only.
func (s *ImageDir) Version() string {
	return ""
}

// Binary returns kubeadm, kubelet or kubectl, nil for a folder opened with
// OpenArchives.
func (s *ImageDir) Binary(name string) *Artifact {
	return s.Binaries[name]
}

// Lacks is "": a folder holds what the user put in it.
func (s *ImageDir) Lacks(string) string {
	return ""
}

// ForArch names the release for arch.
func (s *ImageDir) ForArch(arch string) string {
	return "use the linux/" + arch + " release"
}
