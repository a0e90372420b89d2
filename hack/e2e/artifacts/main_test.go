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

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSONField: top-level and dotted keys, strings without their quotes,
// other values as JSON prints them, and a clear error for a missing field
// or a key through a non-object.
func TestJSONField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(path, []byte(`{"to": {"binary": "/b/conformance.test", "n": 3}, "total": 12.5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"to.binary": "/b/conformance.test", "to.n": "3", "total": "12.5"} {
		got, err := jsonField(path, key)
		if err != nil || len(got) != 1 || got[0] != want {
			t.Errorf("jsonField(%s) = %q, %v; want %q", key, got, err, want)
		}
	}
	for key, want := range map[string]string{"to.image": "has no field to.image", "total.x": "total.x is not an object", "from": "has no field from"} {
		if _, err := jsonField(path, key); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("jsonField(%s): error %v, want one saying %q", key, err, want)
		}
	}
}
