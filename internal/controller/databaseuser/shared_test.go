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
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/databaseuser"
	"github.com/operator101/operator101/test/mariadbtest"
	"github.com/operator101/operator101/test/testenv"
)

// A database server shared by tenants: what a DatabaseUser may not make the operator do, proven against the
// real MariaDB with its privilege tables read back before and after.

// privilegeTables is every row of mysql.user and mysql.db (and operator101's claims), as text: the
// state a refused DatabaseUser must leave exactly as it was.
func privilegeTables(t *testing.T) string {
	t.Helper()
	db := server.SQL(t)
	var b strings.Builder
	for _, q := range []string{
		"SELECT User, Host, plugin, authentication_string, max_user_connections FROM mysql.user ORDER BY User, Host",
		"SELECT * FROM mysql.db ORDER BY User, Host, Db",
		"SELECT * FROM mysql.global_priv ORDER BY User, Host",
		"SELECT * FROM operator101.accounts ORDER BY 1, 2",
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				fmt.Fprintf(&b, "%s|", v)
			}
			b.WriteString("\n")
		}
		_ = rows.Close()
	}
	return b.String()
}

// refusedUser creates a DatabaseUser for user on target, in ns, and waits for its Ready reason.
func refusedUser(t *testing.T, ns, name, user, target, reason string, grants ...string) types.NamespacedName {
	t.Helper()
	mkSecret(t, ns, "s-"+name, map[string]string{"pw": randomPassword(t, name)})
	d := newDBU(ns, name, user, "s-"+name, "pw")
	d.Labels = map[string]string{mygroupv1alpha1.TargetLabel: target}
	for _, g := range grants {
		d.Spec.Grants = append(d.Spec.Grants, mygroupv1alpha1.Grant{Database: g, Privileges: []mygroupv1alpha1.Privilege{"SELECT"}})
	}
	key := testenv.Create(t, env.Client, d)
	waitReady(t, key, metav1.ConditionFalse, reason)
	return key
}

// TestTenantsCannotTouchWhatIsNotTheirs: each DatabaseUser below is refused with its reason and exactly one
// Event, and nothing in the server's privilege tables changes, neither while it exists nor when it is
// deleted; the tenant that owns an account keeps full function.
func TestTenantsCannotTouchWhatIsNotTheirs(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	o := startOperator(t, nil, randomPassword(t, "badadmin"))
	nsA, nsB, nsC := env.NewNamespace(t, "tenant-a"), env.NewNamespace(t, "tenant-b"), env.NewNamespace(t, "tenant-c")
	mkTarget(t, "shared", o.ns, "mariadb-target", func(s *mygroupv1alpha1.DatabaseTargetSpec) {
		s.AllowedNamespaces = []string{nsA, nsB}
		s.Databases = []string{"${namespace}_*"}
	})
	db := server.SQL(t)
	handmade, hosted := uniqueUser("handmade"), uniqueUser("hosted")
	for _, stmt := range []string{
		"CREATE USER `" + handmade + "`@`%` IDENTIFIED BY 'by-hand'",
		"CREATE USER `" + hosted + "`@`10.1.2.3` IDENTIFIED BY 'by-hand'",
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = db.Exec("DROP USER IF EXISTS `" + handmade + "`@`%`, `" + hosted + "`@`10.1.2.3`")
	})

	// Tenant B owns an account.
	owned, ownedPw := uniqueUser("owned"), randomPassword(t, "owned")
	_, ownedKey := readyUser(t, nsB, "owned", owned, ownedPw, func(d *mygroupv1alpha1.DatabaseUser) {
		d.Labels = map[string]string{mygroupv1alpha1.TargetLabel: "shared"}
		d.Spec.Grants = []mygroupv1alpha1.Grant{{Database: nsB + "_orders", Privileges: []mygroupv1alpha1.Privilege{"SELECT"}}}
	})
	before := privilegeTables(t)

	type refusal struct{ ns, reason string }
	refused := map[string]refusal{}
	messages := map[string]string{} // each refusal's message, with its user name taken out
	for _, tc := range []struct {
		name, user, reason string
		grants             []string
		ns                 string
	}{
		{name: "root", user: "root", reason: mygroupv1alpha1.ReasonAccountReserved},
		{name: "admin", user: server.Admin.User, reason: mygroupv1alpha1.ReasonAccountNotOwned},
		{name: "mysql-sys", user: "mysql.sys", reason: mygroupv1alpha1.ReasonAccountReserved},
		{name: "mariadb-sys", user: "mariadb.sys", reason: mygroupv1alpha1.ReasonAccountReserved},
		{name: "handmade", user: handmade, reason: mygroupv1alpha1.ReasonAccountNotOwned},
		{name: "other-host", user: hosted, reason: mygroupv1alpha1.ReasonAccountNotOwned},
		{name: "other-tenant", user: owned, reason: mygroupv1alpha1.ReasonAccountNotOwned},
		{name: "grant-mysql", user: uniqueUser("g"), reason: mygroupv1alpha1.ReasonGrantNotAllowed, grants: []string{"mysql"}},
		{name: "grant-other-tenant", user: uniqueUser("g"), reason: mygroupv1alpha1.ReasonGrantNotAllowed, grants: []string{nsB + "_orders"}},
		{name: "grant-star", user: uniqueUser("g"), reason: mygroupv1alpha1.ReasonGrantNotAllowed, grants: []string{"*"}},
		{name: "namespace-not-allowed", user: uniqueUser("c"), reason: mygroupv1alpha1.ReasonTargetNotAllowed, ns: nsC},
	} {
		ns := nsA
		if tc.ns != "" {
			ns = tc.ns
		}
		key := refusedUser(t, ns, tc.name, tc.user, "shared", tc.reason, tc.grants...)
		refused[tc.name] = refusal{key.Namespace, tc.reason}
		d := &mygroupv1alpha1.DatabaseUser{}
		if err := env.Client.Get(ctx, key, d); err != nil {
			t.Fatal(err)
		}
		msg := meta.FindStatusCondition(d.Status.Conditions, mygroupv1alpha1.ConditionReady).Message
		t.Logf("%s: %s: %s", tc.name, tc.reason, msg)
		messages[tc.name] = strings.ReplaceAll(msg, tc.user, "USER")
		if tc.name == "other-tenant" && strings.Contains(msg, nsB) {
			t.Errorf("%s: the condition tells about the other tenant's DatabaseUser: %s", tc.name, msg)
		}
	}
	// A guess at the admin account's name is not confirmed: the tenant reads what any account not theirs gives.
	if messages["admin"] != messages["handmade"] || messages["admin"] != messages["other-tenant"] {
		t.Errorf("the admin's name is told apart from other accounts not owned:\nadmin:    %s\nhandmade: %s\nother:    %s",
			messages["admin"], messages["handmade"], messages["other-tenant"])
	}
	// A few resyncs later (2s each): still refused, still one Event each, still nothing changed.
	time.Sleep(2 * resync) // a window for the rechecks to run, not a wait for a condition
	for name, r := range refused {
		waitReady(t, types.NamespacedName{Namespace: r.ns, Name: name}, metav1.ConditionFalse, r.reason)
		if evs := testenv.EventsOfReason(t, env.Client, r.ns, name, r.reason); len(evs) != 1 || evs[0].Series != nil {
			t.Errorf("%s: %d %s Events, want exactly one: %+v", name, len(evs), r.reason, evs)
		}
	}
	if after := privilegeTables(t); after != before {
		t.Errorf("the privilege tables changed while tenants were refused:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// Deleting them drops nothing: none of these accounts is theirs.
	for name, r := range refused {
		if err := env.Client.Delete(ctx, &mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	for name, r := range refused {
		waitGone(t, types.NamespacedName{Namespace: r.ns, Name: name})
	}
	if after := privilegeTables(t); after != before {
		t.Errorf("deleting refused DatabaseUsers changed the privilege tables:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if evs := testenv.EventsOfReason(t, env.Client, nsA, "other-tenant", "AccountNotDropped"); len(evs) != 1 {
		t.Errorf("AccountNotDropped Events for the other tenant's account: %+v", evs)
	}
	if err := login(owned, ownedPw); err != nil {
		t.Errorf("the owner's account stopped working: %v", err)
	}

	// The owner keeps full function: rotation and drop on delete.
	newPw := randomPassword(t, "rotated")
	setSecret(t, nsB, "s", map[string]string{"pw": newPw})
	poll(t, timeout, "the owner's rotation", func() error { return login(owned, newPw) })
	deleteUser(t, ownedKey)
	if accountExists(t, owned) {
		t.Error("the owner's account survived its DatabaseUser")
	}
	assertNoSecrets(t, o, nsA, ownedPw, newPw, server.Admin.Password)
}

// TestAdoptOnlyWhenTheTargetSaysSo: an account made by hand is refused, until the cluster admin sets the
// target's existingAccounts to Adopt and lists the account for the DatabaseUser's namespace; listed for
// another namespace (the account of another team that both may use the target), it stays refused and
// untouched. Once adopted, the DatabaseUser takes it over (its password, its grants) and owns it from then
// on, also after the target goes back to Refuse.
func TestAdoptOnlyWhenTheTargetSaysSo(t *testing.T) {
	mariadbtest.Require(t, server)
	o := startOperator(t, nil, randomPassword(t, "badadmin"))
	ns := env.NewNamespace(t, "adopt")
	dt := mkTarget(t, "legacy", o.ns, "mariadb-target", nil)
	user := uniqueUser("legacy")
	handMadeAccount(t, user, "old-password")
	pw := randomPassword(t, "adopted")
	key := refusedUser(t, ns, "legacy", user, "legacy", mygroupv1alpha1.ReasonAccountNotOwned)
	setSecret(t, ns, "s-legacy", map[string]string{"pw": pw})

	testenv.Patch(t, env.Client, client.ObjectKeyFromObject(dt), dt, func(d *mygroupv1alpha1.DatabaseTarget) {
		d.Spec.ExistingAccounts = mygroupv1alpha1.ExistingAccountsAdopt
		d.Spec.AdoptableAccounts = []mygroupv1alpha1.AdoptableAccounts{{Namespace: "another-team", Users: []string{user}}}
	})
	poll(t, timeout, "the target's change seen", func() error {
		if n := o.count(key); n < 3 {
			return fmt.Errorf("%d reconciles", n)
		}
		return nil
	})
	waitReady(t, key, metav1.ConditionFalse, mygroupv1alpha1.ReasonAccountNotOwned)
	if err := login(user, "old-password"); err != nil {
		t.Fatalf("an account listed for another namespace was touched: %v", err)
	}
	testenv.Patch(t, env.Client, client.ObjectKeyFromObject(dt), dt, func(d *mygroupv1alpha1.DatabaseTarget) {
		d.Spec.AdoptableAccounts = append(d.Spec.AdoptableAccounts, mygroupv1alpha1.AdoptableAccounts{Namespace: ns, Users: []string{"x", user}})
		d.Spec.AdoptableAccounts[0].Users = []string{"someone-else"}
	})
	waitReady(t, key, metav1.ConditionTrue, mygroupv1alpha1.ReasonReady)
	if err := login(user, pw); err != nil {
		t.Fatalf("the adopted account does not take the DatabaseUser's password: %v", err)
	}
	testenv.Patch(t, env.Client, client.ObjectKeyFromObject(dt), dt, func(d *mygroupv1alpha1.DatabaseTarget) {
		d.Spec.ExistingAccounts = mygroupv1alpha1.ExistingAccountsRefuse
	})
	testenv.Poke(t, env.Client, key, &mygroupv1alpha1.DatabaseUser{})
	waitReady(t, key, metav1.ConditionTrue, mygroupv1alpha1.ReasonReady)
	deleteUser(t, key)
	if accountExists(t, user) {
		t.Error("the adopted account was not dropped with its DatabaseUser")
	}
}

// TestTargets: a DatabaseTarget's status says whether the operator can log in; a target served by another
// installation is left alone; a DatabaseUser of a target that goes away is released without dropping.
func TestTargets(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	o := startOperator(t, nil, randomPassword(t, "badadmin"))
	mkTarget(t, "elsewhere", "some-other-namespace", "mariadb-target", nil)
	for name, reason := range map[string]string{
		"default":  mygroupv1alpha1.ReasonConnected,
		"badpw":    mygroupv1alpha1.ReasonAccessDenied,
		"nosecret": mygroupv1alpha1.ReasonTargetSecretInvalid,
	} {
		poll(t, timeout, "DatabaseTarget "+name+" reports "+reason, func() error {
			dt := &mygroupv1alpha1.DatabaseTarget{}
			if err := env.Client.Get(ctx, types.NamespacedName{Name: name}, dt); err != nil {
				return err
			}
			c := meta.FindStatusCondition(dt.Status.Conditions, mygroupv1alpha1.ConditionReady)
			if c == nil || c.Reason != reason || c.ObservedGeneration != dt.Generation {
				return fmt.Errorf("status %+v", dt.Status)
			}
			if reason == mygroupv1alpha1.ReasonConnected && !strings.HasPrefix(dt.Status.Server, "MariaDB 10.") {
				return fmt.Errorf("server %q", dt.Status.Server)
			}
			return nil
		})
	}
	ns := env.NewNamespace(t, "targets")
	elsewhere := refusedUser(t, ns, "elsewhere", uniqueUser("e"), "elsewhere", mygroupv1alpha1.ReasonTargetNotServed)
	// Where the target's Secret lives and where the operator runs are the cluster admin's.
	if msg := meta.FindStatusCondition(mustGet(t, elsewhere.Namespace, elsewhere.Name).Status.Conditions,
		mygroupv1alpha1.ConditionReady).Message; strings.Contains(msg, "some-other-namespace") || strings.Contains(msg, o.ns) {
		t.Errorf("the tenant's message names the namespaces of the Secret or the operator: %s", msg)
	}
	if got := mustGetTarget(t, "elsewhere"); len(got.Status.Conditions) != 0 {
		t.Errorf("another installation's target got a status: %+v", got.Status)
	}

	// The admin removes a target: its DatabaseUsers say so, and deleting one releases it, account kept.
	mkTarget(t, "going", o.ns, "mariadb-target", nil)
	user, pw := uniqueUser("going"), randomPassword(t, "going")
	_, key := readyUser(t, ns, "going", user, pw, func(d *mygroupv1alpha1.DatabaseUser) {
		d.Labels = map[string]string{mygroupv1alpha1.TargetLabel: "going"}
	})
	if err := env.Client.Delete(ctx, mustGetTarget(t, "going")); err != nil {
		t.Fatal(err)
	}
	waitReady(t, key, metav1.ConditionFalse, mygroupv1alpha1.ReasonUnknownTarget)
	deleteUser(t, key)
	if err := login(user, pw); err != nil {
		t.Errorf("the account of a removed target was touched: %v", err)
	}
	if evs := testenv.EventsOfReason(t, env.Client, ns, "going", "AccountNotDropped"); len(evs) != 1 {
		t.Errorf("AccountNotDropped Events: %+v", evs)
	}
	_, _ = server.SQL(t).Exec("DROP USER IF EXISTS `" + user + "`@`%`")
	_, _ = server.SQL(t).Exec("DELETE FROM operator101.accounts WHERE user = ?", user)
}

// TestNamespacedInstall: installed for namespaces (OwnNamespace, SingleNamespace), the manager's cache holds
// only those, and still sees the cluster-scoped DatabaseTargets: a DatabaseUser there becomes Ready, the
// target's status is written, and a DatabaseUser in another namespace is not touched.
func TestNamespacedInstall(t *testing.T) {
	mariadbtest.Require(t, server)
	ns, elsewhere := env.NewNamespace(t, "served"), env.NewNamespace(t, "not-served")
	startOperatorWith(t, nil, randomPassword(t, "badadmin"), nil, databaseuser.Config{ResyncPeriod: resync}, func(opts *ctrl.Options) {
		opts.Cache.DefaultNamespaces = map[string]cache.Config{ns: {}}
	})
	user, pw := uniqueUser("served"), randomPassword(t, "served")
	_, key := readyUser(t, ns, "served", user, pw)
	poll(t, timeout, "the default target's status", func() error {
		if c := meta.FindStatusCondition(mustGetTarget(t, "default").Status.Conditions, mygroupv1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("%+v", c)
		}
		return nil
	})
	mkSecret(t, elsewhere, "s", map[string]string{"pw": pw})
	other := testenv.Create(t, env.Client, newDBU(elsewhere, "other", uniqueUser("other"), "s", "pw"))
	if err := env.Client.Delete(context.Background(), mustGet(t, ns, "served")); err != nil {
		t.Fatal(err)
	}
	waitGone(t, key)
	if got := mustGet(t, elsewhere, "other"); len(got.Finalizers) != 0 || len(got.Status.Conditions) != 0 {
		t.Errorf("a DatabaseUser outside the watched namespace was reconciled: %+v", got)
	}
	if err := env.Client.Delete(context.Background(), mustGet(t, other.Namespace, other.Name)); err != nil {
		t.Fatal(err)
	}
}

// TestTargetSchema: the sample DatabaseTarget is valid; what the API server refuses in one.
func TestTargetSchema(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join(env.Root, "config", "samples", "mygroup_v1alpha1_databasetarget.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sample := &mygroupv1alpha1.DatabaseTarget{}
	if err := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(data)), 4096).Decode(sample); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, sample.DeepCopy(), client.DryRunAll); err != nil {
		t.Errorf("the sample: %v", err)
	}
	minimal := &mygroupv1alpha1.DatabaseTarget{ObjectMeta: metav1.ObjectMeta{Name: "minimal"},
		Spec: mygroupv1alpha1.DatabaseTargetSpec{AdminSecretRef: mygroupv1alpha1.SecretReference{Namespace: "op", Name: "s"},
			AllowedNamespaces: []string{"team"}}}
	if err := env.Client.Create(ctx, minimal, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	if s := minimal.Spec; s.TLS.Mode != mygroupv1alpha1.TLSVerifyFull || s.ExistingAccounts != mygroupv1alpha1.ExistingAccountsRefuse ||
		strings.Join(s.Databases, ",") != "${namespace},${namespace}_*" {
		t.Errorf("defaults: %+v", s)
	}
	// Each refusal names the field ("<nil>" is the object itself: a rule on its name) and says what is wrong with it.
	for name, c := range map[string]struct {
		mutate       func(*mygroupv1alpha1.DatabaseTarget)
		field, error string
	}{
		"no namespaces": {func(d *mygroupv1alpha1.DatabaseTarget) { d.Spec.AllowedNamespaces = nil },
			"spec.allowedNamespaces", "Required value"},
		"not a namespace name": {func(d *mygroupv1alpha1.DatabaseTarget) { d.Spec.AllowedNamespaces = []string{"team-*"} },
			"spec.allowedNamespaces[0]", `Invalid value: "team-*": spec.allowedNamespaces[0] in body should match`},
		"unknown TLS mode": {func(d *mygroupv1alpha1.DatabaseTarget) { d.Spec.TLS.Mode = "Preferred" },
			"spec.tls.mode", `Unsupported value: "Preferred": supported values: "Disabled", "Required", "VerifyCA", "VerifyFull"`},
		"name over 63": {func(d *mygroupv1alpha1.DatabaseTarget) { d.Name = strings.Repeat("t", 64) },
			"<nil>", "the name is a label value on DatabaseUsers: at most 63 characters"},
		"no Secret namespace": {func(d *mygroupv1alpha1.DatabaseTarget) { d.Spec.AdminSecretRef.Namespace = "" },
			"spec.adminSecretRef.namespace", "should be at least 1 chars long"},
		"unknown policy": {func(d *mygroupv1alpha1.DatabaseTarget) { d.Spec.ExistingAccounts = "Steal" },
			"spec.existingAccounts", `Unsupported value: "Steal": supported values: "Refuse", "Adopt"`},
	} {
		d := sample.DeepCopy()
		c.mutate(d)
		assertInvalid(t, name, env.Client.Create(ctx, d, client.DryRunAll), c.field, c.error)
	}
}

func mustGet(t *testing.T, ns, name string) *mygroupv1alpha1.DatabaseUser {
	t.Helper()
	d := &mygroupv1alpha1.DatabaseUser{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, d); err != nil {
		t.Fatal(err)
	}
	return d
}

func mustGetTarget(t *testing.T, name string) *mygroupv1alpha1.DatabaseTarget {
	t.Helper()
	d := &mygroupv1alpha1.DatabaseTarget{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Name: name}, d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestNarrowedPolicy: a change of a target's policy reaches its DatabaseUsers through the watch (the resync is an
// hour here), and an account the new policy no longer allows is left as it is until its DatabaseUser is
// deleted, which still drops it: the account is operator101's.
func TestNarrowedPolicy(t *testing.T) {
	mariadbtest.Require(t, server)
	o := startOperatorWith(t, nil, randomPassword(t, "badadmin"), nil, databaseuser.Config{ResyncPeriod: time.Hour})
	ns := env.NewNamespace(t, "narrowed")
	dt := mkTarget(t, "narrowed", o.ns, "mariadb-target", nil)
	user, pw := uniqueUser("narrowed"), randomPassword(t, "narrowed")
	_, key := readyUser(t, ns, "narrowed", user, pw, func(d *mygroupv1alpha1.DatabaseUser) {
		d.Labels = map[string]string{mygroupv1alpha1.TargetLabel: "narrowed"}
		d.Spec.Grants = []mygroupv1alpha1.Grant{{Database: ns + "_app", Privileges: []mygroupv1alpha1.Privilege{"SELECT"}}}
	})
	before := privilegeTables(t)

	for _, step := range []struct {
		narrow func(*mygroupv1alpha1.DatabaseTargetSpec)
		reason string
	}{
		{func(s *mygroupv1alpha1.DatabaseTargetSpec) { s.UserPrefix = "${namespace}_" }, mygroupv1alpha1.ReasonUserNotAllowed},
		{func(s *mygroupv1alpha1.DatabaseTargetSpec) { s.UserPrefix, s.Databases = "", []string{"${namespace}"} }, mygroupv1alpha1.ReasonGrantNotAllowed},
		{func(s *mygroupv1alpha1.DatabaseTargetSpec) {
			s.Databases, s.AllowedNamespaces = []string{"*"}, []string{"someone-else"}
		}, mygroupv1alpha1.ReasonTargetNotAllowed},
	} {
		testenv.Patch(t, env.Client, client.ObjectKeyFromObject(dt), dt, func(d *mygroupv1alpha1.DatabaseTarget) { step.narrow(&d.Spec) })
		waitReady(t, key, metav1.ConditionFalse, step.reason)
		if after := privilegeTables(t); after != before {
			t.Errorf("%s: the account changed:\nbefore:\n%s\nafter:\n%s", step.reason, before, after)
		}
		if err := login(user, pw); err != nil {
			t.Errorf("%s: the account stopped working: %v", step.reason, err)
		}
	}
	deleteUser(t, key)
	if accountExists(t, user) {
		t.Error("the account the policy no longer allows was not dropped with its DatabaseUser")
	}
}

// TestDeletedBeforeAdoptionDrops: a DatabaseUser deleted before it could adopt its account (here its Secret
// is missing; in an upgrade from 0.1.0, whose accounts have no claim, it is deleted before the new version
// reconciles it) drops that account when its target allows adoption and the account's privileges fit the
// policy and the target lists it for the DatabaseUser's namespace, as it would once adopted; on a target that
// refuses existing accounts, or lists the account for another namespace, the account stays.
func TestDeletedBeforeAdoptionDrops(t *testing.T) {
	mariadbtest.Require(t, server)
	o := startOperator(t, nil, randomPassword(t, "badadmin"))
	ns := env.NewNamespace(t, "early")
	users := map[string]string{"adopt-early": uniqueUser("early"), "refuse-early": uniqueUser("early"), "unlisted-early": uniqueUser("early")}
	mkTarget(t, "adopt-early", o.ns, "mariadb-target", func(s *mygroupv1alpha1.DatabaseTargetSpec) {
		s.Databases = []string{"${namespace}_*"}
		s.ExistingAccounts = mygroupv1alpha1.ExistingAccountsAdopt
		s.AdoptableAccounts = []mygroupv1alpha1.AdoptableAccounts{{Namespace: ns, Users: []string{users["adopt-early"]}}}
	})
	mkTarget(t, "unlisted-early", o.ns, "mariadb-target", func(s *mygroupv1alpha1.DatabaseTargetSpec) {
		s.Databases = []string{"${namespace}_*"}
		s.ExistingAccounts = mygroupv1alpha1.ExistingAccountsAdopt
		s.AdoptableAccounts = []mygroupv1alpha1.AdoptableAccounts{{Namespace: "another-team", Users: []string{users["unlisted-early"]}}}
	})
	mkTarget(t, "refuse-early", o.ns, "mariadb-target", nil)
	for _, tc := range []struct {
		target  string
		dropped bool
	}{{"adopt-early", true}, {"refuse-early", false}, {"unlisted-early", false}} {
		user := users[tc.target]
		handMadeAccount(t, user, "made-earlier", "GRANT SELECT ON `"+strings.ReplaceAll(ns+"_app", "_", "\\_")+"`.* TO %s")
		dbu := newDBU(ns, tc.target, user, "missing", "pw")
		dbu.Labels = map[string]string{mygroupv1alpha1.TargetLabel: tc.target}
		key := testenv.Create(t, env.Client, dbu)
		waitReady(t, key, metav1.ConditionFalse, mygroupv1alpha1.ReasonSecretNotFound)
		deleteUser(t, key)
		if got := !accountExists(t, user); got != tc.dropped {
			t.Errorf("target %s: account dropped %v, want %v", tc.target, got, tc.dropped)
		}
	}
}

// TestMigratingTargetHoldsDeletion: a DatabaseUser of a target that DATABASE_TARGETS still names but no
// DatabaseTarget declares yet (the migration from 0.1.0, between the upgrade and the admin's step 1) is held
// when deleted, UnknownTarget saying why, its account untouched; once the admin creates the DatabaseTarget
// (Adopt), its account is dropped and it goes. A target DATABASE_TARGETS does not name is released at once.
func TestMigratingTargetHoldsDeletion(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	o := startOperatorWith(t, nil, randomPassword(t, "badadmin"), nil,
		databaseuser.Config{ResyncPeriod: resync, MigratingTargets: []string{"migrating"}})
	ns := env.NewNamespace(t, "migrate")
	user := uniqueUser("old")
	handMadeAccount(t, user, "made-by-0.1.0")
	dbu := newDBU(ns, "old", user, "missing", "pw")
	dbu.Labels = map[string]string{mygroupv1alpha1.TargetLabel: "migrating"}
	key := testenv.Create(t, env.Client, dbu)
	waitReady(t, key, metav1.ConditionFalse, mygroupv1alpha1.ReasonUnknownTarget)
	if err := env.Client.Delete(ctx, mustGet(t, ns, "old")); err != nil {
		t.Fatal(err)
	}
	poll(t, timeout, "the deletion held, saying why", func() error {
		c := meta.FindStatusCondition(mustGet(t, ns, "old").Status.Conditions, mygroupv1alpha1.ConditionReady)
		if c == nil || c.Reason != mygroupv1alpha1.ReasonUnknownTarget || !strings.Contains(c.Message, "deletion is held") ||
			!strings.Contains(c.Message, "DATABASE_TARGETS") {
			return fmt.Errorf("%+v", c)
		}
		return nil
	})
	if !accountExists(t, user) {
		t.Fatal("the account went while the target was unknown")
	}
	mkTarget(t, "migrating", o.ns, "mariadb-target", func(s *mygroupv1alpha1.DatabaseTargetSpec) {
		s.ExistingAccounts = mygroupv1alpha1.ExistingAccountsAdopt
		s.AdoptableAccounts = []mygroupv1alpha1.AdoptableAccounts{{Namespace: ns, Users: []string{user}}}
	})
	waitGone(t, key)
	if accountExists(t, user) {
		t.Error("the account was not dropped once the DatabaseTarget was created")
	}

	// A name DATABASE_TARGETS does not list: released at once, nothing dropped.
	other := newDBU(ns, "other", uniqueUser("other"), "missing", "pw")
	other.Labels = map[string]string{mygroupv1alpha1.TargetLabel: "never-declared"}
	otherKey := testenv.Create(t, env.Client, other)
	waitReady(t, otherKey, metav1.ConditionFalse, mygroupv1alpha1.ReasonUnknownTarget)
	deleteUser(t, otherKey)
}
