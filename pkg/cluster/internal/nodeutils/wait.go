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

package nodeutils

import (
	"context"
	stderrors "errors"
	"time"

	"sigs.k8s.io/kind/pkg/errors"
)

// permanentError is an error of a wait's condition that no later poll can
// change.
type permanentError struct{ err error }

func (p permanentError) Error() string { return p.err.Error() }
func (p permanentError) Unwrap() error { return p.err }

// Permanent marks err as final: WaitFor returns it at once instead of
// polling on (the kubelet it waits for keeps exiting, say).
func Permanent(err error) error {
	return permanentError{err: err}
}

// WaitFor calls cond every interval until it reports true, the context is
// done or timeout passes. cond runs under a context that ends at the
// deadline: a poll that retries, or a command that hangs, stops there
// instead of running past it. Errors from cond are treated as transient (the
// API server restarting, say): polling goes on and the last one is reported
// if the deadline passes, unless cond marks one Permanent: that one ends
// the wait at once. When ctx is cancelled first, the error says the wait
// was cancelled, not that it timed out.
func WaitFor(ctx context.Context, interval, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) error {
	parent := ctx
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var lastErr error
	expired := func() error {
		if parent.Err() != nil {
			// the caller gave up (Ctrl-C, a cancelled context), not the wait
			return errors.Wrapf(parent.Err(), "cancelled while waiting for %s", what)
		}
		if lastErr != nil {
			return errors.Wrapf(lastErr, "timed out after %s waiting for %s", timeout, what)
		}
		return errors.Errorf("timed out after %s waiting for %s", timeout, what)
	}
	for {
		ok, err := cond(ctx)
		if err == nil && ok {
			return nil
		}
		if err != nil {
			var final permanentError
			if stderrors.As(err, &final) {
				return final.err
			}
			// a poll the deadline cut short says less than the one before
			if ctx.Err() == nil || lastErr == nil {
				lastErr = err
			}
		}
		// checked before the select, which picks at random among ready
		// cases: a tick must not poll again once the wait is over
		if ctx.Err() != nil {
			return expired()
		}
		select {
		case <-ctx.Done():
			return expired()
		case <-ticker.C:
		}
	}
}
