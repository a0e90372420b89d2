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

package actions

import (
	"sync"

	"sigs.k8s.io/kind/pkg/errors"
)

// Gate is work a phase left running beside the next ones (Context.Go) that
// a later step must wait for before it touches the same node: it opens
// once, when the work ends, with the work's error.
type Gate struct {
	once sync.Once
	done chan struct{}
	err  error
}

// NewGate returns a closed gate.
func NewGate() *Gate {
	return &Gate{done: make(chan struct{})}
}

// Open opens the gate with the work's outcome; later calls change
// nothing.
func (g *Gate) Open(err error) {
	g.once.Do(func() {
		g.err = err
		close(g.done)
	})
}

// Wait waits until the gate opens and returns the work's error, or until
// ctx is cancelled.
func (g *Gate) Wait(ctx *Context) error {
	select {
	case <-g.done:
		return g.err
	case <-ctx.Done():
		return errors.Wrap(ctx.Err(), "cancelled while waiting for work beside")
	}
}

// Ended waits until the gate opens, however long, and returns the work's
// error: for a caller that must not return while the work runs (work that
// ends by itself when the run is cancelled).
func (g *Gate) Ended() error {
	<-g.done
	return g.err
}

// Opened reports, without waiting, whether the gate has opened, and with
// which error.
func (g *Gate) Opened() (bool, error) {
	select {
	case <-g.done:
		return true, g.err
	default:
		return false, nil
	}
}
