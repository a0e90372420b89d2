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

package source

import (
	"context"
	"io"
	"strings"

	"sigs.k8s.io/kind/pkg/errors"
	"sigs.k8s.io/kind/pkg/exec"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/artifacts"
	"github.com/kindupgrade/kind-upgrade/pkg/cluster/internal/upgrade/nodeimage"
)

// Options name the source: --image, --image-dir or both.
type Options struct {
	// Image is a kind node image (--image).
	Image string
	// ImageDir is a folder or release tarball (--image-dir); with Image,
	// a folder of image archives added to the image's.
	ImageDir string
	// Unpack decompresses a release tarball once, up front (a run that
	// streams it to every node), rather than at each walk (a dry run).
	Unpack bool
	// Provider, Cmder and Cluster reach the node image: see
	// nodeimage.Options.
	Provider string
	Cmder    exec.Cmder
	Cluster  string
	Logger   log.Logger
	// ImageName and ImageDirName name Image and ImageDir in messages
	// (--image, --image-dir by default).
	ImageName, ImageDirName string
}

// Open opens the source the options name. With both, the image is the
// target and the folder adds its archives, which win over the image's for
// the same image.
func Open(ctx context.Context, o Options) (Source, error) {
	if o.ImageName == "" {
		o.ImageName = "--image"
	}
	if o.ImageDirName == "" {
		o.ImageDirName = "--image-dir"
	}
	if o.Image == "" {
		openOpts := []artifacts.OpenOption{artifacts.Named(o.ImageDirName)}
		if o.Unpack {
			openOpts = append(openOpts, artifacts.UnpackTarballIn(""))
		}
		dir, err := artifacts.Open(ctx, o.ImageDir, openOpts...)
		if err != nil {
			return nil, errors.Wrap(err, "invalid "+o.ImageDirName)
		}
		return dir, nil
	}
	var extra *artifacts.ImageDir
	if o.ImageDir != "" {
		// the cheaper check first: a wrong folder is refused before the
		// image is pulled or run
		var err error
		if extra, err = artifacts.OpenArchives(o.ImageDir, artifacts.Named(o.ImageDirName)); err != nil {
			return nil, errors.Wrap(err, "invalid "+o.ImageDirName)
		}
	}
	img, err := nodeimage.Open(ctx, o.Image, nodeimage.Options{Provider: o.Provider, Cmder: o.Cmder, Cluster: o.Cluster, Logger: o.Logger, Name: o.ImageName})
	if err != nil {
		return nil, errors.Wrap(err, "invalid "+o.ImageName)
	}
	if extra == nil {
		return img, nil
	}
	return Combine(img, extra), nil
}

// Combine returns the source whose binaries and version are target's and
// whose images are extra's and target's: an archive the user put in extra
// is the one used for its image, even when target holds that image too.
func Combine(target, extra Source) Source {
	return &combined{target: target, extra: extra}
}

type combined struct {
	target, extra Source
}

func (c *combined) Name() string {
	return c.target.Name() + " with " + c.extra.Name()
}

func (c *combined) Version() string { return c.target.Version() }

func (c *combined) Binary(name string) *artifacts.Artifact { return c.target.Binary(name) }

func (c *combined) ArchiveFor(image string) *artifacts.Artifact {
	if a := c.extra.ArchiveFor(image); a != nil {
		return a
	}
	return c.target.ArchiveFor(image)
}

func (c *combined) Lacks(image string) string { return c.target.Lacks(image) }

func (c *combined) ForArch(arch string) string { return c.target.ForArch(arch) }

// Walk walks the target's artifacts, then extra's: want picks from each
// by identity.
func (c *combined) Walk(ctx context.Context, want func(*artifacts.Artifact) bool, fn func(a *artifacts.Artifact, r io.Reader) error) error {
	if err := c.target.Walk(ctx, want, fn); err != nil {
		return err
	}
	return c.extra.Walk(ctx, want, fn)
}

func (c *combined) Describe() (string, []string) {
	headline, details := c.target.Describe()
	extraHeadline, extraDetails := c.extra.Describe()
	if extraHeadline != "" {
		headline = strings.TrimSpace(headline + "; " + extraHeadline)
	}
	return headline, append(details, extraDetails...)
}

func (c *combined) Close() error {
	return errors.NewAggregate([]error{c.target.Close(), c.extra.Close()})
}
