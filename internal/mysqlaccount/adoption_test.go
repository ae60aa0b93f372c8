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
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/operator101/operator101/internal/mysqlaccount"
	"github.com/operator101/operator101/test/mariadbtest"
)

// accountState is everything the server holds for user@%: its grants as SHOW GRANTS prints them (sorted), its
// row of mysql.global_priv (password hash, global privileges, limits), its rows in the other privilege tables,
// and its claims.
func accountState(t *testing.T, c *mysqlaccount.Client, user string) string {
	t.Helper()
	var b strings.Builder
	rows, err := c.DB().Query("SHOW GRANTS FOR `" + user + "`@`%`")
	if err != nil {
		t.Fatalf("SHOW GRANTS FOR %s: %v", user, err)
	}
	var grants []string
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			t.Fatal(err)
		}
		grants = append(grants, g)
	}
	_ = rows.Close()
	sort.Strings(grants)
	fmt.Fprintf(&b, "%s\n", strings.Join(grants, "\n"))
	for _, q := range []string{
		"SELECT * FROM mysql.global_priv WHERE User = ? AND Host = '%'",
		"SELECT * FROM mysql.db WHERE User = ? AND Host = '%' ORDER BY Db",
		"SELECT * FROM mysql.tables_priv WHERE User = ? AND Host = '%' ORDER BY Db, Table_name",
		"SELECT * FROM mysql.columns_priv WHERE User = ? AND Host = '%' ORDER BY Db, Table_name, Column_name",
		"SELECT * FROM mysql.procs_priv WHERE User = ? AND Host = '%' ORDER BY Db, Routine_name",
		"SELECT * FROM mysql.roles_mapping WHERE User = ? AND Host = '%' ORDER BY Role",
		"SELECT * FROM mysql.proxies_priv WHERE User = ? AND Host = '%' ORDER BY Proxied_user",
		"SELECT * FROM operator101.accounts WHERE user = ?",
	} {
		rows, err := c.DB().Query(q, user)
		if err != nil {
			if strings.Contains(q, "operator101.accounts") && strings.Contains(err.Error(), "1146") {
				continue // no claim table yet
			}
			t.Fatalf("%s: %v", q, err)
		}
		writeRows(t, &b, rows)
	}
	return b.String()
}

// TestAdoptOnlyWithinPolicy: with adoption allowed, an account made by hand that holds a privilege beyond the
// target's policy (databases adopt-a and adopt-a_*) is refused, KindAdoptionRefused naming the kind of privilege
// and nothing of the account's, and left exactly as it was: its password hash, its grants of every kind, no
// claim; its own password still logs in, the tenant's does not; a Drop by the tenant leaves it. An account
// whose grants all lie within the policy is adopted as before: the tenant's password and grants, its claim.
func TestAdoptOnlyWithinPolicy(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	c := admin(t)
	alice := mysqlaccount.Claimant{UID: "uid-adopter", Namespace: "adopt-a", Name: "adopter"}
	policy := []string{"adopt-a", "adopt-a_*"}
	exec := func(stmts ...string) {
		t.Helper()
		for _, s := range stmts {
			if _, err := c.DB().Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	exec("CREATE DATABASE `adopt-a_app`", "CREATE TABLE `adopt-a_app`.`t` (c INT)",
		"CREATE DATABASE `adopt-b_other`", "CREATE TABLE `adopt-b_other`.`t` (c INT)",
		"CREATE PROCEDURE `adopt-b_other`.`p`() SELECT 1",
		"CREATE ROLE `adopt_role`")
	t.Cleanup(func() {
		for _, s := range []string{"DROP DATABASE IF EXISTS `adopt-a_app`", "DROP DATABASE IF EXISTS `adopt-b_other`",
			"DROP ROLE IF EXISTS `adopt_role`"} {
			_, _ = c.DB().Exec(s)
		}
	})
	login := func(user, pw string) error {
		return mariadbtest.CanLogin(ctx, mysqlaccount.Target{Host: server.Admin.Host, Port: server.Admin.Port, User: user, Password: pw}, 5*time.Second)
	}

	for i, tc := range []struct {
		name   string
		grants []string // run as the server's admin, %s the account
		kind   string   // what the error must say
	}{
		{"a global privilege", []string{"GRANT RELOAD ON *.* TO %s"}, "global privileges"},
		{"GRANT OPTION on an allowed database", []string{"GRANT SELECT ON `adopt-a\\_app`.* TO %s WITH GRANT OPTION"}, "GRANT OPTION"},
		{"GRANT OPTION alone", []string{"GRANT USAGE ON *.* TO %s WITH GRANT OPTION"}, "GRANT OPTION"},
		{"a role", []string{"GRANT `adopt_role` TO %s"}, "roles"},
		// An account may grant PROXY on itself: here the server's admin, whom the account may then act as.
		{"a proxy grant", []string{"GRANT PROXY ON `" + server.Admin.User + "`@`%%` TO %s"}, "proxy grants"},
		{"a table-level grant outside", []string{"GRANT SELECT ON `adopt-b_other`.`t` TO %s"}, "table or column grants"},
		{"a column grant outside", []string{"GRANT SELECT (`c`) ON `adopt-b_other`.`t` TO %s"}, "table or column grants"},
		{"a routine grant outside", []string{"GRANT EXECUTE ON PROCEDURE `adopt-b_other`.`p` TO %s"}, "routine grants"},
		{"a db-level grant outside", []string{"GRANT SELECT ON `adopt-b\\_other`.* TO %s"}, "database-level grants"},
		{"a db-level grant on a system schema", []string{"GRANT SELECT ON `mysql`.* TO %s"}, "database-level grants"},
		{"a db-level pattern wider than the policy", []string{"GRANT SELECT ON `adopt-a%%`.* TO %s"}, "database-level grants"},
		{"allowed grants beside a global privilege", []string{"GRANT SELECT ON `adopt-a\\_app`.* TO %s", "GRANT PROCESS ON *.* TO %s"}, "global privileges"},
	} {
		user := fmt.Sprintf("adopt_refused_%d", i)
		acct := "`" + user + "`@`%`"
		exec("CREATE USER " + acct + " IDENTIFIED BY 'by-hand'")
		t.Cleanup(func() { _, _ = c.DB().Exec("DROP USER IF EXISTS " + acct) })
		for _, g := range tc.grants {
			exec(fmt.Sprintf(g, acct))
		}
		before := accountState(t, c, user)
		n, err := c.Ensure(ctx, mysqlaccount.Account{User: user, Host: "%", Password: "tenant-pw", Claimant: alice,
			Adopt: true, AdoptDatabases: policy, Grants: map[string][]string{"adopt-a_app": {"SELECT"}}})
		if mysqlaccount.KindOf(err) != mysqlaccount.KindAdoptionRefused || n != 0 {
			t.Errorf("%s: %d statements, %v; want KindAdoptionRefused and none", tc.name, n, err)
		}
		if err != nil {
			msg := err.Error()
			if !strings.Contains(msg, tc.kind) {
				t.Errorf("%s: the error does not say %q: %s", tc.name, tc.kind, msg)
			}
			for _, secret := range []string{"tenant-pw", "by-hand", "adopt_role", server.Admin.User, "adopt-b", "RELOAD", "PROCESS",
				mysqlaccount.NativePasswordHash("by-hand")} {
				if strings.Contains(msg, secret) {
					t.Errorf("%s: the error tells %q: %s", tc.name, secret, msg)
				}
			}
		}
		if res, err := c.Drop(ctx, user, "%", alice); err != nil || res.Dropped || !res.NotClaimed {
			t.Errorf("%s: Drop by the tenant: %+v, %v; want NotClaimed", tc.name, res, err)
		}
		res, err := c.DropAccount(ctx, mysqlaccount.Account{User: user, Host: "%", Claimant: alice, Adopt: true, AdoptDatabases: policy})
		if err != nil || res.Dropped || !res.NotClaimed {
			t.Errorf("%s: DropAccount by the tenant, adoption allowed: %+v, %v; want NotClaimed", tc.name, res, err)
		}
		if after := accountState(t, c, user); after != before {
			t.Errorf("%s: the account changed:\nbefore:\n%s\nafter:\n%s", tc.name, before, after)
		}
		if err := login(user, "by-hand"); err != nil {
			t.Errorf("%s: the account's own password stopped working: %v", tc.name, err)
		}
		if err := login(user, "tenant-pw"); err == nil {
			t.Errorf("%s: the tenant's password logs in", tc.name)
		}
	}

	// Within the policy: database-level grants on allowed databases (one escaped, as operator101 grants, one
	// without wildcards) and a table grant in one of them. Adopted as before: the tenant's password, the
	// database-level grants the DatabaseUser asks for, its claim; the table grant, within the policy, stays.
	const user = "adopt_within"
	acct := "`" + user + "`@`%`"
	exec("CREATE USER "+acct+" IDENTIFIED BY 'by-hand'",
		"GRANT SELECT, INSERT ON `adopt-a\\_app`.* TO "+acct,
		"GRANT SELECT ON `adopt-a`.* TO "+acct,
		"GRANT UPDATE ON `adopt-a_app`.`t` TO "+acct)
	t.Cleanup(func() { _, _ = c.DB().Exec("DROP USER IF EXISTS " + acct) })
	within := mysqlaccount.Account{User: user, Host: "%", Password: "tenant-pw", Claimant: alice,
		Adopt: true, AdoptDatabases: policy, Grants: map[string][]string{"adopt-a_app": {"SELECT"}}}
	if n, err := c.Ensure(ctx, within); err != nil || n == 0 {
		t.Fatalf("an account within the policy: %d statements, %v; want it adopted", n, err)
	}
	if err := login(user, "tenant-pw"); err != nil {
		t.Errorf("the adopted account does not take the tenant's password: %v", err)
	}
	state := accountState(t, c, user)
	for _, want := range []string{"GRANT SELECT ON `adopt-a\\_app`.* TO `adopt_within`@`%`",
		"GRANT UPDATE ON `adopt-a_app`.`t` TO `adopt_within`@`%`", alice.UID} {
		if !strings.Contains(state, want) {
			t.Errorf("after adoption, %q is missing:\n%s", want, state)
		}
	}
	if strings.Contains(state, "INSERT") || strings.Contains(state, "`adopt-a`.*") {
		t.Errorf("database-level grants the DatabaseUser does not ask for were kept:\n%s", state)
	}
	within.Adopt = false // claimed now
	if n, err := c.Ensure(ctx, within); err != nil || n != 0 {
		t.Errorf("adopted, converged: %d statements, %v", n, err)
	}
	if res, err := c.Drop(ctx, user, "%", alice); err != nil || !res.Dropped {
		t.Errorf("drop the adopted account: %+v, %v", res, err)
	}
}

// TestDropAccountAdoptsWithinPolicy: a DatabaseUser deleted before it adopted an account made without a claim
// (by hand, or by operator101 0.1.0) drops it when its target allows adoption and every privilege fits the
// policy, and leaves it otherwise: adoption not allowed, or the account claimed by another DatabaseUser.
func TestDropAccountAdoptsWithinPolicy(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	c := admin(t)
	alice := mysqlaccount.Claimant{UID: "uid-dropper", Namespace: "adopt-c", Name: "dropper"}
	bob := mysqlaccount.Claimant{UID: "uid-bob", Namespace: "adopt-c", Name: "bob"}
	policy := []string{"adopt-c", "adopt-c_*"}
	byHand := func(user string) {
		t.Helper()
		for _, s := range []string{"CREATE USER `" + user + "`@`%` IDENTIFIED BY 'by-hand'",
			"GRANT SELECT ON `adopt-c\\_app`.* TO `" + user + "`@`%`"} {
			if _, err := c.DB().Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		t.Cleanup(func() { _, _ = c.DB().Exec("DROP USER IF EXISTS `" + user + "`@`%`") })
	}
	exists := func(user string) bool {
		t.Helper()
		var n int
		if err := c.DB().QueryRow("SELECT COUNT(*) FROM mysql.user WHERE User = ?", user).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	drop := func(user string, adopt bool) mysqlaccount.DropResult {
		t.Helper()
		res, err := c.DropAccount(ctx, mysqlaccount.Account{User: user, Host: "%", Claimant: alice, Adopt: adopt, AdoptDatabases: policy})
		if err != nil {
			t.Fatalf("DropAccount %s: %v", user, err)
		}
		return res
	}

	byHand("drop_within")
	if res := drop("drop_within", false); res.Dropped || !res.NotClaimed || !exists("drop_within") {
		t.Errorf("adoption not allowed: %+v, exists %v; want NotClaimed and the account kept", res, exists("drop_within"))
	}
	if res := drop("drop_within", true); !res.Dropped || exists("drop_within") {
		t.Errorf("adoption allowed, within policy: %+v, exists %v; want Dropped", res, exists("drop_within"))
	}
	if state := accountState(t, c, "drop_within"); strings.Contains(state, alice.UID) {
		t.Errorf("a claim is left behind:\n%s", state)
	}

	// Claimed by another DatabaseUser: never the dropper's, adoption or not.
	if _, err := c.Ensure(ctx, mysqlaccount.Account{User: "drop_bobs", Host: "%", Password: "bobs-pw", Claimant: bob}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Drop(ctx, "drop_bobs", "%", bob) })
	if res := drop("drop_bobs", true); res.Dropped || !res.NotClaimed || !exists("drop_bobs") {
		t.Errorf("claimed by another: %+v, exists %v; want NotClaimed and the account kept", res, exists("drop_bobs"))
	}
}
