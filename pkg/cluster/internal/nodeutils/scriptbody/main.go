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

// Command scriptbody prints the body of a registered node script
// (nodeutils.Scripts) by name, or lists the names: for scripts that run a
// script by hand on a node exactly as the tool does.
package main

import (
	"fmt"
	"os"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/nodeutils"
)

func main() {
	if len(os.Args) != 2 {
		for _, s := range nodeutils.Scripts() {
			fmt.Println(s.Name)
		}
		return
	}
	s, ok := nodeutils.ScriptNamed(os.Args[1])
	if !ok {
		fmt.Fprintf(os.Stderr, "no script %q: %s lists them\n", os.Args[1], os.Args[0])
		os.Exit(1)
	}
	fmt.Print(s.Body)
}
