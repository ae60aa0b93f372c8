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
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/databaseuser"
	"github.com/operator101/operator101/internal/controller/reconciler"
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

const (
	resync  = 2 * time.Second
	timeout = 60 * time.Second
	// rotationSlack is how much longer than a resync period a rotated password may take to work (TestLifecycle).
	rotationSlack = time.Second
)

// operator is one running manager with the DatabaseUser controller, its captured log and its attempts.
type operator struct {
	ns  string // the operator's namespace, holding the target Secrets
	log *testenv.SyncBuffer
	mgr *testenv.Manager
}

func (o *operator) count(key types.NamespacedName) int { return o.mgr.Reconciles.Get(key) }

// startOperator creates the operator's namespace with the admin Secrets, the DatabaseTargets (cluster-scoped,
// removed when the test ends: the tests of this package do not run in parallel) and starts a manager on cfg
// (env.Config when nil) that logs everything, at every level, to a buffer. Every target allows every namespace
// and every database but the system schemas, and connects without TLS (the private MariaDB has none):
//   - default, that-database: the private MariaDB
//   - badpw: the same server with a wrong admin password
//   - nosecret: a target whose Secret does not exist
func startOperator(t *testing.T, cfg *rest.Config, badAdminPassword string) *operator {
	t.Helper()
	return startOperatorWith(t, cfg, badAdminPassword, nil, databaseuser.Config{ResyncPeriod: resync})
}

// startOperatorWith also configures the extra targets and the controller (its resync period, its migrating
// targets; the namespace and connect timeout are set here).
func startOperatorWith(t *testing.T, cfg *rest.Config, badAdminPassword string, extra map[string]mysqlaccount.Target,
	config databaseuser.Config, opts ...func(*ctrl.Options)) *operator {
	t.Helper()
	ns := env.NewNamespace(t, "dbu")
	a := server.Admin
	targetSecret(t, ns, "mariadb-target", a.Host, a.Port, a.User, a.Password)
	targetSecret(t, ns, "mariadb-badpw", a.Host, a.Port, a.User, badAdminPassword)
	for name, secret := range map[string]string{"default": "mariadb-target", "that-database": "mariadb-target",
		"badpw": "mariadb-badpw", "nosecret": "no-such-secret"} {
		mkTarget(t, name, ns, secret, nil)
	}
	for name, x := range extra {
		targetSecret(t, ns, "extra-"+name, x.Host, x.Port, x.User, x.Password)
		mkTarget(t, name, ns, "extra-"+name, nil)
	}
	return startManager(t, cfg, ns, config, opts...)
}

// startManager starts a manager on cfg (env.Config when nil) with the controllers of an operator running in
// namespace ns, configured by config (the namespace, 2 workers and a connect timeout of 2s are set here), that
// logs everything, at every level, to a buffer the leak check searches.
func startManager(t *testing.T, cfg *rest.Config, ns string, config databaseuser.Config, opts ...func(*ctrl.Options)) *operator {
	t.Helper()
	o := &operator{ns: ns, log: captureLog(t)}
	o.mgr = env.StartManager(t, cfg, func(mgr ctrl.Manager) error {
		config.OperatorNamespace, config.ConnectTimeout = o.ns, 2*time.Second
		return databaseuser.Setup(mgr, reconciler.Options{Workers: 2}, config)
	}, append([]func(*ctrl.Options){func(opts *ctrl.Options) {
		opts.Logger = zap.New(zap.WriteTo(o.log), zap.UseDevMode(true), zap.Level(zapLevel(-10)))
	}}, opts...)...)
	return o
}

// deleteUser deletes the DatabaseUser key, as the API server holds it, and waits until it is gone: its
// finalizer ran.
func deleteUser(t *testing.T, key types.NamespacedName) {
	t.Helper()
	if err := env.Client.Delete(context.Background(), mustGet(t, key.Namespace, key.Name)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, key)
}

// mkTarget creates the DatabaseTarget name for the admin Secret ns/secret: every namespace, every database
// (but the system schemas), no TLS, changed by mutate; it is deleted when the test ends.
func mkTarget(t *testing.T, name, ns, secret string, mutate func(*mygroupv1alpha1.DatabaseTargetSpec)) *mygroupv1alpha1.DatabaseTarget {
	t.Helper()
	dt := &mygroupv1alpha1.DatabaseTarget{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: mygroupv1alpha1.DatabaseTargetSpec{
			AdminSecretRef:    mygroupv1alpha1.SecretReference{Namespace: ns, Name: secret},
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
		poll(t, timeout, "DatabaseTarget "+name+" gone", func() error {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(dt), &mygroupv1alpha1.DatabaseTarget{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there: %w", err)
		})
	})
	return dt
}

func targetSecret(t *testing.T, ns, name, host string, port int, user, password string) {
	t.Helper()
	mkSecret(t, ns, name, map[string]string{"host": host, "port": fmt.Sprint(port), "username": user, "password": password})
}

func mkSecret(t *testing.T, ns, name string, data map[string]string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: data}
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

func setSecret(t *testing.T, ns, name string, data map[string]string) {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, s); err != nil {
		t.Fatal(err)
	}
	s.Data, s.StringData = nil, data
	if err := env.Client.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// randomPassword plants a password for the test: a random core (24 hex digits, which no encoding changes)
// between the prefix and the characters logs and SQL must escape. It is recorded for the test, and the first
// password a test plants registers the leak check (checkLeaks) that runs when the test ends, so every test that
// plants one is checked.
func randomPassword(t *testing.T, prefix string) string {
	t.Helper()
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	core := hex.EncodeToString(b)
	w := watchLeaks(t)
	w.cores = append(w.cores, core)
	w.secrets = append(w.secrets, prefix+"-"+core+"-'\"\\`;--")
	return w.secrets[len(w.secrets)-1]
}

// captureLog is a buffer for a manager's log that the test's leak check searches.
func captureLog(t *testing.T) *testenv.SyncBuffer {
	t.Helper()
	b := &testenv.SyncBuffer{}
	w := watchLeaks(t)
	w.logs = append(w.logs, b)
	return b
}

// leakWatch is what one top-level test planted and the logs its managers wrote. The tests of this package do
// not run in parallel.
type leakWatch struct {
	cores, secrets []string
	logs           []*testenv.SyncBuffer
}

var (
	leakWatches = map[string]*leakWatch{} // by top-level test name
	leakChecked = map[*testing.T]bool{}   // the (sub)tests whose end runs checkLeaks
)

func watchLeaks(t *testing.T) *leakWatch {
	root, _, _ := strings.Cut(t.Name(), "/")
	w := leakWatches[root]
	if w == nil {
		w = &leakWatch{}
		leakWatches[root] = w
	}
	if !leakChecked[t] {
		leakChecked[t] = true
		t.Cleanup(func() { checkLeaks(t, w) })
	}
	return w
}

// checkLeaks searches the test's captured logs, every Event and every DatabaseUser's status, in all namespaces,
// for the passwords the test planted (leakForms: the random core, raw, and the whole password raw, JSON-, Go-
// and base64-encoded, and its MySQL hash).
func checkLeaks(t *testing.T, w *leakWatch) {
	t.Helper()
	if len(w.cores) == 0 {
		return
	}
	var hay strings.Builder
	for _, l := range w.logs {
		hay.WriteString(l.String())
	}
	if len(w.logs) > 0 && hay.Len() == 0 {
		t.Error("the captured logs are empty: the leak check would prove nothing")
	}
	list := &mygroupv1alpha1.DatabaseUserList{}
	if err := env.Client.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	for _, d := range list.Items {
		fmt.Fprintf(&hay, "%+v\n", d.Status)
	}
	hay.WriteString(eventNotes(t, ""))
	for _, found := range findLeaks(hay.String(), append(append([]string{}, w.cores...), w.secrets...)...) {
		t.Errorf("a planted password appears in logs, Events or status, as %s", found)
	}
}

// leakForms is every form of secret to search for: raw, as JSON and Go string literals escape it (without the
// quotes), base64 (a Secret's data), and its mysql_native_password hash.
func leakForms(secret string) map[string]string {
	j, _ := json.Marshal(secret)
	return map[string]string{
		"raw":    secret,
		"JSON":   strings.Trim(string(j), `"`),
		"Go %q":  strings.Trim(strconv.Quote(secret), `"`),
		"base64": base64.StdEncoding.EncodeToString([]byte(secret)),
		"hash":   mysqlaccount.NativePasswordHash(secret),
	}
}

// findLeaks returns how each secret found in hay appears there (never the secret itself).
func findLeaks(hay string, secrets ...string) []string {
	var found []string
	for i, s := range secrets {
		for form, v := range leakForms(s) {
			if strings.Contains(hay, v) {
				found = append(found, fmt.Sprintf("secret #%d (%d bytes), %s", i, len(s), form))
			}
		}
	}
	return found
}

func uniqueUser(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// handMadeAccount creates user@% with password as the server's admin, as someone other than this operator
// (by hand, or operator101 0.1.0) would, then runs grants (each with %s for the quoted account); the account
// is dropped when the test ends.
func handMadeAccount(t *testing.T, user, password string, grants ...string) {
	t.Helper()
	db := server.SQL(t)
	acct := "`" + user + "`@`%`"
	for _, stmt := range append([]string{"CREATE USER " + acct + " IDENTIFIED BY '" + password + "'"}, grants...) {
		if _, err := db.Exec(strings.ReplaceAll(stmt, "%s", acct)); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP USER IF EXISTS " + acct) })
}

func newDBU(ns, name, user, secret, key string) *mygroupv1alpha1.DatabaseUser {
	return &mygroupv1alpha1.DatabaseUser{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: mygroupv1alpha1.DatabaseUserSpec{User: user,
			Password: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key}},
	}
}

// readyUser creates the Secret "s" holding password under "pw" and the DatabaseUser name for user that
// reads it (changed by mutate), and waits until it is Ready.
func readyUser(t *testing.T, ns, name, user, password string,
	mutate ...func(*mygroupv1alpha1.DatabaseUser)) (*mygroupv1alpha1.DatabaseUser, types.NamespacedName) {
	t.Helper()
	mkSecret(t, ns, "s", map[string]string{"pw": password})
	dbu := newDBU(ns, name, user, "s", "pw")
	for _, m := range mutate {
		m(dbu)
	}
	key := testenv.Create(t, env.Client, dbu)
	waitReady(t, key, metav1.ConditionTrue, mygroupv1alpha1.ReasonReady)
	return dbu, key
}

// poll calls f until it returns nil or the timeout passes.
func poll(t *testing.T, within time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	var err error
	for {
		if err = f(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, within, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitReady waits until the Ready condition has status and reason for the current generation.
func waitReady(t *testing.T, key types.NamespacedName, status metav1.ConditionStatus, reason string) *mygroupv1alpha1.DatabaseUser {
	t.Helper()
	dbu := &mygroupv1alpha1.DatabaseUser{}
	poll(t, timeout, fmt.Sprintf("%s Ready=%s/%s", key, status, reason), func() error {
		if err := env.Client.Get(context.Background(), key, dbu); err != nil {
			return err
		}
		c := meta.FindStatusCondition(dbu.Status.Conditions, mygroupv1alpha1.ConditionReady)
		if c == nil || c.Status != status || c.Reason != reason || dbu.Status.ObservedGeneration != dbu.Generation {
			return fmt.Errorf("conditions %+v", dbu.Status.Conditions)
		}
		return nil
	})
	return dbu
}

func waitGone(t *testing.T, key types.NamespacedName) {
	t.Helper()
	poll(t, timeout, fmt.Sprintf("%s gone", key), func() error {
		err := env.Client.Get(context.Background(), key, &mygroupv1alpha1.DatabaseUser{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %w", err)
	})
}

func admin(t *testing.T) *mysqlaccount.Client {
	t.Helper()
	c, err := mysqlaccount.Open(context.Background(), server.Admin, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func login(user, password string) error {
	return mariadbtest.CanLogin(context.Background(), mysqlaccount.Target{Host: server.Admin.Host, Port: server.Admin.Port,
		User: user, Password: password}, 5*time.Second)
}

func accountExists(t *testing.T, user string) bool {
	t.Helper()
	var n int
	if err := server.SQL(t).QueryRow("SELECT COUNT(*) FROM mysql.user WHERE User = ? AND Host = '%'", user).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// assertNoSecrets fails when any secret, in any of its leakForms, appears in the operator's log, the namespace's
// Events, or the DatabaseUsers' status. checkLeaks does the same for every password the test planted when it
// ends; this is for secrets the test did not plant with randomPassword, and for checks in the middle of a test.
func assertNoSecrets(t *testing.T, o *operator, ns string, secrets ...string) {
	t.Helper()
	var hay strings.Builder
	hay.WriteString(o.log.String())
	list := &mygroupv1alpha1.DatabaseUserList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, d := range list.Items {
		fmt.Fprintf(&hay, "%+v\n", d.Status)
	}
	hay.WriteString(eventNotes(t, ns))
	if o.log.String() == "" {
		t.Fatal("the captured log is empty: the leak check would prove nothing")
	}
	for _, found := range findLeaks(hay.String(), secrets...) {
		t.Errorf("a secret appears in logs, Events or status, as %s", found)
	}
}

// assertInvalid fails unless err is the API server's refusal (422 Invalid) with a cause for field ("<nil>" for the
// object itself) whose message contains msg.
func assertInvalid(t *testing.T, what string, err error, field, msg string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted", what)
		return
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) || status.Status().Details == nil {
		t.Errorf("%s: not a 422 Invalid with details: %v", what, err)
		return
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == field && strings.Contains(c.Message, msg) {
			return
		}
	}
	t.Errorf("%s: want field %q with a message containing %q, got causes %+v", what, field, msg, status.Status().Details.Causes)
}

func zapLevel(l int8) zapcore.Level { return zapcore.Level(l) }

// eventNotes is every Event of ns (of every namespace when ns is ""), as text.
func eventNotes(t *testing.T, ns string) string {
	t.Helper()
	evs := &eventsv1.EventList{}
	if err := env.Client.List(context.Background(), evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range evs.Items {
		fmt.Fprintf(&b, "%s %s %s: %s\n", e.Type, e.Reason, e.Regarding.Name, e.Note)
	}
	return b.String()
}
