// Copyright 2026 The operator101 Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
// http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package mysqlaccount_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/operator101/operator101/internal/mysqlaccount"
	"github.com/operator101/operator101/test/mariadbtest"
)

// testCA is a CA made by the test, and what it signed.
type testCA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
}

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue signs a certificate for cn (server: with the IP address SAN 127.0.0.1) and returns it and its key as PEM.
func (ca *testCA) issue(t *testing.T, cn string, server bool) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// TestTLS runs a second private MariaDB with a CA the test made, refusing unencrypted connections, and checks
// each TLS mode against it, a client certificate, and that a TLS target never falls back to plaintext.
func TestTLS(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	ca, otherCA := newCA(t, "operator101 test CA"), newCA(t, "someone else's CA")
	dir := t.TempDir()
	srvCert, srvKey := ca.issue(t, "127.0.0.1", true)
	for name, data := range map[string][]byte{"ca.pem": ca.certPEM, "server-cert.pem": srvCert, "server-key.pem": srvKey} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tlsServer, err := mariadbtest.Start(mariadbtest.WithTLS(dir, true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tlsServer.Stop() })

	target := func(mode mysqlaccount.TLSMode, serverName string, caPEM, certPEM, keyPEM []byte) mysqlaccount.Target {
		t.Helper()
		cfg, err := mysqlaccount.TLSConfig(mode, serverName, caPEM, certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		tg := tlsServer.Admin
		tg.TLS = cfg
		return tg
	}
	cipher := func(tg mysqlaccount.Target) (string, error) {
		c, err := mysqlaccount.Open(ctx, tg, 5*time.Second)
		if err != nil {
			return "", err
		}
		defer func() { _ = c.Close() }()
		var name, value string
		err = c.DB().QueryRow("SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &value)
		return value, err
	}

	for _, tc := range []struct {
		name string
		tg   mysqlaccount.Target
		ok   bool
		kind mysqlaccount.Kind
	}{
		{"Required", target(mysqlaccount.TLSRequired, "", nil, nil, nil), true, 0},
		{"VerifyCA", target(mysqlaccount.TLSVerifyCA, "", ca.certPEM, nil, nil), true, 0},
		{"VerifyFull", target(mysqlaccount.TLSVerifyFull, "127.0.0.1", ca.certPEM, nil, nil), true, 0},
		{"VerifyFull, another name", target(mysqlaccount.TLSVerifyFull, "db.example", ca.certPEM, nil, nil), false, mysqlaccount.KindUnreachable},
		{"VerifyCA, another CA", target(mysqlaccount.TLSVerifyCA, "", otherCA.certPEM, nil, nil), false, mysqlaccount.KindUnreachable},
		{"VerifyFull, the system's roots", target(mysqlaccount.TLSVerifyFull, "127.0.0.1", nil, nil, nil), false, mysqlaccount.KindUnreachable},
	} {
		got, err := cipher(tc.tg)
		switch {
		case tc.ok && (err != nil || got == ""):
			t.Errorf("%s: cipher %q, %v", tc.name, got, err)
		case !tc.ok && (err == nil || mysqlaccount.KindOf(err) != tc.kind):
			t.Errorf("%s: connected (%q) or wrong kind: %v", tc.name, got, err)
		}
		if err != nil {
			t.Logf("%s: %v", tc.name, err)
		}
	}

	// The server refuses a target without TLS: the admin's credentials never cross in the clear.
	if _, err := mysqlaccount.Open(ctx, tlsServer.Admin, 5*time.Second); err == nil {
		t.Error("a plaintext connection was accepted by a server that requires TLS")
	}
	// A TLS target never falls back to plaintext, even when the server offers no TLS (the package's MariaDB).
	plain := server.Admin
	plain.TLS = target(mysqlaccount.TLSRequired, "", nil, nil, nil).TLS
	if _, err := mysqlaccount.Open(ctx, plain, 5*time.Second); mysqlaccount.KindOf(err) != mysqlaccount.KindUnreachable {
		t.Errorf("a TLS target on a server without TLS: %v, want unreachable (no fallback)", err)
	}

	// A client certificate: an account that requires one logs in only when the target presents it.
	admin, err := mysqlaccount.Open(ctx, target(mysqlaccount.TLSVerifyFull, "127.0.0.1", ca.certPEM, nil, nil), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close() }()
	if _, err := admin.DB().Exec("CREATE USER 'certified'@'%' IDENTIFIED BY 'pw' REQUIRE SUBJECT '/CN=certified'"); err != nil {
		t.Fatal(err)
	}
	clientCert, clientKey := ca.issue(t, "certified", false)
	withCert := target(mysqlaccount.TLSVerifyFull, "127.0.0.1", ca.certPEM, clientCert, clientKey)
	withCert.User, withCert.Password = "certified", "pw"
	if _, err := cipher(withCert); err != nil {
		t.Errorf("login with the client certificate: %v", err)
	}
	without := target(mysqlaccount.TLSVerifyFull, "127.0.0.1", ca.certPEM, nil, nil)
	without.User, without.Password = "certified", "pw"
	if _, err := cipher(without); mysqlaccount.KindOf(err) != mysqlaccount.KindAccessDenied {
		t.Errorf("login without the client certificate: %v, want access denied", err)
	}
	otherCert, otherKey := otherCA.issue(t, "certified", false)
	wrong := target(mysqlaccount.TLSVerifyFull, "127.0.0.1", ca.certPEM, otherCert, otherKey)
	wrong.User, wrong.Password = "certified", "pw"
	if _, err := cipher(wrong); err == nil {
		t.Error("a client certificate from another CA was accepted")
	}

	// What operator101 makes an account require (Account.TLS), and its hourly limits, on a real server.
	acc := mysqlaccount.Account{User: "x509app", Host: "%", Password: "pw2",
		TLS:               mysqlaccount.TLSRequirement{Require: mysqlaccount.RequireX509},
		MaxQueriesPerHour: 1000, MaxUpdatesPerHour: 100, MaxConnectionsPerHour: 10,
		Claimant: mysqlaccount.Claimant{UID: "u-x509", Namespace: "team", Name: "x509app"}}
	ensure := func(want int) {
		t.Helper()
		n, err := admin.Ensure(ctx, acc)
		if err != nil {
			t.Fatal(err)
		}
		if want >= 0 && n != want {
			t.Errorf("Ensure ran %d statements, want %d", n, want)
		}
	}
	as := func(user string, certPEM, keyPEM []byte) mysqlaccount.Target {
		tg := target(mysqlaccount.TLSVerifyFull, "127.0.0.1", ca.certPEM, certPEM, keyPEM)
		tg.User, tg.Password = user, "pw2"
		return tg
	}
	appCert, appKey := ca.issue(t, "x509app", false)
	strangerCert, strangerKey := ca.issue(t, "stranger", false)
	ensure(-1)
	ensure(0) // converged: nothing to run
	var sslType string
	var maxQ, maxU, maxC int
	if err := admin.DB().QueryRow("SELECT ssl_type, max_questions, max_updates, max_connections FROM mysql.user "+
		"WHERE User = 'x509app' AND Host = '%'").Scan(&sslType, &maxQ, &maxU, &maxC); err != nil {
		t.Fatal(err)
	}
	if sslType != "X509" || maxQ != 1000 || maxU != 100 || maxC != 10 {
		t.Errorf("mysql.user: ssl_type %q, limits %d %d %d", sslType, maxQ, maxU, maxC)
	}
	if _, err := cipher(as("x509app", nil, nil)); mysqlaccount.KindOf(err) != mysqlaccount.KindAccessDenied {
		t.Errorf("REQUIRE X509 without a client certificate: %v, want access denied", err)
	}
	if _, err := cipher(as("x509app", appCert, appKey)); err != nil {
		t.Errorf("REQUIRE X509 with a client certificate: %v", err)
	}
	acc.TLS.Subject = "/CN=x509app"
	ensure(1)
	if _, err := cipher(as("x509app", strangerCert, strangerKey)); mysqlaccount.KindOf(err) != mysqlaccount.KindAccessDenied {
		t.Errorf("REQUIRE SUBJECT with another subject's certificate: %v, want access denied", err)
	}
	if _, err := cipher(as("x509app", appCert, appKey)); err != nil {
		t.Errorf("REQUIRE SUBJECT with the subject's certificate: %v", err)
	}
	acc.TLS = mysqlaccount.TLSRequirement{Require: mysqlaccount.RequireSSL}
	acc.MaxUpdatesPerHour = 0
	ensure(2)
	if _, err := cipher(as("x509app", nil, nil)); err != nil {
		t.Errorf("REQUIRE SSL over TLS without a client certificate: %v", err)
	}
	ensure(0)
}

// TestVerifyCANeedsCA: VerifyCA checks no name, so without the server's CA (ca.crt) it would accept any
// publicly trusted certificate issued for any name: TLSConfig refuses it, with an error that names ca.crt and
// the way out, and gives no configuration to connect with. With ca.crt, VerifyCA still verifies the chain (a
// handshake over loopback: the CA's server certificate passes, another CA's does not), and VerifyFull without
// one still uses the system's roots and checks the name.
func TestVerifyCANeedsCA(t *testing.T) {
	ca, otherCA := newCA(t, "operator101 test CA"), newCA(t, "someone else's CA")
	clientCert, clientKey := ca.issue(t, "client", false)
	for name, args := range map[string][2][]byte{
		"no ca.crt":                             {nil, nil},
		"an empty ca.crt":                       {{}, nil},
		"no ca.crt, a client certificate":       {nil, clientCert},
		"an empty ca.crt, a client certificate": {{}, clientCert},
	} {
		var key []byte
		if args[1] != nil {
			key = clientKey
		}
		cfg, err := mysqlaccount.TLSConfig(mysqlaccount.TLSVerifyCA, "db.example", args[0], args[1], key)
		if cfg != nil || err == nil {
			t.Errorf("%s: VerifyCA accepted (a configuration to connect with: %t, error %v)", name, cfg != nil, err)
			continue
		}
		if !errors.Is(err, mysqlaccount.ErrVerifyCANeedsCA) {
			t.Errorf("%s: error %v, want ErrVerifyCANeedsCA", name, err)
		}
		for _, want := range []string{"VerifyCA", "ca.crt", "VerifyFull"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the error does not say %q: %v", name, want, err)
			}
		}
	}

	cfg, err := mysqlaccount.TLSConfig(mysqlaccount.TLSVerifyCA, "db.example", ca.certPEM, nil, nil)
	if err != nil || cfg == nil {
		t.Fatalf("VerifyCA with ca.crt: %+v, %v", cfg, err)
	}
	// The certificates name 127.0.0.1, not db.example: VerifyCA does not check the name, only the chain.
	if err := handshake(t, cfg, ca); err != nil {
		t.Errorf("VerifyCA with ca.crt, the server's certificate from that CA: %v", err)
	}
	if err := handshake(t, cfg, otherCA); err == nil {
		t.Error("VerifyCA with ca.crt accepted a server certificate from another CA")
	}

	full, err := mysqlaccount.TLSConfig(mysqlaccount.TLSVerifyFull, "db.example", nil, nil, nil)
	if err != nil || full == nil || full.InsecureSkipVerify || full.RootCAs != nil || full.ServerName != "db.example" {
		t.Errorf("VerifyFull without ca.crt (the system's roots, the name checked): %+v, %v", full, err)
	}
}

// handshake runs a TLS handshake, over loopback, between a client with cfg and a server presenting a certificate
// that issuer signed, and returns the client's error.
func handshake(t *testing.T, cfg *tls.Config, issuer *testCA) error {
	t.Helper()
	certPEM, keyPEM := issuer.issue(t, "127.0.0.1", true)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		srv := tls.Server(conn, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
		_ = srv.SetDeadline(time.Now().Add(10 * time.Second))
		_ = srv.Handshake()
		_ = srv.Close()
	}()
	conn, err := net.DialTimeout("tcp", ln.Addr().String(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cli := tls.Client(conn, cfg.Clone())
	_ = cli.SetDeadline(time.Now().Add(10 * time.Second))
	err = cli.Handshake()
	_ = cli.Close()
	<-done
	return err
}
