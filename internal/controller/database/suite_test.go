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
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/database"
	"github.com/operator101/operator101/internal/mysqlaccount"
	"github.com/operator101/operator101/test/mariadbtest"
	"github.com/operator101/operator101/test/testenv"
)

var (
	env    *testenv.Env
	server *mariadbtest.Server
)

// TestMain starts a private MariaDB (hack/mariadb.sh) and a real API server, and stops both when done.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() { // make test: no MariaDB
		os.Exit(testenv.Run(m, &env))
	}
	s, err := mariadbtest.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting MariaDB: %v\n", err)
		os.Exit(1)
	}
	server = s
	code := testenv.Run(m, &env)
	if err := s.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping MariaDB: %v\n", err)
	}
	os.Exit(code)
}

// operator is a Database reconciler called by the test itself (no manager), its Events recorded, serving the
// targets whose admin Secrets are in ns.
type operator struct {
	ns     string
	r      reconcile.Reconciler
	events *eventLog
}

// newOperator makes the operator's namespace, with the admin Secret mariadb-target of the private MariaDB,
// and a reconciler on c (env.Client when nil).
func newOperator(t *testing.T, c client.Client) *operator {
	t.Helper()
	if c == nil {
		c = env.Client
	}
	ns := env.NewNamespace(t, "db")
	a := server.Admin
	mkSecret(t, ns, "mariadb-target", map[string]string{"host": a.Host, "port": fmt.Sprint(a.Port),
		"username": a.User, "password": a.Password})
	events := &eventLog{byName: map[string][]string{}}
	r, err := database.NewReconciler(c, events, database.Config{OperatorNamespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	return &operator{ns: ns, r: r, events: events}
}

// reconcile runs one reconcile of key and returns its error: a refusal is one only when it is retried.
func (o *operator) reconcile(key types.NamespacedName) error {
	_, err := o.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
	return err
}

// mustReconcile runs one reconcile of key, which must succeed.
func (o *operator) mustReconcile(t *testing.T, key types.NamespacedName) {
	t.Helper()
	if err := o.reconcile(key); err != nil {
		t.Fatalf("reconciling %s: %v", key, err)
	}
}

// mkTarget creates the DatabaseTarget name for the operator's admin Secret: no TLS, changed by mutate; it is
// deleted when the test ends.
func (o *operator) mkTarget(t *testing.T, name string, mutate func(*mygroupv1alpha1.DatabaseTargetSpec)) {
	t.Helper()
	dt := &mygroupv1alpha1.DatabaseTarget{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: mygroupv1alpha1.DatabaseTargetSpec{
			AdminSecretRef:    mygroupv1alpha1.SecretReference{Namespace: o.ns, Name: "mariadb-target"},
			TLS:               mygroupv1alpha1.DatabaseTargetTLS{Mode: mygroupv1alpha1.TLSDisabled},
			AllowedNamespaces: []string{"*"},
			Databases:         []string{"*"},
		}}
	if mutate != nil {
		mutate(&dt.Spec)
	}
	ctx := context.Background()
	if err := env.Client.Create(ctx, dt); err != nil {
		t.Fatalf("creating DatabaseTarget %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := env.Client.Delete(ctx, dt); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting DatabaseTarget %s: %v", name, err)
		}
	})
}

func mkSecret(t *testing.T, ns, name string, data map[string]string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: data}
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// newDatabase is a Database ns/name of the database dbName in target.
func newDatabase(ns, name, dbName, target string) *mygroupv1alpha1.Database {
	return &mygroupv1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{mygroupv1alpha1.TargetLabel: target}},
		Spec:       mygroupv1alpha1.DatabaseSpec{Name: dbName, CharacterSet: "utf8mb4"},
	}
}

func mustGet(t *testing.T, key types.NamespacedName) *mygroupv1alpha1.Database {
	t.Helper()
	d := &mygroupv1alpha1.Database{}
	if err := env.Client.Get(context.Background(), key, d); err != nil {
		t.Fatal(err)
	}
	return d
}

// ready is d's Ready condition, nil without one.
func ready(d *mygroupv1alpha1.Database) *metav1.Condition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == mygroupv1alpha1.ConditionReady {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// deleteAndReconcile deletes key and reconciles it once: its finalizer must have run.
func (o *operator) deleteAndReconcile(t *testing.T, key types.NamespacedName) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Delete(ctx, mustGet(t, key)); err != nil {
		t.Fatal(err)
	}
	o.mustReconcile(t, key)
	if err := env.Client.Get(ctx, key, &mygroupv1alpha1.Database{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Database is still there after its deletion: %v", err)
	}
}

func uniqueName(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "_" + hex.EncodeToString(b)
}

func quote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// dropByHand removes a test's database and its claim, whoever holds them.
func dropByHand(db *sql.DB, name string) {
	_, _ = db.Exec("DROP DATABASE IF EXISTS " + quote(name))
	_, _ = db.Exec("DELETE FROM `"+mysqlaccount.ClaimSchema+"`.`databases` WHERE name = ?", name)
}

// dbHolds is what the server holds of one database: whether it exists, whose claim it carries ("", "this",
// "other"), and its defaults: "original" (latin1, as made before the test), "spec" (utf8mb4, as created for
// the Database) or "updated" (utf8mb4_bin, after the Database's update).
type dbHolds struct {
	exists   bool
	claim    string
	defaults string
}

func (h dbHolds) String() string {
	claim := "no claim"
	if h.claim != "" {
		claim = "claimed by " + h.claim
	}
	if !h.exists {
		return "no database, " + claim
	}
	return fmt.Sprintf("database (%s defaults), %s", h.defaults, claim)
}

// observeDatabase reads what the server holds of the database name, uid being the Database's.
func observeDatabase(t *testing.T, db *sql.DB, name, uid string) dbHolds {
	t.Helper()
	var h dbHolds
	var cs, coll string
	err := db.QueryRow("SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA "+
		"WHERE SCHEMA_NAME = ?", name).Scan(&cs, &coll)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		t.Fatal(err)
	default:
		h.exists = true
		switch {
		case cs == "latin1":
			h.defaults = "original"
		case coll == "utf8mb4_bin":
			h.defaults = "updated"
		default:
			h.defaults = "spec"
		}
	}
	var owner string
	err = db.QueryRow("SELECT owner_uid FROM `"+mysqlaccount.ClaimSchema+"`.`databases` WHERE name = ?", name).Scan(&owner)
	var me *mysql.MySQLError
	switch {
	case errors.Is(err, sql.ErrNoRows), errors.As(err, &me) && me.Number == 1146:
	case err != nil:
		t.Fatal(err)
	case owner == uid:
		h.claim = "this"
	default:
		h.claim = "other"
	}
	return h
}

// eventLog records the Events of each Database, by namespace/name, as "Reason: note".
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
