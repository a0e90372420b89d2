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
	"context"
	"errors"
	"io"
	"log"
	"net"
	"reflect"
	"sync"
	"time"
)

// acceptBackoff spaces out retries when accept fails (e.g. out of file
// descriptors).
const acceptBackoff = 100 * time.Millisecond

// proxy holds the running listeners and clusters.
type proxy struct {
	log *log.Logger
	ctx context.Context // connections and health checks end with it

	mu        sync.Mutex
	listeners map[string]*activeListener
	clusters  map[string]*cluster
}

// activeListener is a bound LDS listener.
type activeListener struct {
	name, addr string
	ln         net.Listener
	cluster    string // guarded by proxy.mu: an update may re-point it
}

func newProxy(ctx context.Context, logger *log.Logger) *proxy {
	return &proxy{
		log:       logger,
		ctx:       ctx,
		listeners: map[string]*activeListener{},
		clusters:  map[string]*cluster{},
	}
}

// apply makes the given listeners and clusters the running ones, clusters
// first. What did not change keeps running untouched; a changed cluster is
// rebuilt with the health of the hosts it keeps; a listener keeps its
// socket unless its address changed. Open connections are left alone.
func (p *proxy) apply(listeners []listenerConfig, clusters []clusterConfig) {
	p.mu.Lock()
	defer p.mu.Unlock()

	next := make(map[string]*cluster, len(clusters))
	for _, cfg := range clusters {
		old := p.clusters[cfg.Name]
		if old != nil && reflect.DeepEqual(old.cfg, cfg) {
			next[cfg.Name] = old
			continue
		}
		c := newCluster(cfg, p.log, old)
		c.start(p.ctx)
		next[cfg.Name] = c
		p.log.Printf("cluster %s: %s", cfg.Name, describe(cfg))
	}
	for name, old := range p.clusters {
		if next[name] != old {
			old.stop()
		}
		if next[name] == nil {
			p.log.Printf("cluster %s: removed", name)
		}
	}
	p.clusters = next

	nextL := make(map[string]*activeListener, len(listeners))
	for _, cfg := range listeners {
		l := p.listeners[cfg.Name]
		if l != nil && l.addr == cfg.Address {
			if l.cluster != cfg.Cluster {
				p.log.Printf("listener %s on %s: now to cluster %s", l.name, l.addr, cfg.Cluster)
				l.cluster = cfg.Cluster
			}
			nextL[cfg.Name] = l
			continue
		}
		if l != nil {
			l.close()
			delete(p.listeners, cfg.Name)
		}
		l, err := p.listen(cfg)
		if err != nil {
			p.log.Printf("listener %s: %v", cfg.Name, err)
			continue
		}
		nextL[cfg.Name] = l
		p.log.Printf("listener %s on %s: TCP proxy to cluster %s", l.name, l.addr, l.cluster)
	}
	for name, l := range p.listeners {
		if nextL[name] != l {
			l.close()
			p.log.Printf("listener %s on %s: removed", l.name, l.addr)
		}
	}
	p.listeners = nextL
	for _, l := range p.listeners {
		if p.clusters[l.cluster] == nil {
			p.log.Printf("listener %s: cluster %s is not defined: its connections are closed", l.name, l.cluster)
		}
	}
}

// close stops every listener and health check, quietly: it is the end.
func (p *proxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.listeners {
		l.close()
	}
	for _, c := range p.clusters {
		c.stop()
	}
	p.listeners, p.clusters = map[string]*activeListener{}, map[string]*cluster{}
}

func (p *proxy) listen(cfg listenerConfig) (*activeListener, error) {
	ln, err := net.Listen("tcp", cfg.Address)
	if err != nil {
		return nil, err
	}
	l := &activeListener{name: cfg.Name, addr: cfg.Address, ln: ln, cluster: cfg.Cluster}
	go p.serve(l)
	return l, nil
}

func (l *activeListener) close() {
	_ = l.ln.Close()
}

func (p *proxy) serve(l *activeListener) {
	for {
		conn, err := l.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			p.log.Printf("listener %s: %v", l.name, err)
			time.Sleep(acceptBackoff)
			continue
		}
		go p.handle(conn, l)
	}
}

// route is the cluster l's connections go to now, or nil.
func (p *proxy) route(l *activeListener) *cluster {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clusters[l.cluster]
}

// handle is Envoy's tcp_proxy with one connect attempt: the downstream
// connection is closed when there is no cluster, no host to pick or the
// host cannot be reached within the connect timeout.
func (p *proxy) handle(down net.Conn, l *activeListener) {
	defer down.Close()
	c := p.route(l)
	if c == nil {
		return
	}
	h := c.pick()
	if h == nil {
		return
	}
	c.sawTraffic.Store(true)
	up, err := c.dial(p.ctx, h.addr)
	if err != nil {
		return
	}
	defer up.Close()
	splice(down, up)
}

// splice copies both ways until both directions end. The end of one
// direction's stream half-closes the other side, so a client that shuts
// down its writes still gets the answer; an error closes both.
func splice(a, b net.Conn) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		pass(b, a)
	}()
	go func() {
		defer wg.Done()
		pass(a, b)
	}()
	wg.Wait()
}

func pass(dst, src net.Conn) {
	_, err := io.Copy(dst, src)
	if cw, ok := dst.(interface{ CloseWrite() error }); ok && err == nil {
		_ = cw.CloseWrite()
		return
	}
	_ = dst.Close()
	_ = src.Close()
}
