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

// Command canary is the workload the upgrade e2e tests deploy and check. It
// needs nothing but itself inside its image:
//
//	canary serve          HTTP on :8080 ("/" answers the hostname, "/healthz" ok)
//	canary write PATH TEXT  writes TEXT to PATH (creating parent directories)
//	canary read PATH        prints the content of PATH
//	canary lookup NAME      resolves NAME and prints its addresses
//	canary get URL          HTTP GET, prints the body (fails unless 2xx)
//	canary probe URL INTERVAL  HTTP GET every INTERVAL until SIGTERM/SIGINT,
//	                        one line per request (see probe.go)
//	canary sleep            blocks until SIGTERM/SIGINT
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch args := os.Args[2:]; os.Args[1] {
	case "serve":
		err = serve(envOr("CANARY_ADDR", ":8080"))
	case "write":
		if len(args) != 2 {
			usage()
		}
		err = write(args[0], args[1])
	case "read":
		if len(args) != 1 {
			usage()
		}
		var b []byte
		if b, err = os.ReadFile(args[0]); err == nil {
			_, err = os.Stdout.Write(b)
		}
	case "lookup":
		if len(args) != 1 {
			usage()
		}
		err = lookup(args[0])
	case "get":
		if len(args) != 1 {
			usage()
		}
		err = get(args[0])
	case "probe":
		if len(args) != 2 {
			usage()
		}
		err = runProbe(args[0], args[1])
	case "sleep":
		waitForSignal()
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "canary: %v\n", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: canary serve | write PATH TEXT | read PATH | lookup NAME | get URL | probe URL INTERVAL | sleep")
	os.Exit(2)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func serve(addr string) error {
	host, _ := os.Hostname()
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, host)
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errs := make(chan error, 1)
	go func() { errs <- srv.ListenAndServe() }()
	fmt.Printf("canary %s serving on %s\n", host, addr)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case err := <-errs:
		return err
	case <-stop:
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(ctx)
	}
}

func write(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), 0o644)
}

func lookup(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, name)
	if err != nil {
		return err
	}
	if len(addrs) == 0 {
		return fmt.Errorf("no addresses for %s", name)
	}
	for _, a := range addrs {
		fmt.Println(a)
	}
	return nil
}

func get(url string) error {
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(os.Stdout, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

func waitForSignal() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
