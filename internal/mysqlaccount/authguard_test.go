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
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/operator101/operator101/internal/mysqlaccount"
	"github.com/operator101/operator101/test/mariadbtest"
)

// An impostor is a fake MySQL server on the network path (mariadbtest.Fake): it greets with a plugin, over
// TLS when it has one (a certificate nobody can verify), and then runs its step, which asks the client for the
// password in some way; whatever the client sends, it logs it in.
func startImpostor(t *testing.T, plugin string, tlsCfg *tls.Config, step func(s *mariadbtest.FakeSession) error) *mariadbtest.Fake {
	t.Helper()
	return mariadbtest.StartFake(t, mariadbtest.FakeOptions{Plugin: plugin, TLS: tlsCfg, Step: step})
}

// impostorTLS is the TLS of a server on the network path: a certificate nobody can verify.
func impostorTLS(t *testing.T) *tls.Config {
	t.Helper()
	certPEM, keyPEM := newCA(t, "the network path").issue(t, "127.0.0.1", true)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// openImpostor starts an impostor greeting with plugin and going on with step, and opens a connection to it
// under mode (tlsCfg, the impostor's TLS, as unverified gives it) with a new admin password, pw.
func openImpostor(t *testing.T, mode mysqlaccount.TLSMode, tlsCfg *tls.Config, plugin string,
	step func(s *mariadbtest.FakeSession) error) (f *mariadbtest.Fake, pw string, c *mysqlaccount.Client, err error) {
	t.Helper()
	f = startImpostor(t, plugin, tlsCfg, step)
	pw = "admin-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	tg := f.Target(pw)
	if mode == mysqlaccount.TLSRequired {
		tg.TLS = modeTLS(t, mode)
	}
	c, err = mysqlaccount.Open(context.Background(), tg, 5*time.Second)
	return f, pw, c, err
}

// unverified are the modes that do not verify the server, each with the TLS (or none) of an impostor.
func unverified(t *testing.T) map[mysqlaccount.TLSMode]*tls.Config {
	return map[mysqlaccount.TLSMode]*tls.Config{mysqlaccount.TLSDisabled: nil, mysqlaccount.TLSRequired: impostorTLS(t)}
}

func modeTLS(t *testing.T, mode mysqlaccount.TLSMode) *tls.Config {
	t.Helper()
	cfg, err := mysqlaccount.TLSConfig(mode, "", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestUnverifiedServerGetsNoPassword: under tls.mode Disabled and Required, a server on the network path (a fake
// one) asks for the admin password every way MySQL's protocol has: caching_sha2_password's full
// authentication (answering the request for its RSA key with its own), a switch to sha256_password or
// mysql_clear_password, sha256_password from its greeting, its RSA key sent unasked. Open refuses each
// (ErrPasswordExchangeRefused, an unreachable server, saying what to do) and the password never reaches the
// server, neither in clear nor encrypted to its key. Needs no MariaDB.
func TestUnverifiedServerGetsNoPassword(t *testing.T) {
	steps := map[string]struct {
		plugin string
		step   func(s *mariadbtest.FakeSession) error
	}{
		"caching_sha2_password full authentication": {"caching_sha2_password", func(s *mariadbtest.FakeSession) error {
			if err := s.Write([]byte{0x01, 0x04}); err != nil {
				return err
			}
			return s.AnswerKeyRequests()
		}},
		"a switch to sha256_password": {"caching_sha2_password", func(s *mariadbtest.FakeSession) error {
			if err := s.SwitchTo("sha256_password"); err != nil {
				return err
			}
			return s.AnswerKeyRequests()
		}},
		"a switch to mysql_clear_password": {"caching_sha2_password", func(s *mariadbtest.FakeSession) error {
			if err := s.SwitchTo("mysql_clear_password"); err != nil {
				return err
			}
			_, err := s.Read()
			return err
		}},
		"sha256_password from the greeting": {"sha256_password", func(s *mariadbtest.FakeSession) error {
			if err := s.PublicKey(); err != nil { // the answer to the 1 the response holds without TLS
				return err
			}
			return s.AnswerKeyRequests()
		}},
		"its RSA key, unasked": {"caching_sha2_password", func(s *mariadbtest.FakeSession) error {
			if err := s.PublicKey(); err != nil {
				return err
			}
			_, err := s.Read()
			return err
		}},
	}
	for mode, tlsCfg := range unverified(t) {
		for name, st := range steps {
			t.Run(string(mode)+"/"+name, func(t *testing.T) {
				f, pw, c, err := openImpostor(t, mode, tlsCfg, st.plugin, st.step)
				if err == nil {
					_ = c.Close()
				}
				if how := f.Leaked(pw); how != "" {
					t.Errorf("the admin password reached the impostor %s", how)
				}
				if !errors.Is(err, mysqlaccount.ErrPasswordExchangeRefused) || mysqlaccount.KindOf(err) != mysqlaccount.KindUnreachable {
					t.Fatalf("Open: %v, want ErrPasswordExchangeRefused, unreachable", err)
				}
				want := []string{string(mode), "VerifyCA or VerifyFull"}
				if mode == mysqlaccount.TLSDisabled {
					want = append(want, "server-public-key.pem")
				}
				for _, w := range want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("the error does not say %q: %v", w, err)
					}
				}
				if strings.Contains(err.Error(), pw) {
					t.Error("the error holds the password")
				}
				if _, perr := f.Report(); len(perr) > 0 {
					t.Errorf("the client broke the protocol: %v", perr)
				}
			})
		}
	}
}

// TestUnverifiedServerScrambleLogins: what sends no password still logs in under Disabled and Required (the
// fake checks the packet numbers and, under TLS, the SSLRequest): mysql_native_password, caching_sha2_password's
// fast authentication, and a switch to mysql_native_password. Needs no MariaDB.
func TestUnverifiedServerScrambleLogins(t *testing.T) {
	steps := map[string]struct {
		plugin string
		step   func(s *mariadbtest.FakeSession) error
	}{
		"mysql_native_password": {"mysql_native_password", nil},
		"caching_sha2_password fast authentication": {"caching_sha2_password", func(s *mariadbtest.FakeSession) error {
			return s.Write([]byte{0x01, 0x03})
		}},
		"a switch to mysql_native_password": {"caching_sha2_password", func(s *mariadbtest.FakeSession) error {
			if err := s.SwitchTo("mysql_native_password"); err != nil {
				return err
			}
			_, err := s.Read()
			return err
		}},
	}
	for mode, tlsCfg := range unverified(t) {
		for name, st := range steps {
			t.Run(string(mode)+"/"+name, func(t *testing.T) {
				f, pw, c, err := openImpostor(t, mode, tlsCfg, st.plugin, st.step)
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				if got := c.Server().String(); !strings.Contains(got, "10.11.19") {
					t.Errorf("server %q", got)
				}
				_ = c.Close()
				logins, perr := f.Report()
				if logins == 0 || len(perr) > 0 {
					t.Errorf("%d logins, protocol errors %v", logins, perr)
				}
				if how := f.Leaked(pw); how != "" {
					t.Errorf("the admin password reached the server %s", how)
				}
			})
		}
	}
}

// TestPinnedServerKey: without TLS, the admin Secret's server-public-key.pem lets caching_sha2_password's full
// authentication proceed, encrypted to that key and never to one the server sends: the server holding it
// gets the password (and is never asked for its key); an impostor, with another key, cannot read what it
// gets, and sending its own key is refused. Under Required a pinned key changes nothing: full authentication
// is refused, since the server would want the password in clear. Needs no MariaDB.
func TestPinnedServerKey(t *testing.T) {
	fullAuth := func(s *mariadbtest.FakeSession) error {
		if err := s.Write([]byte{0x01, 0x04}); err != nil {
			return err
		}
		return s.AnswerKeyRequests()
	}
	pw := "admin-" + strconv.FormatInt(time.Now().UnixNano(), 36)

	// The server whose key is pinned.
	pinned := startImpostor(t, "caching_sha2_password", nil, fullAuth)
	tg := pinned.Target(pw)
	tg.ServerPublicKey = pinned.PublicKey()
	c, err := mysqlaccount.Open(context.Background(), tg, 5*time.Second)
	if err != nil {
		t.Fatalf("Open with the server's key pinned: %v", err)
	}
	_ = c.Close()
	if how := pinned.Leaked(pw); how != "encrypted to its RSA key" {
		t.Errorf("the server holding the pinned key did not get the password encrypted to it: %q", how)
	}
	if n := pinned.KeysSent(); n != 0 {
		t.Errorf("the server sent its key %d times although one is pinned", n)
	}

	// An impostor: the key pinned is another server's.
	other := startImpostor(t, "caching_sha2_password", nil, fullAuth)
	tg = other.Target(pw)
	tg.ServerPublicKey = pinned.PublicKey()
	_ = openClose(tg) // it logs anyone in, as a relay would; what matters is what it can read
	if how := other.Leaked(pw); how != "" {
		t.Errorf("an impostor got the password %s", how)
	}
	pushy := startImpostor(t, "caching_sha2_password", nil, func(s *mariadbtest.FakeSession) error {
		if err := s.PublicKey(); err != nil {
			return err
		}
		_, err := s.Read()
		return err
	})
	tg = pushy.Target(pw)
	tg.ServerPublicKey = pinned.PublicKey()
	if err := openClose(tg); !errors.Is(err, mysqlaccount.ErrPasswordExchangeRefused) {
		t.Errorf("an impostor sending its key, with a pinned one: %v, want refused", err)
	}
	if how := pushy.Leaked(pw); how != "" {
		t.Errorf("an impostor sending its key got the password %s", how)
	}

	// Required: no pinned key is used.
	overTLS := startImpostor(t, "caching_sha2_password", impostorTLS(t), fullAuth)
	tg = overTLS.Target(pw)
	tg.TLS, tg.ServerPublicKey = modeTLS(t, mysqlaccount.TLSRequired), overTLS.PublicKey()
	if err := openClose(tg); !errors.Is(err, mysqlaccount.ErrPasswordExchangeRefused) {
		t.Errorf("Required with a pinned key, full authentication: %v, want refused", err)
	}
	if how := overTLS.Leaked(pw); how != "" {
		t.Errorf("Required with a pinned key: the server got the password %s", how)
	}
}

// openClose opens a client of tg and closes it.
func openClose(tg mysqlaccount.Target) error {
	c, err := mysqlaccount.Open(context.Background(), tg, 5*time.Second)
	if err == nil {
		_ = c.Close()
	}
	return err
}

// TestParseServerPublicKey: server-public-key.pem is an RSA public key in PEM (PKIX, as MySQL writes it, or
// PKCS #1); anything else is refused.
func TestParseServerPublicKey(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pkix, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string][]byte{
		"PKIX":    pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix}),
		"PKCS #1": pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&key.PublicKey)}),
	} {
		got, err := mysqlaccount.ParseServerPublicKey(p)
		if err != nil || !got.Equal(&key.PublicKey) {
			t.Errorf("%s: %v", name, err)
		}
	}
	ca := newCA(t, "not a key")
	for name, p := range map[string][]byte{
		"empty":       nil,
		"not PEM":     []byte("hello"),
		"certificate": ca.certPEM,
		"EC key":      pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: mustPKIX(t, &ca.key.PublicKey)}),
		"private key": pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
	} {
		if _, err := mysqlaccount.ParseServerPublicKey(p); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "MII") {
			t.Errorf("%s: the error quotes the key: %v", name, err)
		}
	}
}

func mustPKIX(t *testing.T, pub any) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// TestScrambleLoginsStillWork: against the private MariaDB (no TLS: tls.mode Disabled), the admin account, whose
// plugin is mysql_native_password, logs in, and so do accounts with mysql_native_password and ed25519.
func TestScrambleLoginsStillWork(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	db := server.SQL(t)
	var plugin string
	if err := db.QueryRow("SELECT plugin FROM mysql.user WHERE user = ?", server.Admin.User).Scan(&plugin); err != nil {
		t.Fatal(err)
	}
	if plugin != "mysql_native_password" && plugin != "" {
		t.Fatalf("the admin account's plugin is %q: the test would not show what it says", plugin)
	}
	if err := mariadbtest.CanLogin(ctx, server.Admin, 5*time.Second); err != nil {
		t.Errorf("the admin login, mysql_native_password, tls.mode Disabled: %v", err)
	}
	accounts := []struct{ plugin, user, pw string }{
		{"mysql_native_password", "guard_native", "pw-native"},
		{"ed25519", "guard_ed25519", "pw-ed25519"},
	}
	if _, err := db.Exec("INSTALL SONAME 'auth_ed25519'"); err != nil && !strings.Contains(err.Error(), "already") {
		t.Logf("no ed25519 (%v): only mysql_native_password", err)
		accounts = accounts[:1]
	}
	for _, a := range accounts {
		if _, err := db.Exec(fmt.Sprintf("CREATE OR REPLACE USER '%s'@'%%' IDENTIFIED VIA %s USING PASSWORD('%s')",
			a.user, a.plugin, a.pw)); err != nil {
			t.Fatalf("%s: %v", a.plugin, err)
		}
		t.Cleanup(func() { _, _ = db.Exec("DROP USER IF EXISTS '" + a.user + "'@'%'") })
		login := mysqlaccount.Target{Host: server.Admin.Host, Port: server.Admin.Port, User: a.user, Password: a.pw}
		if err := mariadbtest.CanLogin(ctx, login, 5*time.Second); err != nil {
			t.Errorf("%s login, tls.mode Disabled: %v", a.plugin, err)
		}
	}
}
