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
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/mysqlaccount"
	"github.com/operator101/operator101/test/mariadbtest"
	"github.com/operator101/operator101/test/testenv"
)

// The target's policy against a Database's lifecycle, as one decision table, as DatabaseUser's
// (internal/controller/databaseuser/lifecycle_table_test.go): every row is a Database in a namespace the target
// allows or not, on a Refuse or an Adopt target (existingAccounts concerns accounts: a database is never
// adopted, so both give the same answers), naming a database that is absent, made by hand, claimed by another
// Database, or claimed by this one (as before the admin narrowed the policy), which then lives through one
// step of its lifecycle. Each row says what the real MariaDB holds afterwards, and for a deletion which Event
// the tenant reads.

type (
	dbState string
	dbStep  string
)

const (
	absent   dbState = "absent"
	handMade dbState = "made by hand"
	byOther  dbState = "claimed by another"
	byThis   dbState = "claimed by this"

	create  dbStep = "create"
	update  dbStep = "update"
	move    dbStep = "target label moved"
	remove  dbStep = "delete with cleanupPolicy Delete"
	skipped dbStep = "delete with cleanupPolicy Skip (the default)"
)

type dbRow struct {
	nsAllowed bool
	policy    mygroupv1alpha1.ExistingAccountsPolicy
	state     dbState
	step      dbStep
}

func (r dbRow) String() string {
	ns := "namespace allowed"
	if !r.nsAllowed {
		ns = "namespace not allowed"
	}
	return fmt.Sprintf("%s, %s, %s, %s", ns, r.policy, r.state, r.step)
}

// alive is what the server holds once the Database has been reconciled: one the policy allows creates its
// database (absent) or keeps it as the spec says (its own claim); anything else is left as it was.
func (r dbRow) alive() dbHolds {
	if r.nsAllowed && (r.state == absent || r.state == byThis) {
		return dbHolds{exists: true, claim: "this", defaults: "spec"}
	}
	return map[dbState]dbHolds{
		absent:   {},
		handMade: {exists: true, defaults: "original"},
		byOther:  {exists: true, claim: "other", defaults: "original"},
		byThis:   {exists: true, claim: "this", defaults: "original"},
	}[r.state]
}

// want is the decision: what the server holds after the row. An update alters only a database this Database
// claims and the policy allows. Leaving a target (a move) never drops data: it removes this Database's claim
// there. Deletion drops the database only under cleanupPolicy Delete and only with this Database's claim
// (even when the admin has narrowed the policy since it was made); Skip keeps it and removes the claim.
// Another's claim, or a database made by hand, is never touched.
func (r dbRow) want() dbHolds {
	h := r.alive()
	switch {
	case h.claim != "this":
	case r.step == update && r.nsAllowed:
		h.defaults = "updated"
	case r.step == remove:
		return dbHolds{}
	case r.step == move, r.step == skipped:
		h.claim = ""
	}
	return h
}

// wantReason is the Ready reason the Database has while it lives.
func (r dbRow) wantReason() string {
	switch {
	case !r.nsAllowed:
		return mygroupv1alpha1.ReasonTargetNotAllowed
	case r.state == byOther, r.state == handMade:
		return mygroupv1alpha1.ReasonDatabaseNotOwned
	}
	return mygroupv1alpha1.ReasonReady
}

// wantEvent is the one Event of a deletion, "" for other steps.
func (r dbRow) wantEvent(name, target string) string {
	switch {
	case r.step == skipped && r.alive().claim == "this":
		return fmt.Sprintf("DatabaseKept: cleanupPolicy is Skip: database %q stays in target %q, no longer recorded as operator101's", name, target)
	case r.step == skipped:
		// Nothing to release: the same words, whatever the server holds.
		return fmt.Sprintf("DatabaseKept: cleanupPolicy is Skip: database %q stays in target %q, no longer recorded as operator101's", name, target)
	case r.step == remove && r.alive().claim == "this":
		return fmt.Sprintf("DatabaseDropped: database %q dropped from target %q", name, target)
	case r.step == remove:
		return fmt.Sprintf("DatabaseNotDropped: database %q in target %q is not this Database's to manage: nothing was dropped", name, target)
	}
	return ""
}

// TestDatabasePolicyAgainstLifecycle runs the decision table against the real MariaDB, through the reconciler
// itself (one call per step, no manager), 80 rows: {namespace allowed, not} × {Refuse, Adopt} × {absent, made
// by hand, claimed by another, claimed by this} × {create, update, target label moved, delete with Delete,
// delete with Skip}. A deletion that leaves the database says only "not this Database's", whatever the server
// holds, so a tenant cannot learn whether a database it does not own exists.
func TestDatabasePolicyAgainstLifecycle(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	o := newOperator(t, nil)
	in, out := env.NewNamespace(t, "table-in"), env.NewNamespace(t, "table-out")
	var rows []dbRow
	for _, nsAllowed := range []bool{true, false} {
		for _, policy := range []mygroupv1alpha1.ExistingAccountsPolicy{mygroupv1alpha1.ExistingAccountsRefuse, mygroupv1alpha1.ExistingAccountsAdopt} {
			for _, state := range []dbState{absent, handMade, byOther, byThis} {
				for _, step := range []dbStep{create, update, move, remove, skipped} {
					rows = append(rows, dbRow{nsAllowed, policy, state, step})
				}
			}
		}
	}
	targets := map[mygroupv1alpha1.ExistingAccountsPolicy]string{}
	for _, p := range []mygroupv1alpha1.ExistingAccountsPolicy{mygroupv1alpha1.ExistingAccountsRefuse, mygroupv1alpha1.ExistingAccountsAdopt} {
		targets[p] = "dbtable-" + strings.ToLower(string(p)) + "-" + strings.TrimPrefix(o.ns, "db-")
		o.mkTarget(t, targets[p], func(s *mygroupv1alpha1.DatabaseTargetSpec) {
			s.AllowedNamespaces = []string{in}
			s.Databases = []string{"tbl_*"}
			s.ExistingAccounts = p
		})
	}
	db := server.SQL(t)
	adminClient, err := mysqlaccount.Open(ctx, server.Admin, 5e9)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = adminClient.Close() })
	for i, row := range rows {
		t.Run(row.String(), func(t *testing.T) {
			t.Parallel()
			ns, name := in, uniqueName("tbl")
			if !row.nsAllowed {
				ns = out
			}
			t.Cleanup(func() { dropByHand(db, name) })
			d := newDatabase(ns, fmt.Sprintf("row%03d", i), name, targets[row.policy])
			if row.step == remove {
				d.Spec.CleanupPolicy = mygroupv1alpha1.CleanupDelete
			}
			key := testenv.Create(t, env.Client, d)
			made := func(uid types.UID, ns, n string) mysqlaccount.Database {
				return mysqlaccount.Database{Name: name, CharacterSet: "latin1",
					Claimant: mysqlaccount.Claimant{UID: string(uid), Namespace: ns, Name: n}}
			}
			switch row.state {
			case handMade:
				if _, err := db.Exec("CREATE DATABASE " + quote(name) + " CHARACTER SET latin1"); err != nil {
					t.Fatal(err)
				}
			case byOther:
				if _, err := adminClient.EnsureDatabase(ctx, made("uid-of-another", "another", "theirs")); err != nil {
					t.Fatal(err)
				}
			case byThis:
				if _, err := adminClient.EnsureDatabase(ctx, made(d.UID, ns, d.Name)); err != nil {
					t.Fatal(err)
				}
			}
			change := func(mutate func(*mygroupv1alpha1.Database)) {
				t.Helper()
				testenv.Patch(t, env.Client, key, &mygroupv1alpha1.Database{}, mutate)
			}

			_ = o.reconcile(key) // a refusal is an error only when retried
			if got := ready(mustGet(t, key)); got == nil || got.Reason != row.wantReason() {
				t.Errorf("Ready %+v, want reason %s", got, row.wantReason())
			}
			switch row.step {
			case update:
				change(func(d *mygroupv1alpha1.Database) { d.Spec.Collation = "utf8mb4_bin" })
				_ = o.reconcile(key)
			case move:
				change(func(d *mygroupv1alpha1.Database) { d.Labels[mygroupv1alpha1.TargetLabel] = "dbtable-nowhere" })
				_ = o.reconcile(key)
			case remove, skipped:
				o.deleteAndReconcile(t, key)
			}

			want := row.want()
			if got := observeDatabase(t, db, name, string(d.UID)); got != want {
				t.Errorf("the server holds %s, want %s", got, want)
			}
			if wantEvent := row.wantEvent(name, targets[row.policy]); wantEvent != "" {
				var deletions []string
				for _, e := range o.events.of(key) {
					for _, r := range []string{"DatabaseKept: ", "DatabaseDropped: ", "DatabaseNotDropped: "} {
						if strings.HasPrefix(e, r) {
							deletions = append(deletions, e)
						}
					}
				}
				if len(deletions) != 1 || deletions[0] != wantEvent {
					t.Errorf("Events of the deletion %q, want only %q", deletions, wantEvent)
				}
			}
			t.Logf("%s → %s", row, want)
		})
	}
}
