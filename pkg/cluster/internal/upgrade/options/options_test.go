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

package options

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMessagesNameTheChoicesAsTheCallerKnowsThem: the command's flags by
// default, the Go API's options with GoNames.
func TestMessagesNameTheChoicesAsTheCallerKnowsThem(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "nope")
	for _, tc := range []struct {
		name    string
		goNames bool
		modify  func(*Upgrade)
		want    string
	}{
		{"no target, flags", false, func(*Upgrade) {}, "--image or --image-dir is required"},
		{"no target, options", true, func(*Upgrade) {}, "UpgradeWithImage or UpgradeWithImageDir is required"},
		{"a missing folder, options", true, func(o *Upgrade) { o.ImageDir = missing }, "UpgradeWithImageDir " + missing + " does not exist"},
		{"a bad pull policy, flags", false, func(o *Upgrade) { o.ImageDir = missing; o.PullPolicy = "Always" }, "--image-pull-policy must be IfNotPresent or Never"},
		{"a bad pull policy, options", true, func(o *Upgrade) { o.ImageDir = missing; o.PullPolicy = "Always" }, "UpgradeWithImagePullPolicy must be IfNotPresent or Never"},
		{"a patch version to emulate, options", true, func(o *Upgrade) { o.EmulatedVersion = "1.35.1" }, `UpgradeWithEmulatedVersion must be a Kubernetes minor version such as 1.35`},
		{"forward compatible without an emulation, options", true, func(o *Upgrade) {
			on := true
			o.EmulatedVersion, o.EmulationForwardCompatible = EmulationNone, &on
		}, "UpgradeWithEmulationForwardCompatible=true needs an emulation: it cannot go with UpgradeWithEmulatedVersion=none"},
		{"missing patches, flags", false, func(o *Upgrade) { o.Patches = missing }, "--patches " + missing + " cannot be read"},
		{"patches that are a file, options", true, func(o *Upgrade) { o.Patches = "options_test.go" }, "UpgradeWithPatches options_test.go is not a folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := Defaults()
			o.GoNames = tc.goNames
			tc.modify(&o)
			if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
	for c := range names {
		if flag, option := (Upgrade{}).Name(c), (Upgrade{GoNames: true}).Name(c); !strings.HasPrefix(flag, "--") || !strings.HasPrefix(option, "UpgradeWith") {
			t.Errorf("choice %d is named %q and %q", c, flag, option)
		}
	}
}
