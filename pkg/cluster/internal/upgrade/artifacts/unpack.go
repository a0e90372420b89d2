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

package artifacts

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"sigs.k8s.io/kind/pkg/errors"
)

// OpenOption configures Open.
type OpenOption func(*ImageDir)

// UnpackTarballIn makes Open, when --image-dir is a release tarball, write
// the binaries and image archives it indexes to a new folder in parent
// ("" for the system's temporary folder) in the same decompression pass,
// so that the tarball is decompressed once per run: every Walk then reads
// those files, as for an unpacked release. Close removes the folder.
// Folders that runs killed before their Close left in parent are removed.
func UnpackTarballIn(parent string) OpenOption {
	return func(s *ImageDir) {
		if parent == "" {
			parent = os.TempDir()
		}
		s.unpackIn = parent
	}
}

// unpackPrefix starts the name of an unpack folder, followed by the pid of
// the run that made it.
const unpackPrefix = "kind-alpha-upgrade-"

// Close removes what Open unpacked, if anything.
func (s *ImageDir) Close() error {
	if s.unpacked == "" {
		return nil
	}
	return errors.Wrapf(os.RemoveAll(s.unpacked), "failed to remove %s", s.unpacked)
}

// makeUnpackDir makes the folder a release tarball is unpacked to, after
// removing those of runs no longer running.
func (s *ImageDir) makeUnpackDir() error {
	removeLeftovers(s.unpackIn)
	dir, err := os.MkdirTemp(s.unpackIn, fmt.Sprintf("%s%d-", unpackPrefix, os.Getpid()))
	if err != nil {
		return errors.Wrapf(err, "failed to make a folder to unpack release tarball %s in (set TMPDIR to a writable folder)", s.tarball)
	}
	s.unpacked = dir
	return nil
}

// removeLeftovers removes the unpack folders in parent whose run no longer
// runs: one killed before it could remove its own.
func removeLeftovers(parent string) {
	matches, _ := filepath.Glob(filepath.Join(parent, unpackPrefix+"*-*"))
	for _, m := range matches {
		pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(filepath.Base(m), unpackPrefix), "-", 2)[0])
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
			_ = os.RemoveAll(m)
		}
	}
}

// unpackWriter writes an entry of the tarball to its file in the unpack
// folder, remembering the first error, so that a full disk is reported as
// such rather than as a damaged tarball.
type unpackWriter struct {
	f   *os.File
	err error
}

func (w *unpackWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.f.Write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}

// unpacking is an entry of the tarball being unpacked to its file while
// Open indexes it.
type unpacking struct {
	a    *Artifact
	path string
	w    *unpackWriter
	// tee reads the entry, writing what it reads to the file
	tee io.Reader
}

// unpack starts unpacking the entry a, read from r, to its file in the
// unpack folder.
func (s *ImageDir) unpack(a *Artifact, r io.Reader) (*unpacking, error) {
	p := filepath.Join(s.unpacked, a.Name)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, errors.Wrapf(err, "failed to unpack %s to %s", a.Path, s.unpacked)
	}
	w := &unpackWriter{f: f}
	return &unpacking{a: a, path: p, w: w, tee: io.TeeReader(r, w)}, nil
}

// writeErr says why writing the file failed, wrapped for the user, or nil.
func (u *unpacking) writeErr() error {
	if u.w.err == nil {
		return nil
	}
	return errors.Wrapf(u.w.err, "failed to unpack %s to %s (it needs about %d MiB free there: set TMPDIR to a folder with room)", u.a.Path, filepath.Dir(u.path), u.a.Size>>20+1)
}

// finish writes the rest of the entry, closes the file and has the
// artifact read from it from then on.
func (u *unpacking) finish() error {
	_, err := io.Copy(io.Discard, u.tee)
	closeErr := u.w.f.Close()
	if werr := u.writeErr(); werr != nil {
		return werr
	}
	if err != nil {
		return errors.Wrapf(err, "failed to read %s (%s)", u.a.Path, tarballHelp)
	}
	if closeErr != nil {
		return errors.Wrapf(closeErr, "failed to unpack %s to %s", u.a.Path, filepath.Dir(u.path))
	}
	u.a.file = u.path
	return nil
}

// abort closes the file after a failure; the folder goes with Close.
func (u *unpacking) abort() {
	_ = u.w.f.Close()
}
