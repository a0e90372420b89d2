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

// Package probe measures availability during an upgrade: the API server
// probed through kind's load balancer from the host, the canary Service
// probed from every node, the outages both saw, and the HA suite's report
// of them located in the upgrade's phases and steps.
package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"sigs.k8s.io/yaml"
)

// Credentials is what a request to the API server with a kubeconfig's
// current context needs.
type Credentials struct {
	Server        string
	CA, Cert, Key []byte
}

// ParseKubeconfig reads the current context of a kubeconfig with embedded
// certificates, as `kind get kubeconfig` prints it.
func ParseKubeconfig(data []byte) (Credentials, error) {
	var cfg struct {
		CurrentContext string `json:"current-context"`
		Contexts       []struct {
			Name    string `json:"name"`
			Context struct {
				Cluster string `json:"cluster"`
				User    string `json:"user"`
			} `json:"context"`
		} `json:"contexts"`
		Clusters []struct {
			Name    string `json:"name"`
			Cluster struct {
				Server string `json:"server"`
				CA     string `json:"certificate-authority-data"`
			} `json:"cluster"`
		} `json:"clusters"`
		Users []struct {
			Name string `json:"name"`
			User struct {
				Cert string `json:"client-certificate-data"`
				Key  string `json:"client-key-data"`
			} `json:"user"`
		} `json:"users"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return Credentials{}, fmt.Errorf("not a kubeconfig: %v", err)
	}
	var clusterName, userName string
	for _, c := range cfg.Contexts {
		if c.Name == cfg.CurrentContext {
			clusterName, userName = c.Context.Cluster, c.Context.User
		}
	}
	if clusterName == "" {
		return Credentials{}, fmt.Errorf("the kubeconfig has no context %q", cfg.CurrentContext)
	}
	var creds Credentials
	var ca, cert, key string
	for _, c := range cfg.Clusters {
		if c.Name == clusterName {
			creds.Server, ca = c.Cluster.Server, c.Cluster.CA
		}
	}
	for _, u := range cfg.Users {
		if u.Name == userName {
			cert, key = u.User.Cert, u.User.Key
		}
	}
	for _, f := range []struct {
		name, data string
		out        *[]byte
	}{
		{"certificate-authority-data", ca, &creds.CA},
		{"client-certificate-data", cert, &creds.Cert},
		{"client-key-data", key, &creds.Key},
	} {
		b, err := base64.StdEncoding.DecodeString(f.data)
		if err != nil || len(b) == 0 {
			return Credentials{}, fmt.Errorf("the kubeconfig's %s is missing or not base64 (%v)", f.name, err)
		}
		*f.out = b
	}
	if creds.Server == "" {
		return Credentials{}, fmt.Errorf("the kubeconfig's cluster %q has no server", clusterName)
	}
	return creds, nil
}

// tlsConfig trusts the kubeconfig's CA and presents its client certificate.
func (c Credentials) tlsConfig() (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(c.CA) {
		return nil, fmt.Errorf("the kubeconfig's CA is not PEM")
	}
	cert, err := tls.X509KeyPair(c.Cert, c.Key)
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig's client certificate: %v", err)
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// IdentifyServer names the control-plane node (of controlPlanes, name to
// IP address) whose API server serving certificate cert is: kubeadm gives
// each one its own, naming the node's address and name.
func IdentifyServer(cert *x509.Certificate, controlPlanes map[string]string) string {
	for name, ip := range controlPlanes {
		for _, a := range cert.IPAddresses {
			if a.Equal(net.ParseIP(ip)) {
				return name
			}
		}
	}
	for name := range controlPlanes {
		for _, d := range cert.DNSNames {
			if d == name {
				return name
			}
		}
	}
	return "unknown (" + cert.Subject.CommonName + ")"
}

// apiProbeTimeout bounds one request of the API probe.
const apiProbeTimeout = 2 * time.Second

// APIProbe sends a cheap authenticated read to the API server through the
// load balancer's host port every interval, each request on a new
// connection so that the balancer picks a server for each, and records
// which server answered (from its serving certificate: the balancer passes
// TLS through).
type APIProbe struct {
	client   *http.Client
	url      string
	identify func(*x509.Certificate) string

	mu      sync.Mutex
	samples []Sample

	cancel context.CancelFunc
	done   chan struct{}
}

// StartAPIProbe starts probing url (a read the kubeconfig's user may do)
// every interval until stop.
func StartAPIProbe(creds Credentials, path string, interval time.Duration, identify func(*x509.Certificate) string) (*APIProbe, error) {
	tlsConfig, err := creds.tlsConfig()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &APIProbe{
		client: &http.Client{
			Timeout:   apiProbeTimeout,
			Transport: &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true},
		},
		url:      creds.Server + path,
		identify: identify,
		cancel:   cancel,
		done:     make(chan struct{}),
	}
	go p.loop(ctx, interval)
	return p, nil
}

func (p *APIProbe) loop(ctx context.Context, interval time.Duration) {
	defer close(p.done)
	var wg sync.WaitGroup
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := p.once()
			p.mu.Lock()
			p.samples = append(p.samples, s)
			p.mu.Unlock()
		}()
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-ticker.C:
		}
	}
}

// once sends one request; it succeeds on 200 OK.
func (p *APIProbe) once() Sample {
	s := Sample{Time: time.Now(), From: "host"}
	resp, err := p.client.Get(p.url)
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET %s: %s", p.url, resp.Status)
		}
	}
	s.Latency = time.Since(s.Time)
	if err != nil {
		s.Err = err.Error()
		return s
	}
	s.OK = true
	s.By = "unknown"
	if resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		s.By = p.identify(resp.TLS.PeerCertificates[0])
	}
	return s
}

// Stop ends the probe, waits for the requests in flight and returns every
// Sample.
func (p *APIProbe) Stop() []Sample {
	p.cancel()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Sample{}, p.samples...)
}
