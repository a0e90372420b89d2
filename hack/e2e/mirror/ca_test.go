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
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCACommandIsIdempotent(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "ca")
	var logs bytes.Buffer
	if err := run([]string{"ca", "--dir", dir}, &logs); err != nil {
		t.Fatalf("first run: %v", err)
	}
	cert, key := readFile(t, filepath.Join(dir, caCertFile)), readFile(t, filepath.Join(dir, caKeyFile))
	if info, err := os.Stat(filepath.Join(dir, caKeyFile)); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v, %v; want mode 0600", info, err)
	}
	if err := run([]string{"ca", "--dir", dir}, &logs); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if !bytes.Equal(cert, readFile(t, filepath.Join(dir, caCertFile))) || !bytes.Equal(key, readFile(t, filepath.Join(dir, caKeyFile))) {
		t.Error("the second run changed the CA")
	}
	if !strings.Contains(logs.String(), "created") || !strings.Contains(logs.String(), "kept") {
		t.Errorf("logs: %q; want a creation, then a kept CA", logs.String())
	}

	ca, err := loadCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !ca.cert.IsCA || ca.cert.Subject.CommonName != caName || ca.cert.NotAfter.Before(time.Now().AddDate(9, 0, 0)) {
		t.Errorf("CA certificate: IsCA %v, CN %q, NotAfter %s", ca.cert.IsCA, ca.cert.Subject.CommonName, ca.cert.NotAfter)
	}
}

func TestCACommandErrors(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	if err := run([]string{"ca"}, &logs); err == nil {
		t.Error("ca without --dir: want an error")
	}
	if err := run([]string{"nope"}, &logs); err == nil {
		t.Error("unknown command: want an error")
	}

	dir := t.TempDir()
	if _, err := ensureCA(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, caKeyFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := ensureCA(dir); err == nil {
		t.Error("a certificate without its key: want an error")
	}

	// a key from another CA
	other := t.TempDir()
	if _, err := ensureCA(other); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, caKeyFile), readFile(t, filepath.Join(other, caKeyFile)))
	if _, err := loadCA(dir); err == nil {
		t.Error("a key that does not match the certificate: want an error")
	}
}

func TestLeafCertificate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := ensureCA(dir); err != nil {
		t.Fatal(err)
	}
	ca, err := loadCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	for _, host := range []string{"registry.k8s.io", "registry-1.docker.io", "127.0.0.1"} {
		leaf, err := ca.certificate(host)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ca.certificate(host)
		if err != nil || again != leaf {
			t.Errorf("%s: the second call minted another certificate", host)
		}
		cert, err := x509.ParseCertificate(leaf.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		opts := x509.VerifyOptions{DNSName: host, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		if _, err := cert.Verify(opts); err != nil {
			t.Errorf("%s: %v", host, err)
		}
		opts.DNSName = "example.com"
		if _, err := cert.Verify(opts); err == nil {
			t.Errorf("the certificate of %s is valid for example.com", host)
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
