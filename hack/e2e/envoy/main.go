// Copyright 2026 The kind-upgrade Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

// Command envoy is the e2e stand-in for the Envoy image kind runs as the
// load balancer of clusters with several control planes: that image cannot
// be pulled offline, so ours carries this program as `envoy`, and kind's
// unchanged bootstrap script execs `envoy -c /home/envoy/envoy.yaml`.
//
// It does what kind's configuration asks of Envoy, and nothing else:
//
//   - the bootstrap file names the LDS and CDS files (path_config_source);
//     both are followed, by polling, and re-read when replaced (kind writes
//     a .tmp file and renames it); a file that does not parse is logged and
//     the last good configuration stays;
//   - each listener is a TCP port proxied (tcp_proxy) to a cluster, one
//     connect attempt within the cluster's connect_timeout;
//   - each cluster balances round robin over its endpoints (names resolved
//     at connect time), with an active HTTP(S) health check, its interval,
//     timeout and thresholds, and Envoy's panic mode (all hosts take
//     traffic when fewer than 50% are healthy).
//
// Decoding is strict: a field it does not know makes the file invalid. It
// serves no admin interface and keeps no statistics. Logs go to stderr. It
// never exits 0 once serving (kind's script restarts it unless it does):
// a bootstrap it cannot use or a signal ends it with status 1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"
)

const (
	// kindImage is the load balancer image of kind v0.33.0 (its
	// loadbalancer.Image), which this program stands in for. When a kind
	// bump changes it, kind_test.go fails: re-check the stand-in against
	// kind's new configuration before updating it.
	kindImage = "docker.io/envoyproxy/envoy:v1.36.2"

	// pollInterval is how often the LDS and CDS files are looked at.
	pollInterval = 250 * time.Millisecond
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, pollInterval)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "envoy: ERROR: %v\n", err)
		os.Exit(1)
	}
}

// run is the testable entry point. It returns nil only for --version and
// --help; serving ends with an error (ctx's end included).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, every time.Duration) error {
	fs := flag.NewFlagSet("envoy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var path string
	fs.StringVar(&path, "c", "", "bootstrap configuration file")
	fs.StringVar(&path, "config-path", "", "same as -c")
	version := fs.Bool("version", false, "print what this is and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	switch {
	case *version:
		fmt.Fprintf(stdout, "envoy version: kind-upgrade e2e stand-in for %s (TCP proxy and HTTP health checks only)\n", kindImage)
		return nil
	case path == "":
		return errors.New("no bootstrap configuration: usage: envoy -c FILE")
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("failed to read the bootstrap configuration: %w", err)
	}
	b, err := parseBootstrap(data)
	if err != nil {
		return fmt.Errorf("failed to parse the bootstrap configuration %s: %w", path, err)
	}
	// as Envoy, refuse to start on a discovery file that is not there
	for _, f := range []string{b.LDSPath, b.CDSPath} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("failed to find a discovery file: %w", err)
		}
	}
	logger := log.New(stderr, "envoy: ", log.LstdFlags)
	logger.Printf("starting (stand-in for %s): node %q of cluster %q, LDS %s, CDS %s",
		kindImage, b.NodeID, b.NodeCluster, valueOr(b.LDSPath, "none"), valueOr(b.CDSPath, "none"))
	p := newProxy(ctx, logger)
	defer p.close()
	follow(ctx, logger, p, b, every)
	return fmt.Errorf("stopped: %w", context.Cause(ctx))
}

// follow applies the LDS and CDS files at once and again whenever one of
// them is replaced or rewritten, until ctx is done.
func follow(ctx context.Context, logger *log.Logger, p *proxy, b bootstrap, every time.Duration) {
	lds := &watchedFile{kind: "LDS", path: b.LDSPath}
	cds := &watchedFile{kind: "CDS", path: b.CDSPath}
	var listeners []listenerConfig
	var clusters []clusterConfig
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		changed := false
		if data, ok := cds.poll(logger); ok {
			if cs, err := parseClusters(data); err != nil {
				logger.Printf("CDS %s: %v: keeping the last good clusters", cds.path, err)
			} else {
				clusters, changed = cs, true
				logger.Printf("CDS %s: clusters %v", cds.path, names(cs, func(c clusterConfig) string { return c.Name }))
			}
		}
		if data, ok := lds.poll(logger); ok {
			if ls, err := parseListeners(data); err != nil {
				logger.Printf("LDS %s: %v: keeping the last good listeners", lds.path, err)
			} else {
				listeners, changed = ls, true
				logger.Printf("LDS %s: listeners %v", lds.path, names(ls, func(l listenerConfig) string { return l.Name }))
			}
		}
		if changed {
			p.apply(listeners, clusters)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func names[T any](items []T, name func(T) string) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, name(it))
	}
	return out
}

// watchedFile is a discovery file and the identity of its last read
// version: device, inode, size, modification and change times, so both a
// rename over it and a rewrite in place are noticed.
type watchedFile struct {
	kind, path string
	stamp      fileStamp
	failing    bool // the last poll could not read it (logged once)
}

type fileStamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

// poll returns the file's content when it differs from the last read.
func (f *watchedFile) poll(logger *log.Logger) ([]byte, bool) {
	if f.path == "" {
		return nil, false
	}
	data, changed, err := f.read()
	switch {
	case err != nil && !f.failing:
		logger.Printf("%s %s: %v: keeping the last good configuration", f.kind, f.path, err)
	case err == nil && f.failing:
		logger.Printf("%s %s: readable again", f.kind, f.path)
	}
	f.failing = err != nil
	return data, changed
}

func (f *watchedFile) read() ([]byte, bool, error) {
	file, err := os.Open(f.path)
	if err != nil {
		return nil, false, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return nil, false, err
	}
	s := fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.dev, s.ino, s.ctime = st.Dev, st.Ino, st.Ctim.Nano()
	}
	if s == f.stamp {
		return nil, false, nil
	}
	data, err := io.ReadAll(file)
	if err != nil {
		return nil, false, err
	}
	f.stamp = s
	return data, true, nil
}
