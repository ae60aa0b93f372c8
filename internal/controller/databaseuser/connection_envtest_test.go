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
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/test/mariadbtest"
	"github.com/operator101/operator101/test/testenv"
)

func getSecret(t *testing.T, ns, name string) (*corev1.Secret, error) {
	t.Helper()
	s := &corev1.Secret{}
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, s)
	return s, err
}

// plant registers a password the operator generated with the test's leak check.
func plant(t *testing.T, password string) {
	t.Helper()
	w := watchLeaks(t)
	w.cores = append(w.cores, password)
	w.secrets = append(w.secrets, password)
}

// TestConnectionSecretAndGeneratedPassword: a DatabaseUser with no password Secret gets a generated password in a
// Secret it owns, and a connection Secret whose DSN logs in to its database; a converged DatabaseUser rewrites
// neither Secret; deleting the generated Secret rotates the password (the old one stops working, the connection
// Secret follows); a connection Secret edited by hand is put back; a Secret of either name that the operator did
// not create is left as it is (ChildNotOwned); a target that publishes no address gives ConnectionNotPublished.
// No generated password reaches logs, Events or status.
func TestConnectionSecretAndGeneratedPassword(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	o := startOperator(t, nil, randomPassword(t, "badadmin"))
	a := server.Admin
	mkTarget(t, "apps", o.ns, "mariadb-target", func(s *mygroupv1alpha1.DatabaseTargetSpec) {
		s.Applications = &mygroupv1alpha1.ApplicationEndpoint{Host: a.Host, Port: int32(a.Port), TLSMode: mygroupv1alpha1.TLSDisabled}
	})
	ns := env.NewNamespace(t, "conn")
	user := uniqueUser("conn")
	database := "conn_" + user[len(user)-8:]
	if _, err := server.SQL(t).Exec("CREATE DATABASE `" + database + "`"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = server.SQL(t).Exec("DROP DATABASE IF EXISTS `" + database + "`") })

	dbu := &mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app",
		Labels: map[string]string{mygroupv1alpha1.TargetLabel: "apps"}},
		Spec: mygroupv1alpha1.DatabaseUserSpec{User: user,
			Grants:           []mygroupv1alpha1.Grant{{Database: database, Privileges: []mygroupv1alpha1.Privilege{"ALL PRIVILEGES"}}},
			ConnectionSecret: &mygroupv1alpha1.ConnectionSecret{Name: "app-conn"}}}
	key := testenv.Create(t, env.Client, dbu)
	got := waitReady(t, key, metav1.ConditionTrue, mygroupv1alpha1.ReasonReady)

	// The generated password: in app-password, controlled by the DatabaseUser.
	pwSecret, err := getSecret(t, ns, "app-password")
	if err != nil {
		t.Fatal(err)
	}
	pw1 := string(pwSecret.Data["password"])
	plant(t, pw1)
	if len(pw1) != 32 || !metav1.IsControlledBy(pwSecret, got) {
		t.Fatalf("generated Secret: %d-character password, owners %+v", len(pw1), pwSecret.OwnerReferences)
	}
	conn, err := getSecret(t, ns, "app-conn")
	if err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(conn, got) || string(conn.Data["password"]) != pw1 || string(conn.Data["username"]) != user ||
		string(conn.Data["host"]) != a.Host || string(conn.Data["port"]) != fmt.Sprint(a.Port) ||
		string(conn.Data["database"]) != database {
		t.Fatalf("connection Secret: owners %+v, keys user %q host %q port %q database %q, password matches %v",
			conn.OwnerReferences, conn.Data["username"], conn.Data["host"], conn.Data["port"], conn.Data["database"],
			string(conn.Data["password"]) == pw1)
	}
	// An application that reads only the connection Secret writes to its database.
	useDSN := func(dsn string) error {
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			return err
		}
		defer func() { _ = db.Close() }()
		if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS t (id INT)"); err != nil {
			return err
		}
		_, err = db.ExecContext(ctx, "INSERT INTO t VALUES (1)")
		return err
	}
	if err := useDSN(string(conn.Data["dsn"])); err != nil {
		t.Fatalf("the connection Secret's DSN: %v", errors.New(strings.ReplaceAll(err.Error(), pw1, "[redacted]")))
	}

	// Converged: more checks, no write to either Secret.
	rvPw, rvConn := pwSecret.ResourceVersion, conn.ResourceVersion
	n := o.count(key)
	poll(t, timeout, "two more checks", func() error {
		if o.count(key) < n+2 {
			return fmt.Errorf("%d checks", o.count(key)-n)
		}
		return nil
	})
	for name, rv := range map[string]string{"app-password": rvPw, "app-conn": rvConn} {
		if s, err := getSecret(t, ns, name); err != nil || s.ResourceVersion != rv {
			t.Errorf("Secret %s written while converged (resourceVersion %s, was %s): %v", name, s.ResourceVersion, rv, err)
		}
	}

	// Rotation: delete the generated Secret.
	if err := env.Client.Delete(ctx, pwSecret); err != nil {
		t.Fatal(err)
	}
	var pw2 string
	poll(t, timeout, "a new generated password in both Secrets", func() error {
		s, err := getSecret(t, ns, "app-password")
		if err != nil {
			return err
		}
		pw2 = string(s.Data["password"])
		c, err := getSecret(t, ns, "app-conn")
		if err != nil {
			return err
		}
		if pw2 == pw1 || string(c.Data["password"]) != pw2 {
			return errors.New("not rotated yet")
		}
		return nil
	})
	plant(t, pw2)
	poll(t, timeout, "the new password logs in, the old one does not", func() error {
		if login(user, pw2) != nil || login(user, pw1) == nil {
			return errors.New("not yet")
		}
		return nil
	})

	// Edited by hand: put back within a resync.
	conn, err = getSecret(t, ns, "app-conn")
	if err != nil {
		t.Fatal(err)
	}
	conn.Data["host"] = []byte("elsewhere.example")
	if err := env.Client.Update(ctx, conn); err != nil {
		t.Fatal(err)
	}
	poll(t, timeout, "the connection Secret's host put back", func() error {
		c, err := getSecret(t, ns, "app-conn")
		if err != nil {
			return err
		}
		if string(c.Data["host"]) != a.Host {
			return fmt.Errorf("host %q", c.Data["host"])
		}
		return nil
	})

	// Names taken by Secrets the operator did not create.
	mkSecret(t, ns, "taken", map[string]string{"mine": "keep"})
	mkSecret(t, ns, "gen-password", map[string]string{"password": "not-the-operators"})
	other := &mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other",
		Labels: map[string]string{mygroupv1alpha1.TargetLabel: "apps"}},
		Spec: mygroupv1alpha1.DatabaseUserSpec{User: uniqueUser("conn"), ConnectionSecret: &mygroupv1alpha1.ConnectionSecret{Name: "taken"}}}
	otherPw := randomPassword(t, "other")
	mkSecret(t, ns, "other-pw", map[string]string{"pw": otherPw})
	other.Spec.Password = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "other-pw"}, Key: "pw"}
	otherKey := testenv.Create(t, env.Client, other)
	gen := &mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gen",
		Labels: map[string]string{mygroupv1alpha1.TargetLabel: "apps"}},
		Spec: mygroupv1alpha1.DatabaseUserSpec{User: uniqueUser("conn")}}
	genKey := testenv.Create(t, env.Client, gen)
	waitReady(t, otherKey, metav1.ConditionFalse, mygroupv1alpha1.ReasonChildNotOwned)
	waitReady(t, genKey, metav1.ConditionFalse, mygroupv1alpha1.ReasonChildNotOwned)
	if s, err := getSecret(t, ns, "taken"); err != nil || len(s.Data) != 1 || string(s.Data["mine"]) != "keep" || len(s.OwnerReferences) != 0 {
		t.Errorf("the taken Secret was changed: %v", err)
	}
	if s, err := getSecret(t, ns, "gen-password"); err != nil || string(s.Data["password"]) != "not-the-operators" || len(s.OwnerReferences) != 0 {
		t.Errorf("the taken password Secret was changed: %v", err)
	}
	if accountExists(t, gen.Spec.User) {
		t.Error("an account was made with a password from a Secret the operator does not own")
	}

	// A target that publishes no address: the account is made, the Secret is not.
	unpublished := &mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unpublished"},
		Spec: mygroupv1alpha1.DatabaseUserSpec{User: uniqueUser("conn"), ConnectionSecret: &mygroupv1alpha1.ConnectionSecret{Name: "unpublished-conn"}}}
	unpublishedKey := testenv.Create(t, env.Client, unpublished)
	waitReady(t, unpublishedKey, metav1.ConditionFalse, mygroupv1alpha1.ReasonConnectionNotPublished)
	if _, err := getSecret(t, ns, "unpublished-conn"); !apierrors.IsNotFound(err) {
		t.Errorf("a connection Secret without a published address: %v", err)
	}
	if !accountExists(t, unpublished.Spec.User) {
		t.Error("the account was not made")
	}
	for _, k := range []types.NamespacedName{key, otherKey, genKey, unpublishedKey} {
		deleteUser(t, k)
	}
	assertNoSecrets(t, o, ns, pw1, pw2, otherPw)
}

// TestConnectionSecretSchema: the API server refuses connection Secret key names that repeat or are not key
// names, a name too long for the generated password's Secret, and an address for applications that is not a
// host name; it fills in the key names and the port.
func TestConnectionSecretSchema(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "connschema")
	dbu := func(name string, cs *mygroupv1alpha1.ConnectionSecret) *mygroupv1alpha1.DatabaseUser {
		return &mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: mygroupv1alpha1.DatabaseUserSpec{User: "u", ConnectionSecret: cs}}
	}
	refused := func(what string, obj *mygroupv1alpha1.DatabaseUser, msg string) {
		t.Helper()
		err := env.Client.Create(ctx, obj)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want Invalid with %q", what, err, msg)
		}
	}
	refused("repeated key", dbu("rep", &mygroupv1alpha1.ConnectionSecret{Name: "c",
		SecretTemplate: mygroupv1alpha1.ConnectionSecretTemplate{UsernameKey: "password"}}), "the key names must differ")
	refused("bad key", dbu("bad", &mygroupv1alpha1.ConnectionSecret{Name: "c",
		SecretTemplate: mygroupv1alpha1.ConnectionSecretTemplate{DSNKey: "a/b"}}), "dsnKey")
	refused("bad Secret name", dbu("badname", &mygroupv1alpha1.ConnectionSecret{Name: "Not_A_Name"}), "connectionSecret.name")
	refused("long name without a password", dbu(strings.Repeat("a", 245), nil), "the generated password's Secret")
	refused("the connection Secret named as the generated password's", dbu("clash", &mygroupv1alpha1.ConnectionSecret{Name: "clash-password"}),
		"must differ from <name>-password")
	withPw := dbu(strings.Repeat("a", 245), nil)
	withPw.Spec.Password = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}
	if err := env.Client.Create(ctx, withPw); err != nil {
		t.Errorf("a long name with a password Secret: %v", err)
	}

	ok := dbu("ok", &mygroupv1alpha1.ConnectionSecret{Name: "c", SecretTemplate: mygroupv1alpha1.ConnectionSecretTemplate{URIKey: "DATABASE_URL"}})
	if err := env.Client.Create(ctx, ok); err != nil {
		t.Fatal(err)
	}
	tpl := ok.Spec.ConnectionSecret.SecretTemplate
	if tpl.URIKey != "DATABASE_URL" || tpl.UsernameKey != "username" || tpl.JDBCKey != "jdbcUrl" || tpl.CACertKey != "ca.crt" {
		t.Errorf("template after defaulting: %+v", tpl)
	}
	defaulted := dbu("defaulted", &mygroupv1alpha1.ConnectionSecret{Name: "c"})
	if err := env.Client.Create(ctx, defaulted); err != nil {
		t.Fatal(err)
	}
	if d := defaulted.Spec.ConnectionSecret.SecretTemplate; d.PasswordKey != "password" || d.DSNKey != "dsn" {
		t.Errorf("template defaulted: %+v", d)
	}

	dt := &mygroupv1alpha1.DatabaseTarget{ObjectMeta: metav1.ObjectMeta{Name: "connschema-bad"},
		Spec: mygroupv1alpha1.DatabaseTargetSpec{AdminSecretRef: mygroupv1alpha1.SecretReference{Namespace: "x", Name: "y"},
			AllowedNamespaces: []string{"*"}, Applications: &mygroupv1alpha1.ApplicationEndpoint{Host: "db example"}}}
	if err := env.Client.Create(ctx, dt); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "applications.host") {
		t.Errorf("a host with a space: %v", err)
	}
	dt.Spec.Applications.Host = "db.example"
	dt.Name = "connschema-good"
	if err := env.Client.Create(ctx, dt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), dt) })
	if a := dt.Spec.Applications; a.Port != 3306 || a.TLSMode != mygroupv1alpha1.TLSVerifyFull {
		t.Errorf("applications after defaulting: %+v", a)
	}
}
