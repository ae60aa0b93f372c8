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
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/operator101/operator101/internal/mysqlaccount"
	"github.com/operator101/operator101/test/mariadbtest"
)

// privileges is every row of mysql.user (with its hash), mysql.db and the claims, as text.
func privileges(t *testing.T, c *mysqlaccount.Client) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		"SELECT User, Host, plugin, authentication_string, max_user_connections FROM mysql.user ORDER BY 1, 2",
		"SELECT * FROM mysql.db ORDER BY User, Host, Db",
		"SELECT * FROM operator101.accounts ORDER BY 1, 2",
	} {
		rows, err := c.DB().Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		writeRows(t, &b, rows)
	}
	return b.String()
}

// writeRows writes each of rows' rows to b as a line of text, every column whatever its type, and closes rows.
func writeRows(t *testing.T, b *strings.Builder, rows *sql.Rows) {
	t.Helper()
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		vals, ptrs := make([]any, len(cols)), make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(b, "%s\n", vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestOnlyWhatItOwns: what Ensure and Drop refuse, with the privilege tables read back before and after; and
// that an owner keeps full function, and adoption works only when asked for.
func TestOnlyWhatItOwns(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	c := admin(t)
	alice := mysqlaccount.Claimant{UID: "uid-alice", Namespace: "team-a", Name: "alice"}
	bob := mysqlaccount.Claimant{UID: "uid-bob", Namespace: "team-b", Name: "bob"}
	for _, stmt := range []string{
		"CREATE USER 'byhand'@'%' IDENTIFIED BY 'hand'",
		"CREATE USER 'pinned'@'10.1.2.3' IDENTIFIED BY 'hand'",
	} {
		if _, err := c.DB().Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _, _ = c.DB().Exec("DROP USER IF EXISTS 'byhand'@'%', 'pinned'@'10.1.2.3'") })
	// Bob owns an account.
	if _, err := c.Ensure(ctx, mysqlaccount.Account{User: "bobs", Host: "%", Password: "bob-pw", Claimant: bob,
		Grants: map[string][]string{"team-b_orders": {"SELECT"}}}); err != nil {
		t.Fatal(err)
	}
	before := privileges(t, c)

	for _, tc := range []struct {
		name string
		a    mysqlaccount.Account
		kind mysqlaccount.Kind
	}{
		{"root", mysqlaccount.Account{User: "root", Host: "localhost"}, mysqlaccount.KindReserved},
		{"root anywhere", mysqlaccount.Account{User: "root", Host: "%"}, mysqlaccount.KindReserved},
		// The admin: refused in the words any account not the tenant's gets, so no guess at its name is confirmed.
		{"the admin", mysqlaccount.Account{User: server.Admin.User, Host: "%"}, mysqlaccount.KindNotClaimed},
		{"the admin, adopting", mysqlaccount.Account{User: server.Admin.User, Host: "%", Adopt: true}, mysqlaccount.KindNotClaimed},
		{"mariadb.sys", mysqlaccount.Account{User: "mariadb.sys", Host: "localhost"}, mysqlaccount.KindReserved},
		{"mysql.session", mysqlaccount.Account{User: "mysql.session", Host: "localhost"}, mysqlaccount.KindReserved},
		{"made by hand", mysqlaccount.Account{User: "byhand", Host: "%"}, mysqlaccount.KindNotClaimed},
		{"another owner's", mysqlaccount.Account{User: "bobs", Host: "%"}, mysqlaccount.KindNotClaimed},
		{"another owner's, adopting", mysqlaccount.Account{User: "bobs", Host: "%", Adopt: true}, mysqlaccount.KindNotClaimed},
		{"% beside a host made by hand", mysqlaccount.Account{User: "pinned", Host: "%"}, mysqlaccount.KindNotClaimed},
		{"% beside a host made by hand, adopting", mysqlaccount.Account{User: "pinned", Host: "%", Adopt: true}, mysqlaccount.KindNotClaimed},
		{"grant on mysql", mysqlaccount.Account{User: "fresh", Host: "%", Grants: map[string][]string{"mysql": {"SELECT"}}}, mysqlaccount.KindInvalidGrant},
		{"grant on sys", mysqlaccount.Account{User: "fresh", Host: "%", Grants: map[string][]string{"sys": {"SELECT"}}}, mysqlaccount.KindInvalidGrant},
		{"grant on the records", mysqlaccount.Account{User: "fresh", Host: "%", Grants: map[string][]string{"operator101": {"ALL PRIVILEGES"}}}, mysqlaccount.KindInvalidGrant},
		// Refused by the planner, after the ownership checks: no record may be left for an account never made.
		{"a privilege the server has not", mysqlaccount.Account{User: "fresh", Host: "%", Grants: map[string][]string{"team-a_x": {"NOT A PRIVILEGE"}}}, mysqlaccount.KindInvalidGrant},
	} {
		tc.a.Password, tc.a.Claimant = "tenant-pw", alice
		n, err := c.Ensure(ctx, tc.a)
		if mysqlaccount.KindOf(err) != tc.kind || n != 0 {
			t.Errorf("%s: %d statements, %v; want kind %d and none", tc.name, n, err, tc.kind)
		}
		if err != nil && strings.Contains(err.Error(), "tenant-pw") {
			t.Errorf("%s: the error carries the password", tc.name)
		}
		// What the tenant reads says nothing of what the server holds: not the other host, not that it exists.
		if tc.kind == mysqlaccount.KindNotClaimed && (strings.Contains(err.Error(), "10.1.2.3") || strings.Contains(err.Error(), "exist")) {
			t.Errorf("%s: the error tells what the server holds: %v", tc.name, err)
		}
	}
	for _, tc := range []struct {
		name, user, host string
	}{{"made by hand", "byhand", "%"}, {"another owner's", "bobs", "%"}, {"a host made by hand", "pinned", "10.1.2.3"},
		{"the admin", server.Admin.User, "%"},
		// Not there at all: the same answer, so that a tenant's drop tells nothing of what exists.
		{"never created", "nobody-made-this", "%"}} {
		res, err := c.Drop(ctx, tc.user, tc.host, alice)
		if err != nil || res.Dropped || !res.NotClaimed {
			t.Errorf("Drop %s: %+v, %v; want NotClaimed", tc.name, res, err)
		}
	}
	if _, err := c.Drop(ctx, "root", "localhost", alice); mysqlaccount.KindOf(err) != mysqlaccount.KindReserved {
		t.Errorf("Drop root: %v", err)
	}
	if after := privileges(t, c); after != before {
		t.Errorf("the privilege tables changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	var fresh int
	if err := c.DB().QueryRow("SELECT COUNT(*) FROM operator101.accounts WHERE user = 'fresh'").Scan(&fresh); err != nil || fresh != 0 {
		t.Errorf("%d claims for the refused account fresh (%v): an account made later by hand would be alice's", fresh, err)
	}
	login := func(user, pw string) error {
		return mariadbtest.CanLogin(ctx, mysqlaccount.Target{Host: server.Admin.Host, Port: server.Admin.Port, User: user, Password: pw}, 5*time.Second)
	}
	if err := login("bobs", "bob-pw"); err != nil {
		t.Errorf("bob's account stopped working: %v", err)
	}

	// The owner: rotation, grants, drop.
	bobs := mysqlaccount.Account{User: "bobs", Host: "%", Password: "bob-pw-2", Claimant: bob, Grants: map[string][]string{"team-b_reports": {"SELECT"}}}
	if n, err := c.Ensure(ctx, bobs); err != nil || n == 0 {
		t.Fatalf("the owner's change: %d, %v", n, err)
	}
	if err := login("bobs", "bob-pw-2"); err != nil {
		t.Errorf("rotated password: %v", err)
	}
	if n, err := c.Ensure(ctx, bobs); err != nil || n != 0 {
		t.Errorf("converged: %d statements, %v", n, err)
	}
	if res, err := c.Drop(ctx, "bobs", "%", bob); err != nil || !res.Dropped {
		t.Errorf("the owner's drop: %+v, %v", res, err)
	}
	var records int
	if err := c.DB().QueryRow("SELECT COUNT(*) FROM operator101.accounts WHERE user = 'bobs'").Scan(&records); err != nil || records != 0 {
		t.Errorf("%d records left for a dropped account (%v)", records, err)
	}

	// Adoption, when the target allows it: the account made by hand takes the tenant's password.
	adopted := mysqlaccount.Account{User: "byhand", Host: "%", Password: "adopted-pw", Claimant: alice, Adopt: true}
	if _, err := c.Ensure(ctx, adopted); err != nil {
		t.Fatal(err)
	}
	if err := login("byhand", "adopted-pw"); err != nil {
		t.Errorf("adopted account: %v", err)
	}
	adopted.Adopt = false // recorded now: no longer needs the policy
	if n, err := c.Ensure(ctx, adopted); err != nil || n != 0 {
		t.Errorf("adopted, converged: %d, %v", n, err)
	}
	if res, err := c.Drop(ctx, "byhand", "%", alice); err != nil || !res.Dropped {
		t.Errorf("drop adopted: %+v, %v", res, err)
	}
}

// TestOneClaimantPerUserName: DatabaseUsers of different namespaces, each through its own connection pool (as
// several operator installs sharing one server), race to claim one user name, with the same host and with
// different hosts. Each round exactly one wins; every other is refused with KindNotClaimed, and the server
// holds one claim and one account for that user name, the winner's.
func TestOneClaimantPerUserName(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	c := admin(t)
	const racers, rounds = 8, 25
	hosts := []string{"%", "%", "localhost", "10.0.0.%", "127.0.0.1"}
	clients := make([]*mysqlaccount.Client, racers)
	for i := range clients {
		clients[i] = admin(t)
	}
	for r := range rounds {
		user := fmt.Sprintf("contested%d", r)
		host := func(i int) string { return hosts[(i+r)%len(hosts)] }
		claimant := func(i int) mysqlaccount.Claimant {
			return mysqlaccount.Claimant{UID: fmt.Sprintf("uid-%d-%d", r, i), Namespace: fmt.Sprintf("team-%d", i), Name: "app"}
		}
		start := make(chan struct{})
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				<-start
				_, errs[i] = clients[i].Ensure(ctx, mysqlaccount.Account{User: user, Host: host(i), Password: "pw-" + user,
					Claimant: claimant(i)})
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Errorf("round %d: %s claimed %s@%s as well as %s (%s@%s)", r, claimant(i), user, host(i),
					claimant(winner), user, host(winner))
			case err == nil:
				winner = i
			case mysqlaccount.KindOf(err) != mysqlaccount.KindNotClaimed:
				t.Errorf("round %d: %s: %v; want KindNotClaimed", r, claimant(i), err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody claimed %s: %v", r, user, errs)
		}
		var claims, accounts []string
		for q, out := range map[string]*[]string{
			"SELECT CONCAT(host, ' ', owner_uid) FROM operator101.accounts WHERE user = ?": &claims,
			"SELECT Host FROM mysql.user WHERE User = ?":                                   &accounts,
		} {
			rows, err := c.DB().Query(q, user)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					t.Fatal(err)
				}
				*out = append(*out, s)
			}
			_ = rows.Close()
		}
		if want := host(winner) + " " + claimant(winner).UID; len(claims) != 1 || claims[0] != want {
			t.Errorf("round %d: claims of %s: %q; want only %q", r, user, claims, want)
		}
		if len(accounts) != 1 || accounts[0] != host(winner) {
			t.Errorf("round %d: accounts of %s: %q; want only host %q", r, user, accounts, host(winner))
		}
		if res, err := c.Drop(ctx, user, host(winner), claimant(winner)); err != nil || !res.Dropped {
			t.Fatalf("round %d: dropping the winner's account: %+v, %v", r, res, err)
		}
	}
}

// TestClaimTableMigration: a claim table created before the unique key on user gets it when the next claim is
// recorded, again and again without harm; one that holds a user name twice is reported, not half-migrated.
func TestClaimTableMigration(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	c := admin(t)
	me := mysqlaccount.Claimant{UID: "uid-migrated", Namespace: "team-m", Name: "m"}
	if _, err := c.Ensure(ctx, mysqlaccount.Account{User: "premigration", Host: "%", Password: "pw", Claimant: me}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Drop(ctx, "premigration", "%", me) })
	keyed := func() bool {
		var n int
		if err := c.DB().QueryRow("SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'operator101' " +
			"AND TABLE_NAME = 'accounts' AND INDEX_NAME = 'one_claim_per_user' AND NON_UNIQUE = 0").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	if !keyed() {
		t.Fatal("a new claim table has no unique key on user")
	}
	unkey := func() {
		if _, err := c.DB().Exec("ALTER TABLE operator101.accounts DROP INDEX one_claim_per_user"); err != nil {
			t.Fatal(err)
		}
	}
	// The table as former versions created it, then a client of this one records a claim: twice.
	for i := range 2 {
		unkey()
		for j := range 2 {
			user := fmt.Sprintf("migrated%d%d", i, j)
			n := admin(t)
			if _, err := n.Ensure(ctx, mysqlaccount.Account{User: user, Host: "%", Password: "pw", Claimant: me}); err != nil {
				t.Fatalf("%s: %v", user, err)
			}
			if !keyed() {
				t.Fatalf("%s: the claim table was not migrated", user)
			}
			if _, err := n.Drop(ctx, user, "%", me); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A user name recorded twice (the race of former versions): the migration refuses, and says what to do.
	unkey()
	if _, err := c.DB().Exec("INSERT INTO operator101.accounts (user, host, owner_uid, owner_namespace, owner_name, auth_string) " +
		"VALUES ('twice', '%', 'a', 'team-a', 'a', ''), ('twice', 'localhost', 'b', 'team-b', 'b', '')"); err != nil {
		t.Fatal(err)
	}
	_, err := admin(t).Ensure(ctx, mysqlaccount.Account{User: "afterwards", Host: "%", Password: "pw", Claimant: me})
	if err == nil || !strings.Contains(err.Error(), "more than once") {
		t.Errorf("migrating a table holding a user name twice: %v; want the rows named", err)
	}
	if _, err := c.DB().Exec("DELETE FROM operator101.accounts WHERE user = 'twice' AND host = 'localhost'"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin(t).Ensure(ctx, mysqlaccount.Account{User: "afterwards", Host: "%", Password: "pw", Claimant: me}); err != nil {
		t.Fatal(err)
	}
	_, _ = c.Drop(ctx, "afterwards", "%", me)
	_, _ = c.DB().Exec("DELETE FROM operator101.accounts WHERE user = 'twice'")
	if !keyed() {
		t.Error("the claim table was not migrated once the admin removed the duplicate")
	}
}
