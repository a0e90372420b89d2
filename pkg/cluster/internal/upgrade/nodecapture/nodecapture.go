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

// Package nodecapture gives tests the output captured from real kind nodes
// in ../testdata/nodes (see its README.md): what the commands the upgrade
// parses printed before and after a real upgrade.
package nodecapture

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Before and After are the versions of the two captures: right after
// `kind create cluster`, and right after `kind alpha upgrade` of the same
// cluster.
const (
	Before = "v1.33.13"
	After  = "v1.34.4"
)

// KubeletRestart is the capture of a control-plane node's kubelet restart
// (see kubelet-restart/SOURCE.txt): what the kubelet's /pods and the API
// server showed of its static pods before, during and after.
const KubeletRestart = "kubelet-restart"

// KubeletInotify is the capture of what the inotify check and the kubelet
// watch read on real nodes (see kubelet-inotify/SOURCE.txt): each node's
// inotify listing, the kubelet's unit state, and the journal of a kubelet
// restarted on a host whose inotify instances were exhausted.
const KubeletInotify = "kubelet-inotify"

// Versions lists both captures.
var Versions = []string{Before, After}

// Read returns the captured file name of the capture at version.
func Read(t testing.TB, version, name string) []byte {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the node captures")
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(self), "..", "testdata", "nodes", version, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Lines returns the captured file's lines.
func Lines(t testing.TB, version, name string) []string {
	t.Helper()
	return strings.Split(strings.TrimSpace(string(Read(t, version, name))), "\n")
}
