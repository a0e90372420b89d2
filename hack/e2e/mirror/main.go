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

// Package main is mirror, a registry that needs no registry: an HTTPS proxy
// that answers CONNECT itself, with a certificate of its own CA for the
// requested host, and serves read-only the images of local docker-archives
// (as `docker save` writes them) over the distribution API. Clients that
// honour HTTPS_PROXY (containerd, `ctr content fetch`) and trust the CA pull
// from it as if from registry.k8s.io or docker.io.
//
//	mirror ca --dir DIR
//	    writes DIR/ca.pem and DIR/ca-key.pem; keeps them if both exist
//	mirror serve [--listen ADDR] --ca-dir DIR --archives DIR
//	    serves every *.tar under --archives until SIGTERM or SIGINT
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"
)

const usage = "usage: mirror ca --dir DIR | mirror serve [--listen ADDR] --ca-dir DIR --archives DIR"

func main() {
	err := run(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ERROR: %v\n", err)
		os.Exit(1)
	}
}

// run is the testable entry point: args without the program name, logs and
// errors of flag parsing to stderr.
func run(args []string, stderr io.Writer) error {
	logger := log.New(stderr, "mirror: ", log.LstdFlags)
	if len(args) == 0 {
		return errors.New(usage)
	}
	switch args[0] {
	case "ca":
		return runCA(args[1:], stderr, logger)
	case "serve":
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
		defer stop()
		return runServe(ctx, args[1:], stderr, logger)
	default:
		return fmt.Errorf("unknown command %q; %s", args[0], usage)
	}
}

func runCA(args []string, stderr io.Writer, logger *log.Logger) error {
	fs := flag.NewFlagSet("mirror ca", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "directory for ca.pem and ca-key.pem (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() != 0 {
		return errors.New(usage)
	}
	created, err := ensureCA(*dir)
	if err != nil {
		return err
	}
	if created {
		logger.Printf("created a CA in %s", *dir)
	} else {
		logger.Printf("kept the existing CA in %s", *dir)
	}
	return nil
}

func runServe(ctx context.Context, args []string, stderr io.Writer, logger *log.Logger) error {
	fs := flag.NewFlagSet("mirror serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", ":3128", "address of the proxy")
	caDir := fs.String("ca-dir", "", "directory of ca.pem and ca-key.pem, as written by 'mirror ca' (required)")
	archives := fs.String("archives", "", "directory of the docker-archives (*.tar) to serve (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *caDir == "" || *archives == "" || fs.NArg() != 0 {
		return errors.New(usage)
	}
	ca, err := loadCA(*caDir)
	if err != nil {
		return err
	}
	start := time.Now()
	reg, err := loadArchives(*archives)
	if err != nil {
		return err
	}
	defer reg.Close()
	logger.Printf("indexed %d archives, %d blobs, in %s", len(reg.files), len(reg.blobs), time.Since(start).Round(time.Millisecond))
	for _, line := range reg.describe() {
		logger.Printf("serving %s", line)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("failed to listen on %s: %w", *listen, err)
	}
	logger.Printf("proxy listening on %s", ln.Addr())
	return newProxy(logger, ca, reg).serve(ctx, ln)
}
