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

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/graph"
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/kindrecipe"
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/gobuild"
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/host"
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/image"
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/images"
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/kindbase"
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/layout"
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/nodeimage"
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/rootfs"
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/staging"
	"github.com/kindupgrade/kind-upgrade/internal/lab/manifest"
)

// proxyPackages are the Debian packages of the kube-proxy and kindnetd
// images' base.
var proxyPackages = []string{"iptables", "nftables", "conntrack", "ipset", "kmod", "iproute2"}

// entryName is a cache entry's name for an image: registry.k8s.io/ left
// out, / and the first : as _.
func entryName(image string) string {
	n := strings.TrimPrefix(image, "registry.k8s.io/")
	n = strings.ReplaceAll(n, "/", "_")
	return strings.Replace(n, ":", "_", 1)
}

// imageEntry marks an entry as describing a Docker image.
func imageEntry(e *graph.Entry) *graph.Entry {
	e.Valid = dockerImageValid
	return e
}

// goBinary is a Go program built from a module at a version.
func (l *lab) goBinary(name, version string, s gobuild.Spec, declared map[string]in) *graph.Entry {
	return recipeEntry(l, "bin/"+name, version, "gobuild", s, declared, gobuild.Build)
}

// staticImage is an archive of an image holding only bin (kubeadm's
// images, CoreDNS, pause, the canary) under names.
func (l *lab) staticImage(bin in, entrypoint, cmd []string, names ...string) *graph.Entry {
	return recipeEntry(l, "images", entryName(names[0]), "images",
		images.StaticSpec{Bin: bin.hp(), Entrypoint: entrypoint, Cmd: cmd, Names: names},
		map[string]in{"bin": bin}, images.Static)
}

// debianTool is an archive of bin on the Debian proxy base (kube-proxy,
// kindnetd).
func (l *lab) debianTool(name string, bin in, entrypoint, cmd []string, image string, proxyBase in) *graph.Entry {
	auto := file(filepath.Join(l.e2eDir, "kube-proxy", "iptables-auto.sh"))
	return recipeEntry(l, "images", name, "images",
		images.DebianToolSpec{Base: proxyBase.path, Name: image, Bin: bin.hp(), IptablesAuto: auto.hp(), Entrypoint: entrypoint, Cmd: cmd},
		map[string]in{"bin": bin, "iptables-auto": auto, "base": proxyBase}, images.DebianTool)
}

// versionImages are the image archives of one Kubernetes version.
type versionImages struct {
	kube                                *graph.Entry
	controlPlane                        []*graph.Entry // apiserver, controller-manager, scheduler, proxy
	etcd, coredns, pause                *graph.Entry
	etcdImage, corednsImage, pauseImage string
}

// images lists what kubeadm at v wants: etcd, CoreDNS and pause by their
// tags.
func (l *lab) kubeadmImages(ctx context.Context, kube string, v string) (map[string]string, []string, error) {
	out, err := output(ctx, "", nil, filepath.Join(kube, "kubeadm"), "config", "images", "list", "--kubernetes-version", v)
	if err != nil {
		return nil, nil, err
	}
	list := strings.Fields(out)
	tags := map[string]string{}
	for _, image := range list {
		name, tag, ok := strings.Cut(strings.TrimPrefix(image, "registry.k8s.io/"), ":")
		if ok {
			tags[name] = tag
		}
	}
	for _, want := range []string{"etcd", "coredns/coredns", "pause"} {
		if tags[want] == "" {
			return nil, nil, fmt.Errorf("kubeadm %s lists no %s image: %s", v, want, out)
		}
	}
	return tags, list, nil
}

// kubernetes is the seven binaries of Kubernetes v, from its module with
// the staging modules at their published versions, stamped with v.
func (l *lab) kubernetes(v string) (*graph.Entry, error) {
	rs, err := staging.Download(v)
	if err != nil {
		return nil, err
	}
	var replaces []string
	for _, r := range rs {
		replaces = append(replaces, fmt.Sprintf("%s=%s@%s", r.Path, r.Path, r.Version))
	}
	var major, minor string
	if parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3); len(parts) == 3 {
		major, minor = parts[0], parts[1]
	} else {
		return nil, fmt.Errorf("%s is not a Kubernetes release version (vMAJOR.MINOR.PATCH)", v)
	}
	var ldflags []string
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		for _, kv := range [][2]string{{"gitVersion", v}, {"gitMajor", major}, {"gitMinor", minor},
			{"gitCommit", strings.Repeat("0", 40)}, {"gitTreeState", "clean"}, {"buildDate", "2026-01-01T00:00:00Z"}} {
			ldflags = append(ldflags, fmt.Sprintf("-X %s.%s=%s", pkg, kv[0], kv[1]))
		}
	}
	var pkgs []string
	for _, c := range []string{"kubeadm", "kubelet", "kubectl", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"} {
		pkgs = append(pkgs, "k8s.io/kubernetes/cmd/"+c)
	}
	return recipeEntry(l, "bin/kubernetes", v, "gobuild", gobuild.Spec{
		Module: "k8s.io/kubernetes", Version: v, Replaces: replaces,
		Builds:  []gobuild.Group{{Packages: pkgs}},
		LDFlags: strings.Join(ldflags, " "),
		Checks:  []gobuild.Check{{Bin: "kubeadm", Args: []string{"version", "-o", "short"}, Want: v, Exact: true}},
	}, nil, gobuild.Build), nil
}

// buildVersionImages builds the archives of every image kubeadm at v
// lists (the control plane's named -amd64, as a release names them) and
// checks that nothing it wants is missing.
func (l *lab) buildVersionImages(ctx context.Context, v string, kube *graph.Entry, proxyBase in) (*versionImages, error) {
	kubeDir := l.store.Path(kube)
	tags, list, err := l.kubeadmImages(ctx, kubeDir, v)
	if err != nil {
		return nil, err
	}
	l.logf("%s: etcd %s, coredns %s, pause %s", v, tags["etcd"], tags["coredns/coredns"], tags["pause"])
	vi := &versionImages{kube: kube,
		etcdImage:    "registry.k8s.io/etcd:" + tags["etcd"],
		corednsImage: "registry.k8s.io/coredns/coredns:" + tags["coredns/coredns"],
		pauseImage:   "registry.k8s.io/pause:" + tags["pause"],
	}
	etcdVersion := tags["etcd"]
	if i := strings.LastIndex(etcdVersion, "-"); i > 0 {
		etcdVersion = etcdVersion[:i]
	}
	etcdBin := l.goBinary("etcd", etcdVersion, gobuild.Spec{
		Module: "go.etcd.io/etcd/server/v3", Version: "v" + etcdVersion,
		Builds: []gobuild.Group{{Packages: []string{"go.etcd.io/etcd/server/v3"}, Name: "etcd"}},
		Checks: []gobuild.Check{{Bin: "etcd", Args: []string{"--version"}, Want: "etcd Version: " + etcdVersion}},
	}, nil)
	if _, err := l.ensure(ctx, etcdBin); err != nil {
		return nil, err
	}
	vi.etcd = l.staticImage(l.entryIn(etcdBin, "etcd"), nil, []string{"/usr/local/bin/etcd"}, vi.etcdImage)
	corednsMain := file(filepath.Join(l.e2eDir, "coredns", "main.go"))
	corednsBin := l.goBinary("coredns", tags["coredns/coredns"], gobuild.Spec{
		Module: "github.com/coredns/coredns", Version: tags["coredns/coredns"], MainFile: corednsMain.hp(), Name: "coredns",
		Checks: []gobuild.Check{{Bin: "coredns", Args: []string{"-version"}, Want: "CoreDNS-" + strings.TrimPrefix(tags["coredns/coredns"], "v")}},
	}, map[string]in{"main": corednsMain})
	if _, err := l.ensure(ctx, corednsBin); err != nil {
		return nil, err
	}
	vi.coredns = l.staticImage(l.entryIn(corednsBin, "coredns"), []string{"/coredns"}, nil, vi.corednsImage)
	vi.pause = l.staticImage(l.helper("pause"), []string{"/pause"}, nil, vi.pauseImage)
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		vi.controlPlane = append(vi.controlPlane, l.staticImage(l.entryIn(kube, c), nil, []string{"/usr/local/bin/" + c}, fmt.Sprintf("registry.k8s.io/%s-amd64:%s", c, v)))
	}
	vi.controlPlane = append(vi.controlPlane, l.debianTool("kube-proxy-amd64_"+v, l.entryIn(kube, "kube-proxy"), nil, []string{"/usr/local/bin/kube-proxy"}, "registry.k8s.io/kube-proxy-amd64:"+v, proxyBase))
	built := map[string]bool{}
	for _, e := range append(append([]*graph.Entry{}, vi.controlPlane...), vi.etcd, vi.coredns, vi.pause) {
		dir, err := l.ensure(ctx, e)
		if err != nil {
			return nil, err
		}
		name, err := readName(dir, "image-names")
		if err != nil {
			return nil, err
		}
		built[strings.Replace(name, "-amd64:", ":", 1)] = true
	}
	for _, want := range list {
		if !built[want] {
			return nil, fmt.Errorf("kubeadm %s wants %s, which was not built", v, want)
		}
	}
	return vi, nil
}

// entryIns are the folders of entries, as inputs named PREFIXi, and their
// host.Paths.
func (l *lab) entryIns(declared map[string]in, prefix string, entries ...*graph.Entry) []host.Path {
	var paths []host.Path
	for i, e := range entries {
		d := l.entryIn(e)
		declared[fmt.Sprintf("%s%d", prefix, i)] = d
		paths = append(paths, d.hp())
	}
	return paths
}

// helper is one of this run's builds of the lab's own programs.
func (l *lab) helper(name string) in { return file(filepath.Join(l.helpers, name)) }

// build builds (or finds current) every artifact of the pair and writes
// the manifest.
func (l *lab) build(ctx context.Context) (*manifest.Manifest, string, error) {
	if os.Getuid() != 0 {
		return nil, "", fmt.Errorf("must run as root (debootstrap, Docker)")
	}
	if _, err := output(ctx, "", nil, "docker", "info"); err != nil {
		return nil, "", fmt.Errorf("no Docker engine answers: run make host-setup (hack/e2e/docker-setup.sh) first")
	}
	if _, err := os.Stat(l.kind); err != nil {
		return nil, "", fmt.Errorf("no kind binary at %s: run make build", l.kind)
	}
	ctx = host.WithLogger(ctx, l.logf)
	l.logf("cache: %s", l.store.Dir)
	var err error
	if l.kindDir, err = output(ctx, l.repo, nil, "go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kind"); err != nil {
		return nil, "", err
	}
	if l.kindVersion, err = output(ctx, l.repo, nil, "go", "list", "-m", "-f", "{{.Version}}", "sigs.k8s.io/kind"); err != nil {
		return nil, "", err
	}
	if l.base, err = kindrecipe.ReadBase(l.kindDir); err != nil {
		return nil, "", err
	}
	l.baseSuite = getenv("KIND_BASE_SUITE", l.base.Suite)
	l.logf("kind's recipe: %s (Debian %s)", l.kindDir, l.baseSuite)
	l.cleanupLeftovers(ctx)
	if err := l.ensureHostPackages(ctx, "debootstrap", "busybox-static", "libseccomp-dev", "pkg-config"); err != nil {
		return nil, "", err
	}

	// The Debian trees mostly download: build them while Kubernetes compiles.
	debianTree := func(suite string, packages []string) *graph.Entry {
		mirror := getenv("DEBIAN_MIRROR", rootfs.Mirror(suite))
		return recipeEntry(l, "rootfs", "", "rootfs",
			rootfs.Spec{Suite: suite, Packages: packages, Mirror: mirror, Debs: filepath.Join(l.store.Dir, "debs", suite)}, nil, rootfs.Build)
	}
	kindRootfs := debianTree(l.baseSuite, l.base.Packages)
	kindRootfs.Name = "kind-base-" + l.baseSuite
	proxyRootfs := debianTree(l.debianSuite, proxyPackages)
	proxyRootfs.Name = "proxy-" + l.debianSuite
	l.entries[kindRootfs.ID()], l.entries[proxyRootfs.ID()] = kindRootfs, proxyRootfs
	rootfsDone := make(chan error, 1)
	go func() {
		_, err := l.store.Ensure(ctx, kindRootfs)
		if err == nil {
			_, err = l.store.Ensure(ctx, proxyRootfs)
		}
		rootfsDone <- err
	}()
	waitRootfs := func() error {
		if rootfsDone == nil {
			return nil
		}
		err := <-rootfsDone
		rootfsDone = nil
		if err != nil {
			return fmt.Errorf("building the Debian root file systems failed: %w", err)
		}
		return nil
	}
	defer waitRootfs() //nolint:errcheck // a failed run's trees: reported elsewhere

	// Kubernetes first: by far the longest build.
	kube := map[string]*graph.Entry{}
	for _, v := range []string{l.from, l.to} {
		if kube[v], err = l.kubernetes(v); err != nil {
			return nil, "", err
		}
		if _, err := l.ensure(ctx, kube[v]); err != nil {
			return nil, "", err
		}
	}

	// this repository's own programs, built every run (Go's cache keys them)
	if err := l.buildHelpers(ctx); err != nil {
		return nil, "", err
	}

	// kind's base image components, at the versions its Dockerfile names
	components := map[string]*graph.Entry{}
	for _, c := range []struct {
		name, arg string
		spec      func(version string) (gobuild.Spec, error)
	}{
		{"containerd", "CONTAINERD_VERSION", func(v string) (gobuild.Spec, error) {
			tags, err := l.base.Arg("BUILDTAGS")
			m := "github.com/containerd/containerd/v2"
			// containerd and ctr with cgo, as kind builds them; the shim static, as containerd's Makefile builds it
			return gobuild.Spec{Module: m, Version: v, Tags: tags,
				LDFlags: fmt.Sprintf("-X %s/version.Version=%s -X %s/version.Package=%s", m, v, m, m),
				Builds:  []gobuild.Group{{Packages: []string{m + "/cmd/containerd", m + "/cmd/ctr"}, CGO: true}, {Packages: []string{m + "/cmd/containerd-shim-runc-v2"}}},
				Checks:  []gobuild.Check{{Bin: "containerd", Args: []string{"--version"}, Want: v}},
			}, err
		}},
		{"runc", "RUNC_VERSION", func(v string) (gobuild.Spec, error) {
			// with seccomp (cgo and libseccomp), like kind's
			m := "github.com/opencontainers/runc"
			return gobuild.Spec{Module: m, Version: v, Tags: "seccomp urfave_cli_no_docs", LDFlags: "-X main.version=" + strings.TrimPrefix(v, "v"),
				Builds: []gobuild.Group{{Packages: []string{m}, CGO: true}},
				Checks: []gobuild.Check{{Bin: "runc", Args: []string{"--version"}, Want: "libseccomp"}},
			}, nil
		}},
		{"crictl", "CRICTL_VERSION", func(v string) (gobuild.Spec, error) {
			m := "sigs.k8s.io/cri-tools"
			return gobuild.Spec{Module: m, Version: v, LDFlags: "-X " + m + "/pkg/version.Version=" + v,
				Builds: []gobuild.Group{{Packages: []string{m + "/cmd/crictl"}}},
				Checks: []gobuild.Check{{Bin: "crictl", Args: []string{"--version"}, Want: "version " + v}},
			}, nil
		}},
		{"cni-plugins", "CNI_PLUGINS_VERSION", func(v string) (gobuild.Spec, error) {
			// the four plugins kind's base ships
			m := "github.com/containernetworking/plugins"
			return gobuild.Spec{Module: m, Version: v, LDFlags: "-X " + m + "/pkg/utils/buildversion.BuildVersion=" + v,
				Builds: []gobuild.Group{{Packages: []string{m + "/plugins/ipam/host-local", m + "/plugins/main/loopback", m + "/plugins/main/ptp", m + "/plugins/meta/portmap"}}},
			}, nil
		}},
		{"fuse-overlayfs", "CONTAINERD_FUSE_OVERLAYFS_VERSION", func(v string) (gobuild.Spec, error) {
			// containerd's fuse-overlayfs snapshotter (kind uses it for rootless nodes only)
			m := "github.com/containerd/fuse-overlayfs-snapshotter/v2"
			return gobuild.Spec{Module: m, Version: v, Builds: []gobuild.Group{{Packages: []string{m + "/cmd/containerd-fuse-overlayfs-grpc"}, CGO: true}}}, nil
		}},
	} {
		version, err := l.base.Arg(c.arg)
		if err != nil {
			return nil, "", err
		}
		spec, err := c.spec(version)
		if err != nil {
			return nil, "", err
		}
		components[c.name] = l.goBinary(c.name, version, spec, nil)
		if _, err := l.ensure(ctx, components[c.name]); err != nil {
			return nil, "", err
		}
	}

	if err := waitRootfs(); err != nil {
		return nil, "", err
	}
	proxyBaseName := fmt.Sprintf("%s/proxy-base:%s", l.prefix, l.debianSuite)
	proxyBaseEntry := imageEntry(recipeEntry(l, "images", "proxy-base", "images",
		images.DebianBaseSpec{Rootfs: l.entryIn(proxyRootfs, "rootfs.tar").hp(), Name: proxyBaseName},
		map[string]in{"rootfs": l.entryIn(proxyRootfs)}, images.DebianBase))
	if _, err := l.ensure(ctx, proxyBaseEntry); err != nil {
		return nil, "", err
	}
	// the base as its entry named it (the entry is the input)
	proxyBase := pathOf(proxyBaseName, graph.Ref{Entry: proxyBaseEntry})

	mirrorBin := l.helper("mirror")
	ca := l.goEntry("certs", "mirror-ca", map[string]graph.Input{"mirror": mirrorBin.input}, func(ctx context.Context, out string) error {
		_, err := output(ctx, "", nil, mirrorBin.path, "ca", "--dir", out)
		return err
	})
	if _, err := l.ensure(ctx, ca); err != nil {
		return nil, "", err
	}
	kindBaseDir := pathOf(filepath.Join(l.kindDir, "images", "base"), graph.Module{Path: "sigs.k8s.io/kind", Version: l.kindVersion})
	baseSpec := kindbase.Spec{KindBase: kindBaseDir.hp(), Rootfs: l.entryIn(kindRootfs, "rootfs.tar").hp(), CA: l.entryIn(ca, "ca.pem").hp(),
		Name: fmt.Sprintf("%s/base:%s", l.prefix, l.baseSuite)}
	baseIns := map[string]in{"kind": kindBaseDir, "rootfs": l.entryIn(kindRootfs), "ca": l.entryIn(ca)}
	for name, p := range map[string]*host.Path{"containerd": &baseSpec.Containerd, "runc": &baseSpec.Runc, "crictl": &baseSpec.Crictl, "cni-plugins": &baseSpec.CNI, "fuse-overlayfs": &baseSpec.Fuse} {
		baseIns[name] = l.entryIn(components[name])
		*p = baseIns[name].hp()
	}
	kindBase := imageEntry(recipeEntry(l, "images", "kind-base", "kindbase", baseSpec, baseIns, kindbase.Build))
	if _, err := l.ensure(ctx, kindBase); err != nil {
		return nil, "", err
	}

	canaryImage := l.prefix + "/canary:v1"
	canary := l.staticImage(l.helper("canary"), []string{"/canary"}, []string{"serve"}, canaryImage)
	canary.Name = "canary_v1"
	canaryDir, err := l.ensure(ctx, canary)
	if err != nil {
		return nil, "", err
	}
	// the tests may also want it in Docker (kind load docker-image)
	if image.ID(ctx, canaryImage) == "" {
		if _, err := output(ctx, "", nil, "docker", "load", "-i", filepath.Join(canaryDir, "image.tar")); err != nil {
			return nil, "", err
		}
	}

	// the add-on images under the names kind's manifests use
	nodeimageDir := filepath.Join(l.kindDir, "pkg", "build", "nodeimage")
	kindnetdName, err := kindrecipe.GoConst(filepath.Join(nodeimageDir, "const_cni.go"), "kindnetdImage")
	if err != nil {
		return nil, "", err
	}
	kindnetd := l.debianTool(entryName(kindnetdName), l.helper("kindnetd"), []string{"/usr/local/bin/kindnetd"}, nil, kindnetdName, proxyBase)
	lppModule := "github.com/rancher/local-path-provisioner"
	lppBin := l.goBinary("local-path-provisioner", l.lppVersion, gobuild.Spec{Module: lppModule, Version: l.lppVersion,
		LDFlags: "-X main.VERSION=" + l.lppVersion, Builds: []gobuild.Group{{Packages: []string{lppModule}}}}, nil)
	if _, err := l.ensure(ctx, lppBin); err != nil {
		return nil, "", err
	}
	lppName, err := kindrecipe.GoConst(filepath.Join(nodeimageDir, "const_storage.go"), "storageProvisionerImage")
	if err != nil {
		return nil, "", err
	}
	lpp := l.staticImage(l.entryIn(lppBin, "local-path-provisioner"), nil, []string{"/usr/local/bin/local-path-provisioner"}, lppName)
	helperName, err := kindrecipe.GoConst(filepath.Join(nodeimageDir, "const_storage.go"), "storageHelperImage")
	if err != nil {
		return nil, "", err
	}
	busybox := file("/bin/busybox")
	lppHelper := recipeEntry(l, "images", entryName(helperName), "images", images.StorageHelperSpec{Busybox: busybox.hp(), Name: helperName},
		map[string]in{"busybox": busybox}, images.StorageHelper)
	for _, e := range []*graph.Entry{kindnetd, lpp, lppHelper} {
		if _, err := l.ensure(ctx, e); err != nil {
			return nil, "", err
		}
	}

	// Kubernetes' upgrade tests, built from the target's module, and the
	// images they run
	suite := l.suiteEntry()
	if _, err := l.ensure(ctx, suite); err != nil {
		return nil, "", err
	}
	// the images a test binary's tests run, from its entry's list
	testImagesOf := func(name string, bin *graph.Entry) *graph.Entry {
		return recipeEntry(l, "images", name, "images",
			images.TestImagesSpec{Base: proxyBase.path, Suite: l.entryIn(bin).hp(), Busybox: busybox.hp(), Prefix: l.prefix},
			map[string]in{"base": proxyBase, "suite": l.entryIn(bin), "busybox": busybox}, images.TestImages)
	}
	testImages := testImagesOf("test-images-"+l.to, suite)
	if _, err := l.ensure(ctx, testImages); err != nil {
		return nil, "", err
	}
	// on request, Kubernetes' own [sig-api-machinery] tests of both
	// versions and their images (make e2e-compat)
	var conformance *manifest.Conformance
	if l.conformance {
		suiteOf := func(v string) (manifest.ConformanceSuite, error) {
			bin := l.conformanceEntry(v)
			if _, err := l.ensure(ctx, bin); err != nil {
				return manifest.ConformanceSuite{}, err
			}
			imgs := testImagesOf("conformance-images-"+v, bin)
			if _, err := l.ensure(ctx, imgs); err != nil {
				return manifest.ConformanceSuite{}, err
			}
			return manifest.ConformanceSuite{Version: v, Binary: filepath.Join(l.store.Path(bin), "conformance.test"),
				ImagesArchive: filepath.Join(l.store.Path(imgs), "image.tar")}, nil
		}
		conformance = &manifest.Conformance{}
		if conformance.From, err = suiteOf(l.from); err != nil {
			return nil, "", err
		}
		if conformance.To, err = suiteOf(l.to); err != nil {
			return nil, "", err
		}
	}

	// kind's HA load balancer image: the stand-in under kind's name, in Docker
	envoyName, err := kindrecipe.GoConst(filepath.Join(l.kindDir, "pkg", "cluster", "internal", "loadbalancer", "const.go"), "Image")
	if err != nil {
		return nil, "", err
	}
	envoy := imageEntry(recipeEntry(l, "images", strings.ReplaceAll(entryName(envoyName), ":", "_"), "images",
		images.LoadBalancerSpec{Base: proxyBase.path, Name: envoyName, Bin: l.helper("envoy").hp()},
		map[string]in{"base": proxyBase, "bin": l.helper("envoy")}, images.LoadBalancer))
	if _, err := l.ensure(ctx, envoy); err != nil {
		return nil, "", err
	}

	// The node image: kind's builder, fed by the mirror with the images it
	// does not build (etcd, CoreDNS, the sandbox image, the add-ons).
	from, err := l.buildVersionImages(ctx, l.from, kube[l.from], proxyBase)
	if err != nil {
		return nil, "", err
	}
	sandbox := l.staticImage(l.helper("pause"), []string{"/pause"}, nil, l.base.SandboxImage)
	if _, err := l.ensure(ctx, sandbox); err != nil {
		return nil, "", err
	}
	kindTool := pathOf(l.kind, graph.Tool{Name: "kind", Command: []string{l.kind, "version"}})
	archives := func(name string, entries ...*graph.Entry) *graph.Entry {
		declared := map[string]in{}
		spec := layout.ArchivesSpec{Entries: l.entryIns(declared, "image", entries...)}
		return recipeEntry(l, "artifacts", name, "layout", spec, declared, layout.Archives)
	}
	release := func(v string, vi *versionImages) *graph.Entry {
		declared := map[string]in{"kubernetes": l.entryIn(vi.kube)}
		spec := layout.ReleaseSpec{Version: v, Kube: l.entryIn(vi.kube).hp(), ControlPlane: l.entryIns(declared, "image", vi.controlPlane...)}
		return recipeEntry(l, "artifacts", "release-"+v, "layout", spec, declared, layout.Release)
	}
	nodeImage := func(v string, vi *versionImages) (*graph.Entry, *graph.Entry, error) {
		mirrored := archives("mirror-"+v, vi.etcd, vi.coredns, sandbox, kindnetd, lpp, lppHelper)
		rel := release(v, vi)
		node := imageEntry(recipeEntry(l, "images", "node-"+v, "nodeimage", nodeimage.Spec{
			Kind: kindTool.hp(), Tarball: l.entryIn(rel, "kubernetes-server-linux-amd64.tar.gz").hp(),
			Base: baseSpec.Name, Name: fmt.Sprintf("%s/node:%s", l.prefix, v),
			Archives: l.entryIn(mirrored).hp(), CA: l.entryIn(ca).hp(), MirrorBin: mirrorBin.hp(), Mirror: l.prefix + "-mirror",
		}, map[string]in{"kind": kindTool, "release": l.entryIn(rel), "base": l.entryIn(kindBase), "archives": l.entryIn(mirrored), "ca": l.entryIn(ca), "mirror": mirrorBin},
			nodeimage.Build))
		for _, e := range []*graph.Entry{mirrored, rel, node} {
			if _, err := l.ensure(ctx, e); err != nil {
				return nil, nil, err
			}
		}
		return rel, node, nil
	}
	fromRelease, fromNode, err := nodeImage(l.from, from)
	if err != nil {
		return nil, "", err
	}
	downgrade := recipeEntry(l, "artifacts", "binaries-"+l.from, "layout", layout.BinariesSpec{Kube: l.entryIn(kube[l.from]).hp()},
		map[string]in{"kubernetes": l.entryIn(kube[l.from])}, layout.Binaries)
	if _, err := l.ensure(ctx, downgrade); err != nil {
		return nil, "", err
	}

	// The folder a user would bring for the upgrade: the release's
	// server/bin plus the etcd, CoreDNS and pause archives that change
	// (kind's node image holds its containerd sandbox image, not kubeadm's
	// pause, which kubeadm's upgrade health check runs).
	to, err := l.buildVersionImages(ctx, l.to, kube[l.to], proxyBase)
	if err != nil {
		return nil, "", err
	}
	dirIns := map[string]in{"kubernetes": l.entryIn(kube[l.to])}
	dirSpec := layout.ImageDirSpec{Version: l.to, Kube: l.entryIn(kube[l.to]).hp(), ControlPlane: l.entryIns(dirIns, "image", to.controlPlane...)}
	unlessSame := func(fromImage, toImage string, e *graph.Entry, name string) host.Path {
		if fromImage == toImage {
			return ""
		}
		dirIns[name] = l.entryIn(e)
		return dirIns[name].hp()
	}
	dirSpec.Etcd = unlessSame(from.etcdImage, to.etcdImage, to.etcd, "etcd")
	dirSpec.CoreDNS = unlessSame(from.corednsImage, to.corednsImage, to.coredns, "coredns")
	dirSpec.Pause = unlessSame(l.base.SandboxImage, to.pauseImage, to.pause, "pause")
	imageDir := recipeEntry(l, "artifacts", l.to+"-from-"+l.from, "layout", dirSpec, dirIns, layout.ImageDir)
	treeIns := map[string]in{"kubernetes": l.entryIn(kube[l.to]), "pause": l.entryIn(to.pause)}
	tree := recipeEntry(l, "artifacts", "tree-"+l.to, "layout", layout.TreeSpec{Kube: l.entryIn(kube[l.to]).hp(),
		ControlPlane: l.entryIns(treeIns, "image", to.controlPlane...), Pause: l.entryIn(to.pause).hp()}, treeIns, layout.Tree)
	for _, e := range []*graph.Entry{imageDir, tree} {
		if _, err := l.ensure(ctx, e); err != nil {
			return nil, "", err
		}
	}
	// The target's node image, made as kind's CI and kubeadm's maintainers
	// make one, and the folder the user guide says to add to it offline:
	// kubeadm's pause, which kind's builder replaces by containerd's
	// sandbox image.
	toRelease, toNode, err := nodeImage(l.to, to)
	if err != nil {
		return nil, "", err
	}
	extras := archives("extras-"+l.to, to.pause)
	// What a registry serves to the nodes of the e2e cluster that pulls
	// through the mirror: the target's etcd, CoreDNS and kubeadm's pause.
	mirrorImage := imageEntry(recipeEntry(l, "images", "mirror", "nodeimage", nodeimage.MirrorSpec{Bin: mirrorBin.hp(), Name: l.prefix + "/registry-mirror:v1"},
		map[string]in{"bin": mirrorBin}, nodeimage.Mirror))
	pull := archives("pull-"+l.to, to.etcd, to.coredns, to.pause)
	for _, e := range []*graph.Entry{extras, mirrorImage, pull} {
		if _, err := l.ensure(ctx, e); err != nil {
			return nil, "", err
		}
	}
	l.logf("done in %s", time.Since(l.start).Round(time.Second))

	nodeName, err := readName(l.store.Path(fromNode), "image-name")
	if err != nil {
		return nil, "", err
	}
	toNodeName, err := readName(l.store.Path(toNode), "image-name")
	if err != nil {
		return nil, "", err
	}
	mirrorName, err := readName(l.store.Path(mirrorImage), "image-name")
	if err != nil {
		return nil, "", err
	}
	p := l.store.Path
	m := &manifest.Manifest{
		From: l.from, To: l.to,
		NodeImage:         nodeName,
		TargetNodeImage:   toNodeName,
		ImageExtrasDir:    p(extras),
		TargetRelease:     filepath.Join(p(toRelease), "kubernetes-server-linux-amd64.tar.gz"),
		MirrorImage:       mirrorName,
		MirrorCA:          p(ca),
		PullArchives:      p(pull),
		ImageDir:          p(imageDir),
		BuildTree:         p(tree),
		DowngradeImageDir: p(downgrade),
		SourceRelease:     filepath.Join(p(fromRelease), "kubernetes-server-linux-amd64.tar.gz"),
		FromEtcdImage:     from.etcdImage, FromCoreDNSImage: from.corednsImage, FromPauseImage: from.pauseImage,
		ToEtcdImage: to.etcdImage, ToCoreDNSImage: to.corednsImage, ToPauseImage: to.pauseImage,
		CanaryImage:       canaryImage,
		CanaryArchive:     filepath.Join(canaryDir, "image.tar"),
		UpgradesSuite:     filepath.Join(p(suite), "upgrades.test"),
		TestImagesArchive: filepath.Join(p(testImages), "image.tar"),
		Kubectl:           filepath.Join(p(kube[l.from]), "kubectl"),
	}
	if err := m.Check(); err != nil {
		return nil, "", err
	}
	path := filepath.Join(l.store.Dir, "manifests", l.from+"-to-"+l.to+".json")
	if err := m.Write(path); err != nil {
		return nil, "", err
	}
	if conformance != nil {
		if err := conformance.Write(manifest.ConformancePath(path)); err != nil {
			return nil, "", err
		}
	}
	return m, path, nil
}
