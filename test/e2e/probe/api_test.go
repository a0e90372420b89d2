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

package probe

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// testCA issues certificates for the tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a certificate and its key, PEM encoded.
func (ca *testCA) issue(t *testing.T, serial int64, cn string, usage x509.ExtKeyUsage, dnsNames []string, ips []net.IP) ([]byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		DNSNames: dnsNames, IPAddresses: ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// kindKubeconfig is a kubeconfig as `kind get kubeconfig` prints it.
func kindKubeconfig(server string, ca, cert, key []byte) string {
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf(`apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: %s
    server: %s
  name: kind-other
- cluster:
    certificate-authority-data: %s
    server: %s
  name: kind-ha
contexts:
- context:
    cluster: kind-ha
    user: kind-ha
  name: kind-ha
current-context: kind-ha
kind: Config
preferences: {}
users:
- name: kind-ha
  user:
    client-certificate-data: %s
    client-key-data: %s
`, b64(ca), "https://127.0.0.1:1", b64(ca), server, b64(cert), b64(key))
}

func TestAPIProbe(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	serverCert, serverKey := ca.issue(t, 2, "kube-apiserver", x509.ExtKeyUsageServerAuth,
		[]string{"ha-control-plane2", "kubernetes", "localhost"}, []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("172.18.0.5")})
	clientCert, clientKey := ca.issue(t, 3, "kubernetes-admin", x509.ExtKeyUsageClientAuth, nil, nil)

	pair, err := tls.X509KeyPair(serverCert, serverKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.pem)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/namespaces/default" || len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		fmt.Fprintln(w, `{"kind":"Namespace"}`)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool, ClientAuth: tls.VerifyClientCertIfGiven}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	creds, err := ParseKubeconfig([]byte(kindKubeconfig(srv.URL, ca.pem, clientCert, clientKey)))
	if err != nil {
		t.Fatal(err)
	}
	if creds.Server != srv.URL {
		t.Fatalf("server %s, want the current context's %s", creds.Server, srv.URL)
	}
	controlPlanes := map[string]string{"ha-control-plane": "172.18.0.4", "ha-control-plane2": "172.18.0.5"}
	identify := func(c *x509.Certificate) string { return IdentifyServer(c, controlPlanes) }

	for _, tc := range []struct {
		path, by string
		ok       bool
	}{
		{"/api/v1/namespaces/default", "ha-control-plane2", true},
		{"/api/v1/secrets", "", false},
	} {
		p, err := StartAPIProbe(creds, tc.path, 10*time.Millisecond, identify)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		samples := p.Stop()
		if len(samples) < 3 {
			t.Fatalf("%s: %d samples in 100ms at one per 10ms", tc.path, len(samples))
		}
		for _, s := range samples {
			if s.OK != tc.ok || s.By != tc.by || s.From != "host" || (!s.OK && !strings.Contains(s.Err, "403 Forbidden")) {
				t.Errorf("%s: got %+v", tc.path, s)
			}
		}
	}
}

func TestIdentifyServer(t *testing.T) {
	t.Parallel()
	controlPlanes := map[string]string{"ha-control-plane": "172.18.0.4", "ha-control-plane2": "172.18.0.5"}
	for _, tc := range []struct {
		cert x509.Certificate
		want string
	}{
		{x509.Certificate{IPAddresses: []net.IP{net.ParseIP("10.96.0.1"), net.ParseIP("172.18.0.4")}, DNSNames: []string{"ha-control-plane2"}}, "ha-control-plane"},
		{x509.Certificate{DNSNames: []string{"kubernetes", "ha-control-plane2"}}, "ha-control-plane2"},
		{x509.Certificate{Subject: pkix.Name{CommonName: "kube-apiserver"}, DNSNames: []string{"ha-external-load-balancer"}}, "unknown (kube-apiserver)"},
	} {
		if got := IdentifyServer(&tc.cert, controlPlanes); got != tc.want {
			t.Errorf("got %s, want %s", got, tc.want)
		}
	}
}

func TestParseKubeconfigRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, config, err string }{
		{"not YAML", "{", "not a kubeconfig"},
		{"no context", "current-context: x\n", `no context "x"`},
		{"no certificates", kindKubeconfig("https://127.0.0.1:6443", nil, nil, nil), "certificate-authority-data is missing"},
	} {
		if _, err := ParseKubeconfig([]byte(tc.config)); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: want an error with %q, got %v", tc.name, tc.err, err)
		}
	}
}
