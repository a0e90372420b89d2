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

// Package nodeprovider knows a cluster's node provider once: its command
// (docker, podman, nerdctl, finch, nerdctl.lima), kind's option for it, the
// host's other providers, whose clusters share the host's limits, and the
// advice messages give in its words (the name its commands give an image,
// how to save an archive the nodes can import).
package nodeprovider

import (
	osexec "os/exec"
	"strings"
	"sync"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/errors"
)

// Env selects the node provider, as in kind.
const Env = "KIND_EXPERIMENTAL_PROVIDER"

// provider is one of kind's node providers: its command, what its `-v`
// starts with, and kind's option for it.
type provider struct {
	command, says string
	option        func() kindcluster.ProviderOption
}

// providers are kind's node providers in the order kind detects them.
var providers = []provider{
	{"docker", "Docker version", kindcluster.ProviderWithDocker},
	{"nerdctl", "nerdctl version", func() kindcluster.ProviderOption { return kindcluster.ProviderWithNerdctl("nerdctl") }},
	{"finch", "finch version", func() kindcluster.ProviderOption { return kindcluster.ProviderWithNerdctl("finch") }},
	{"podman", "podman version", kindcluster.ProviderWithPodman},
}

// Commands lists the commands a provider may be named by.
func Commands() []string {
	return []string{"docker", "podman", "nerdctl", "finch", "nerdctl.lima"}
}

// Check refuses a command that names none of kind's providers.
func Check(command string) error {
	for _, c := range Commands() {
		if c == command {
			return nil
		}
	}
	return errors.Errorf("unknown node provider %q: kind's are %s", command, strings.Join(Commands(), ", "))
}

// FromEnv is the provider KIND_EXPERIMENTAL_PROVIDER's value names, "" for
// none (an unknown value is ignored, as kind ignores it).
func FromEnv(value string) string {
	if Check(value) != nil {
		return ""
	}
	return value
}

// Host is what the host's tools say of themselves, asked once per process
// and only when needed: which of kind's providers' CLIs answer `-v` as
// that tool (a docker that is podman's shim does not).
type Host struct {
	once    sync.Once
	present map[string]bool
	// says runs `command -v`; the real tool when nil (tests replace it)
	says func(command string) string
}

// DefaultHost is this process's host.
var DefaultHost = &Host{}

// NewHost returns a Host whose tools are asked through says, which returns
// the one line `command -v` prints ("" when it fails): for tests.
func NewHost(says func(command string) string) *Host {
	return &Host{says: says}
}

func (h *Host) probe() {
	h.once.Do(func() {
		says := h.says
		if says == nil {
			says = versionLine
		}
		h.present = map[string]bool{}
		for _, p := range providers {
			line := says(p.command)
			h.present[p.command] = strings.HasPrefix(line, p.says)
		}
	})
}

// Detect names the provider kind picks when it is not told which: env
// (KIND_EXPERIMENTAL_PROVIDER's value) when it names one, else the first
// of docker, nerdctl, finch and podman that answers as itself, else
// docker. The tools are asked at most once per Host.
func (h *Host) Detect(env string) string {
	if p := FromEnv(env); p != "" {
		return p
	}
	h.probe()
	for _, p := range providers {
		if h.present[p.command] {
			return p.command
		}
	}
	return "docker"
}

// Others returns kind's providers for the host's providers other than
// current (whose CLI answers as itself), asked at most once per Host.
func (h *Host) Others(current string) []*kindcluster.Provider {
	h.probe()
	// nerdctl's other names are nerdctl's clusters too
	if current == "nerdctl.lima" {
		current = "nerdctl"
	}
	var out []*kindcluster.Provider
	for _, p := range providers {
		if p.command != current && h.present[p.command] {
			out = append(out, kindcluster.NewProvider(p.option()))
		}
	}
	return out
}

// versionLine is the one line `command -v` prints, "" when it fails or
// prints more.
func versionLine(command string) string {
	out, err := osexec.Command(command, "-v").Output()
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 1 {
		return ""
	}
	return lines[0]
}

// ImageName is the name the provider's commands get for the image ref,
// the name kind create cluster gives it with that provider: kind's podman
// provider completes a name without a registry with docker.io/ (and
// library/ without a repository), as Docker does by itself, so that
// `podman pull kindest/node:v1.37.0` and kind agree on one image whatever
// podman's short-name settings; the other providers get ref unchanged.
func ImageName(command, ref string) string {
	if command != "podman" {
		return ref
	}
	first, _, hasSlash := strings.Cut(ref, "/")
	if hasSlash && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return ref
	}
	if !hasSlash {
		ref = "library/" + ref
	}
	return "docker.io/" + ref
}

// SaveCommand is the command that writes an image archive the nodes of
// architecture arch can import, with the provider's CLI. Docker's and
// nerdctl's need --platform: with its containerd image store (the default
// since Docker 29), a plain docker save of an image pulled for one
// platform writes a multi-platform index without the other platforms'
// content, and nerdctl (containerd's store) does the same. Podman's store
// keeps the one platform it pulled, which podman save writes.
func SaveCommand(command, arch string) string {
	if arch != "" {
		switch command {
		case "docker":
			return "docker image save --platform linux/" + arch + " -o <dir>/<name>.tar <image>"
		case "nerdctl", "finch", "nerdctl.lima":
			return command + " save --platform linux/" + arch + " -o <dir>/<name>.tar <image>"
		}
	}
	return command + " save -o <dir>/<name>.tar <image>"
}
