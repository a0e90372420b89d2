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

// Package host is what the lab's recipes share: the type that marks a
// path of this machine an input, the commands they run and the locks
// they take. A recipe reads nothing of the host but the Paths of its spec
// (the lab checks that each is a declared input) and no environment
// variable (a test checks the recipes' code): what it needs is in its
// spec.
package host

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Path is a file or folder of this machine that a recipe reads. Every
// Path in a spec must lie in one of its entry's declared inputs.
type Path string

// Join is a path below p.
func (p Path) Join(elem ...string) string {
	return filepath.Join(append([]string{string(p)}, elem...)...)
}

type loggerKey struct{}

// WithLogger returns a context whose recipes say what they do with logf.
func WithLogger(ctx context.Context, logf func(format string, args ...interface{})) context.Context {
	return context.WithValue(ctx, loggerKey{}, logf)
}

// Logf says what a recipe is doing, through the context's logger.
func Logf(ctx context.Context, format string, args ...interface{}) {
	if logf, ok := ctx.Value(loggerKey{}).(func(string, ...interface{})); ok {
		logf(format, args...)
	}
}

// Command is a command to run: Dir and Env (added to the process's) are
// optional, Stdin too.
type Command struct {
	Dir   string
	Env   []string
	Stdin io.Reader
	Name  string
	Args  []string
}

// Cmd is a command with no folder, environment or input of its own.
func Cmd(name string, args ...string) Command { return Command{Name: name, Args: args} }

func (c Command) String() string { return strings.TrimSpace(c.Name + " " + strings.Join(c.Args, " ")) }

// Output runs c and returns its standard output, trimmed; an error quotes
// the end of its standard error.
func Output(ctx context.Context, c Command) (string, error) {
	cmd := exec.CommandContext(ctx, c.Name, c.Args...)
	cmd.Dir = c.Dir
	if len(c.Env) > 0 {
		cmd.Env = append(os.Environ(), c.Env...)
	}
	if c.Stdin != nil {
		cmd.Stdin = c.Stdin
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w: %s", c, err, tail(stderr.String(), 4000))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// Run runs c, discarding its output unless it fails.
func Run(ctx context.Context, c Command) error {
	_, err := Output(ctx, c)
	return err
}

// Reports fails unless c's output (standard output and error together)
// contains want: a built binary's self-check.
func Reports(ctx context.Context, want string, c Command) error {
	cmd := exec.CommandContext(ctx, c.Name, c.Args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s failed: %w: %s", c, err, tail(string(out), 2000))
	}
	if !strings.Contains(string(out), want) {
		return fmt.Errorf("%s does not report %q: %s", c, want, tail(string(out), 2000))
	}
	return nil
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// WithFileLock runs f holding an exclusive flock on the file at path
// (created if missing); it says so when it has to wait.
func WithFileLock(ctx context.Context, path string, f func() error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	file, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("failed to open the lock %s: %w", path, err)
	}
	defer file.Close()
	if syscall.Flock(int(file.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		start := time.Now()
		Logf(ctx, "waiting for the lock %s", path)
		if err := syscall.Flock(int(file.Fd()), syscall.LOCK_EX); err != nil {
			return fmt.Errorf("failed to lock %s: %w", path, err)
		}
		Logf(ctx, "got the lock %s after %s", path, time.Since(start).Round(time.Second))
	}
	defer syscall.Flock(int(file.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing releases it too
	return f()
}

// LinkOrCopy hard-links src to dst (cache entries are immutable), or
// copies it across file systems.
func LinkOrCopy(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	_ = os.Remove(dst)
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := out.ReadFrom(in); err != nil {
		out.Close()
		return fmt.Errorf("failed to copy %s to %s: %w", src, dst, err)
	}
	return out.Close()
}
