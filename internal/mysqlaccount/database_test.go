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
	"errors"
	"strings"
	"testing"

	"github.com/operator101/operator101/internal/mysqlaccount"
	"github.com/operator101/operator101/test/mariadbtest"
)

// TestDatabaseDiffers: what a Database asks for against what the server prints, names compared
// case-insensitively and utf8 taken for utf8mb3; an unset character set or collation never differs.
func TestDatabaseDiffers(t *testing.T) {
	for _, tc := range []struct {
		cs, coll, gotCS, gotColl string
		differs                  bool
	}{
		{"", "", "latin1", "latin1_swedish_ci", false},
		{"utf8mb4", "", "utf8mb4", "utf8mb4_general_ci", false},
		{"UTF8MB4", "", "utf8mb4", "utf8mb4_general_ci", false},
		{"utf8", "", "utf8mb3", "utf8mb3_general_ci", false},
		{"utf8", "utf8_bin", "utf8mb3", "utf8mb3_bin", false},
		{"utf8mb4", "", "latin1", "latin1_swedish_ci", true},
		{"", "utf8mb4_bin", "utf8mb4", "utf8mb4_general_ci", true},
		{"utf8mb4", "utf8mb4_bin", "utf8mb4", "utf8mb4_bin", false},
	} {
		got := mysqlaccount.DatabaseDiffers(mysqlaccount.Database{CharacterSet: tc.cs, Collation: tc.coll},
			&mysqlaccount.ObservedDatabase{Exists: true, CharacterSet: tc.gotCS, Collation: tc.gotColl})
		if got != tc.differs {
			t.Errorf("%q/%q against %q/%q: differs %v, want %v", tc.cs, tc.coll, tc.gotCS, tc.gotColl, got, tc.differs)
		}
	}
}

// TestDatabaseClaims: a database is created with its claim first, costs no statement once it matches, is
// altered only while claimed, and is dropped only by its claimant; one made by hand, or claimed by another,
// is refused and never altered or dropped. Hostile names are quoted, never interpreted.
func TestDatabaseClaims(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	c := admin(t)
	me := mysqlaccount.Claimant{UID: "uid-db-me", Namespace: "team-a", Name: "mine"}
	other := mysqlaccount.Claimant{UID: "uid-db-other", Namespace: "team-b", Name: "theirs"}
	for _, name := range []string{"dbclaims_plain", "o'brien", "`tick", "x`; DROP DATABASE mysql; --", "用户库",
		"%", "_", strings.Repeat("d", 64)} {
		t.Run(name, func(t *testing.T) {
			t.Cleanup(func() { dropByHand(t, c.DB(), name) })
			d := mysqlaccount.Database{Name: name, CharacterSet: "utf8mb4", Claimant: me}
			if n, err := c.EnsureDatabase(ctx, d); err != nil || n != 2 {
				t.Fatalf("creating: %d statements, %v; want 2 (the claim, CREATE DATABASE)", n, err)
			}
			if n, err := c.EnsureDatabase(ctx, d); err != nil || n != 0 {
				t.Fatalf("converged: %d statements, %v; want none", n, err)
			}
			d.Collation = "utf8mb4_bin"
			if n, err := c.EnsureDatabase(ctx, d); err != nil || n != 1 {
				t.Fatalf("new collation: %d statements, %v; want 1 (ALTER DATABASE)", n, err)
			}
			if o := observeDB(t, c, name); !o.Exists || o.Collation != "utf8mb4_bin" || o.Claim == nil || o.Claim.UID != me.UID {
				t.Fatalf("after ALTER: %+v", o)
			}
			// Another claimant: refused, nothing altered or dropped.
			theirs := mysqlaccount.Database{Name: name, CharacterSet: "latin1", Claimant: other}
			if _, err := c.EnsureDatabase(ctx, theirs); mysqlaccount.KindOf(err) != mysqlaccount.KindNotClaimed {
				t.Errorf("another claimant's ensure: %v, want KindNotClaimed", err)
			}
			if res, err := c.DropDatabase(ctx, name, other); err != nil || !res.NotClaimed {
				t.Errorf("another claimant's drop: %+v, %v", res, err)
			}
			if released, err := c.ReleaseDatabase(ctx, name, other); err != nil || released {
				t.Errorf("another claimant's release: %v, %v", released, err)
			}
			if o := observeDB(t, c, name); !o.Exists || o.CharacterSet != "utf8mb4" || o.Claim.UID != me.UID {
				t.Fatalf("after another's attempts: %+v", o)
			}
			// Dropped by hand: made again, the claim being this claimant's.
			if _, err := c.DB().Exec("DROP DATABASE " + quote(name)); err != nil {
				t.Fatal(err)
			}
			if n, err := c.EnsureDatabase(ctx, d); err != nil || n != 1 {
				t.Fatalf("dropped by hand: %d statements, %v; want 1", n, err)
			}
			// The claimant drops it, and its claim.
			if res, err := c.DropDatabase(ctx, name, me); err != nil || !res.Dropped {
				t.Fatalf("drop: %+v, %v", res, err)
			}
			if o := observeDB(t, c, name); o.Exists || o.Claim != nil {
				t.Fatalf("after the drop: %+v", o)
			}
		})
	}

	// Made by hand: refused, never altered, never dropped; no claim is left behind.
	const handMade = "dbclaims_handmade"
	if _, err := c.DB().Exec("CREATE DATABASE " + handMade + " CHARACTER SET latin1"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropByHand(t, c.DB(), handMade) })
	if _, err := c.EnsureDatabase(ctx, mysqlaccount.Database{Name: handMade, CharacterSet: "utf8mb4", Claimant: me}); mysqlaccount.KindOf(err) != mysqlaccount.KindNotClaimed {
		t.Errorf("hand-made: %v, want KindNotClaimed", err)
	}
	if res, err := c.DropDatabase(ctx, handMade, me); err != nil || !res.NotClaimed {
		t.Errorf("dropping a hand-made database: %+v, %v", res, err)
	}
	if o := observeDB(t, c, handMade); !o.Exists || o.CharacterSet != "latin1" || o.Claim != nil {
		t.Errorf("hand-made afterwards: %+v", o)
	}

	// On a server with lower_case_table_names 0 (Linux's default, this one), names that differ in case are two
	// databases: one made by hand does not stand in the way of the other.
	const upper, lower = "dbclaims_Case", "dbclaims_case"
	if _, err := c.DB().Exec("CREATE DATABASE " + upper); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropByHand(t, c.DB(), upper); dropByHand(t, c.DB(), lower) })
	if n, err := c.EnsureDatabase(ctx, mysqlaccount.Database{Name: lower, Claimant: me}); err != nil || n != 2 {
		t.Errorf("%s beside %s: %d statements, %v", lower, upper, n, err)
	}
	if o := observeDB(t, c, upper); !o.Exists || o.Claim != nil {
		t.Errorf("%s afterwards: %+v", upper, o)
	}

	// The server refuses a character set: InvalidDatabase, and the claim taken back.
	const bad = "dbclaims_badcharset"
	t.Cleanup(func() { dropByHand(t, c.DB(), bad) })
	if _, err := c.EnsureDatabase(ctx, mysqlaccount.Database{Name: bad, CharacterSet: "nosuchcharset", Claimant: me}); mysqlaccount.KindOf(err) != mysqlaccount.KindInvalidDatabase {
		t.Errorf("unknown character set: %v, want KindInvalidDatabase", err)
	}
	if o := observeDB(t, c, bad); o.Exists || o.Claim != nil {
		t.Errorf("after an unknown character set: %+v", o)
	}
}

// TestDatabaseClaimTableBesideAccounts: the databases' claim table is created beside the accounts' one on a
// server that already holds it (as today's operator101 made it, or as former versions did, without the unique
// key on user): the accounts' table and its rows stay exactly as they were.
func TestDatabaseClaimTableBesideAccounts(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	c := admin(t)
	me := mysqlaccount.Claimant{UID: "uid-db-beside", Namespace: "team-m", Name: "m"}
	if _, err := c.Ensure(ctx, mysqlaccount.Account{User: "dbbeside", Host: "%", Password: "pw", Claimant: me}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Drop(ctx, "dbbeside", "%", me) })
	accounts := func() string {
		var name, create string
		if err := c.DB().QueryRow("SHOW CREATE TABLE operator101.accounts").Scan(&name, &create); err != nil {
			t.Fatal(err)
		}
		var rows string
		if err := c.DB().QueryRow("SELECT COALESCE(GROUP_CONCAT(CONCAT_WS('|', user, host, owner_uid, password_digest, auth_string) " +
			"ORDER BY user, host SEPARATOR '\n'), '') FROM operator101.accounts").Scan(&rows); err != nil {
			t.Fatal(err)
		}
		return create + "\n" + rows
	}
	for _, shape := range []string{"today's", "without the unique key on user"} {
		t.Run(shape, func(t *testing.T) {
			if _, err := c.DB().Exec("DROP TABLE IF EXISTS operator101.`databases`"); err != nil {
				t.Fatal(err)
			}
			if shape != "today's" {
				if _, err := c.DB().Exec("ALTER TABLE operator101.accounts DROP INDEX one_claim_per_user"); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					_, _ = c.DB().Exec("ALTER TABLE operator101.accounts ADD UNIQUE KEY one_claim_per_user (user)")
				})
			}
			before := accounts()
			const name = "dbbeside_app"
			t.Cleanup(func() { dropByHand(t, c.DB(), name) })
			n := admin(t) // a client of this version, new to the server
			if _, err := n.EnsureDatabase(ctx, mysqlaccount.Database{Name: name, Claimant: me}); err != nil {
				t.Fatal(err)
			}
			if o := observeDB(t, n, name); !o.Exists || o.Claim == nil || o.Claim.UID != me.UID {
				t.Fatalf("the database and its claim: %+v", o)
			}
			if after := accounts(); after != before {
				t.Errorf("the accounts' claim table changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

func observeDB(t *testing.T, c *mysqlaccount.Client, name string) *mysqlaccount.ObservedDatabase {
	t.Helper()
	o, err := c.ObserveDatabase(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func quote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// dropByHand removes a test's database and its claim, whoever holds them.
func dropByHand(t *testing.T, db *sql.DB, name string) {
	t.Helper()
	if _, err := db.Exec("DROP DATABASE IF EXISTS " + quote(name)); err != nil {
		t.Error(err)
	}
	if _, err := db.Exec("DELETE FROM operator101.`databases` WHERE name = ?", name); err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Logf("deleting the claim of %q: %v", name, err)
	}
}
