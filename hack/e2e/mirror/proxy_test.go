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
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testProxy is a proxy on loopback serving the legacy and OCI test archives.
type testProxy struct {
	url    *url.URL
	roots  *x509.CertPool
	logs   *syncBuffer
	images map[string]testImage // by the "host/name:tag" to ask the proxy for
}

func startProxy(t *testing.T) *testProxy {
	t.Helper()
	dir := t.TempDir()
	caDir, archives := filepath.Join(dir, "ca"), filepath.Join(dir, "archives")
	if _, err := ensureCA(caDir); err != nil {
		t.Fatal(err)
	}
	ca, err := loadCA(caDir)
	if err != nil {
		t.Fatal(err)
	}
	legacy, legacyImg := legacyArchive(t)
	writeFile(t, filepath.Join(archives, "legacy.tar"), legacy)
	oci, ociImg := ociArchive(t)
	writeFile(t, filepath.Join(archives, "more", "oci.tar"), oci)
	reg, err := loadArchives(archives)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- newProxy(log.New(logs, "", 0), ca, reg).serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	return &testProxy{
		url:   &url.URL{Scheme: "http", Host: ln.Addr().String()},
		roots: roots,
		logs:  logs,
		images: map[string]testImage{
			"registry-1.docker.io/kindest/kindnetd:v1": legacyImg,
			"registry.k8s.io/pause:3.10":               legacyImg,
			"index.docker.io/library/busybox:1":        ociImg,
		},
	}
}

func (p *testProxy) client(t *testing.T) *http.Client {
	t.Helper()
	transport := &http.Transport{Proxy: http.ProxyURL(p.url), TLSClientConfig: &tls.Config{RootCAs: p.roots}}
	t.Cleanup(transport.CloseIdleConnections)
	return &http.Client{Transport: transport}
}

// do sends a request and reads the whole answer.
func do(t *testing.T, c *http.Client, method, rawURL string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	return resp, body
}

func expectStatus(t *testing.T, resp *http.Response, want int) {
	t.Helper()
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d", resp.Request.Method, resp.Request.URL, resp.StatusCode, want)
	}
}

// split turns "host/name:tag" into the URL of the manifest's repository and the tag.
func split(ref string) (repoURL, tag string) {
	i := strings.LastIndex(ref, ":")
	host, name, _ := strings.Cut(ref[:i], "/")
	return "https://" + host + "/v2/" + name, ref[i+1:]
}

func TestProxyServesImages(t *testing.T) {
	t.Parallel()
	p := startProxy(t)
	c := p.client(t)

	resp, body := do(t, c, http.MethodGet, "https://registry.k8s.io/v2/", nil)
	expectStatus(t, resp, http.StatusOK)
	if string(body) != "{}" || resp.Header.Get("Docker-Distribution-API-Version") != "registry/2.0" {
		t.Errorf("GET /v2/: %q, API version %q", body, resp.Header.Get("Docker-Distribution-API-Version"))
	}

	for ref, img := range p.images {
		t.Run(ref, func(t *testing.T) {
			repoURL, tag := split(ref)
			m, digest := fetchManifest(t, c, repoURL+"/manifests/"+tag)
			checkManifest(t, m, img)

			_, byDigest := fetchManifest(t, c, repoURL+"/manifests/"+digest)
			if byDigest != digest {
				t.Errorf("by digest: got %s, want %s", byDigest, digest)
			}
			resp, body := do(t, c, http.MethodHead, repoURL+"/manifests/"+tag, nil)
			expectStatus(t, resp, http.StatusOK)
			if len(body) != 0 || resp.Header.Get("Docker-Content-Digest") != digest || resp.ContentLength <= 0 {
				t.Errorf("HEAD manifest: %d bytes of body, digest %q, length %d", len(body), resp.Header.Get("Docker-Content-Digest"), resp.ContentLength)
			}

			checkBlob(t, c, repoURL, m.Config, img.config)
			for i, layer := range m.Layers {
				checkBlob(t, c, repoURL, layer, img.layers[i])
			}
		})
	}
	p.logs.waitFor(t, "GET registry-1.docker.io /v2/kindest/kindnetd/manifests/v1 200 ")
}

func fetchManifest(t *testing.T, c *http.Client, manifestURL string) (ociManifest, string) {
	t.Helper()
	resp, body := do(t, c, http.MethodGet, manifestURL, http.Header{"Accept": {manifestMediaType}})
	expectStatus(t, resp, http.StatusOK)
	digest := resp.Header.Get("Docker-Content-Digest")
	if digest != sha256Digest(body) {
		t.Errorf("GET %s: Docker-Content-Digest %s, but the body's is %s", manifestURL, digest, sha256Digest(body))
	}
	if ct := resp.Header.Get("Content-Type"); ct != manifestMediaType {
		t.Errorf("GET %s: Content-Type %q", manifestURL, ct)
	}
	if resp.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
		t.Errorf("GET %s: Content-Length %q for %d bytes", manifestURL, resp.Header.Get("Content-Length"), len(body))
	}
	var m ociManifest
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("GET %s: %v", manifestURL, err)
	}
	return m, digest
}

func checkManifest(t *testing.T, m ociManifest, img testImage) {
	t.Helper()
	if m.SchemaVersion != 2 || m.MediaType != manifestMediaType || m.Config.MediaType != configMediaType {
		t.Errorf("manifest: schemaVersion %d, mediaType %q, config mediaType %q", m.SchemaVersion, m.MediaType, m.Config.MediaType)
	}
	if len(m.Layers) != len(img.layers) {
		t.Fatalf("manifest: %d layers, want %d", len(m.Layers), len(img.layers))
	}
	for i, layer := range m.Layers {
		if layer.MediaType != img.layerMedia[i] {
			t.Errorf("layer %d: media type %q, want %q", i, layer.MediaType, img.layerMedia[i])
		}
	}
	for i, target := range img.symlinkedTo {
		if m.Layers[i] != m.Layers[target] {
			t.Errorf("layer %d, a link to layer %d, is %+v, not %+v", i, target, m.Layers[i], m.Layers[target])
		}
	}
}

// checkBlob fetches the blob of d and checks it against d and want.
func checkBlob(t *testing.T, c *http.Client, repoURL string, d descriptor, want []byte) {
	t.Helper()
	blobURL := repoURL + "/blobs/" + d.Digest
	resp, body := do(t, c, http.MethodGet, blobURL, nil)
	expectStatus(t, resp, http.StatusOK)
	if sha256Digest(body) != d.Digest || int64(len(body)) != d.Size || resp.ContentLength != d.Size {
		t.Errorf("GET %s: %d bytes (Content-Length %d) of digest %s; the manifest says %d bytes",
			blobURL, len(body), resp.ContentLength, sha256Digest(body), d.Size)
	}
	if !bytes.Equal(body, want) {
		t.Errorf("GET %s: not the content of the archive", blobURL)
	}
	if resp.Header.Get("Docker-Content-Digest") != d.Digest {
		t.Errorf("GET %s: Docker-Content-Digest %q", blobURL, resp.Header.Get("Docker-Content-Digest"))
	}
	resp, body = do(t, c, http.MethodHead, blobURL, nil)
	expectStatus(t, resp, http.StatusOK)
	if len(body) != 0 || resp.ContentLength != d.Size {
		t.Errorf("HEAD %s: %d bytes of body, Content-Length %d, want 0 and %d", blobURL, len(body), resp.ContentLength, d.Size)
	}
	resp, body = do(t, c, http.MethodGet, blobURL, http.Header{"Range": {"bytes=10-19"}})
	expectStatus(t, resp, http.StatusPartialContent)
	if !bytes.Equal(body, want[10:20]) {
		t.Errorf("GET %s bytes 10-19: %x, want %x", blobURL, body, want[10:20])
	}
}

func TestProxyErrors(t *testing.T) {
	t.Parallel()
	p := startProxy(t)
	c := p.client(t)
	busybox, busyboxDigest := fetchManifest(t, c, "https://registry-1.docker.io/v2/library/busybox/manifests/1")
	unknown := "sha256:" + strings.Repeat("0", 64)
	cases := []struct {
		method, url string
		status      int
		code        string
	}{
		{http.MethodGet, "https://registry.k8s.io/v2/pause/manifests/3.9", http.StatusNotFound, "MANIFEST_UNKNOWN"},
		{http.MethodHead, "https://registry.k8s.io/v2/pause/manifests/3.9", http.StatusNotFound, ""},
		{http.MethodGet, "https://registry.k8s.io/v2/pause/manifests/" + unknown, http.StatusNotFound, "MANIFEST_UNKNOWN"},
		// busybox's manifest is not pause's
		{http.MethodGet, "https://registry.k8s.io/v2/pause/manifests/" + busyboxDigest, http.StatusNotFound, "MANIFEST_UNKNOWN"},
		{http.MethodGet, "https://registry.k8s.io/v2/pause/blobs/" + unknown, http.StatusNotFound, "BLOB_UNKNOWN"},
		// nor are its layers
		{http.MethodGet, "https://registry.k8s.io/v2/pause/blobs/" + busybox.Layers[1].Digest, http.StatusNotFound, "BLOB_UNKNOWN"},
		{http.MethodGet, "https://registry.k8s.io/v2/etcd/manifests/3.6.5-0", http.StatusNotFound, "NAME_UNKNOWN"},
		{http.MethodGet, "https://registry.k8s.io/v2/etcd/blobs/" + unknown, http.StatusNotFound, "NAME_UNKNOWN"},
		// the repository exists on another host only
		{http.MethodGet, "https://ghcr.io/v2/kindest/kindnetd/manifests/v1", http.StatusNotFound, "NAME_UNKNOWN"},
		{http.MethodGet, "https://registry.k8s.io/v2/pause/tags/list", http.StatusNotFound, ""},
		{http.MethodPost, "https://registry.k8s.io/v2/pause/blobs/uploads/", http.StatusMethodNotAllowed, "UNSUPPORTED"},
		{http.MethodDelete, "https://registry.k8s.io/v2/pause/manifests/3.10", http.StatusMethodNotAllowed, "UNSUPPORTED"},
	}
	for _, tc := range cases {
		resp, body := do(t, c, tc.method, tc.url, nil)
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		p.logs.waitFor(t, fmt.Sprintf("%s %s %s %d ", tc.method, u.Host, u.Path, tc.status))
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.url, resp.StatusCode, tc.status)
			continue
		}
		if tc.code == "" {
			continue
		}
		var e struct {
			Errors []struct{ Code, Message string }
		}
		if err := json.Unmarshal(body, &e); err != nil || len(e.Errors) != 1 || e.Errors[0].Code != tc.code {
			t.Errorf("%s %s: body %q, want the error %s", tc.method, tc.url, body, tc.code)
		}
	}
}

func TestProxyPlainRequests(t *testing.T) {
	t.Parallel()
	p := startProxy(t)
	_, want := fetchManifest(t, p.client(t), "https://registry.k8s.io/v2/pause/manifests/3.10")

	// through the proxy, without a tunnel
	_, got := fetchManifest(t, p.client(t), "http://registry.k8s.io/v2/pause/manifests/3.10")
	if got != want {
		t.Errorf("plain proxy request: digest %s, want %s", got, want)
	}

	// straight to the proxy, the registry named by the Host header
	req, err := http.NewRequest(http.MethodGet, p.url.String()+"/v2/kindest/kindnetd/manifests/v1", http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "registry-1.docker.io"
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	expectStatus(t, resp, http.StatusOK)
	if got := resp.Header.Get("Docker-Content-Digest"); got != want {
		t.Errorf("direct request: digest %s, want %s", got, want)
	}
}

func TestProxyReusesTunnel(t *testing.T) {
	t.Parallel()
	p := startProxy(t)
	c := p.client(t)
	var reused []bool
	for range 3 {
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = append(reused, info.Reused) }}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace),
			http.MethodGet, "https://registry-1.docker.io/v2/kindest/kindnetd/manifests/v1", http.NoBody)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		expectStatus(t, resp, http.StatusOK)
	}
	if fmt.Sprint(reused) != "[false true true]" {
		t.Errorf("connections reused: %v, want [false true true]", reused)
	}
	if n := strings.Count(p.logs.String(), "CONNECT registry-1.docker.io:443 200"); n != 1 {
		t.Errorf("%d tunnels for 3 requests, want 1; logs:\n%s", n, p.logs.String())
	}
}

func TestProxyNeedsTheCA(t *testing.T) {
	t.Parallel()
	p := startProxy(t)
	transport := &http.Transport{Proxy: http.ProxyURL(p.url), TLSClientConfig: &tls.Config{RootCAs: x509.NewCertPool()}}
	defer transport.CloseIdleConnections()
	resp, err := (&http.Client{Transport: transport}).Get("https://registry.k8s.io/v2/")
	if err == nil {
		resp.Body.Close()
		t.Fatal("a client that does not trust the CA got an answer")
	}
	var unknownAuthority x509.UnknownAuthorityError
	if !errors.As(err, &unknownAuthority) {
		t.Errorf("error %v: want a certificate error", err)
	}
}

// syncBuffer is a bytes.Buffer that the proxy's goroutines can log to while
// a test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// waitFor waits for a line with substr to be logged: the proxy logs a
// request once its handler returns, which may be after the client has read
// the answer.
func (b *syncBuffer) waitFor(t *testing.T, substr string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(b.String(), substr) {
		if time.Now().After(deadline) {
			t.Errorf("no log line with %q in:\n%s", substr, b.String())
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
