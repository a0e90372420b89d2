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
	"archive/tar"
	"context"
	"io"
	"os"

	"sigs.k8s.io/kind/pkg/errors"
)

// Walk calls fn for each artifact for which want returns true (all of them
// when want is nil), in storage order, with a reader of its content that is
// valid only until fn returns and that fn must not close: the *os.File of a
// host file, or the entry of a release tarball. The tarball is decompressed
// at most once per Walk, and only if an artifact in it is wanted and was not
// unpacked by Open (UnpackTarballIn); files are opened one at a time;
// nothing is copied to disk. Walk returns the first
// error: fn's errors unchanged, unless reading the tarball itself failed.
// Walks may run concurrently. Cancelling ctx stops a Walk within a few
// kilobytes of the tarball, or before the next host file; a file already
// handed to fn is fn's to stop.
func (s *ImageDir) Walk(ctx context.Context, want func(*Artifact) bool, fn func(a *Artifact, r io.Reader) error) error {
	inTarball := map[string]*Artifact{}
	var files []*Artifact
	for _, a := range s.ordered() {
		if want != nil && !want(a) {
			continue
		}
		if a.entry != "" && a.file == "" {
			inTarball[a.entry] = a
			continue
		}
		files = append(files, a)
	}
	// storage order puts the tarball's entries before any host file
	if len(inTarball) > 0 {
		if err := s.walkTarball(ctx, inTarball, fn); err != nil {
			return err
		}
	}
	for _, a := range files {
		if ctx.Err() != nil {
			return errors.Wrapf(ctx.Err(), "cancelled before reading %s", a.Path)
		}
		if err := walkFile(a, fn); err != nil {
			return err
		}
	}
	return nil
}

// walkTarball hands fn the wanted entries of the tarball in one pass, which
// ends as soon as the last one has been handed.
func (s *ImageDir) walkTarball(ctx context.Context, wanted map[string]*Artifact, fn func(a *Artifact, r io.Reader) error) error {
	err := s.tarballPass(ctx, s.tarball, func(hdr *tar.Header, r io.Reader) error {
		a := wanted[hdr.Name]
		if a == nil || hdr.Typeflag != tar.TypeReg {
			return nil
		}
		delete(wanted, hdr.Name)
		if hdr.Size != a.Size {
			return changed(s.tarball)
		}
		if err := fn(a, r); err != nil {
			return err
		}
		if len(wanted) == 0 {
			return errStop
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(wanted) > 0 {
		return changed(s.tarball)
	}
	return nil
}

// walkFile hands fn the content of a host file.
func walkFile(a *Artifact, fn func(a *Artifact, r io.Reader) error) error {
	p := a.file
	if p == "" {
		// an Artifact built outside Open: its Path is the file
		p = a.Path
	}
	f, err := os.Open(p)
	if err != nil {
		return errors.Wrapf(err, "failed to open %s", a.Path)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return errors.Wrapf(err, "failed to read %s", a.Path)
	}
	if a.file != "" && info.Size() != a.Size {
		return changed(a.Path)
	}
	// hand the *os.File itself: os/exec gives a file used as a command's
	// stdin straight to the child, with no copy through this process
	return fn(a, f)
}

// changed is the error for a file that is no longer what Open indexed.
func changed(path string) error {
	return errors.Errorf("%s changed after it was checked: run the command again", path)
}
