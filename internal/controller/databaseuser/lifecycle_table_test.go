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

package databaseuser_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/databaseuser"
	"github.com/operator101/operator101/internal/mysqlaccount"
	"github.com/operator101/operator101/test/mariadbtest"
	"github.com/operator101/operator101/test/testenv"
)

// The target's policy against a DatabaseUser's lifecycle, as one decision table: every row is a DatabaseUser
// in a namespace the target allows or not, with a user name that keeps the target's userPrefix or breaks it,
// on a Refuse or an Adopt target, naming an account that is absent, hand-made (USAGE only: adoptable), claimed
// by another DatabaseUser or claimed by this one (as before the admin narrowed the policy), which then lives
// through one step of its lifecycle. Each row says what the real MariaDB holds afterwards, and for a drop,
// which Event the tenant reads.

type (
	accountState  string
	lifecycleStep string
)

const (
	absent   accountState = "absent"
	handMade accountState = "hand-made"
	byOther  accountState = "claimed by another"
	byThis   accountState = "claimed by this"

	create  lifecycleStep = "create"
	update  lifecycleStep = "update"
	move    lifecycleStep = "target label moved"
	remove  lifecycleStep = "delete"
	skipped lifecycleStep = "delete with cleanupPolicy Skip"
)

// holds is what the server holds of the row's account: whether it exists, whose claim it carries ("", "other",
// "this") and whose password logs in ("original": the one it had before the row, "tenant's": the
// DatabaseUser's Secret).
type holds struct {
	exists   bool
	claim    string
	password string
}

func (h holds) String() string {
	if !h.exists && h.claim == "" {
		return "no account"
	}
	claim := "no claim"
	if h.claim != "" {
		claim = "claimed by " + h.claim
	}
	if !h.exists {
		return "no account, " + claim
	}
	return fmt.Sprintf("account, %s, %s password", claim, h.password)
}

type lifecycleRow struct {
	nsAllowed, prefixKept bool
	policy                mygroupv1alpha1.ExistingAccountsPolicy
	state                 accountState
	step                  lifecycleStep
}

func (r lifecycleRow) String() string {
	ns, prefix := "namespace allowed", "prefix kept"
	if !r.nsAllowed {
		ns = "namespace not allowed"
	}
	if !r.prefixKept {
		prefix = "prefix broken"
	}
	return fmt.Sprintf("%s, %s, %s, %s, %s", ns, prefix, r.policy, r.state, r.step)
}

// alive is what the server holds once the DatabaseUser has been reconciled: a DatabaseUser the policy allows
// makes or adopts (Adopt target, USAGE only) its account and sets its password; one it refuses sends nothing.
func (r lifecycleRow) alive() holds {
	allowed := r.nsAllowed && r.prefixKept
	if allowed && (r.state == absent || r.state == byThis || r.state == handMade && r.policy == mygroupv1alpha1.ExistingAccountsAdopt) {
		return holds{exists: true, claim: "this", password: "tenant's"}
	}
	return map[accountState]holds{
		absent:   {},
		handMade: {exists: true, password: "original"},
		byOther:  {exists: true, claim: "other", password: "original"},
		byThis:   {exists: true, claim: "this", password: "original"},
	}[r.state]
}

// want is the decision: what the server holds after the row. Leaving (a move or a deletion) drops only what
// the DatabaseUser claims by then: what it claimed before the admin narrowed the policy, and what it made or
// adopted alive; never an account it could not have adopted alive. Skip keeps the account and removes this
// DatabaseUser's claim. Another's claim is never touched.
func (r lifecycleRow) want() holds {
	h := r.alive()
	switch {
	case h.claim != "this":
	case r.step == move, r.step == remove:
		return holds{}
	case r.step == skipped:
		h.claim = ""
	}
	return h
}

// wantReason is the Ready reason the DatabaseUser has while it lives.
func (r lifecycleRow) wantReason() string {
	switch {
	case !r.nsAllowed:
		return mygroupv1alpha1.ReasonTargetNotAllowed
	case !r.prefixKept:
		return mygroupv1alpha1.ReasonUserNotAllowed
	case r.state == byOther, r.state == handMade && r.policy == mygroupv1alpha1.ExistingAccountsRefuse:
		return mygroupv1alpha1.ReasonAccountNotOwned
	}
	return mygroupv1alpha1.ReasonReady
}

// eventLog records the Events of each DatabaseUser, by namespace/name, as "Reason: note".
type eventLog struct {
	mu     sync.Mutex
	byName map[string][]string
}

func (e *eventLog) Eventf(regarding, _ runtime.Object, _, reason, _, note string, args ...any) {
	o := regarding.(client.Object)
	e.mu.Lock()
	defer e.mu.Unlock()
	key := o.GetNamespace() + "/" + o.GetName()
	e.byName[key] = append(e.byName[key], reason+": "+fmt.Sprintf(note, args...))
}

func (e *eventLog) AnnotatedEventf(regarding, related runtime.Object, _ map[string]string, eventtype, reason, action, note string, args ...any) {
	e.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

func (e *eventLog) of(key types.NamespacedName) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.byName[key.String()]...)
}

// TestPolicyAgainstLifecycle runs the decision table against the real MariaDB, through the reconciler itself
// (one call per step, no manager), 160 rows: {namespace allowed, not} × {prefix kept, broken} × {Refuse,
// Adopt} × {absent, hand-made, claimed by another, claimed by this} × {create, update, target label moved,
// delete, delete with cleanupPolicy Skip}. A drop that leaves the account says only "not this DatabaseUser's",
// whatever the server holds, so a tenant cannot learn whether an account it does not own exists.
func TestPolicyAgainstLifecycle(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	opNS := env.NewNamespace(t, "dbu")
	a := server.Admin
	targetSecret(t, opNS, "mariadb-target", a.Host, a.Port, a.User, a.Password)
	in, out := env.NewNamespace(t, "table-in"), env.NewNamespace(t, "table-out")
	// The original password is typed into CREATE USER by hand (handMadeAccount), so it holds no quote.
	tenant, original := randomPassword(t, "tenant"), uniqueUser("original")
	for _, ns := range []string{in, out} {
		mkSecret(t, ns, "s", map[string]string{"pw": tenant})
	}

	var rows []lifecycleRow
	for _, nsAllowed := range []bool{true, false} {
		for _, prefixKept := range []bool{true, false} {
			for _, policy := range []mygroupv1alpha1.ExistingAccountsPolicy{mygroupv1alpha1.ExistingAccountsRefuse, mygroupv1alpha1.ExistingAccountsAdopt} {
				for _, state := range []accountState{absent, handMade, byOther, byThis} {
					for _, step := range []lifecycleStep{create, update, move, remove, skipped} {
						rows = append(rows, lifecycleRow{nsAllowed, prefixKept, policy, state, step})
					}
				}
			}
		}
	}
	// Each row's user name, and the Adopt target's record of whose account each is: every name for the
	// namespace of its row, so that here the namespace and the prefix decide.
	users := make([]string, len(rows))
	adoptable := map[string][]string{}
	for i, row := range rows {
		ns, user := in, uniqueUser("tbl")
		if !row.nsAllowed {
			ns = out
		}
		if !row.prefixKept {
			user = uniqueUser("zz")
		}
		users[i] = user
		adoptable[ns] = append(adoptable[ns], user)
	}
	targets := map[mygroupv1alpha1.ExistingAccountsPolicy]string{}
	for _, p := range []mygroupv1alpha1.ExistingAccountsPolicy{mygroupv1alpha1.ExistingAccountsRefuse, mygroupv1alpha1.ExistingAccountsAdopt} {
		targets[p] = "table-" + strings.ToLower(string(p)) + "-" + strings.TrimPrefix(opNS, "dbu-")
		mkTarget(t, targets[p], opNS, "mariadb-target", func(s *mygroupv1alpha1.DatabaseTargetSpec) {
			s.AllowedNamespaces = []string{in}
			s.UserPrefix = "tbl"
			s.Databases = []string{"tbl_app"}
			s.ExistingAccounts = p
			for _, ns := range []string{in, out} {
				s.AdoptableAccounts = append(s.AdoptableAccounts, mygroupv1alpha1.AdoptableAccounts{Namespace: ns, Users: adoptable[ns]})
			}
		})
	}
	events := &eventLog{byName: map[string][]string{}}
	r, err := databaseuser.NewReconciler(env.Client, events, databaseuser.Config{OperatorNamespace: opNS, ResyncPeriod: resync})
	if err != nil {
		t.Fatal(err)
	}
	db := server.SQL(t)
	adminClient := admin(t)
	for i, row := range rows {
		t.Run(row.String(), func(t *testing.T) {
			t.Parallel()
			ns, user := in, users[i]
			if !row.nsAllowed {
				ns = out
			}
			t.Cleanup(func() {
				_, _ = db.Exec("DROP USER IF EXISTS `" + user + "`@`%`")
				_, _ = db.Exec("DELETE FROM `"+mysqlaccount.ClaimSchema+"`.`accounts` WHERE user = ?", user)
			})
			dbu := newDBU(ns, fmt.Sprintf("row%03d", i), user, "s", "pw")
			dbu.Labels = map[string]string{mygroupv1alpha1.TargetLabel: targets[row.policy]}
			key := testenv.Create(t, env.Client, dbu)
			claimant := func(uid types.UID, ns, name string) mysqlaccount.Account {
				return mysqlaccount.Account{User: user, Host: "%", Password: original,
					Claimant: mysqlaccount.Claimant{UID: string(uid), Namespace: ns, Name: name}}
			}
			switch row.state {
			case handMade:
				handMadeAccount(t, user, original)
			case byOther:
				if _, err := adminClient.Ensure(ctx, claimant("uid-of-another", "another", "theirs")); err != nil {
					t.Fatal(err)
				}
			case byThis:
				if _, err := adminClient.Ensure(ctx, claimant(dbu.UID, ns, dbu.Name)); err != nil {
					t.Fatal(err)
				}
			}

			reconcile := func(what string) {
				t.Helper()
				if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}
			change := func(mutate func(*mygroupv1alpha1.DatabaseUser)) {
				t.Helper()
				testenv.Patch(t, env.Client, key, &mygroupv1alpha1.DatabaseUser{}, mutate)
			}
			reconcile("created")
			if row.step == create || row.step == update {
				got := meta.FindStatusCondition(mustGet(t, ns, dbu.Name).Status.Conditions, mygroupv1alpha1.ConditionReady)
				if got == nil || got.Reason != row.wantReason() {
					t.Errorf("Ready %+v, want reason %s", got, row.wantReason())
				}
			}
			switch row.step {
			case update:
				change(func(d *mygroupv1alpha1.DatabaseUser) {
					d.Spec.Grants = []mygroupv1alpha1.Grant{{Database: "tbl_app", Privileges: []mygroupv1alpha1.Privilege{"SELECT"}}}
				})
				reconcile("updated")
			case move:
				change(func(d *mygroupv1alpha1.DatabaseUser) { d.Labels[mygroupv1alpha1.TargetLabel] = "table-nowhere" })
				reconcile("moved")
			case skipped:
				change(func(d *mygroupv1alpha1.DatabaseUser) { d.Spec.CleanupPolicy = mygroupv1alpha1.CleanupSkip })
				reconcile("set to Skip")
				fallthrough
			case remove:
				if err := env.Client.Delete(ctx, mustGet(t, ns, dbu.Name)); err != nil {
					t.Fatal(err)
				}
				reconcile("deleted")
				if err := env.Client.Get(ctx, key, &mygroupv1alpha1.DatabaseUser{}); !apierrors.IsNotFound(err) {
					t.Errorf("the DatabaseUser is still there after its deletion: %v", err)
				}
			}

			want := row.want()
			if got := observe(t, db, user, string(dbu.UID), tenant, original); got != want {
				t.Errorf("the server holds %s, want %s", got, want)
			}
			// What the tenant reads of a drop: dropped, or the same words whatever the server holds.
			if row.step == move || row.step == remove {
				acct, target := user+"@%", targets[row.policy]
				wantEvent := fmt.Sprintf("AccountNotDropped: account %s in target %q is not this DatabaseUser's to manage: nothing was dropped", acct, target)
				if row.alive().claim == "this" {
					wantEvent = map[lifecycleStep]string{
						move:   fmt.Sprintf("AccountMoved: account %s dropped from previous target %q", acct, target),
						remove: fmt.Sprintf("AccountDropped: account %s dropped from target %q", acct, target),
					}[row.step]
				}
				var drops []string
				for _, e := range events.of(key) {
					if strings.HasPrefix(e, "AccountMoved: ") || strings.HasPrefix(e, "AccountDropped: ") || strings.HasPrefix(e, "AccountNotDropped: ") {
						drops = append(drops, e)
					}
				}
				if len(drops) != 1 || drops[0] != wantEvent {
					t.Errorf("Events of the drop %q, want only %q", drops, wantEvent)
				}
			}
			t.Logf("%s → %s", row, want)
		})
	}
}

// observe reads what the server holds of user@%: the account, its claim (this DatabaseUser's UID or another's)
// and which password logs in.
func observe(t *testing.T, db *sql.DB, user, uid, tenant, original string) holds {
	t.Helper()
	var h holds
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM mysql.user WHERE User = ? AND Host = '%'", user).Scan(&n); err != nil {
		t.Fatal(err)
	}
	h.exists = n == 1
	var owner string
	err := db.QueryRow("SELECT owner_uid FROM `"+mysqlaccount.ClaimSchema+"`.`accounts` WHERE user = ?", user).Scan(&owner)
	var me *mysql.MySQLError
	switch {
	case errors.Is(err, sql.ErrNoRows), errors.As(err, &me) && me.Number == 1146: // no claim, or no claim table yet
	case err != nil:
		t.Fatal(err)
	case owner == uid:
		h.claim = "this"
	default:
		h.claim = "other"
	}
	if h.exists {
		switch {
		case login(user, tenant) == nil:
			h.password = "tenant's"
		case login(user, original) == nil:
			h.password = "original"
		default:
			h.password = "neither"
		}
	}
	return h
}
