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
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/operator101/operator101/internal/mysqlaccount"
	"github.com/operator101/operator101/test/mariadbtest"
)

var server *mariadbtest.Server

// owner is the DatabaseUser the tests' accounts are claimed for.
var owner = mysqlaccount.Claimant{UID: "0b5e1d3c-test", Namespace: "mysqlaccount-test", Name: "hostile"}

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() { // make test: no MariaDB
		os.Exit(m.Run())
	}
	s, err := mariadbtest.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting MariaDB: %v\n", err)
		os.Exit(1)
	}
	server = s
	code := m.Run()
	if err := s.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping MariaDB: %v\n", err)
	}
	os.Exit(code)
}

// hostile names and passwords: quotes, backslashes, comments, statement separators, wildcards, control
// characters, Unicode, the longest name MariaDB allows.
var hostile = []string{
	"o'brien", `a"b`, `back\slash`, `trailing\`, "`tick", "``", "x`; DROP USER operator101admin; --",
	"'; DROP TABLE mysql.db; --", `\'`, "-- comment", "/* c */", "#hash", "a@b", "@", "%", "_", "?",
	"new\nline", "tab\t", "\x1a", "ünïcödé", "用户", "Ω≈ç√", strings.Repeat("x", 80), strings.Repeat("用", 80),
	" leading",
}

var hostilePasswords = append([]string{"nul\x00inside", "key🔑", strings.Repeat("p'\\", 400), "\x00"}, hostile...)

func admin(t *testing.T) *mysqlaccount.Client {
	t.Helper()
	c, err := mysqlaccount.Open(context.Background(), server.Admin, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func accounts(t *testing.T, c *mysqlaccount.Client) map[string]bool {
	t.Helper()
	rows, err := c.DB().Query("SELECT User, Host FROM mysql.user")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	out := map[string]bool{}
	for rows.Next() {
		var u, h string
		if err := rows.Scan(&u, &h); err != nil {
			t.Fatal(err)
		}
		out[u+"@"+h] = true
	}
	return out
}

// TestHostileNamesAndPasswords creates, checks, logs in as and drops an account for every hostile name and
// password, and proves that nothing else changed among the server's accounts.
func TestHostileNamesAndPasswords(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	c := admin(t)
	before := accounts(t, c)
	for i, user := range hostile {
		pw := hostilePasswords[i%len(hostilePasswords)]
		pw2 := hostilePasswords[(i+7)%len(hostilePasswords)]
		db := hostile[(i+3)%len(hostile)]
		if r := []rune(db); len(r) > 64 {
			db = string(r[:64])
		}
		t.Run(fmt.Sprintf("%d", i), func(t *testing.T) {
			a := mysqlaccount.Account{User: user, Host: "%", Password: pw, MaxUserConnections: 3,
				Grants: map[string][]string{db: {"SELECT", "INSERT"}}, Claimant: owner}
			if _, err := c.Ensure(ctx, a); err != nil {
				t.Fatalf("Ensure(%q): %v", user, err)
			}
			var n int
			if err := c.DB().QueryRow("SELECT COUNT(*) FROM mysql.user WHERE User = ? AND Host = '%'", user).Scan(&n); err != nil || n != 1 {
				t.Fatalf("mysql.user has %d rows for %q (%v)", n, user, err)
			}
			var gotDB string
			if err := c.DB().QueryRow("SELECT Db FROM mysql.db WHERE User = ? AND Host = '%'", user).Scan(&gotDB); err != nil || gotDB != mysqlaccount.EscapeDatabasePattern(db) {
				t.Fatalf("mysql.db has %q for %q, want %q (%v)", gotDB, user, mysqlaccount.EscapeDatabasePattern(db), err)
			}
			login := mysqlaccount.Target{Host: server.Admin.Host, Port: server.Admin.Port, User: user, Password: pw}
			if err := mariadbtest.CanLogin(ctx, login, 5*time.Second); err != nil {
				t.Fatalf("login as %q: %v", user, err)
			}
			// Converged: a second Ensure runs nothing.
			if n, err := c.Ensure(ctx, a); err != nil || n != 0 {
				t.Fatalf("second Ensure ran %d statements, %v", n, err)
			}
			// Rotation: the new password works, the old one does not.
			a.Password = pw2
			if _, err := c.Ensure(ctx, a); err != nil {
				t.Fatal(err)
			}
			if pw != pw2 {
				if err := mariadbtest.CanLogin(ctx, login, 5*time.Second); mysqlaccount.KindOf(err) != mysqlaccount.KindAccessDenied {
					t.Fatalf("old password: got %v, want access denied", err)
				}
			}
			login.Password = pw2
			if err := mariadbtest.CanLogin(ctx, login, 5*time.Second); err != nil {
				t.Fatalf("new password: %v", err)
			}
			if dropped, err := c.Drop(ctx, user, "%", owner); err != nil || !dropped.Dropped {
				t.Fatalf("Drop: %v, %v", dropped, err)
			}
		})
	}
	after := accounts(t, c)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("accounts changed: before %v, after %v", before, after)
	}
}

// TestHostileHosts: host parts are quoted like user names.
func TestHostileHosts(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	c := admin(t)
	for _, host := range []string{"127.0.0.1", "local'host", "a`b", "10.0.%", `h\`} {
		a := mysqlaccount.Account{User: "hostile-host", Host: host, Password: "pw", Claimant: owner}
		if _, err := c.Ensure(ctx, a); err != nil {
			t.Fatalf("host %q: %v", host, err)
		}
		var n int
		if err := c.DB().QueryRow("SELECT COUNT(*) FROM mysql.user WHERE User = 'hostile-host' AND Host = ?", host).Scan(&n); err != nil || n != 1 {
			t.Fatalf("host %q: %d rows (%v)", host, n, err)
		}
		if _, err := c.Drop(ctx, "hostile-host", host, owner); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRefusedNames: what MariaDB cannot store is refused before any SQL runs, or classified as invalid.
func TestRefusedNames(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	c := admin(t)
	before := accounts(t, c)
	for _, user := range []string{"nul\x00", "key🔑", "trailing ", strings.Repeat("x", 81)} {
		_, err := c.Ensure(ctx, mysqlaccount.Account{User: user, Host: "%", Password: "pw", Claimant: owner})
		if mysqlaccount.KindOf(err) != mysqlaccount.KindInvalidAccount && !errors.Is(err, mysqlaccount.ErrInvalidName) {
			t.Errorf("user %q: got %v, want an invalid-account error", user, err)
		}
	}
	if fmt.Sprint(before) != fmt.Sprint(accounts(t, c)) {
		t.Errorf("accounts changed")
	}
}

// TestGrantsMatchExactly: grants are applied, privileges given by hand are revoked, ALL PRIVILEGES works.
func TestGrantsMatchExactly(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	c := admin(t)
	a := mysqlaccount.Account{User: "granted", Host: "%", Password: "pw", Grants: map[string][]string{
		"shop_db": {"SELECT", "UPDATE"}, "all": {"ALL PRIVILEGES"}}, Claimant: owner}
	if _, err := c.Ensure(ctx, a); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"GRANT DELETE, GRANT OPTION ON `shop\\_db`.* TO `granted`@`%`",
		"GRANT SELECT ON `other`.* TO `granted`@`%`", "GRANT SELECT ON `shop_db`.* TO `granted`@`%`"} {
		if _, err := c.DB().Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := c.Ensure(ctx, a); err != nil || n == 0 {
		t.Fatalf("repair ran %d statements, %v", n, err)
	}
	o, err := c.Observe(ctx, "granted", "%")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(o.Grants["shop\\_db"]); got != "[SELECT UPDATE]" {
		t.Errorf("shop_db: %s", got)
	}
	if len(o.Grants) != 2 || len(o.Grants["all"]) < 18 {
		t.Errorf("grants: %v", o.Grants)
	}
	a.Grants = nil
	if _, err := c.Ensure(ctx, a); err != nil {
		t.Fatal(err)
	}
	if o, _ := c.Observe(ctx, "granted", "%"); len(o.Grants) != 0 {
		t.Errorf("grants left: %v", o.Grants)
	}
	if _, err := c.Drop(ctx, "granted", "%", owner); err != nil {
		t.Fatal(err)
	}
}

// TestUnreachableAndDenied: the errors a condition tells apart.
func TestUnreachableAndDenied(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	bad := server.Admin
	bad.Password = "wrong-admin-password"
	_, err := mysqlaccount.Open(ctx, bad, 5*time.Second)
	if mysqlaccount.KindOf(err) != mysqlaccount.KindAccessDenied {
		t.Errorf("wrong password: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), bad.Password) {
		t.Errorf("error carries the password: %v", err)
	}
	closed := server.Admin
	closed.Port = 1
	if _, err := mysqlaccount.Open(ctx, closed, 2*time.Second); mysqlaccount.KindOf(err) != mysqlaccount.KindUnreachable {
		t.Errorf("closed port: %v", err)
	}
}
