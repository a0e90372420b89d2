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
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Stamp is the file in an entry's folder that holds its key: an entry is
// complete when its stamp equals its key.
const Stamp = ".e2e-stamp"

// Store is the cache folder: Dir/GROUP/NAME per entry, built in Dir/tmp
// and renamed into place under Dir/locks/GROUP_NAME.lock, so that a
// concurrent run waits and reuses the result and an interrupted build
// leaves only a tmp folder, which the entry's next builder removes.
type Store struct {
	Dir   string
	Graph *Graph
	// Logf says what is being built and how long it took
	Logf func(format string, args ...interface{})
	// Tick is how often a build in progress says so (default 30s)
	Tick time.Duration
}

func (s *Store) logf(format string, args ...interface{}) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

// Path is where the entry lives.
func (s *Store) Path(e *Entry) string { return filepath.Join(s.Dir, e.Group, e.Name) }

func (s *Store) current(dir, key string, e *Entry) bool {
	stamp, err := os.ReadFile(filepath.Join(dir, Stamp))
	if err != nil || string(stamp) != key {
		return false
	}
	return e.Valid == nil || e.Valid(dir)
}

// Ensure returns the folder of e, built unless it is current.
func (s *Store) Ensure(ctx context.Context, e *Entry) (string, error) {
	key, err := s.Graph.Key(ctx, e)
	if err != nil {
		return "", err
	}
	dir := s.Path(e)
	if s.current(dir, key, e) {
		return dir, nil
	}
	prefix := strings.ReplaceAll(e.Group, "/", "_") + "_" + e.Name
	for _, d := range []string{filepath.Join(s.Dir, "locks"), filepath.Join(s.Dir, "tmp"), filepath.Dir(dir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
	}
	unlock, err := s.lock(filepath.Join(s.Dir, "locks", prefix+".lock"), e)
	if err != nil {
		return "", err
	}
	defer unlock()
	if s.current(dir, key, e) {
		return dir, nil
	}
	// the lock is ours: any tmp folder of this entry is a leftover
	olds, _ := filepath.Glob(filepath.Join(s.Dir, "tmp", prefix+".*"))
	for _, old := range olds {
		s.logf("removing leftover %s", old)
		if err := removeAll(old); err != nil {
			return "", err
		}
	}
	tmp, err := os.MkdirTemp(filepath.Join(s.Dir, "tmp"), prefix+".build.")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	s.logf("building %s (key %s)", e.ID(), key)
	start := time.Now()
	stop := s.ticker(e, start)
	err = e.Build(ctx, tmp)
	stop()
	if err != nil {
		return "", fmt.Errorf("building %s failed (partial result left in %s): %w", e.ID(), tmp, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, Stamp), []byte(key), 0o644); err != nil {
		return "", err
	}
	if _, err := os.Stat(dir); err == nil {
		old := filepath.Join(s.Dir, "tmp", fmt.Sprintf("%s.old.%d", prefix, os.Getpid()))
		if err := os.Rename(dir, old); err != nil {
			return "", err
		}
		defer os.RemoveAll(old)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	s.logf("built %s in %s", e.ID(), time.Since(start).Round(time.Second))
	return dir, nil
}

// Lock takes the lock locks/NAME.lock of the store, for work that is not
// an entry (installing host packages).
func (s *Store) Lock(name string) (func(), error) {
	if err := os.MkdirAll(filepath.Join(s.Dir, "locks"), 0o755); err != nil {
		return nil, err
	}
	return s.lock(filepath.Join(s.Dir, "locks", name+".lock"), &Entry{Group: "lock", Name: name})
}

// lock takes the entry's lock, saying so when another run holds it.
func (s *Store) lock(path string, e *Entry) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		s.logf("waiting for another run building %s", e.ID())
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("failed to lock %s: %w", path, err)
		}
	}
	return func() { f.Close() }, nil
}

// ticker says, while a build of minutes runs, that it is still at work.
func (s *Store) ticker(e *Entry, start time.Time) func() {
	tick := s.Tick
	if tick == 0 {
		tick = 30 * time.Second
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				s.logf("still building %s (%s)", e.ID(), time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() { close(done) }
}

// removeAll removes a leftover build folder, unmounting first what an
// interrupted debootstrap left mounted under it.
func removeAll(dir string) error {
	if f, err := os.Open("/proc/self/mountinfo"); err == nil {
		var mounts []string
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) > 4 && strings.HasPrefix(fields[4], dir+"/") {
				mounts = append(mounts, fields[4])
			}
		}
		f.Close()
		sort.Sort(sort.Reverse(sort.StringSlice(mounts)))
		for _, m := range mounts {
			_ = syscall.Unmount(m, syscall.MNT_DETACH)
		}
	}
	return os.RemoveAll(dir)
}
