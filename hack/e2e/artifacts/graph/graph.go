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

package graph

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Entry is one folder of the cache, Group/Name, made by Build from its
// Inputs.
type Entry struct {
	Group, Name string
	// Inputs are everything Build reads, by name
	Inputs map[string]Input
	// Build makes the entry in out, an empty folder
	Build func(ctx context.Context, out string) error
	// Valid, when set, also checks an entry whose key matches (a Docker
	// image it describes still being there)
	Valid func(dir string) bool
}

// ID names the entry: group/name.
func (e *Entry) ID() string { return e.Group + "/" + e.Name }

// Graph resolves keys, each input once per run.
type Graph struct {
	mu    sync.Mutex
	memos map[string]string
}

// New returns an empty graph.
func New() *Graph { return &Graph{memos: map[string]string{}} }

func (g *Graph) memoized(k string) (string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	v, ok := g.memos[k]
	return v, ok
}

func (g *Graph) memo(k string, f func() (string, error)) (string, error) {
	if v, ok := g.memoized(k); ok {
		return v, nil
	}
	v, err := f()
	if err != nil {
		return "", err
	}
	g.mu.Lock()
	g.memos[k] = v
	g.mu.Unlock()
	return v, nil
}

// Resolved is one input with its digest.
type Resolved struct {
	Name, Kind, What, Digest string
}

// Resolve resolves every input of e, sorted by name.
func (g *Graph) Resolve(ctx context.Context, e *Entry) ([]Resolved, error) {
	names := make([]string, 0, len(e.Inputs))
	for n := range e.Inputs {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Resolved
	for _, n := range names {
		in := e.Inputs[n]
		d, err := in.Resolve(ctx, g)
		if err != nil {
			return nil, fmt.Errorf("%s: input %s: %w", e.ID(), n, err)
		}
		out = append(out, Resolved{Name: n, Kind: in.Kind(), What: in.String(), Digest: d})
	}
	return out, nil
}

// Key is the entry's key: its name and the digests of its resolved
// inputs, hashed.
func (g *Graph) Key(ctx context.Context, e *Entry) (string, error) {
	return g.memo("entry "+e.ID(), func() (string, error) {
		rs, err := g.Resolve(ctx, e)
		if err != nil {
			return "", err
		}
		parts := []string{e.ID()}
		for _, r := range rs {
			parts = append(parts, r.Name, r.Kind, r.Digest)
		}
		return e.Name + "-" + digest(parts...), nil
	})
}

// Explain says what the key of e is made of: one line per input, with its
// kind, what it names and its digest, then the key.
func (g *Graph) Explain(ctx context.Context, e *Entry) (string, error) {
	rs, err := g.Resolve(ctx, e)
	if err != nil {
		return "", err
	}
	key, err := g.Key(ctx, e)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", e.ID())
	for _, r := range rs {
		fmt.Fprintf(&b, "  %-18s %-12s %s  %s\n", r.Name, r.Kind, r.Digest, r.What)
		// what a Go binary links: the checkout's files one by one
		if p, ok := e.Inputs[r.Name].(GoPackages); ok {
			lines, err := p.Lines(ctx)
			if err != nil {
				return "", err
			}
			modules := 0
			for _, l := range lines {
				if strings.HasPrefix(l, "file ") {
					fmt.Fprintf(&b, "      %s\n", strings.TrimPrefix(l, "file "))
				} else {
					modules++
				}
			}
			fmt.Fprintf(&b, "      and %d modules at their versions\n", modules)
		}
	}
	fmt.Fprintf(&b, "key %s\n", key)
	return b.String(), nil
}
