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

package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync"
	"time"
)

// proxy answers CONNECT by terminating TLS itself and passing the tunnel to
// an inner HTTP server of the registry; it serves any other request with the
// registry directly.
type proxy struct {
	logger   *log.Logger
	ca       *authority
	registry http.Handler
	tunnels  *tunnelListener
}

func newProxy(logger *log.Logger, ca *authority, reg *registry) *proxy {
	return &proxy{
		logger:   logger,
		ca:       ca,
		registry: logRequests(logger, reg),
		tunnels:  newTunnelListener(),
	}
}

// serve serves on ln until ctx is done, then shuts down.
func (p *proxy) serve(ctx context.Context, ln net.Listener) error {
	outer := &http.Server{Handler: p, ReadHeaderTimeout: time.Minute, ErrorLog: p.logger}
	inner := &http.Server{Handler: p.registry, ReadHeaderTimeout: time.Minute, IdleTimeout: 5 * time.Minute, ErrorLog: p.logger}
	errs := make(chan error, 2)
	go func() { errs <- outer.Serve(ln) }()
	go func() { errs <- inner.Serve(p.tunnels) }()
	var err error
	select {
	case <-ctx.Done():
		p.logger.Printf("shutting down")
	case err = <-errs:
		err = fmt.Errorf("failed to serve: %w", err)
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return errors.Join(err, shutdown(shutdownCtx, outer), shutdown(shutdownCtx, inner))
}

// shutdown stops srv gracefully, or at the deadline of ctx by force.
func shutdown(ctx context.Context, srv *http.Server) error {
	if err := srv.Shutdown(ctx); err != nil {
		srv.Close()
		return fmt.Errorf("failed to shut down gracefully: %w", err)
	}
	return nil
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		p.registry.ServeHTTP(w, r)
		return
	}
	if err := p.connect(w, r); err != nil {
		p.logger.Printf("CONNECT %s failed: %v", r.Host, err)
	}
}

// connect answers CONNECT host:port as if it had reached host, then hands
// the connection, wrapped in TLS with a certificate for host, to the inner
// server.
func (p *proxy) connect(w http.ResponseWriter, r *http.Request) error {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	cert, err := p.ca.certificate(host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return err
	}
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return fmt.Errorf("failed to hijack the connection: %w", err)
	}
	// the outer server's deadlines are not the tunnel's
	if err := conn.SetDeadline(time.Time{}); err != nil {
		conn.Close()
		return fmt.Errorf("failed to clear the deadlines: %w", err)
	}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		conn.Close()
		return fmt.Errorf("failed to answer: %w", err)
	}
	p.logger.Printf("CONNECT %s 200", r.Host)
	config := &tls.Config{
		Certificates: []tls.Certificate{*cert},
		NextProtos:   []string{"http/1.1"},
		MinVersion:   tls.VersionTLS12,
	}
	// the client may have sent its ClientHello already: rw.Reader holds it
	return p.tunnels.deliver(tls.Server(&bufferedConn{Conn: conn, r: rw.Reader}, config))
}

// bufferedConn reads what the server buffered before the hijack first.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// tunnelListener is the listener of the inner server: its connections are
// the tunnels that connect delivers.
type tunnelListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newTunnelListener() *tunnelListener {
	return &tunnelListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *tunnelListener) deliver(conn net.Conn) error {
	select {
	case l.conns <- conn:
		return nil
	case <-l.closed:
		conn.Close()
		return net.ErrClosed
	}
}

func (l *tunnelListener) Accept() (net.Conn, error) {
	select {
	case conn := <-l.conns:
		return conn, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *tunnelListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *tunnelListener) Addr() net.Addr { return tunnelAddr{} }

type tunnelAddr struct{}

func (tunnelAddr) Network() string { return "tunnel" }
func (tunnelAddr) String() string  { return "tunnel" }

// logRequests logs one line per request: method, host, path, status and
// the bytes of the body.
func logRequests(logger *log.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		logger.Printf("%s %s %s %d %dB", r.Method, r.Host, r.URL.Path, rec.status, rec.bytes)
	})
}

type recorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	bytes       int64
}

func (r *recorder) WriteHeader(status int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = status, true
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wroteHeader = true
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
