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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/databaseuser"
	"github.com/operator101/operator101/internal/mysqlaccount"
	"github.com/operator101/operator101/test/mariadbtest"
	"github.com/operator101/operator101/test/testenv"
)

// TestLifecycle: create → the user logs in with the Secret's password; the Secret changes → the new password
// works and the old one fails within a resync period plus a second; grants follow the spec exactly; an account
// dropped by hand comes back; delete → the account is dropped. No password reaches logs, Events or status.
func TestLifecycle(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	o := startOperator(t, nil, randomPassword(t, "badadmin"))
	ns := env.NewNamespace(t, "dbu")
	user := uniqueUser("life")
	pw1, pw2 := randomPassword(t, "first"), randomPassword(t, "second")
	mkSecret(t, ns, "app-db", map[string]string{"password": pw1})
	dbu := newDBU(ns, "app", user, "app-db", "password")
	dbu.Spec.MaxUserConnections = ptr.To[int32](4)
	dbu.Spec.Grants = []mygroupv1alpha1.Grant{{Database: "shop_db", Privileges: []mygroupv1alpha1.Privilege{"SELECT", "INSERT"}}}
	key := testenv.Create(t, env.Client, dbu)

	got := waitReady(t, key, metav1.ConditionTrue, mygroupv1alpha1.ReasonReady)
	if got.Status.Target != "default" || got.Status.LastCheckedTime == nil || !controllerutil.ContainsFinalizer(got, mygroupv1alpha1.Finalizer) {
		t.Errorf("status %+v, finalizers %v", got.Status, got.Finalizers)
	}
	if err := login(user, pw1); err != nil {
		t.Fatalf("login with the Secret's password: %v", err)
	}
	db := server.SQL(t)
	var maxConn int
	if err := db.QueryRow("SELECT max_user_connections FROM mysql.user WHERE User = ? AND Host = '%'", user).Scan(&maxConn); err != nil || maxConn != 4 {
		t.Errorf("max_user_connections = %d, %v", maxConn, err)
	}
	grants := func() string {
		obs, err := admin(t).Observe(ctx, user, "%")
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(obs.Grants)
	}
	if g := grants(); g != `map[shop\_db:[INSERT SELECT]]` {
		t.Errorf("grants %s", g)
	}

	// Rotation: no Secret watch, so the next resync (2s here) picks it up: within the resync period plus
	// rotationSlack (the check's own time and the test's 100 ms poll), the bound docs/contributing/reliability.md gives.
	start := time.Now()
	setSecret(t, ns, "app-db", map[string]string{"password": pw2})
	poll(t, timeout, "new password works", func() error { return login(user, pw2) })
	t.Logf("rotation took %v (resync period %v)", time.Since(start).Round(10*time.Millisecond), resync)
	if d := time.Since(start); d > resync+rotationSlack {
		t.Errorf("rotation took %v, more than the resync period %v plus %v", d, resync, rotationSlack)
	}
	if err := login(user, pw1); mysqlaccount.KindOf(err) != mysqlaccount.KindAccessDenied {
		t.Errorf("old password after rotation: %v, want access denied", err)
	}

	// Grants are replaced, not added to.
	testenv.Patch(t, env.Client, key, &mygroupv1alpha1.DatabaseUser{}, func(u *mygroupv1alpha1.DatabaseUser) {
		u.Spec.Grants = []mygroupv1alpha1.Grant{{Database: "reports", Privileges: []mygroupv1alpha1.Privilege{"SELECT"}}}
		u.Spec.MaxUserConnections = nil
	})
	poll(t, timeout, "grants follow the spec", func() error {
		if g := grants(); g != "map[reports:[SELECT]]" {
			return errors.New(g)
		}
		return nil
	})
	waitReady(t, key, metav1.ConditionTrue, mygroupv1alpha1.ReasonReady)

	// Drift: dropped and granted by hand.
	if _, err := db.Exec("DROP USER `" + user + "`@`%`"); err != nil {
		t.Fatal(err)
	}
	poll(t, timeout, "dropped account restored", func() error { return login(user, pw2) })
	if _, err := db.Exec("GRANT ALL PRIVILEGES ON `secret_db`.* TO `" + user + "`@`%`"); err != nil {
		t.Fatal(err)
	}
	poll(t, timeout, "grant by hand revoked", func() error {
		if g := grants(); g != "map[reports:[SELECT]]" {
			return errors.New(g)
		}
		return nil
	})

	if err := env.Client.Delete(ctx, dbu); err != nil {
		t.Fatal(err)
	}
	waitGone(t, key)
	if accountExists(t, user) {
		t.Error("account still exists after delete")
	}
	if n := eventNotes(t, ns); !strings.Contains(n, "AccountDropped") || !strings.Contains(n, "Normal Ready") {
		t.Errorf("events:\n%s", n)
	}
	assertNoSecrets(t, o, ns, pw1, pw2)
}

// TestZeroWritesAtRest: a converged DatabaseUser is checked every resync with no write to the API server.
func TestZeroWritesAtRest(t *testing.T) {
	mariadbtest.Require(t, server)
	cfg, counter := testenv.Counting(env.Config)
	o := startOperator(t, cfg, randomPassword(t, "badadmin"))
	ns := env.NewNamespace(t, "dbu")
	user := uniqueUser("rest")
	_, key := readyUser(t, ns, "rest", user, randomPassword(t, "rest"))
	// The Event of the transition to Ready goes out after the status, from the recorder's own goroutine: only
	// once it is stored are the writes counted below the ones at rest.
	poll(t, timeout, "the Ready Event", func() error {
		if len(testenv.EventsOfReason(t, env.Client, ns, "rest", mygroupv1alpha1.ReasonReady)) == 0 {
			return fmt.Errorf("no Event of reason %s yet", mygroupv1alpha1.ReasonReady)
		}
		return nil
	})
	before := o.count(key)
	// Only the writes for this DatabaseUser and its target: the manager also converges what earlier tests
	// left, and the targets of startOperator that fail on purpose go on being retried.
	counter.Only(testenv.Scope{Namespaces: []string{ns}, Objects: []string{"databasetargets/" + databaseuser.DefaultTarget}})
	counter.Reset()
	poll(t, timeout, "three resyncs", func() error {
		if n := o.count(key) - before; n < 3 {
			return fmt.Errorf("%d checks", n)
		}
		return nil
	})
	if n := counter.Total(); n != 0 {
		t.Errorf("%d writes at rest over %d checks: %s; Ready now: %+v; the namespace's Events:\n%s", n, o.count(key)-before,
			counter, meta.FindStatusCondition(mustGet(t, ns, "rest").Status.Conditions, mygroupv1alpha1.ConditionReady), eventNotes(t, ns))
	}
	t.Logf("%d checks at rest, %d writes", o.count(key)-before, counter.Total())
	if !accountExists(t, user) {
		t.Error("account missing")
	}
}

// TestCleanupPolicySkip keeps the account when the DatabaseUser is deleted.
func TestCleanupPolicySkip(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	startOperator(t, nil, randomPassword(t, "badadmin"))
	ns := env.NewNamespace(t, "dbu")
	user := uniqueUser("skip")
	pw := randomPassword(t, "skip")
	dbu, key := readyUser(t, ns, "keep", user, pw, func(d *mygroupv1alpha1.DatabaseUser) {
		d.Spec.CleanupPolicy = mygroupv1alpha1.CleanupSkip
	})
	if err := env.Client.Delete(ctx, dbu); err != nil {
		t.Fatal(err)
	}
	waitGone(t, key)
	if err := login(user, pw); err != nil {
		t.Errorf("account gone despite cleanupPolicy Skip: %v", err)
	}
	// The record went with the DatabaseUser: the account is as if made by hand, and nobody's to drop.
	if res, err := admin(t).Drop(ctx, user, "%", mysqlaccount.Claimant{UID: string(dbu.UID)}); err != nil || !res.NotClaimed {
		t.Errorf("Drop by the former owner: %+v, %v; want NotOwned", res, err)
	}
	if n := eventNotes(t, ns); !strings.Contains(n, "no longer recorded as operator101's") {
		t.Errorf("events:\n%s", n)
	}
	if _, err := server.SQL(t).Exec("DROP USER `" + user + "`@`%`"); err != nil {
		t.Fatal(err)
	}
}

// TestNotReadyReasons: each cause gets its own reason, readable message, no hot loop, and recovers by
// itself once fixed.
func TestNotReadyReasons(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	badAdmin := randomPassword(t, "badadmin")
	o := startOperator(t, nil, badAdmin)
	ns := env.NewNamespace(t, "dbu")
	userPw := randomPassword(t, "reasons")

	for _, tc := range []struct {
		name, target, reason, message string
		retries                       bool
	}{
		{"unknown", "nowhere", mygroupv1alpha1.ReasonUnknownTarget, `DatabaseTarget "nowhere" does not exist`, false},
		{"badpw", "badpw", mygroupv1alpha1.ReasonAccessDenied, "denied access to the operator's admin account (error 1045)", true},
		{"nosecret", "nosecret", mygroupv1alpha1.ReasonTargetSecretInvalid, `the admin Secret of DatabaseTarget "nosecret" cannot be used`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mkSecret(t, ns, "s-"+tc.name, map[string]string{"pw": userPw})
			dbu := newDBU(ns, tc.name, uniqueUser(tc.name), "s-"+tc.name, "pw")
			dbu.Labels = map[string]string{mygroupv1alpha1.TargetLabel: tc.target}
			key := testenv.Create(t, env.Client, dbu)
			got := waitReady(t, key, metav1.ConditionFalse, tc.reason)
			c := got.Status.Conditions[0]
			if !strings.Contains(c.Message, tc.message) {
				t.Errorf("message %q does not say %q", c.Message, tc.message)
			}
			// The admin Secret's namespace and name are the cluster admin's (the target's status has them).
			if strings.Contains(c.Message, o.ns) || strings.Contains(c.Message, "mariadb-") {
				t.Errorf("the tenant's message names the admin Secret: %s", c.Message)
			}
			// No hot loop: count the attempts over a fixed window, from the end of the reconcile that wrote the
			// condition (the hook counts a reconcile when it returns, just after its status write).
			poll(t, timeout, "the first reconcile returned", func() error {
				if o.count(key) == 0 {
					return errors.New("no reconcile counted yet")
				}
				return nil
			})
			n0 := o.count(key)
			time.Sleep(3 * time.Second) // a measurement window, not a wait for a condition
			n := o.count(key) - n0
			t.Logf("%s: %d attempts in 3s", tc.reason, n)
			if !tc.retries && n != 0 {
				t.Errorf("%d attempts for a cause only a change can fix", n)
			}
			if n > 12 {
				t.Errorf("%d attempts in 3s: not backing off", n)
			}
			if tc.target == "badpw" {
				// The admin password is fixed: it recovers by itself, at its next backoff retry.
				a := server.Admin
				setSecret(t, o.ns, "mariadb-badpw", map[string]string{"host": a.Host, "port": fmt.Sprint(a.Port),
					"username": a.User, "password": a.Password})
				waitReady(t, key, metav1.ConditionTrue, mygroupv1alpha1.ReasonReady)
			}
			if err := env.Client.Delete(ctx, dbu); err != nil {
				t.Fatal(err)
			}
			if tc.target != "nosecret" {
				// Dropped, or (unknown target) released with a Warning: nothing this operator can reach.
				waitGone(t, key)
			}
		})
	}

	// Missing Secret, then missing key, then fixed: recovers by itself.
	user := uniqueUser("secret")
	dbu := newDBU(ns, "secretless", user, "later", "pw")
	key := testenv.Create(t, env.Client, dbu)
	waitReady(t, key, metav1.ConditionFalse, mygroupv1alpha1.ReasonSecretNotFound)
	mkSecret(t, ns, "later", map[string]string{"other": "x"})
	waitReady(t, key, metav1.ConditionFalse, mygroupv1alpha1.ReasonKeyNotFound)
	setSecret(t, ns, "later", map[string]string{"pw": userPw})
	waitReady(t, key, metav1.ConditionTrue, mygroupv1alpha1.ReasonReady)
	if err := login(user, userPw); err != nil {
		t.Fatal(err)
	}

	// A name the database cannot store (the schema cannot see it: the privilege tables are utf8mb3).
	bad := newDBU(ns, "emoji", "key🔑", "later", "pw")
	testenv.Create(t, env.Client, bad)
	waitReady(t, client.ObjectKeyFromObject(bad), metav1.ConditionFalse, mygroupv1alpha1.ReasonInvalidUser)
	// Such an account cannot exist, so deleting it does not wait for the database.
	if err := env.Client.Delete(ctx, bad); err != nil {
		t.Fatal(err)
	}
	waitGone(t, client.ObjectKeyFromObject(bad))

	if err := env.Client.Delete(ctx, dbu); err != nil {
		t.Fatal(err)
	}
	waitGone(t, key)
	// The nosecret DatabaseUser cannot be dropped: its finalizer stays, and its condition says why and what to
	// do. Doing that (cleanupPolicy Skip, on the terminating object) lets it go, as docs/admin/database-targets.md says.
	for _, name := range []string{"nosecret"} {
		d := &mygroupv1alpha1.DatabaseUser{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, d); err != nil {
			t.Errorf("%s: %v (the finalizer should hold it)", name, err)
			continue
		}
		poll(t, timeout, name+" says why it is not dropped", func() error {
			_ = env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, d)
			if m := d.Status.Conditions[0].Message; !strings.Contains(m, "deletion is held until the account is dropped") ||
				!strings.Contains(m, "set spec.cleanupPolicy to Skip") {
				return errors.New(m)
			}
			return nil
		})
		testenv.Patch(t, env.Client, client.ObjectKeyFromObject(d), d, func(d *mygroupv1alpha1.DatabaseUser) {
			d.Spec.CleanupPolicy = mygroupv1alpha1.CleanupSkip
		})
		waitGone(t, client.ObjectKeyFromObject(d))
	}
	assertNoSecrets(t, o, ns, userPw, badAdmin, server.Admin.Password)
}

// TestDatabaseDownThenUp: with the database stopped the condition says so, attempts back off, a delete
// waits, and when the database returns everything converges by itself.
func TestDatabaseDownThenUp(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	o := startOperator(t, nil, randomPassword(t, "badadmin"))
	ns := env.NewNamespace(t, "dbu")
	user, other := uniqueUser("down"), uniqueUser("down2")
	pw := randomPassword(t, "down")
	dbu, key := readyUser(t, ns, "down", user, pw)

	if err := server.Halt(); err != nil {
		t.Fatal(err)
	}
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			_ = server.Resume()
		}
	})
	// A second DatabaseUser created while the database is down.
	dbu2 := newDBU(ns, "down2", other, "s", "pw")
	key2 := testenv.Create(t, env.Client, dbu2)
	got := waitReady(t, key2, metav1.ConditionFalse, mygroupv1alpha1.ReasonDatabaseUnreachable)
	t.Logf("message: %s", got.Status.Conditions[0].Message)
	// The first one notices at its next resync.
	waitReady(t, key, metav1.ConditionFalse, mygroupv1alpha1.ReasonDatabaseUnreachable)

	// Attempts are the checks that failed (each logged as a reconcile error, then retried with backoff); a
	// reconcile that found its namespace's share of the workers in use (the first DatabaseUser's check, waiting
	// on the halted server) did nothing and is not one.
	failed := func() int {
		n := 0
		for _, l := range strings.Split(o.log.String(), "\n") {
			if strings.Contains(l, "Reconciler error") && strings.Contains(l, `"controller": "databaseuser"`) &&
				strings.Contains(l, `"name": "down2"`) {
				n++
			}
		}
		return n
	}
	n0 := failed()
	window := 8 * time.Second
	time.Sleep(window) // a measurement window, not a wait for a condition
	attempts := failed() - n0
	t.Logf("database down: %d attempts in %v (exponential backoff; a hot loop would make thousands)", attempts, window)
	if attempts > 12 {
		t.Errorf("%d attempts in %v", attempts, window)
	}

	// Deleting while down: the finalizer holds the object and the condition says why.
	if err := env.Client.Delete(ctx, dbu); err != nil {
		t.Fatal(err)
	}
	poll(t, timeout, "condition says the drop waits", func() error {
		d := &mygroupv1alpha1.DatabaseUser{}
		if err := env.Client.Get(ctx, key, d); err != nil {
			return err
		}
		c := d.Status.Conditions[0]
		if c.Reason != mygroupv1alpha1.ReasonDatabaseUnreachable || !strings.Contains(c.Message, "deletion is held until the account is dropped") {
			return fmt.Errorf("%s: %s", c.Reason, c.Message)
		}
		return nil
	})

	if err := server.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed = true
	start := time.Now()
	waitGone(t, key)
	waitReady(t, key2, metav1.ConditionTrue, mygroupv1alpha1.ReasonReady)
	t.Logf("recovered %v after the database came back", time.Since(start).Round(100*time.Millisecond))
	if accountExists(t, user) {
		t.Error("deleted DatabaseUser's account survived")
	}
	if err := login(other, pw); err != nil {
		t.Error(err)
	}
	if err := env.Client.Delete(ctx, dbu2); err != nil {
		t.Fatal(err)
	}
	waitGone(t, key2)
	// Events mark transitions only: one DatabaseUnreachable Event for down2 despite all the attempts (an
	// Event emitted again would have become a series).
	unreachable := testenv.EventsOfReason(t, env.Client, ns, "down2", mygroupv1alpha1.ReasonDatabaseUnreachable)
	if len(unreachable) != 1 || unreachable[0].Series != nil {
		t.Errorf("DatabaseUnreachable Events for down2: %+v", unreachable)
	}
	assertNoSecrets(t, o, ns, pw, server.Admin.Password)
}

// TestSchema: what the API server refuses before the operator sees it.
func TestSchema(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "dbu")
	// Each refusal names the field and says what is wrong with it.
	for name, c := range map[string]struct {
		mutate       func(*mygroupv1alpha1.DatabaseUser)
		field, error string
	}{
		"user longer than 80": {func(d *mygroupv1alpha1.DatabaseUser) { d.Spec.User = strings.Repeat("u", 81) },
			"spec.user", "may not be more than 80 bytes"},
		"empty user": {func(d *mygroupv1alpha1.DatabaseUser) { d.Spec.User = "" },
			"spec.user", "should be at least 1 chars long"},
		"user with NUL": {func(d *mygroupv1alpha1.DatabaseUser) { d.Spec.User = "a\x00b" },
			"spec.user", "user must not contain NUL"},
		"trailing space": {func(d *mygroupv1alpha1.DatabaseUser) { d.Spec.User = "a " },
			"spec.user", "user must not end with a space"},
		"upper-case host": {func(d *mygroupv1alpha1.DatabaseUser) { d.Spec.Host = "DB.example" },
			"spec.host", "host must be lower case"},
		"privilege not listed": {func(d *mygroupv1alpha1.DatabaseUser) {
			d.Spec.Grants = []mygroupv1alpha1.Grant{{Database: "d", Privileges: []mygroupv1alpha1.Privilege{"SUPER"}}}
		}, "spec.grants[0].privileges[0]", `Unsupported value: "SUPER": supported values: "ALL PRIVILEGES"`},
		"no privileges": {func(d *mygroupv1alpha1.DatabaseUser) { d.Spec.Grants = []mygroupv1alpha1.Grant{{Database: "d"}} },
			"spec.grants[0].privileges", "Required value"},
		"negative limit": {func(d *mygroupv1alpha1.DatabaseUser) { d.Spec.MaxUserConnections = ptr.To[int32](-1) },
			"spec.maxUserConnections", "should be greater than or equal to 0"},
		"bad cleanup policy": {func(d *mygroupv1alpha1.DatabaseUser) { d.Spec.CleanupPolicy = "Orphan" },
			"spec.cleanupPolicy", `Unsupported value: "Orphan": supported values: "Delete", "Skip"`},
	} {
		d := newDBU(ns, "x", "u", "s", "k")
		c.mutate(d)
		err := env.Client.Create(ctx, d)
		if err == nil {
			_ = env.Client.Delete(ctx, d)
		}
		assertInvalid(t, name, err, c.field, c.error)
	}
	d := newDBU(ns, "defaults", strings.Repeat("用", 80), "s", "k")
	testenv.Create(t, env.Client, d)
	if d.Spec.Host != "%" || d.Spec.CleanupPolicy != mygroupv1alpha1.CleanupDelete {
		t.Errorf("defaults: host %q, cleanupPolicy %q", d.Spec.Host, d.Spec.CleanupPolicy)
	}
	d.Spec.User = "renamed"
	if err := env.Client.Update(ctx, d); err == nil || !strings.Contains(err.Error(), "immutable") {
		t.Errorf("renaming the user: %v", err)
	}
	// No operator runs here, so it has no finalizer yet: delete it before a later test's operator adopts it.
	if err := env.Client.Delete(ctx, &mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "defaults"}}); err != nil {
		t.Fatal(err)
	}
}

// TestSample applies config/samples' DatabaseUser and Secret unchanged; its target label names a target the
// operator knows here, so it becomes Ready and its user logs in.
func TestSample(t *testing.T) {
	mariadbtest.Require(t, server)
	startOperator(t, nil, randomPassword(t, "badadmin"))
	ns := env.NewNamespace(t, "dbu")
	data, err := os.ReadFile(filepath.Join(env.Root, "config", "samples", "mygroup_v1alpha1_databaseuser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(data)), 4096)
	var password string
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			break
		}
		if len(u.Object) == 0 {
			continue
		}
		u.SetNamespace(ns)
		if u.GetKind() == "Secret" {
			password, _, _ = unstructured.NestedString(u.Object, "stringData", "my-key")
		}
		if err := env.Client.Create(context.Background(), u); err != nil {
			t.Fatalf("applying %s: %v", u.GetKind(), err)
		}
	}
	key := types.NamespacedName{Namespace: ns, Name: "cnhandsomeguy"}
	got := waitReady(t, key, metav1.ConditionTrue, mygroupv1alpha1.ReasonReady)
	if got.Status.Target != "that-database" {
		t.Errorf("target %q", got.Status.Target)
	}
	if err := login("cnhandsomeguy", password); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	waitGone(t, key)
	if accountExists(t, "cnhandsomeguy") {
		t.Error("sample account not dropped")
	}
}

// TestTargetMove: changing the `target` label moves the account to the other database server: created
// there, dropped from the first one.
func TestTargetMove(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	second, err := mariadbtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = second.Stop() })
	startOperatorWith(t, nil, randomPassword(t, "badadmin"), map[string]mysqlaccount.Target{"second": second.Admin}, databaseuser.Config{ResyncPeriod: resync})
	ns := env.NewNamespace(t, "dbu")
	user, pw := uniqueUser("move"), randomPassword(t, "move")
	dbu, key := readyUser(t, ns, "move", user, pw)

	testenv.Patch(t, env.Client, key, &mygroupv1alpha1.DatabaseUser{}, func(u *mygroupv1alpha1.DatabaseUser) {
		u.Labels = map[string]string{mygroupv1alpha1.TargetLabel: "second"}
	})
	if err := env.Client.Get(ctx, key, dbu); err != nil {
		t.Fatal(err)
	}
	poll(t, timeout, "moved to the second server", func() error {
		d := &mygroupv1alpha1.DatabaseUser{}
		if err := env.Client.Get(ctx, key, d); err != nil {
			return err
		}
		if d.Status.Target != "second" || meta.IsStatusConditionFalse(d.Status.Conditions, mygroupv1alpha1.ConditionReady) {
			return fmt.Errorf("status %+v", d.Status)
		}
		return nil
	})
	if accountExists(t, user) {
		t.Error("account still on the first server")
	}
	if err := mariadbtest.CanLogin(ctx, mysqlaccount.Target{Host: second.Admin.Host, Port: second.Admin.Port, User: user, Password: pw}, 5*time.Second); err != nil {
		t.Errorf("login on the second server: %v", err)
	}
	if err := env.Client.Delete(ctx, dbu); err != nil {
		t.Fatal(err)
	}
	waitGone(t, key)
}

// TestRotateNow: with a resync period of an hour, annotating the DatabaseUser after changing its Secret
// rotates the password at once (the operator watches DatabaseUsers, not Secrets).
func TestRotateNow(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	o := startOperatorWith(t, nil, randomPassword(t, "badadmin"), nil, databaseuser.Config{ResyncPeriod: time.Hour})
	ns := env.NewNamespace(t, "dbu")
	user, pw1, pw2 := uniqueUser("now"), randomPassword(t, "now1"), randomPassword(t, "now2")
	dbu, key := readyUser(t, ns, "now", user, pw1)
	setSecret(t, ns, "s", map[string]string{"pw": pw2})
	testenv.Patch(t, env.Client, key, dbu, func(d *mygroupv1alpha1.DatabaseUser) { d.Annotations = map[string]string{"rotate": "1"} })
	poll(t, 20*time.Second, "new password works without waiting for the resync", func() error { return login(user, pw2) })
	if err := login(user, pw1); mysqlaccount.KindOf(err) != mysqlaccount.KindAccessDenied {
		t.Errorf("old password: %v", err)
	}
	if err := env.Client.Delete(ctx, dbu); err != nil {
		t.Fatal(err)
	}
	waitGone(t, key)
	assertNoSecrets(t, o, ns, pw1, pw2)
}

// targetGets counts the GETs of each DatabaseTarget made through it.
type targetGets struct {
	client.Client
	gets map[string]int
}

func (c *targetGets) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*mygroupv1alpha1.DatabaseTarget); ok {
		c.gets[key.Name]++
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// TestOneReadPerTarget: one reconcile reads each DatabaseTarget at most once, also for a DatabaseUser moved
// between two names of one server, whose move step and account step both need the new target. Needs no
// MariaDB: the admin Secret is missing, so the account step ends at the login.
func TestOneReadPerTarget(t *testing.T) {
	ctx := context.Background()
	opNS := env.NewNamespace(t, "dbu-reads")
	for _, name := range []string{"reads-was", "reads-now"} {
		mkTarget(t, name, opNS, "no-such-secret", nil) // one server under two names: the move drops nothing
	}
	tenant := env.NewNamespace(t, "tenant")
	mkSecret(t, tenant, "s", map[string]string{"pw": randomPassword(t, "reads")})
	dbu := newDBU(tenant, "app", uniqueUser("app"), "s", "pw")
	dbu.Labels = map[string]string{mygroupv1alpha1.TargetLabel: "reads-now"}
	key := testenv.Create(t, env.Client, dbu)
	moved := mustGet(t, tenant, "app")
	moved.Status.Target = "reads-was"
	if err := env.Client.Status().Update(ctx, moved); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // no controller runs here to remove the finalizer
		testenv.Patch(t, env.Client, key, &mygroupv1alpha1.DatabaseUser{}, func(d *mygroupv1alpha1.DatabaseUser) {
			d.Finalizers = nil
		})
	})

	c := &targetGets{Client: env.Client, gets: map[string]int{}}
	r, err := databaseuser.NewReconciler(c, &eventLog{byName: map[string][]string{}},
		databaseuser.Config{OperatorNamespace: opNS, ResyncPeriod: resync})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err == nil {
		t.Error("the reconcile succeeded without the admin Secret")
	}
	got := mustGet(t, tenant, "app")
	if c := meta.FindStatusCondition(got.Status.Conditions, mygroupv1alpha1.ConditionReady); c == nil ||
		c.Reason != mygroupv1alpha1.ReasonTargetSecretInvalid || got.Status.Target != "reads-now" {
		t.Fatalf("the account step did not reach the login: %+v", got.Status)
	}
	if len(c.gets) != 2 || c.gets["reads-was"] != 1 || c.gets["reads-now"] != 1 {
		t.Errorf("DatabaseTargets read %v, want each of reads-was and reads-now once", c.gets)
	}
}
