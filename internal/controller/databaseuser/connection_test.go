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

package databaseuser

import (
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/managed"
	"github.com/operator101/operator101/internal/mysqlaccount"
)

func connDBU(cs *mygroupv1alpha1.ConnectionSecret, grants ...string) *mygroupv1alpha1.DatabaseUser {
	d := &mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "app", UID: "u-1"},
		Spec: mygroupv1alpha1.DatabaseUserSpec{User: "team_app", ConnectionSecret: cs}}
	for _, g := range grants {
		d.Spec.Grants = append(d.Spec.Grants, mygroupv1alpha1.Grant{Database: g, Privileges: []mygroupv1alpha1.Privilege{"SELECT"}})
	}
	return d
}

// TestConnectionSecretForms: the keys, their default names, and the ready-made forms for each flavour and TLS
// mode, with a password that needs escaping in a URI.
func TestConnectionSecretForms(t *testing.T) {
	const pw = "p@ss:/?w%rd"
	for _, tc := range []struct {
		name     string
		flavor   mysqlaccount.Flavor
		mode     mygroupv1alpha1.TLSMode
		cs       mygroupv1alpha1.ConnectionSecret
		grants   []string
		wantDB   string
		uri      string
		dsn      string
		jdbc     string
		caCert   string
		keyNames []string
	}{{
		name: "MariaDB, VerifyFull, the first grant's database", flavor: mysqlaccount.MariaDB, mode: mygroupv1alpha1.TLSVerifyFull,
		cs: mygroupv1alpha1.ConnectionSecret{Name: "app-conn"}, grants: []string{"team_shop", "team_other"}, wantDB: "team_shop",
		uri:      "mysql://team_app:p%40ss%3A%2F%3Fw%25rd@db.example:3307/team_shop?ssl-mode=VERIFY_IDENTITY",
		dsn:      "team_app:p@ss:/?w%rd@tcp(db.example:3307)/team_shop?tls=true",
		jdbc:     "jdbc:mariadb://db.example:3307/team_shop?password=p%40ss%3A%2F%3Fw%25rd&sslMode=verify-full&user=team_app",
		caCert:   "CA",
		keyNames: []string{"username", "password", "host", "port", "database", "ca.crt", "uri", "dsn", "jdbcUrl"},
	}, {
		name: "MySQL, VerifyCA, database named, keys templated", flavor: mysqlaccount.MySQL, mode: mygroupv1alpha1.TLSVerifyCA,
		cs: mygroupv1alpha1.ConnectionSecret{Name: "app-conn", Database: "team_x", SecretTemplate: mygroupv1alpha1.ConnectionSecretTemplate{
			UsernameKey: "DB_USER", PasswordKey: "DB_PASSWORD", HostKey: "DB_HOST", PortKey: "DB_PORT", DatabaseKey: "DB_NAME",
			CACertKey: "ca.pem", URIKey: "DATABASE_URL", DSNKey: "GO_DSN", JDBCKey: "JDBC_URL"}},
		grants: []string{"team_shop"}, wantDB: "team_x",
		uri:      "mysql://team_app:p%40ss%3A%2F%3Fw%25rd@db.example:3307/team_x?ssl-mode=VERIFY_CA",
		dsn:      "team_app:p@ss:/?w%rd@tcp(db.example:3307)/team_x?tls=true",
		jdbc:     "jdbc:mysql://db.example:3307/team_x?password=p%40ss%3A%2F%3Fw%25rd&sslMode=VERIFY_CA&user=team_app",
		keyNames: []string{"DB_USER", "DB_PASSWORD", "DB_HOST", "DB_PORT", "DB_NAME", "ca.pem", "DATABASE_URL", "GO_DSN", "JDBC_URL"},
	}, {
		name: "MySQL, Required, no database", flavor: mysqlaccount.MySQL, mode: mygroupv1alpha1.TLSRequired,
		cs:       mygroupv1alpha1.ConnectionSecret{Name: "app-conn"},
		uri:      "mysql://team_app:p%40ss%3A%2F%3Fw%25rd@db.example:3307/?ssl-mode=REQUIRED",
		dsn:      "team_app:p@ss:/?w%rd@tcp(db.example:3307)/?tls=skip-verify",
		jdbc:     "jdbc:mysql://db.example:3307/?password=p%40ss%3A%2F%3Fw%25rd&sslMode=REQUIRED&user=team_app",
		keyNames: []string{"username", "password", "host", "port", "database", "ca.crt", "uri", "dsn", "jdbcUrl"},
	}, {
		name: "MariaDB, Disabled", flavor: mysqlaccount.MariaDB, mode: mygroupv1alpha1.TLSDisabled,
		cs: mygroupv1alpha1.ConnectionSecret{Name: "app-conn"}, grants: []string{"team_shop"}, wantDB: "team_shop",
		uri:      "mysql://team_app:p%40ss%3A%2F%3Fw%25rd@db.example:3307/team_shop?ssl-mode=DISABLED",
		dsn:      "team_app:p@ss:/?w%rd@tcp(db.example:3307)/team_shop?tls=false",
		jdbc:     "jdbc:mariadb://db.example:3307/team_shop?password=p%40ss%3A%2F%3Fw%25rd&sslMode=disable&user=team_app",
		keyNames: []string{"username", "password", "host", "port", "database", "ca.crt", "uri", "dsn", "jdbcUrl"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			cs := tc.cs
			dbu := connDBU(&cs, tc.grants...)
			var ca []byte
			if tc.caCert != "" {
				ca = []byte(tc.caCert)
			}
			s := ConnectionSecret(dbu, connection{endpoint: mygroupv1alpha1.ApplicationEndpoint{Host: "db.example", Port: 3307, TLSMode: tc.mode},
				flavor: tc.flavor, password: pw, ca: ca})
			if *s.Name != "app-conn" || *s.Namespace != "team" || s.Labels[managed.ByLabel] != managed.By {
				t.Errorf("name %s/%s, labels %v", *s.Namespace, *s.Name, s.Labels)
			}
			if len(s.OwnerReferences) != 1 || *s.OwnerReferences[0].UID != "u-1" || !*s.OwnerReferences[0].Controller {
				t.Errorf("owner references %+v", s.OwnerReferences)
			}
			k := tc.keyNames
			if len(s.Data) != len(k) {
				t.Errorf("keys %d, want %d", len(s.Data), len(k))
			}
			for key, want := range map[string]string{k[0]: "team_app", k[1]: pw, k[2]: "db.example", k[3]: "3307", k[4]: tc.wantDB,
				k[5]: tc.caCert, k[6]: tc.uri, k[7]: tc.dsn, k[8]: tc.jdbc} {
				got, ok := s.Data[key]
				if !ok || string(got) != want {
					t.Errorf("key %q = %q (present %v), want %q", key, got, ok, want)
				}
			}
			// The DSN reads back as the driver parses it.
			cfg, err := mysql.ParseDSN(tc.dsn)
			if err != nil || cfg.Passwd != pw || cfg.User != "team_app" || cfg.DBName != tc.wantDB {
				t.Errorf("ParseDSN: %+v, %v", cfg, err)
			}
		})
	}
}

// TestConnectionSecretTemplateMetadata: the template's labels and annotations are added; the operator's own
// label cannot be taken away; the port defaults to 3306 and the TLS mode to VerifyFull.
func TestConnectionSecretTemplateMetadata(t *testing.T) {
	dbu := connDBU(&mygroupv1alpha1.ConnectionSecret{Name: "c", SecretTemplate: mygroupv1alpha1.ConnectionSecretTemplate{
		Labels:      map[string]string{"app": "shop", managed.ByLabel: "someone-else"},
		Annotations: map[string]string{"note": "x"}}})
	s := ConnectionSecret(dbu, connection{endpoint: mygroupv1alpha1.ApplicationEndpoint{Host: "h"}, password: "pw"})
	if s.Labels["app"] != "shop" || s.Labels[managed.ByLabel] != managed.By || s.Annotations["note"] != "x" {
		t.Errorf("labels %v, annotations %v", s.Labels, s.Annotations)
	}
	if string(s.Data["port"]) != "3306" || !strings.HasSuffix(string(s.Data["uri"]), "ssl-mode=VERIFY_IDENTITY") {
		t.Errorf("port %q, uri %q", s.Data["port"], s.Data["uri"])
	}
	if dbu.Spec.ConnectionSecret.SecretTemplate.Labels[managed.ByLabel] != "someone-else" {
		t.Error("the builder changed the spec's labels")
	}
}

// TestGeneratePassword: 32 characters of letters and digits, different each time.
func TestGeneratePassword(t *testing.T) {
	seen := map[string]bool{}
	counts := map[rune]int{}
	for range 200 {
		p, err := GeneratePassword()
		if err != nil {
			t.Fatal(err)
		}
		if len(p) != 32 || strings.Trim(p, passwordAlphabet) != "" {
			t.Fatalf("password of %d characters outside the alphabet", len(p))
		}
		if seen[p] {
			t.Fatal("a password repeated")
		}
		seen[p] = true
		for _, r := range p {
			counts[r]++
		}
	}
	// 6400 draws over 62 characters: every one is drawn (the chance that one is not is below 1e-40).
	if len(counts) != len(passwordAlphabet) {
		t.Errorf("%d distinct characters drawn, want %d", len(counts), len(passwordAlphabet))
	}
}

// TestPasswordSecret: the generated password's Secret is <name>-password, key password, labelled and
// controlled by the DatabaseUser.
func TestPasswordSecret(t *testing.T) {
	dbu := connDBU(nil)
	s := PasswordSecret(dbu, "pw")
	if *s.Name != "app-password" || *s.Namespace != "team" || string(s.Data["password"]) != "pw" || len(s.Data) != 1 ||
		s.Labels[managed.ByLabel] != managed.By || len(s.OwnerReferences) != 1 || !*s.OwnerReferences[0].Controller {
		t.Errorf("%+v", s)
	}
}
