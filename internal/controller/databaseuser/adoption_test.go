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
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/mysqlaccount"
	"github.com/operator101/operator101/test/mariadbtest"
	"github.com/operator101/operator101/test/testenv"
)

// showGrants is SHOW GRANTS FOR user@% (sorted): what the privilege tables privilegeTables reads do not show
// (roles, table grants).
func showGrants(t *testing.T, user string) string {
	t.Helper()
	rows, err := server.SQL(t).Query("SHOW GRANTS FOR `" + user + "`@`%`")
	if err != nil {
		t.Fatalf("SHOW GRANTS FOR %s: %v", user, err)
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestAdoptionRefusedBeyondPolicy: a target with existingAccounts: Adopt and no userPrefix, whose policy allows
// the tenant its own databases only. DatabaseUsers naming accounts made by hand that hold more (a DBA's
// global privileges with GRANT OPTION, a role, another tenant's database whose claim was lost, a table
// elsewhere) are Ready=False, reason AdoptionRefused, the message naming the kinds of privilege and none of the
// account's grants, one Warning Event over several resyncs; every account keeps its password and grants, and
// none is recorded; deleting the DatabaseUsers drops nothing. Once the server's admin revokes what stood in the
// way, the next resync adopts the account.
func TestAdoptionRefusedBeyondPolicy(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	o := startOperator(t, nil, randomPassword(t, "badadmin"))
	ns := env.NewNamespace(t, "adopter")
	db := server.SQL(t)
	dba, roled, lost, tabled := uniqueUser("dba"), uniqueUser("roled"), uniqueUser("lost"), uniqueUser("tabled")
	mkTarget(t, "adopting", o.ns, "mariadb-target", func(s *mygroupv1alpha1.DatabaseTargetSpec) {
		s.Databases = []string{"${namespace}", "${namespace}_*"}
		s.ExistingAccounts = mygroupv1alpha1.ExistingAccountsAdopt
		s.AdoptableAccounts = []mygroupv1alpha1.AdoptableAccounts{{Namespace: ns, Users: []string{dba, roled, lost, tabled}}}
	})
	role, otherDB := uniqueUser("secret-role"), uniqueUser("other-tenant")+"_orders"
	for _, stmt := range []string{
		"CREATE DATABASE `" + otherDB + "`",
		"CREATE TABLE `" + otherDB + "`.`t` (c INT)",
		"CREATE ROLE `" + role + "`",
		"CREATE USER `" + dba + "`@`%` IDENTIFIED BY 'dba-pw'",
		"GRANT ALL PRIVILEGES ON *.* TO `" + dba + "`@`%` WITH GRANT OPTION",
		"CREATE USER `" + roled + "`@`%` IDENTIFIED BY 'roled-pw'",
		"GRANT `" + role + "` TO `" + roled + "`@`%`",
		"CREATE USER `" + lost + "`@`%` IDENTIFIED BY 'lost-pw'",
		"GRANT SELECT, INSERT ON `" + strings.ReplaceAll(otherDB, "_", `\_`) + "`.* TO `" + lost + "`@`%`",
		"CREATE USER `" + tabled + "`@`%` IDENTIFIED BY 'tabled-pw'",
		"GRANT SELECT ON `" + otherDB + "`.`t` TO `" + tabled + "`@`%`",
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		for _, stmt := range []string{"DROP USER IF EXISTS `" + dba + "`@`%`, `" + roled + "`@`%`, `" + lost + "`@`%`, `" + tabled + "`@`%`",
			"DROP ROLE IF EXISTS `" + role + "`", "DROP DATABASE IF EXISTS `" + otherDB + "`"} {
			_, _ = db.Exec(stmt)
		}
	})
	accounts := map[string]struct {
		user, pw string
		kinds    []string
	}{
		"dba":    {dba, "dba-pw", []string{"global privileges", "GRANT OPTION"}},
		"roled":  {roled, "roled-pw", []string{"roles"}},
		"lost":   {lost, "lost-pw", []string{"database-level grants outside the target's databases"}},
		"tabled": {tabled, "tabled-pw", []string{"table or column grants outside the target's databases"}},
	}
	// The tenant's own new account, on the same target: created as ever (and the claim table with it).
	own, ownPw := uniqueUser("own"), randomPassword(t, "own")
	_, ownKey := readyUser(t, ns, "own", own, ownPw, func(d *mygroupv1alpha1.DatabaseUser) {
		d.Labels = map[string]string{mygroupv1alpha1.TargetLabel: "adopting"}
	})
	grantsBefore := map[string]string{}
	for name, a := range accounts {
		grantsBefore[name] = showGrants(t, a.user)
	}
	before := privilegeTables(t)

	for name, a := range accounts {
		key := refusedUser(t, ns, name, a.user, "adopting", mygroupv1alpha1.ReasonAdoptionRefused, ns+"_app")
		msg := meta.FindStatusCondition(mustGet(t, key.Namespace, key.Name).Status.Conditions, mygroupv1alpha1.ConditionReady).Message
		t.Logf("%s: %s", name, msg)
		for _, k := range a.kinds {
			if !strings.Contains(msg, k) {
				t.Errorf("%s: the message does not say %q: %s", name, k, msg)
			}
		}
		for _, other := range []string{role, otherDB, "ALL PRIVILEGES", "SELECT", mysqlaccount.NativePasswordHash(a.pw)} {
			if strings.Contains(msg, other) {
				t.Errorf("%s: the message tells of the account's grants (%q): %s", name, other, msg)
			}
		}
	}
	// A few resyncs later (2s each): still refused, one Warning Event each, nothing changed.
	time.Sleep(2 * resync) // a window for the rechecks to run, not a wait for a condition
	for name, a := range accounts {
		waitReady(t, types.NamespacedName{Namespace: ns, Name: name}, metav1.ConditionFalse, mygroupv1alpha1.ReasonAdoptionRefused)
		evs := testenv.EventsOfReason(t, env.Client, ns, name, mygroupv1alpha1.ReasonAdoptionRefused)
		if len(evs) != 1 || evs[0].Series != nil || evs[0].Type != corev1.EventTypeWarning {
			t.Errorf("%s: %d AdoptionRefused Events, want exactly one Warning: %+v", name, len(evs), evs)
		}
		if got := showGrants(t, a.user); got != grantsBefore[name] {
			t.Errorf("%s: the account's grants changed:\nbefore:\n%s\nafter:\n%s", name, grantsBefore[name], got)
		}
		if err := login(a.user, a.pw); err != nil {
			t.Errorf("%s: the account's own password stopped working: %v", name, err)
		}
	}
	if after := privilegeTables(t); after != before {
		t.Errorf("the privilege tables changed while adoption was refused:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	for _, e := range strings.Split(eventNotes(t, ns), "\n") {
		if strings.Contains(e, role) || strings.Contains(e, otherDB) {
			t.Errorf("an Event tells of an account's grants: %s", e)
		}
	}

	// The server's admin revokes the role: the next resync adopts the account, with the tenant's password.
	if _, err := db.Exec("REVOKE `" + role + "` FROM `" + roled + "`@`%`"); err != nil {
		t.Fatal(err)
	}
	waitReady(t, types.NamespacedName{Namespace: ns, Name: "roled"}, metav1.ConditionTrue, mygroupv1alpha1.ReasonReady)
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "s-roled"}, s); err != nil {
		t.Fatal(err)
	}
	if err := login(roled, string(s.Data["pw"])); err != nil {
		t.Errorf("the account, once within the policy, was not adopted: %v", err)
	}

	// Deleting the refused DatabaseUsers drops nothing: none of those accounts became theirs.
	refusedBefore := privilegeTables(t)
	for _, name := range []string{"dba", "lost", "tabled"} {
		deleteUser(t, types.NamespacedName{Namespace: ns, Name: name})
		if evs := testenv.EventsOfReason(t, env.Client, ns, name, "AccountNotDropped"); len(evs) != 1 {
			t.Errorf("%s: AccountNotDropped Events: %+v", name, evs)
		}
		if err := login(accounts[name].user, accounts[name].pw); err != nil {
			t.Errorf("%s: the account was touched by the deletion: %v", name, err)
		}
	}
	if after := privilegeTables(t); after != refusedBefore {
		t.Errorf("deleting refused DatabaseUsers changed the privilege tables:\nbefore:\n%s\nafter:\n%s", refusedBefore, after)
	}
	for _, key := range []types.NamespacedName{{Namespace: ns, Name: "roled"}, ownKey} {
		deleteUser(t, key)
	}
	if accountExists(t, roled) || accountExists(t, own) {
		t.Error("an account of the tenant's (adopted or created) was not dropped with its DatabaseUser")
	}
	assertNoSecrets(t, o, ns, "dba-pw", "roled-pw", "lost-pw", "tabled-pw", string(s.Data["pw"]), ownPw, server.Admin.Password)
}
