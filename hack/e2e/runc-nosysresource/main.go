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

// Command runc-nosysresource stands in for runc on hosts whose capability
// bounding set lacks CAP_SYS_RESOURCE. It removes that capability from the
// OCI spec it is about to hand to runc (the bundle's config.json for create
// and run, the --process file for exec) and then execs the real runc with
// the unchanged arguments. Everything else passes straight through.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

const dropped = "CAP_SYS_RESOURCE"

// globalsWithValue are runc's global flags that take a separate value.
var globalsWithValue = map[string]bool{
	"--root": true, "--log": true, "--log-format": true, "--criu": true,
	"--rootless": true,
}

func main() {
	runc := findRunc()
	args := os.Args[1:]
	if err := rewrite(args); err != nil {
		fmt.Fprintf(os.Stderr, "runc-nosysresource: %v\n", err)
		os.Exit(1)
	}
	argv := append([]string{runc}, args...)
	if err := syscall.Exec(runc, argv, os.Environ()); err != nil {
		fmt.Fprintf(os.Stderr, "runc-nosysresource: exec %s: %v\n", runc, err)
		os.Exit(1)
	}
}

func findRunc() string {
	if p := os.Getenv("RUNC_NOSYSRESOURCE_REAL"); p != "" {
		return p
	}
	self, _ := os.Executable()
	for _, p := range []string{"/usr/sbin/runc", "/usr/bin/runc", "/usr/local/sbin/runc"} {
		if p == self {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "/usr/sbin/runc"
}

// rewrite finds the subcommand and the spec file it will read, if any.
func rewrite(args []string) error {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if globalsWithValue[args[i]] {
			i++
		}
		i++
	}
	if i >= len(args) {
		return nil
	}
	cmd, rest := args[i], args[i+1:]
	switch cmd {
	case "create", "run":
		bundle := flagValue(rest, "--bundle", "-b")
		if bundle == "" {
			bundle = "."
		}
		return stripFile(filepath.Join(bundle, "config.json"), true)
	case "exec":
		if p := flagValue(rest, "--process", "-p"); p != "" {
			return stripFile(p, false)
		}
	}
	return nil
}

// flagValue returns the value of a flag given as "--f v", "--f=v" or "-f v".
func flagValue(args []string, names ...string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, n := range names {
			if a == n && i+1 < len(args) {
				return args[i+1]
			}
			if strings.HasPrefix(a, n+"=") {
				return strings.TrimPrefix(a, n+"=")
			}
		}
	}
	return ""
}

// stripFile removes the capability from a spec (full=true: the process is
// under "process") or a bare process JSON, rewriting the file only if needed.
func stripFile(path string, full bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	proc := doc
	if full {
		p, ok := doc["process"].(map[string]any)
		if !ok {
			return nil
		}
		proc = p
	}
	caps, ok := proc["capabilities"].(map[string]any)
	if !ok {
		return nil
	}
	changed := false
	for set, v := range caps {
		list, ok := v.([]any)
		if !ok {
			continue
		}
		kept := make([]any, 0, len(list))
		for _, c := range list {
			if s, ok := c.(string); ok && s == dropped {
				changed = true
				continue
			}
			kept = append(kept, c)
		}
		caps[set] = kept
	}
	if !changed {
		return nil
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp := path + ".nosysresource"
	if err := os.WriteFile(tmp, out, info.Mode().Perm()); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
