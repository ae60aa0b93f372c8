/*
Copyright 2026 The operator101 Authors.

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

package mysqlaccount_test

import (
	"context"
	"fmt"
	"strings"
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
		cols, _ := rows.Columns()
		for rows.Next() {
			vals, ptrs := make([]any, len(cols)), make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s\n", vals)
		}
		_ = rows.Close()
	}
	return b.String()
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
		{"the admin", mysqlaccount.Account{User: server.Admin.User, Host: "%"}, mysqlaccount.KindReserved},
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
	}
	for _, tc := range []struct {
		name, user, host string
	}{{"made by hand", "byhand", "%"}, {"another owner's", "bobs", "%"}, {"a host made by hand", "pinned", "10.1.2.3"}} {
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
