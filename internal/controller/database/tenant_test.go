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

package database_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/mysqlaccount"
	"github.com/operator101/operator101/test/mariadbtest"
	"github.com/operator101/operator101/test/testenv"
)

// TestTenantsCannotTouchDatabasesNotTheirs, as DatabaseUser's TestTenantsCannotTouchWhatIsNotTheirs: on a
// target shared by two tenants, tenant A asks for system schemas, the claim schema, tenant B's database, a
// database made by hand, a name outside its policy, and a database from a namespace the target does not
// allow. Every one is refused with a reason a person can act on, the server's databases and claims stay
// exactly as they were, deleting the refused Databases with cleanupPolicy Delete drops nothing, and a
// database made by hand reads the same as another tenant's: a tenant learns nothing of what it does not own.
func TestTenantsCannotTouchDatabasesNotTheirs(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	o := newOperator(t, nil)
	nsA, nsB, nsC := env.NewNamespace(t, "tenant-a"), env.NewNamespace(t, "tenant-b"), env.NewNamespace(t, "tenant-c")
	target := "dbshared-" + strings.TrimPrefix(o.ns, "db-")
	o.mkTarget(t, target, func(s *mygroupv1alpha1.DatabaseTargetSpec) {
		s.AllowedNamespaces = []string{nsA, nsB}
		s.Databases = []string{"${namespace}_*"}
	})
	db := server.SQL(t)
	// Namespace names hold '-', which database names may too.
	handmade, owned, claimedByOther := nsA+"_handmade", nsB+"_orders", nsA+"_claimed"
	for _, n := range []string{handmade, owned, claimedByOther} {
		t.Cleanup(func() { dropByHand(db, n) })
	}
	if _, err := db.Exec("CREATE DATABASE " + quote(handmade) + " CHARACTER SET latin1"); err != nil {
		t.Fatal(err)
	}
	adminClient, err := mysqlaccount.Open(ctx, server.Admin, 5e9)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = adminClient.Close() })
	if _, err := adminClient.EnsureDatabase(ctx, mysqlaccount.Database{Name: claimedByOther, CharacterSet: "latin1",
		Claimant: mysqlaccount.Claimant{UID: "uid-of-another", Namespace: "elsewhere", Name: "theirs"}}); err != nil {
		t.Fatal(err)
	}

	// Tenant B owns a database.
	ownedDB := newDatabase(nsB, "orders", owned, target)
	ownedDB.Spec.CleanupPolicy = mygroupv1alpha1.CleanupDelete
	ownedKey := testenv.Create(t, env.Client, ownedDB)
	o.mustReconcile(t, ownedKey)
	if got := ready(mustGet(t, ownedKey)); got == nil || got.Reason != mygroupv1alpha1.ReasonReady {
		t.Fatalf("tenant B's database: Ready %+v", got)
	}
	before := databasesAndClaims(t, db)

	messages := map[string]string{}
	var refusedKeys []types.NamespacedName
	for _, tc := range []struct{ name, db, ns, reason string }{
		{"mysql", "mysql", nsA, mygroupv1alpha1.ReasonDatabaseNotAllowed},
		{"claim-schema", mysqlaccount.ClaimSchema, nsA, mygroupv1alpha1.ReasonDatabaseNotAllowed},
		{"information-schema", "information_schema", nsA, mygroupv1alpha1.ReasonDatabaseNotAllowed},
		{"performance-schema", "PERFORMANCE_SCHEMA", nsA, mygroupv1alpha1.ReasonDatabaseNotAllowed},
		{"other-tenant", owned, nsA, mygroupv1alpha1.ReasonDatabaseNotAllowed},
		{"star", "*", nsA, mygroupv1alpha1.ReasonDatabaseNotAllowed},
		{"wildcard", nsA + "%", nsA, mygroupv1alpha1.ReasonDatabaseNotAllowed},
		{"handmade", handmade, nsA, mygroupv1alpha1.ReasonDatabaseNotOwned},
		{"claimed", claimedByOther, nsA, mygroupv1alpha1.ReasonDatabaseNotOwned},
		{"namespace-not-allowed", nsC + "_app", nsC, mygroupv1alpha1.ReasonTargetNotAllowed},
	} {
		d := newDatabase(tc.ns, tc.name, tc.db, target)
		d.Spec.CleanupPolicy = mygroupv1alpha1.CleanupDelete
		key := testenv.Create(t, env.Client, d)
		_ = o.reconcile(key)
		got := ready(mustGet(t, key))
		if got == nil || got.Reason != tc.reason {
			t.Errorf("%s: Ready %+v, want reason %s", tc.name, got, tc.reason)
			continue
		}
		messages[tc.name] = strings.ReplaceAll(got.Message, tc.db, "NAME")
		refusedKeys = append(refusedKeys, key)
	}
	if messages["handmade"] != messages["claimed"] {
		t.Errorf("a database made by hand and one another claims read differently:\n%s\n%s", messages["handmade"], messages["claimed"])
	}
	for name, m := range messages {
		if strings.Contains(m, "uid-of-another") || strings.Contains(m, "elsewhere") || strings.Contains(m, server.Admin.User) {
			t.Errorf("%s: the message tells what the tenant does not own: %s", name, m)
		}
	}
	if after := databasesAndClaims(t, db); after != before {
		t.Errorf("the server changed:\nbefore %s\nafter  %s", before, after)
	}

	// Deleting them all, cleanupPolicy Delete: nothing is dropped.
	for _, key := range refusedKeys {
		o.deleteAndReconcile(t, key)
	}
	if after := databasesAndClaims(t, db); after != before {
		t.Errorf("deleting the refused Databases changed the server:\nbefore %s\nafter  %s", before, after)
	}
	// Tenant B's own deletion drops its own database.
	o.deleteAndReconcile(t, ownedKey)
	if h := observeDatabase(t, db, owned, string(ownedDB.UID)); h.exists || h.claim != "" {
		t.Errorf("tenant B's deleted database: %s", h)
	}
}

// databasesAndClaims is every database on the server with its defaults, and every database claim: what no
// refused Database may change.
func databasesAndClaims(t *testing.T, db *sql.DB) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		"SELECT CONCAT_WS('|', SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME) FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME",
		"SELECT CONCAT_WS('|', name, owner_uid, owner_namespace, owner_name) FROM `" + mysqlaccount.ClaimSchema + "`.`databases` ORDER BY name",
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, s)
		}
		_ = rows.Close()
	}
	return b.String()
}

// TestConvergedDatabaseCostsNothing: a Ready Database, and one refused because its database is not its own,
// are checked again with no write to the API server and no statement that writes on the server (the
// server's own counters of the statements that create, alter or drop a database, and of the claims' INSERTs
// and DELETEs, stay put).
func TestConvergedDatabaseCostsNothing(t *testing.T) {
	mariadbtest.Require(t, server)
	cfg, counter := testenv.Counting(env.Config)
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	o := newOperator(t, c)
	target := "dbrest-" + strings.TrimPrefix(o.ns, "db-")
	o.mkTarget(t, target, nil)
	ns := env.NewNamespace(t, "rest")
	db := server.SQL(t)
	mine, handmade := uniqueName("rest"), uniqueName("rest_handmade")
	for _, n := range []string{mine, handmade} {
		t.Cleanup(func() { dropByHand(db, n) })
	}
	if _, err := db.Exec("CREATE DATABASE " + quote(handmade)); err != nil {
		t.Fatal(err)
	}
	readyKey := testenv.Create(t, env.Client, newDatabase(ns, "mine", mine, target))
	refusedKey := testenv.Create(t, env.Client, newDatabase(ns, "handmade", handmade, target))
	for range 2 { // the finalizer, then the status
		o.mustReconcile(t, readyKey)
		_ = o.reconcile(refusedKey)
	}
	if got := ready(mustGet(t, readyKey)); got == nil || got.Reason != mygroupv1alpha1.ReasonReady {
		t.Fatalf("Ready %+v", got)
	}
	if got := ready(mustGet(t, refusedKey)); got == nil || got.Reason != mygroupv1alpha1.ReasonDatabaseNotOwned {
		t.Fatalf("refused: Ready %+v", got)
	}
	counter.Reset()
	statements := writingStatements(t, db)
	for range 3 {
		o.mustReconcile(t, readyKey)
		_ = o.reconcile(refusedKey)
	}
	if w := counter.Writes(true); len(w) > 0 {
		t.Errorf("API writes at rest: %v", w)
	}
	if after := writingStatements(t, db); after != statements {
		t.Errorf("statements that write at rest: before %s, after %s", statements, after)
	}
}

// writingStatements is the server's count of the statements a Database's check could write with (global:
// the tests of this package run one at a time, but for the table's parallel rows).
func writingStatements(t *testing.T, db *sql.DB) string {
	t.Helper()
	var s string
	if err := db.QueryRow("SELECT GROUP_CONCAT(CONCAT(VARIABLE_NAME, '=', VARIABLE_VALUE) ORDER BY VARIABLE_NAME) " +
		"FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ('COM_CREATE_DB', 'COM_ALTER_DB', 'COM_DROP_DB', " +
		"'COM_INSERT', 'COM_DELETE', 'COM_CREATE_TABLE')").Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}
