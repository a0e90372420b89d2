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

// Package nodeimage reads an upgrade's target from a kind node image
// (--image): the Kubernetes version of its /kind/version, the kubeadm,
// kubelet and kubectl of its /usr/bin, and the images kind's builder
// imported into its containerd store, each streamed, never copied to the
// host's disk.
//
// The image is read through a helper container of it, run by the node
// provider's own command (docker, podman, nerdctl) with the image's own
// containerd as its only process, as kind's builder runs it while it
// imports the images. Everything is read with the provider's copy command
// (the output of an exec can lose its end): a script writes the image's
// description to files, the binaries are copied straight from the image's
// layer, and each image is exported by the helper's containerd to a file
// of the helper (`ctr images export`) and copied out as the archive the
// nodes import. The helper has no network and is removed by Close; one
// left by a killed run is removed by the next run for the same cluster
// (it carries HelperLabel).
package nodeimage
