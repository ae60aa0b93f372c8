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
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
)

var (
	mariadb106  = Server{Flavor: MariaDB, Major: 10, Minor: 6, Patch: 21}
	mariadb1011 = Server{Flavor: MariaDB, Major: 10, Minor: 11, Patch: 19}
	mariadb118  = Server{Flavor: MariaDB, Major: 11, Minor: 8, Patch: 3}
	mysql80     = Server{Flavor: MySQL, Major: 8, Minor: 0, Patch: 40}
	mysql84     = Server{Flavor: MySQL, Major: 8, Minor: 4, Patch: 3}
	mysql91     = Server{Flavor: MySQL, Major: 9, Minor: 1, Patch: 0}
)

const salt = "abcdefghijklmnopqrst"

// TestPlanPerFlavour: the same desired accounts, planned for each flavour and version operator101 supports.
func TestPlanPerFlavour(t *testing.T) {
	const pw = "s3cret'; DROP USER x; --"
	owner := Claimant{UID: "uid-1", Namespace: "team", Name: "app"}
	native := NativePasswordHash(pw)
	sha2, err := cachingSHA2AuthString(pw, salt)
	if err != nil {
		t.Fatal(err)
	}
	digest := passwordDigest(pw, owner, "app", "%")
	mariadbPrivs := serverPrivileges(mariadb1011)
	mysqlPrivs := serverPrivileges(mysql84)
	ours := func(digest, auth string) *claim {
		return &claim{Claimant: owner, PasswordDigest: digest, AuthString: auth}
	}

	type flavour struct {
		servers []Server
		o       Observed
		want    []string
		sets    bool
	}
	for _, tc := range []struct {
		name     string
		a        Account
		flavours []flavour
	}{{
		name: "absent account is created with its grants",
		a:    Account{User: "app", Host: "%", Password: pw, Claimant: owner, Grants: map[string][]string{"shop_db": {"SELECT", "INSERT"}}},
		flavours: []flavour{{
			servers: []Server{mariadb106, mariadb1011, mariadb118},
			o:       Observed{serverPrivileges: mariadbPrivs, Claim: ours("", "")},
			want: []string{
				"CREATE USER `app`@`%` IDENTIFIED BY PASSWORD '" + native + "' WITH MAX_USER_CONNECTIONS 0",
				"GRANT INSERT, SELECT ON `shop\\_db`.* TO `app`@`%`",
			},
			sets: true,
		}, {
			servers: []Server{mysql80, mysql84, mysql91},
			o:       Observed{serverPrivileges: mysqlPrivs, Claim: ours("", "")},
			want: []string{
				"CREATE USER `app`@`%` IDENTIFIED WITH caching_sha2_password AS '" + sha2 + "' WITH MAX_USER_CONNECTIONS 0",
				"GRANT INSERT, SELECT ON `shop\\_db`.* TO `app`@`%`",
			},
			sets: true,
		}},
	}, {
		name: "converged account needs nothing",
		a:    Account{User: "app", Host: "%", Password: pw, Claimant: owner, MaxUserConnections: 5, Grants: map[string][]string{"d": {"SELECT"}}},
		flavours: []flavour{{
			servers: []Server{mariadb106, mariadb1011, mariadb118},
			o: Observed{Exists: true, Plugin: "mysql_native_password", AuthString: native, MaxUserConnections: 5,
				Grants: map[string][]string{"d": {"SELECT"}}, serverPrivileges: mariadbPrivs, Claim: ours("", "")},
		}, {
			servers: []Server{mysql80, mysql84, mysql91},
			o: Observed{Exists: true, Plugin: "caching_sha2_password", AuthString: "$A$005$stored", MaxUserConnections: 5,
				Grants: map[string][]string{"d": {"SELECT"}}, serverPrivileges: mysqlPrivs, Claim: ours(digest, "$A$005$stored")},
		}},
	}, {
		name: "the Secret changed",
		a:    Account{User: "app", Host: "%", Password: pw, Claimant: owner, MaxUserConnections: 5},
		flavours: []flavour{{
			servers: []Server{mariadb1011},
			o: Observed{Exists: true, Plugin: "mysql_native_password", AuthString: "*OLD", MaxUserConnections: 5,
				serverPrivileges: mariadbPrivs, Claim: ours("", "")},
			want: []string{"ALTER USER `app`@`%` IDENTIFIED BY PASSWORD '" + native + "'"},
			sets: true,
		}, {
			servers: []Server{mysql80, mysql84, mysql91},
			o: Observed{Exists: true, Plugin: "caching_sha2_password", AuthString: "$A$005$stored", MaxUserConnections: 5,
				serverPrivileges: mysqlPrivs, Claim: ours(passwordDigest("old", owner, "app", "%"), "$A$005$stored")},
			want: []string{"ALTER USER `app`@`%` IDENTIFIED WITH caching_sha2_password AS '" + sha2 + "'"},
			sets: true,
		}},
	}, {
		name: "the password was changed by hand in the server",
		a:    Account{User: "app", Host: "%", Password: pw, Claimant: owner},
		flavours: []flavour{{
			servers: []Server{mysql84},
			o: Observed{Exists: true, Plugin: "caching_sha2_password", AuthString: "$A$005$byhand", serverPrivileges: mysqlPrivs,
				Claim: ours(digest, "$A$005$stored")},
			want: []string{"ALTER USER `app`@`%` IDENTIFIED WITH caching_sha2_password AS '" + sha2 + "'"},
			sets: true,
		}, {
			servers: []Server{mysql80},
			o: Observed{Exists: true, Plugin: "mysql_native_password", AuthString: native, serverPrivileges: mysqlPrivs,
				Claim: ours(digest, native)},
			want: []string{"ALTER USER `app`@`%` IDENTIFIED WITH caching_sha2_password AS '" + sha2 + "'"},
			sets: true,
		}, {
			servers: []Server{mariadb118},
			o:       Observed{Exists: true, Plugin: "ed25519", AuthString: "x", serverPrivileges: mariadbPrivs, Claim: ours("", "")},
			want:    []string{"ALTER USER `app`@`%` IDENTIFIED BY PASSWORD '" + native + "'"},
			sets:    true,
		}},
	}, {
		name: "limit, extra and missing privileges, grants on another database and GRANT OPTION",
		a:    Account{User: "app", Host: "%", Password: pw, Claimant: owner, Grants: map[string][]string{"d": {"SELECT", "UPDATE"}}},
		flavours: []flavour{{
			servers: []Server{mariadb1011},
			o: Observed{Exists: true, Plugin: "mysql_native_password", AuthString: native, MaxUserConnections: 3,
				Grants: map[string][]string{"d": {"DELETE", "GRANT OPTION", "SELECT"}, "other": {"SELECT"}}, serverPrivileges: mariadbPrivs,
				Claim: ours("", "")},
			want: []string{
				"ALTER USER `app`@`%` WITH MAX_USER_CONNECTIONS 0",
				"REVOKE DELETE, GRANT OPTION ON `d`.* FROM `app`@`%`",
				"GRANT UPDATE ON `d`.* TO `app`@`%`",
				"REVOKE SELECT ON `other`.* FROM `app`@`%`",
			},
		}},
	}, {
		name: "ALL PRIVILEGES expands to what the server has",
		a:    Account{User: "app", Host: "%", Password: pw, Claimant: owner, Grants: map[string][]string{"d": {"ALL PRIVILEGES"}}},
		flavours: []flavour{{
			servers: []Server{mariadb1011, mysql84},
			o: Observed{Exists: true, Plugin: "mysql_native_password", AuthString: native, Grants: map[string][]string{"d": {"SELECT"}},
				serverPrivileges: []string{"INSERT", "SELECT"}, Claim: ours(digest, native)},
			want: []string{"GRANT INSERT ON `d`.* TO `app`@`%`"},
		}},
	}} {
		for _, f := range tc.flavours {
			for _, s := range f.servers {
				t.Run(tc.name+"/"+s.String(), func(t *testing.T) {
					o := f.o
					if s.Flavor == MySQL && tc.name == "ALL PRIVILEGES expands to what the server has" {
						o.Plugin, o.AuthString = "caching_sha2_password", "$A$005$stored"
						o.Claim = ours(digest, "$A$005$stored")
					}
					got, sets, err := planChecked(tc.a, &o, s, &sha2Crypter{salt: salt})
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, f.want) || sets != f.sets {
						t.Errorf("got (sets password %v)\n%s\nwant (%v)\n%s", sets, strings.Join(got, "\n"), f.sets, strings.Join(f.want, "\n"))
					}
					for _, stmt := range got {
						if strings.Contains(stmt, pw) {
							t.Errorf("statement carries the password: %s", stmt)
						}
					}
				})
			}
		}
	}
}

func TestPlanRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		a Account
		s Server
	}{
		"privilege outside the allow-list": {Account{User: "u", Host: "%", Grants: map[string][]string{"d": {"SUPER"}}}, mariadb1011},
		"database with NUL":                {Account{User: "u", Host: "%", Grants: map[string][]string{"d\x00": {"SELECT"}}}, mariadb1011},
		"system schema":                    {Account{User: "u", Host: "%", Grants: map[string][]string{"MySQL": {"SELECT"}}}, mariadb1011},
		"operator101's records":            {Account{User: "u", Host: "%", Grants: map[string][]string{"operator101": {"SELECT"}}}, mysql84},
		"DELETE HISTORY is MariaDB's only": {Account{User: "u", Host: "%", Grants: map[string][]string{"d": {"DELETE HISTORY"}}}, mysql84},
	} {
		if _, _, err := planChecked(tc.a, &Observed{}, tc.s, &sha2Crypter{salt: salt}); KindOf(err) != KindInvalidGrant {
			t.Errorf("%s: got %v, want an InvalidGrant error", name, err)
		}
	}
	if _, _, err := planChecked(Account{User: "u\x00", Host: "%"}, &Observed{}, mariadb1011, &sha2Crypter{salt: salt}); !errors.Is(err, ErrInvalidName) {
		t.Errorf("user with NUL: got %v", err)
	}
}

// TestPasswordLength: on MySQL (caching_sha2_password), a password of MaxCachingSHA2PasswordLength bytes is
// planned and one byte more is refused with KindPasswordTooLong before any SHA-crypt runs, whether the account
// is new or its password is set again; the length is counted in bytes, as MySQL counts it. The error carries
// the lengths, not the password. MariaDB (mysql_native_password) has no such limit. Ensure refuses before it
// asks its connection pool for a connection.
func TestPasswordLength(t *testing.T) {
	owner := Claimant{UID: "uid-1", Namespace: "team", Name: "app"}
	atLimit := strings.Repeat("p", MaxCachingSHA2PasswordLength)
	over := atLimit + "q"
	wide := strings.Repeat("用", 85) + "x" // 256 bytes, 86 characters
	wideOver := strings.Repeat("用", 86)   // 258 bytes, 86 characters
	if MaxCachingSHA2PasswordLength != 256 || len(wide) != 256 || len(wideOver) != 258 {
		t.Fatalf("limit %d, test passwords of %d and %d bytes", MaxCachingSHA2PasswordLength, len(wide), len(wideOver))
	}
	observed := map[string]func() *Observed{
		"new account": func() *Observed { return &Observed{Claim: &claim{Claimant: owner}} },
		"rotation": func() *Observed {
			return &Observed{Exists: true, Plugin: "caching_sha2_password", AuthString: "$A$005$stored",
				Claim: &claim{Claimant: owner, PasswordDigest: passwordDigest("old", owner, "app", "%"), AuthString: "$A$005$stored"}}
		},
	}
	for _, s := range []Server{mysql80, mysql84, mysql91} {
		if got := s.MaxPasswordLength(); got != MaxCachingSHA2PasswordLength {
			t.Errorf("%s: MaxPasswordLength %d", s, got)
		}
		for what, o := range observed {
			for _, pw := range []string{atLimit, wide} {
				crypt := &sha2Crypter{salt: salt}
				stmts, sets, err := planChecked(Account{User: "app", Host: "%", Password: pw, Claimant: owner}, o(), s, crypt)
				if err != nil || !sets || len(stmts) != 1 || !strings.Contains(stmts[0], "caching_sha2_password AS '$A$005$"+salt) {
					t.Errorf("%s, %s, %d bytes: %q, sets %v, %v", s, what, len(pw), stmts, sets, err)
				}
				if n := crypt.runs; n != 1 {
					t.Errorf("%s, %s, %d bytes: %d SHA-crypts, want 1", s, what, len(pw), n)
				}
			}
			for _, pw := range []string{over, wideOver} {
				crypt := &sha2Crypter{salt: salt}
				stmts, _, err := planChecked(Account{User: "app", Host: "%", Password: pw, Claimant: owner}, o(), s, crypt)
				if KindOf(err) != KindPasswordTooLong || stmts != nil {
					t.Errorf("%s, %s, %d bytes: %q, %v; want KindPasswordTooLong", s, what, len(pw), stmts, err)
					continue
				}
				if n := crypt.runs; n != 0 {
					t.Errorf("%s, %s, %d bytes: %d SHA-crypts before the refusal", s, what, len(pw), n)
				}
				msg := err.Error()
				for _, want := range []string{fmt.Sprint(len(pw)), "256", s.String(), "caching_sha2_password"} {
					if !strings.Contains(msg, want) {
						t.Errorf("%s: the error does not say %q: %s", s, want, msg)
					}
				}
				if strings.Contains(msg, strings.Repeat("p", 8)) || strings.Contains(msg, "用") {
					t.Errorf("the error carries the password: %s", msg)
				}
			}
		}

		// Ensure refuses before it reads or runs anything: its pool counts the connections asked of it.
		pool := &countingConnector{}
		c := &Client{db: sql.OpenDB(pool), server: s, admin: "operator101admin"}
		if n, err := c.Ensure(context.Background(), Account{User: "app", Host: "%", Password: over, Claimant: owner}); n != 0 ||
			KindOf(err) != KindPasswordTooLong {
			t.Errorf("%s: Ensure with %d bytes: %d statements, %v", s, len(over), n, err)
		}
		if n := c.sha2CryptRuns; n != 0 {
			t.Errorf("%s: Ensure ran %d SHA-crypts", s, n)
		}
		if n := pool.conns.Load(); n != 0 {
			t.Errorf("%s: Ensure asked for %d connections for a password it cannot set", s, n)
		}
		_ = c.Close()
	}
	if _, err := cachingSHA2AuthString(over, salt); err == nil {
		t.Errorf("cachingSHA2AuthString of %d bytes: %v", len(over), err)
	}

	// MariaDB: mysql_native_password has no limit; the hash costs time in proportion to the length.
	long := strings.Repeat("p", 1<<20)
	for _, s := range []Server{mariadb106, mariadb1011, mariadb118} {
		if got := s.MaxPasswordLength(); got != 0 {
			t.Errorf("%s: MaxPasswordLength %d, want 0 (none)", s, got)
		}
		for _, pw := range []string{over, long} {
			stmts, _, err := planChecked(Account{User: "app", Host: "%", Password: pw, Claimant: owner}, &Observed{}, s, &sha2Crypter{salt: salt})
			if err != nil || len(stmts) != 1 || !strings.Contains(stmts[0], NativePasswordHash(pw)) {
				t.Errorf("%s, %d bytes: %v", s, len(pw), err)
			}
		}
	}
}

// TestConvergedAccountRunsNoSHA2Crypt: a converged MySQL account is checked every resync; its check compares
// the claim's digest and the server's string and computes no SHA-crypt. The SHA-crypt runs once when the
// password is set again (the Secret changed, or the password was changed by hand).
func TestConvergedAccountRunsNoSHA2Crypt(t *testing.T) {
	owner := Claimant{UID: "uid-1", Namespace: "team", Name: "app"}
	pw := strings.Repeat("p", MaxCachingSHA2PasswordLength)
	a := Account{User: "app", Host: "%", Password: pw, Claimant: owner}
	converged := func(digest, stored string) *Observed {
		return &Observed{Exists: true, Plugin: "caching_sha2_password", AuthString: "$A$005$stored",
			Claim: &claim{Claimant: owner, PasswordDigest: digest, AuthString: stored}}
	}
	digest := passwordDigest(pw, owner, "app", "%")
	crypt := &sha2Crypter{salt: salt}
	for range 3 { // three resyncs
		stmts, sets, err := planChecked(a, converged(digest, "$A$005$stored"), mysql84, crypt)
		if err != nil || sets || len(stmts) != 0 {
			t.Fatalf("converged: %q, sets %v, %v", stmts, sets, err)
		}
	}
	if n := crypt.runs; n != 0 {
		t.Errorf("%d SHA-crypts over 3 checks of a converged account, want 0", n)
	}
	for what, o := range map[string]*Observed{
		"the Secret changed":     converged(passwordDigest("old", owner, "app", "%"), "$A$005$stored"),
		"the password was reset": converged(digest, "$A$005$other"),
	} {
		crypt := &sha2Crypter{salt: salt}
		if stmts, sets, err := planChecked(a, o, mysql84, crypt); err != nil || !sets || len(stmts) != 1 {
			t.Errorf("%s: %q, sets %v, %v", what, stmts, sets, err)
		}
		if n := crypt.runs; n != 1 {
			t.Errorf("%s: %d SHA-crypts, want 1", what, n)
		}
	}
}

// countingConnector is a connection pool's connector that counts the connections asked of it and makes none.
type countingConnector struct{ conns atomic.Int64 }

func (c *countingConnector) Connect(context.Context) (driver.Conn, error) {
	c.conns.Add(1)
	return nil, errors.New("no server here")
}

func (c *countingConnector) Driver() driver.Driver { return c }

func (c *countingConnector) Open(string) (driver.Conn, error) { return c.Connect(context.Background()) }

// planChecked is what Ensure does with a before it reads (refuse), then plan with the name refuse quoted; sets
// says whether the statements set the password.
func planChecked(a Account, o *Observed, s Server, crypt *sha2Crypter) (stmts []string, sets bool, err error) {
	acct, err := refuse(a, s, "operator101admin", notOwned(a.User, a.Host))
	if err != nil {
		return nil, false, err
	}
	stmts, digest, err := plan(a, acct, o, s, crypt)
	return stmts, digest != "", err
}
