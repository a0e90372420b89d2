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

// staticImage is an archive of an image holding only bin (kubeadm's
// images, CoreDNS, pause, the canary) under names.
func (l *lab) staticImage(bin arg, entrypoint, cmd string, names ...string) *graph.Entry {
	args := []arg{bin, lit(entrypoint), lit(cmd)}
	for _, n := range names {
		args = append(args, lit(n))
	}
	return l.entry("images", entryName(names[0]), recipe{scripts: recipeScripts, fn: "build_static_image_tar", args: args}, nil)
}

// debianTool is an archive of bin on the Debian proxy base (kube-proxy,
// kindnetd).
func (l *lab) debianTool(name string, bin arg, entrypoint, cmd, image string, proxyBase arg) *graph.Entry {
	return l.entry("images", name, recipe{scripts: recipeScripts, fn: "build_debian_tool_tar",
		args: []arg{bin, lit(entrypoint), lit(cmd), lit(image)},
		env:  map[string]arg{"PROXY_BASE_IMAGE": proxyBase, "IPTABLES_AUTO": file(filepath.Join(l.e2eDir, "kube-proxy", "iptables-auto.sh"))},
	}, nil)
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

// buildVersionImages builds the archives of every image kubeadm at v
// lists (the control plane's named -amd64, as a release names them) and
// checks that nothing it wants is missing.
func (l *lab) buildVersionImages(ctx context.Context, v string, kube *graph.Entry, proxyBase arg) (*versionImages, error) {
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
	etcdBin := l.entry("bin/etcd", etcdVersion, recipe{scripts: recipeScripts, fn: "build_etcd", args: []arg{lit(etcdVersion)}}, nil)
	if _, err := l.ensure(ctx, etcdBin); err != nil {
		return nil, err
	}
	vi.etcd = l.staticImage(l.entryPath(etcdBin, "etcd"), "[]", `["/usr/local/bin/etcd"]`, vi.etcdImage)
	corednsBin := l.entry("bin/coredns", tags["coredns/coredns"], recipe{scripts: recipeScripts, fn: "build_coredns",
		args: []arg{lit(tags["coredns/coredns"]), file(filepath.Join(l.e2eDir, "coredns", "main.go"))}}, nil)
	if _, err := l.ensure(ctx, corednsBin); err != nil {
		return nil, err
	}
	vi.coredns = l.staticImage(l.entryPath(corednsBin, "coredns"), `["/coredns"]`, "[]", vi.corednsImage)
	vi.pause = l.staticImage(file(filepath.Join(l.helpers, "pause")), `["/pause"]`, "[]", vi.pauseImage)
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		vi.controlPlane = append(vi.controlPlane, l.staticImage(l.entryPath(kube, c), "[]", fmt.Sprintf(`["/usr/local/bin/%s"]`, c), fmt.Sprintf("registry.k8s.io/%s-amd64:%s", c, v)))
	}
	vi.controlPlane = append(vi.controlPlane, l.debianTool("kube-proxy-amd64_"+v, l.entryPath(kube, "kube-proxy"), "[]", `["/usr/local/bin/kube-proxy"]`, "registry.k8s.io/kube-proxy-amd64:"+v, proxyBase))
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

func (l *lab) paths(entries ...*graph.Entry) arg {
	var args []arg
	for _, e := range entries {
		args = append(args, l.entryPath(e))
	}
	return words(args...)
}

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

	// The Debian trees mostly download: build them while Kubernetes compiles.
	kindRootfs := l.entry("rootfs", "kind-base-"+l.baseSuite, recipe{scripts: recipeScripts, fn: "build_rootfs", args: []arg{lit(l.baseSuite), lit(strings.Join(l.base.Packages, ","))}}, nil)
	proxyRootfs := l.entry("rootfs", "proxy-"+l.debianSuite, recipe{scripts: recipeScripts, fn: "build_rootfs", args: []arg{lit(l.debianSuite), lit(strings.Join(proxyPackages, ","))}}, nil)
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
		rs, err := staging.Download(v)
		if err != nil {
			return nil, "", err
		}
		var flags []string
		for _, r := range rs {
			flags = append(flags, r.Flag())
		}
		kube[v] = l.entry("bin/kubernetes", v, recipe{scripts: kubeScripts, fn: "build_kubernetes", args: []arg{lit(v), lit(strings.Join(flags, " "))}}, nil)
		if _, err := l.ensure(ctx, kube[v]); err != nil {
			return nil, "", err
		}
	}

	// this repository's own programs, built every run (Go's cache keys them)
	if err := l.buildHelpers(ctx); err != nil {
		return nil, "", err
	}
	helper := func(name string) arg { return file(filepath.Join(l.helpers, name)) }

	// kind's base image components, at the versions its Dockerfile names
	components := map[string]*graph.Entry{}
	for _, c := range []struct{ name, arg, fn string }{
		{"containerd", "CONTAINERD_VERSION", "build_containerd"},
		{"runc", "RUNC_VERSION", "build_runc"},
		{"crictl", "CRICTL_VERSION", "build_crictl"},
		{"cni-plugins", "CNI_PLUGINS_VERSION", "build_cni_plugins"},
		{"fuse-overlayfs", "CONTAINERD_FUSE_OVERLAYFS_VERSION", "build_fuse_overlayfs"},
	} {
		version, err := l.base.Arg(c.arg)
		if err != nil {
			return nil, "", err
		}
		args := []arg{lit(version)}
		if c.name == "containerd" {
			tags, err := l.base.Arg("BUILDTAGS")
			if err != nil {
				return nil, "", err
			}
			args = append(args, lit(tags))
		}
		if c.name == "runc" {
			if err := l.ensureHostPackages(ctx, "libseccomp-dev", "pkg-config"); err != nil {
				return nil, "", err
			}
		}
		components[c.name] = l.entry("bin/"+c.name, version, recipe{scripts: recipeScripts, fn: c.fn, args: args}, nil)
		if _, err := l.ensure(ctx, components[c.name]); err != nil {
			return nil, "", err
		}
	}

	if err := waitRootfs(); err != nil {
		return nil, "", err
	}
	proxyBaseName := fmt.Sprintf("%s/proxy-base:%s", l.prefix, l.debianSuite)
	proxyBaseEntry := imageEntry(l.entry("images", "proxy-base", recipe{scripts: recipeScripts, fn: "build_proxy_base_image", args: []arg{l.entryPath(proxyRootfs), lit(proxyBaseName)}}, nil))
	if _, err := l.ensure(ctx, proxyBaseEntry); err != nil {
		return nil, "", err
	}
	proxyBase := path(proxyBaseName, graph.Ref{Entry: proxyBaseEntry})

	ca := l.goEntry("certs", "mirror-ca", map[string]graph.Input{"mirror": graph.File(filepath.Join(l.helpers, "mirror"))}, func(ctx context.Context, out string) error {
		_, err := output(ctx, "", nil, filepath.Join(l.helpers, "mirror"), "ca", "--dir", out)
		return err
	})
	if _, err := l.ensure(ctx, ca); err != nil {
		return nil, "", err
	}
	kindBase := imageEntry(l.entry("images", "kind-base", recipe{scripts: recipeScripts, fn: "build_kind_base_image", args: []arg{
		path(filepath.Join(l.kindDir, "images", "base"), graph.Module{Path: "sigs.k8s.io/kind", Version: l.kindVersion}),
		l.entryPath(kindRootfs),
		l.paths(components["containerd"], components["runc"], components["crictl"], components["cni-plugins"], components["fuse-overlayfs"]),
		lit(fmt.Sprintf("%s/base:%s", l.prefix, l.baseSuite)),
		l.entryPath(ca, "ca.pem"),
	}}, nil))
	if _, err := l.ensure(ctx, kindBase); err != nil {
		return nil, "", err
	}

	canaryImage := l.prefix + "/canary:v1"
	canary := l.staticImage(helper("canary"), `["/canary"]`, `["serve"]`, canaryImage)
	canary.Name = "canary_v1"
	canaryDir, err := l.ensure(ctx, canary)
	if err != nil {
		return nil, "", err
	}
	// the tests may also want it in Docker (kind load docker-image)
	if imageID(ctx, canaryImage) == "" {
		if _, err := output(ctx, "", nil, "docker", "load", "-i", filepath.Join(canaryDir, "image.tar")); err != nil {
			return nil, "", err
		}
	}

	// the add-on images under the names kind's manifests use
	nodeimage := filepath.Join(l.kindDir, "pkg", "build", "nodeimage")
	kindnetdName, err := kindrecipe.GoConst(filepath.Join(nodeimage, "const_cni.go"), "kindnetdImage")
	if err != nil {
		return nil, "", err
	}
	kindnetd := l.debianTool(entryName(kindnetdName), helper("kindnetd"), `["/usr/local/bin/kindnetd"]`, "[]", kindnetdName, proxyBase)
	lppBin := l.entry("bin/local-path-provisioner", l.lppVersion, recipe{scripts: recipeScripts, fn: "build_local_path_provisioner", args: []arg{lit(l.lppVersion)}}, nil)
	if _, err := l.ensure(ctx, lppBin); err != nil {
		return nil, "", err
	}
	lppName, err := kindrecipe.GoConst(filepath.Join(nodeimage, "const_storage.go"), "storageProvisionerImage")
	if err != nil {
		return nil, "", err
	}
	lpp := l.staticImage(l.entryPath(lppBin, "local-path-provisioner"), "[]", `["/usr/local/bin/local-path-provisioner"]`, lppName)
	helperName, err := kindrecipe.GoConst(filepath.Join(nodeimage, "const_storage.go"), "storageHelperImage")
	if err != nil {
		return nil, "", err
	}
	if err := l.ensureHostPackages(ctx, "busybox-static"); err != nil {
		return nil, "", err
	}
	lppHelper := l.entry("images", entryName(helperName), recipe{scripts: recipeScripts, fn: "build_local_path_helper_tar", args: []arg{lit(helperName)}},
		map[string]graph.Input{"busybox": graph.File("/bin/busybox")})
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
	testImages := l.entry("images", "test-images-"+l.to, recipe{scripts: recipeScripts, fn: "build_test_images", args: []arg{l.entryPath(suite)},
		env: map[string]arg{"PROXY_BASE_IMAGE": proxyBase}}, map[string]graph.Input{"busybox": graph.File("/bin/busybox")})
	if _, err := l.ensure(ctx, testImages); err != nil {
		return nil, "", err
	}

	// kind's HA load balancer image: the stand-in under kind's name, in Docker
	envoyName, err := kindrecipe.GoConst(filepath.Join(l.kindDir, "pkg", "cluster", "internal", "loadbalancer", "const.go"), "Image")
	if err != nil {
		return nil, "", err
	}
	envoy := imageEntry(l.entry("images", strings.ReplaceAll(entryName(envoyName), ":", "_"), recipe{scripts: recipeScripts, fn: "build_envoy_image",
		args: []arg{helper("envoy"), lit(envoyName)}, env: map[string]arg{"PROXY_BASE_IMAGE": proxyBase}}, nil))
	if _, err := l.ensure(ctx, envoy); err != nil {
		return nil, "", err
	}

	// The node image: kind's builder, fed by the mirror with the images it
	// does not build (etcd, CoreDNS, the sandbox image, the add-ons).
	from, err := l.buildVersionImages(ctx, l.from, kube[l.from], proxyBase)
	if err != nil {
		return nil, "", err
	}
	sandbox := l.staticImage(helper("pause"), `["/pause"]`, "[]", l.base.SandboxImage)
	if _, err := l.ensure(ctx, sandbox); err != nil {
		return nil, "", err
	}
	kindTool := path(l.kind, graph.Tool{Name: "kind", Command: []string{l.kind, "version"}})
	nodeImage := func(v string, vi *versionImages) (*graph.Entry, *graph.Entry, error) {
		archives := l.entry("artifacts", "mirror-"+v, recipe{scripts: recipeScripts, fn: "build_mirror_archives",
			args: []arg{l.entryPath(vi.etcd), l.entryPath(vi.coredns), l.entryPath(sandbox), l.entryPath(kindnetd), l.entryPath(lpp), l.entryPath(lppHelper)}}, nil)
		release := l.entry("artifacts", "release-"+v, recipe{scripts: recipeScripts, fn: "build_release_tarball",
			args: []arg{lit(v), l.entryPath(vi.kube), l.paths(vi.controlPlane...)}}, nil)
		node := imageEntry(l.entry("images", "node-"+v, recipe{scripts: recipeScripts, fn: "build_kind_node_image",
			args: []arg{l.entryPath(release, "kubernetes-server-linux-amd64.tar.gz"), l.entryPath(kindBase), lit(fmt.Sprintf("%s/node:%s", l.prefix, v)), l.entryPath(archives), l.entryPath(ca)},
			env:  map[string]arg{"KIND": kindTool, "MIRROR_BIN": helper("mirror")}}, nil))
		for _, e := range []*graph.Entry{archives, release, node} {
			if _, err := l.ensure(ctx, e); err != nil {
				return nil, nil, err
			}
		}
		return release, node, nil
	}
	fromRelease, fromNode, err := nodeImage(l.from, from)
	if err != nil {
		return nil, "", err
	}
	downgrade := l.entry("artifacts", "binaries-"+l.from, recipe{scripts: recipeScripts, fn: "build_binaries_dir", args: []arg{l.entryPath(kube[l.from])}}, nil)
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
	unlessSame := func(fromImage, toImage string, e *graph.Entry) arg {
		if fromImage == toImage {
			return lit("")
		}
		return l.entryPath(e)
	}
	imageDir := l.entry("artifacts", l.to+"-from-"+l.from, recipe{scripts: recipeScripts, fn: "build_image_dir", args: []arg{
		lit(l.to), l.entryPath(kube[l.to]), l.paths(to.controlPlane...),
		unlessSame(from.etcdImage, to.etcdImage, to.etcd), unlessSame(from.corednsImage, to.corednsImage, to.coredns), unlessSame(l.base.SandboxImage, to.pauseImage, to.pause),
	}}, nil)
	tree := l.entry("artifacts", "tree-"+l.to, recipe{scripts: recipeScripts, fn: "build_kube_tree", args: []arg{l.entryPath(kube[l.to]), l.paths(to.controlPlane...), l.entryPath(to.pause)}}, nil)
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
	extras := l.entry("artifacts", "extras-"+l.to, recipe{scripts: recipeScripts, fn: "build_mirror_archives", args: []arg{l.entryPath(to.pause)}}, nil)
	// What a registry serves to the nodes of the e2e cluster that pulls
	// through the mirror: the target's etcd, CoreDNS and kubeadm's pause.
	mirrorImage := imageEntry(l.entry("images", "mirror", recipe{scripts: recipeScripts, fn: "build_mirror_image", args: []arg{helper("mirror")}}, nil))
	pull := l.entry("artifacts", "pull-"+l.to, recipe{scripts: recipeScripts, fn: "build_mirror_archives", args: []arg{l.entryPath(to.etcd), l.entryPath(to.coredns), l.entryPath(to.pause)}}, nil)
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
	return m, path, nil
}
