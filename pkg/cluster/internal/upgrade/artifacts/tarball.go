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
	"compress/gzip"
	"context"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/kind/pkg/errors"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts/elfarch"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts/imagearchive"
)

// tarballBinDirs are where a release tarball keeps its binaries.
var tarballBinDirs = []string{"kubernetes/server/bin/", "server/bin/"}

// tarballHelp ends the errors about a damaged release tarball.
const tarballHelp = "the file is truncated or corrupt: download kubernetes-server-linux-<arch>.tar.gz again"

// errStop ends a tarball pass early without an error.
var errStop = errors.NewWithoutStack("stop")

// tarballPass decompresses the tarball once and calls visit for each entry
// with a reader of its content. visit returns errStop to end the pass.
// A pass that reads to the end also verifies the gzip checksum. Cancelling
// ctx stops the pass at the next entry or its next read of the file, a few
// kilobytes on, whichever comes first.
func (s *ImageDir) tarballPass(ctx context.Context, tarball string, visit func(hdr *tar.Header, r io.Reader) error) error {
	f, err := os.Open(tarball)
	if err != nil {
		return errors.Wrapf(err, "failed to open release tarball %s", tarball)
	}
	defer f.Close()
	s.passes.Add(1)
	damaged := func(err error) error {
		if ctx.Err() != nil {
			return errors.Wrapf(ctx.Err(), "cancelled while reading release tarball %s", tarball)
		}
		return errors.Wrapf(err, "failed to read release tarball %s (%s)", tarball, tarballHelp)
	}
	gz, err := gzip.NewReader(ctxReader{ctx: ctx, r: f})
	if err != nil {
		if ctx.Err() != nil {
			return damaged(err)
		}
		return errors.Wrapf(err, "failed to read release tarball %s (it is not gzip-compressed: download kubernetes-server-linux-<arch>.tar.gz again)", tarball)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	for {
		if ctx.Err() != nil {
			return damaged(ctx.Err())
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return damaged(err)
		}
		// the recorder hides the tar reader, so visit sees only this entry,
		// and tells a damaged tarball from a damaged entry
		entry := &readRecorder{r: tr}
		err = visit(hdr, entry)
		if entry.err != nil {
			return damaged(entry.err)
		}
		if err == errStop {
			return nil
		}
		if err != nil {
			return err
		}
	}
	// the checksum is at the end of the gzip stream, after the tar padding
	if _, err := io.Copy(io.Discard, gz); err != nil {
		return damaged(err)
	}
	return nil
}

// ctxReader fails every read once its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

// Read implements io.Reader.
func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// binEntry returns the base name of a tarball entry directly in one of
// tarballBinDirs, and that dir.
func binEntry(name string) (base, dir string, ok bool) {
	// "./kubernetes/server/bin/kubeadm" is kubernetes/server/bin/kubeadm
	clean := strings.TrimPrefix(path.Clean("/"+name), "/")
	for _, d := range tarballBinDirs {
		if rest, found := strings.CutPrefix(clean, d); found && rest != "" && !strings.Contains(rest, "/") {
			return rest, d, true
		}
	}
	return "", "", false
}

// indexTarball indexes the binaries and image archives in a release
// tarball's server/bin in a single decompression pass, archives nested in
// it included.
func (s *ImageDir) indexTarball(ctx context.Context, tarball string) error {
	if s.Binaries == nil {
		s.Binaries = map[string]*Artifact{}
	}
	binDir := ""
	seen := map[string]bool{}
	err := s.tarballPass(ctx, tarball, func(hdr *tar.Header, r io.Reader) error {
		base, dir, ok := binEntry(hdr.Name)
		if !ok || (binDir != "" && dir != binDir) {
			return nil
		}
		isBinary := slices.Contains(Binaries, base)
		if !isBinary && !isArchiveName(base) {
			return nil
		}
		binDir = dir
		where := tarball + ":" + hdr.Name
		if seen[base] {
			return errors.Errorf("release tarball %s holds %s twice (%s)", tarball, path.Join(dir, base), tarballHelp)
		}
		seen[base] = true
		if hdr.Typeflag != tar.TypeReg {
			if isBinary {
				return errors.Errorf("%s is not a file: it must be the %s binary (%s)", where, base, tarballHelp)
			}
			return nil
		}
		a := &Artifact{
			Name:  base,
			Path:  where,
			Size:  hdr.Size,
			Mode:  hdr.FileInfo().Mode().Perm(),
			entry: hdr.Name,
		}
		var u *unpacking
		if s.unpacked != "" {
			var err error
			if u, err = s.unpack(a, r); err != nil {
				return err
			}
			r = u.tee
		}
		if err := indexEntry(a, r, where); err != nil {
			if u != nil {
				u.abort()
				if werr := u.writeErr(); werr != nil {
					return werr
				}
			}
			return err
		}
		if u != nil {
			if err := u.finish(); err != nil {
				return err
			}
		}
		s.add(a)
		return nil
	})
	if err != nil {
		return err
	}
	where := tarball + ":" + binDir
	if binDir == "" {
		where = tarball + " (looked in kubernetes/server/bin/ and server/bin/)"
	}
	for _, name := range Binaries {
		if s.Binaries[name] == nil {
			return notFound(name, where)
		}
	}
	return nil
}

// indexEntry reads what Open records of the binary or image archive a from
// r, its content.
func indexEntry(a *Artifact, r io.Reader, where string) error {
	if slices.Contains(Binaries, a.Name) {
		if a.Mode&0o111 == 0 {
			return errors.Errorf("%s is not executable (mode %v): extract the tarball, run chmod +x on %s and give the extracted kubernetes/server/bin instead", where, a.Mode, a.Name)
		}
		arch, err := elfarch.Read(r)
		if err != nil {
			return errors.Wrapf(err, "failed to read %s (%s)", where, tarballHelp)
		}
		a.Kind = KindBinary
		a.Arch = arch
		return nil
	}
	info, err := imagearchive.Index(r, where)
	if err != nil {
		return err
	}
	a.Kind = KindImageArchive
	a.setArchive(info)
	return nil
}

// readRecorder remembers the first error other than io.EOF its reader
// returned.
type readRecorder struct {
	r   io.Reader
	err error
}

// Read implements io.Reader.
func (r *readRecorder) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}
