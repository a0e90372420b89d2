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
// bounding set lacks CAP_SYS_RESOURCE. In the OCI spec it is about to hand
// to runc (the bundle's config.json for create and run, the --process file
// for exec) it removes that capability, and lowers each of the process's
// rlimits whose hard limit is above its own to its own (raising a hard
// limit needs CAP_SYS_RESOURCE: podman asks for RLIMIT_NOFILE 1048576),
// then execs the real runc with the unchanged arguments. Everything else
// passes straight through.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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

// rewrite adjusts the spec file the subcommand will read, if any, to this
// process's limits.
func rewrite(args []string) error {
	return rewriteWith(args, hostLimit)
}

// rewriteWith finds the subcommand and the spec file it will read, if any,
// and adjusts it to limit.
func rewriteWith(args []string, limit func(resource int) (uint64, bool)) error {
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
		return adjustFile(filepath.Join(bundle, "config.json"), true, limit)
	case "exec":
		if p := flagValue(rest, "--process", "-p"); p != "" {
			return adjustFile(p, false, limit)
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

// adjustFile removes the capability from a spec (full=true: the process is
// under "process") or a bare process JSON and clamps its rlimits to what
// limit (the limit this process holds, by resource) allows, rewriting the
// file only if needed.
func adjustFile(path string, full bool, limit func(resource int) (uint64, bool)) error {
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
	changed, err := clampRlimits(proc, limit)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if caps, ok := proc["capabilities"].(map[string]any); ok {
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

// resources are the Linux rlimit numbers of the OCI spec's names.
var resources = map[string]int{
	"RLIMIT_CPU": 0, "RLIMIT_FSIZE": 1, "RLIMIT_DATA": 2, "RLIMIT_STACK": 3,
	"RLIMIT_CORE": 4, "RLIMIT_RSS": 5, "RLIMIT_NPROC": 6, "RLIMIT_NOFILE": 7,
	"RLIMIT_MEMLOCK": 8, "RLIMIT_AS": 9, "RLIMIT_LOCKS": 10,
	"RLIMIT_SIGPENDING": 11, "RLIMIT_MSGQUEUE": 12, "RLIMIT_NICE": 13,
	"RLIMIT_RTPRIO": 14, "RLIMIT_RTTIME": 15,
}

// hostLimit is the hard limit of resource this process holds.
func hostLimit(resource int) (uint64, bool) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(resource, &l); err != nil {
		return 0, false
	}
	return l.Max, true
}

// clampRlimits lowers each of proc's rlimits whose hard limit is above
// limit's to it (and the soft limit to at most the hard one). It reports
// whether it changed any.
func clampRlimits(proc map[string]any, limit func(resource int) (uint64, bool)) (bool, error) {
	list, ok := proc["rlimits"].([]any)
	if !ok {
		return false, nil
	}
	changed := false
	for _, v := range list {
		rl, ok := v.(map[string]any)
		if !ok {
			continue
		}
		name, _ := rl["type"].(string)
		resource, known := resources[name]
		if !known {
			continue
		}
		ceiling, ok := limit(resource)
		if !ok {
			continue
		}
		hard, err := number(rl["hard"])
		if err != nil {
			return false, fmt.Errorf("%s hard: %w", name, err)
		}
		soft, err := number(rl["soft"])
		if err != nil {
			return false, fmt.Errorf("%s soft: %w", name, err)
		}
		if hard > ceiling {
			rl["hard"] = ceiling
			hard = ceiling
			changed = true
		}
		if soft > hard {
			rl["soft"] = hard
			changed = true
		}
	}
	return changed, nil
}

// number reads an rlimit value of the spec (an unsigned integer).
func number(v any) (uint64, error) {
	switch n := v.(type) {
	case nil:
		return 0, nil
	case json.Number:
		return strconv.ParseUint(n.String(), 10, 64)
	case uint64:
		return n, nil
	}
	return 0, fmt.Errorf("not a number: %v", v)
}
