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

package mysqlaccount

import (
	"reflect"
	"strings"
	"testing"
)

// TestPlanRequireAndHourlyLimits: REQUIRE and the hourly limits, planned for every flavour and version
// operator101 supports (MySQL's only here: no MySQL server can run on the development machine). The statements
// are the same on both flavours; what differs is how the password is set, so each case is planned on an account
// whose password already matches.
func TestPlanRequireAndHourlyLimits(t *testing.T) {
	const pw = "pw"
	owner := Claimant{UID: "uid-1", Namespace: "team", Name: "app"}
	native := NativePasswordHash(pw)
	sha2, err := cachingSHA2AuthString(pw, salt)
	if err != nil {
		t.Fatal(err)
	}
	digest := passwordDigest(pw, owner, "app", "%")
	converged := func(s Server) Observed {
		if s.Flavor == MariaDB {
			return Observed{Exists: true, Plugin: "mysql_native_password", AuthString: native,
				serverPrivileges: serverPrivileges(s), Claim: &claim{Claimant: owner}}
		}
		return Observed{Exists: true, Plugin: "caching_sha2_password", AuthString: "$A$005$stored",
			serverPrivileges: serverPrivileges(s), Claim: &claim{Claimant: owner, PasswordDigest: digest, AuthString: "$A$005$stored"}}
	}
	identified := func(s Server) string {
		if s.Flavor == MariaDB {
			return "IDENTIFIED BY PASSWORD '" + native + "'"
		}
		return "IDENTIFIED WITH caching_sha2_password AS '" + sha2 + "'"
	}
	base := Account{User: "app", Host: "%", Password: pw, Claimant: owner}
	with := func(f func(*Account)) Account { a := base; f(&a); return a }
	observed := func(f func(*Observed)) func(Server) Observed {
		return func(s Server) Observed { o := converged(s); f(&o); return o }
	}

	for _, tc := range []struct {
		name string
		a    Account
		o    func(Server) Observed // nil: absent
		want []string              // %I is the flavour's IDENTIFIED clause
	}{{
		name: "created requiring TLS, with hourly limits",
		a: with(func(a *Account) {
			a.TLS = TLSRequirement{Require: RequireSSL}
			a.MaxQueriesPerHour, a.MaxUpdatesPerHour, a.MaxConnectionsPerHour = 1000, 100, 10
		}),
		want: []string{"CREATE USER `app`@`%` %I REQUIRE SSL WITH MAX_USER_CONNECTIONS 0 " +
			"MAX_QUERIES_PER_HOUR 1000 MAX_UPDATES_PER_HOUR 100 MAX_CONNECTIONS_PER_HOUR 10"},
	}, {
		name: "created requiring a client certificate",
		a:    with(func(a *Account) { a.TLS = TLSRequirement{Require: RequireX509} }),
		want: []string{"CREATE USER `app`@`%` %I REQUIRE X509 WITH MAX_USER_CONNECTIONS 0"},
	}, {
		name: "created requiring a subject and an issuer",
		a: with(func(a *Account) {
			a.TLS = TLSRequirement{Require: RequireX509, Subject: "/O=Example/CN=app", Issuer: "/O=Example/CN=Example CA"}
		}),
		want: []string{"CREATE USER `app`@`%` %I REQUIRE SUBJECT '/O=Example/CN=app' AND ISSUER '/O=Example/CN=Example CA' WITH MAX_USER_CONNECTIONS 0"},
	}, {
		name: "created requiring an issuer only",
		a:    with(func(a *Account) { a.TLS = TLSRequirement{Require: RequireX509, Issuer: "/CN=CA"} }),
		want: []string{"CREATE USER `app`@`%` %I REQUIRE ISSUER '/CN=CA' WITH MAX_USER_CONNECTIONS 0"},
	}, {
		name: "no requirement and no limits: created as before",
		a:    base,
		want: []string{"CREATE USER `app`@`%` %I WITH MAX_USER_CONNECTIONS 0"},
	}, {
		name: "converged with a subject, an issuer and limits",
		a: with(func(a *Account) {
			a.TLS = TLSRequirement{Require: RequireX509, Subject: "/CN=app", Issuer: "/CN=CA"}
			a.MaxQueriesPerHour = 5
		}),
		o: observed(func(o *Observed) {
			o.SSLType, o.X509Subject, o.X509Issuer, o.MaxQuestions = "SPECIFIED", "/CN=app", "/CN=CA", 5
		}),
	}, {
		name: "requirement added to an existing account",
		a:    with(func(a *Account) { a.TLS = TLSRequirement{Require: RequireSSL} }),
		o:    converged,
		want: []string{"ALTER USER `app`@`%` REQUIRE SSL"},
	}, {
		name: "requirement dropped",
		a:    base,
		o:    observed(func(o *Observed) { o.SSLType = "X509" }),
		want: []string{"ALTER USER `app`@`%` REQUIRE NONE"},
	}, {
		name: "a cipher set by hand is taken back",
		a:    with(func(a *Account) { a.TLS = TLSRequirement{Require: RequireX509, Subject: "/CN=app"} }),
		o:    observed(func(o *Observed) { o.SSLType, o.X509Subject, o.SSLCipher = "SPECIFIED", "/CN=app", "NULL-SHA" }),
		want: []string{"ALTER USER `app`@`%` REQUIRE SUBJECT '/CN=app'"},
	}, {
		name: "subject changed",
		a:    with(func(a *Account) { a.TLS = TLSRequirement{Require: RequireX509, Subject: "/CN=new"} }),
		o:    observed(func(o *Observed) { o.SSLType, o.X509Subject = "SPECIFIED", "/CN=old" }),
		want: []string{"ALTER USER `app`@`%` REQUIRE SUBJECT '/CN=new'"},
	}, {
		name: "hourly limits changed by hand are set back, all three in one statement",
		a:    with(func(a *Account) { a.MaxUpdatesPerHour = 100 }),
		o:    observed(func(o *Observed) { o.MaxUpdates, o.MaxConnections = 7, 3 }),
		want: []string{"ALTER USER `app`@`%` WITH MAX_QUERIES_PER_HOUR 0 MAX_UPDATES_PER_HOUR 100 MAX_CONNECTIONS_PER_HOUR 0"},
	}} {
		for _, s := range []Server{mariadb106, mariadb1011, mariadb118, mysql80, mysql84, mysql91} {
			t.Run(tc.name+"/"+s.String(), func(t *testing.T) {
				o := Observed{serverPrivileges: serverPrivileges(s), Claim: &claim{Claimant: owner}}
				if tc.o != nil {
					o = tc.o(s)
				}
				got, _, err := planChecked(tc.a, &o, s, &sha2Crypter{salt: salt})
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				for _, w := range tc.want {
					want = append(want, strings.ReplaceAll(w, "%I", identified(s)))
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			})
		}
	}
}

// TestPlanRefusesBadDistinguishedNames: a subject or issuer with a quote, a backslash or a control character is
// refused before any statement (it could change meaning with sql_mode's NO_BACKSLASH_ESCAPES, or end the
// literal), and so is a requirement that is not SSL or X509.
func TestPlanRefusesBadDistinguishedNames(t *testing.T) {
	for name, r := range map[string]TLSRequirement{
		"quote":        {Require: RequireX509, Subject: "/CN=a' OR '1"},
		"backslash":    {Require: RequireX509, Issuer: `/CN=a\'`},
		"newline":      {Require: RequireX509, Subject: "/CN=a\n"},
		"too long":     {Require: RequireX509, Subject: strings.Repeat("a", MaxDistinguishedNameLength+1)},
		"not UTF-8":    {Require: RequireX509, Subject: "\xff"},
		"unknown kind": {Require: "CIPHER"},
	} {
		a := Account{User: "u", Host: "%", TLS: r}
		if _, _, err := planChecked(a, &Observed{}, mysql84, &sha2Crypter{salt: salt}); KindOf(err) != KindInvalidAccount {
			t.Errorf("%s: got %v, want an InvalidAccount error", name, err)
		}
	}
}
