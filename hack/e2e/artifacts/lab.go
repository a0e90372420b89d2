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
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/graph"
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/kindrecipe"
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/host"
	"github.com/kindupgrade/kind-upgrade/hack/e2e/artifacts/recipes/image"
)

// goEnv is the environment of every Go build of the lab.
var goEnv = []string{"GOTOOLCHAIN=local", "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOFLAGS=-mod=mod"}

// lab is one run of the artifact build.
type lab struct {
	repo, e2eDir string
	from, to     string
	// prefix names the Docker images the lab builds (E2E_IMAGE_PREFIX)
	prefix                  string
	kind                    string
	debianSuite, lppVersion string
	store                   *graph.Store
	// helpers holds this run's build of the lab's own programs
	helpers              string
	kindDir, kindVersion string
	base                 *kindrecipe.Base
	baseSuite            string
	// entries are the entries this run ensured, by ID (for explain)
	entries map[string]*graph.Entry
	start   time.Time
	// conformance asks for Kubernetes' own [sig-api-machinery] tests of
	// both versions (E2E_CONFORMANCE=1)
	conformance bool
}

func getenv(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// cacheDir is where the cache is: KIND_UPGRADE_E2E_CACHE, else
// $XDG_CACHE_HOME/kind-upgrade-e2e, else ~/.cache/kind-upgrade-e2e.
func cacheDir() string {
	if d := os.Getenv("KIND_UPGRADE_E2E_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "kind-upgrade-e2e")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "kind-upgrade-e2e")
}

// repoRoot is the checkout: the folder, from here up, whose go.mod is the
// repository's.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.HasPrefix(data, []byte("module github.com/kindupgrade/kind-upgrade\n")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("no kind-upgrade checkout at or above %s", dir)
}

func newLab(from, to string) (*lab, error) {
	repo, err := repoRoot()
	if err != nil {
		return nil, err
	}
	l := &lab{
		repo: repo, e2eDir: filepath.Join(repo, "hack", "e2e"),
		from: from, to: to,
		prefix:      getenv("E2E_IMAGE_PREFIX", "kind-upgrade-e2e"),
		kind:        getenv("KIND", filepath.Join(repo, "bin", "kind")),
		debianSuite: getenv("DEBIAN_SUITE", "bookworm"),
		// the newest version of its Go module the proxy serves (kind ships v0.0.34)
		lppVersion: getenv("LOCAL_PATH_PROVISIONER_VERSION", "v0.0.30"),
		entries:    map[string]*graph.Entry{},
		start:      time.Now(),
	}
	l.store = &graph.Store{Dir: cacheDir(), Graph: graph.New(), Logf: l.logf}
	return l, nil
}

func (l *lab) logf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// ensure builds e unless it is current and returns its folder.
func (l *lab) ensure(ctx context.Context, e *graph.Entry) (string, error) {
	l.entries[e.ID()] = e
	return l.store.Ensure(ctx, e)
}

// output runs a command and returns its stdout, trimmed; an error quotes
// its stderr.
func output(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	return host.Output(ctx, host.Command{Dir: dir, Env: env, Name: name, Args: args})
}

// dockerImageValid: an entry that describes a Docker image is valid only
// while Docker has that image under its name.
func dockerImageValid(dir string) bool {
	name, err1 := os.ReadFile(filepath.Join(dir, "image-name"))
	id, err2 := os.ReadFile(filepath.Join(dir, "image-id"))
	if err1 != nil || err2 != nil {
		return false
	}
	return image.ID(context.Background(), string(name)) == strings.TrimSpace(string(id))
}

// readName is the first line of a file of an entry (image-name, image-names).
func readName(dir, file string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return "", err
	}
	name, _, _ := strings.Cut(string(data), "\n")
	if name == "" {
		return "", fmt.Errorf("%s/%s names nothing", dir, file)
	}
	return name, nil
}

// lockFree reports whether no run holds the lock of the cache entry
// group_name.
func (l *lab) lockFree(name string) bool {
	f, err := os.Open(filepath.Join(l.store.Dir, "locks", name+".lock"))
	if err != nil {
		return true
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true
}

// cleanupLeftovers removes what interrupted runs left in Docker (the
// mirror, kind's node build containers) unless a build holds the base or
// node image's lock.
func (l *lab) cleanupLeftovers(ctx context.Context) {
	if !l.lockFree("images_kind-base") || !l.lockFree("images_node-"+l.from) {
		return
	}
	_ = exec.CommandContext(ctx, "docker", "rm", "-f", l.prefix+"-mirror").Run()
	names, _ := output(ctx, "", nil, "docker", "ps", "-a", "--format", "{{.Names}}")
	for _, c := range strings.Fields(names) {
		if strings.HasPrefix(c, "kind-build-") {
			l.logf("removing leftover build container %s", c)
			_ = exec.CommandContext(ctx, "docker", "rm", "-f", c).Run()
		}
	}
}

// ensureHostPackages installs the Debian packages a recipe needs.
func (l *lab) ensureHostPackages(ctx context.Context, pkgs ...string) error {
	var missing []string
	for _, p := range pkgs {
		if exec.CommandContext(ctx, "dpkg", "-s", p).Run() != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	l.logf("installing %s", strings.Join(missing, " "))
	unlock, err := l.store.Lock("apt")
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := output(ctx, "", nil, "apt-get", "update", "-qq"); err != nil {
		return err
	}
	_, err = output(ctx, "", []string{"DEBIAN_FRONTEND=noninteractive"}, "apt-get", append([]string{"install", "-y", "-qq"}, missing...)...)
	return err
}
