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

package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A connection Secret's uri and ca.crt become a configuration that verifies the server's name; a uri that
// would not verify it, or a Secret without a CA, is refused.
func TestMySQLConfigVerifiesTheServer(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, IsCA: true,
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	secret := func(uri string, ca []byte) string {
		dir := t.TempDir()
		for k, v := range map[string][]byte{"uri": []byte(uri), "ca.crt": ca} {
			if err := os.WriteFile(filepath.Join(dir, k), v, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}

	cfg, err := mysqlConfig(secret("mysql://shop:p%40ss@198.18.255.254:3306/demo?ssl-mode=VERIFY_IDENTITY", ca))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.User != "shop" || cfg.Passwd != "p@ss" || cfg.Addr != "198.18.255.254:3306" || cfg.DBName != "demo" ||
		cfg.TLSConfig != "connection-secret" {
		t.Errorf("config %+v", cfg)
	}
	for _, tc := range []struct {
		uri  string
		ca   []byte
		want string
	}{
		{"mysql://shop:x@h:3306/demo?ssl-mode=VERIFY_CA", ca, "VERIFY_IDENTITY only"},
		{"mysql://shop:x@h:3306/demo?ssl-mode=REQUIRED", ca, "VERIFY_IDENTITY only"},
		{"mysql://shop:x@h:3306/demo", ca, "VERIFY_IDENTITY only"},
		{"mysql://shop:x@h:3306/demo?ssl-mode=VERIFY_IDENTITY", nil, "no certificate"},
		{"postgres://shop:x@h/demo?ssl-mode=VERIFY_IDENTITY", ca, "not mysql://"},
	} {
		if _, err := mysqlConfig(secret(tc.uri, tc.ca)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s (CA %v): %v; want an error saying %q", tc.uri, tc.ca != nil, err, tc.want)
		}
	}
}
