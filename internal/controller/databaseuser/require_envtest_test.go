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
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/test/mariadbtest"
	"github.com/operator101/operator101/test/testenv"
)

// accountRequirements reads what mysql.user holds of user@%: ssl_type, x509_subject and the hourly limits.
func accountRequirements(t *testing.T, user string) string {
	t.Helper()
	var sslType, subject string
	var q, u, c int
	if err := server.SQL(t).QueryRow("SELECT ssl_type, x509_subject, max_questions, max_updates, max_connections "+
		"FROM mysql.user WHERE User = ? AND Host = '%'", user).Scan(&sslType, &subject, &q, &u, &c); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%s %q %d/%d/%d", sslType, subject, q, u, c)
}

// TestAccountRequirements: a DatabaseUser's tls and hourly limits reach the account, and change with the spec;
// a target's requireTLS makes every account of it require TLS, and an account that asks for X509 keeps it; an
// account that requires TLS or X509 is refused a login without (the package's MariaDB has no TLS at all:
// internal/mysqlaccount's TestTLS logs in with and without client certificates on a server that has).
func TestAccountRequirements(t *testing.T) {
	mariadbtest.Require(t, server)
	o := startOperator(t, nil, randomPassword(t, "badadmin"))
	mkTarget(t, "tls-only", o.ns, "mariadb-target", func(s *mygroupv1alpha1.DatabaseTargetSpec) { s.RequireTLS = true })
	ns := env.NewNamespace(t, "require")

	user, pw := uniqueUser("req"), randomPassword(t, "req")
	_, key := readyUser(t, ns, "x509", user, pw, func(d *mygroupv1alpha1.DatabaseUser) {
		d.Spec.TLS = &mygroupv1alpha1.AccountTLS{Require: mygroupv1alpha1.AccountRequireX509, Subject: "/O=Example/CN=app"}
		d.Spec.MaxQueriesPerHour, d.Spec.MaxUpdatesPerHour, d.Spec.MaxConnectionsPerHour = ptr.To[int32](1000), ptr.To[int32](100), ptr.To[int32](10)
	})
	if got, want := accountRequirements(t, user), `SPECIFIED "/O=Example/CN=app" 1000/100/10`; got != want {
		t.Errorf("account: %s, want %s", got, want)
	}
	if err := login(user, pw); err == nil {
		t.Error("an account that requires a client certificate logged in without TLS")
	}

	// Changed: TLS only, no hourly update limit.
	testenv.Patch(t, env.Client, key, &mygroupv1alpha1.DatabaseUser{}, func(u *mygroupv1alpha1.DatabaseUser) {
		u.Spec.TLS = &mygroupv1alpha1.AccountTLS{Require: mygroupv1alpha1.AccountRequireSSL}
		u.Spec.MaxUpdatesPerHour = nil
	})
	poll(t, timeout, "the account follows the spec", func() error {
		if got, want := accountRequirements(t, user), `ANY "" 1000/0/10`; got != want {
			return fmt.Errorf("account: %s, want %s", got, want)
		}
		return nil
	})
	// None: logs in without TLS again.
	testenv.Patch(t, env.Client, key, &mygroupv1alpha1.DatabaseUser{}, func(u *mygroupv1alpha1.DatabaseUser) { u.Spec.TLS = nil })
	poll(t, timeout, "the account requires nothing", func() error {
		if got, want := accountRequirements(t, user), `"" 1000/0/10`; !strings.HasSuffix(got, want) || !strings.HasPrefix(got, " ") {
			return fmt.Errorf("account: %s", got)
		}
		return login(user, pw)
	})
	deleteUser(t, key)

	// The target requires TLS of every account.
	plainUser := uniqueUser("req")
	plain := newDBU(ns, "plain", plainUser, "s", "pw")
	plain.Labels = map[string]string{mygroupv1alpha1.TargetLabel: "tls-only"}
	plainKey := testenv.Create(t, env.Client, plain)
	waitReady(t, plainKey, metav1.ConditionTrue, mygroupv1alpha1.ReasonReady)
	if got, want := accountRequirements(t, plainUser), `ANY "" 0/0/0`; got != want {
		t.Errorf("an account of a target that requires TLS: %s, want %s", got, want)
	}
	if err := login(plainUser, pw); err == nil {
		t.Error("an account of a target that requires TLS logged in without TLS")
	}
	certUser := uniqueUser("req")
	cert := newDBU(ns, "cert", certUser, "s", "pw")
	cert.Labels = map[string]string{mygroupv1alpha1.TargetLabel: "tls-only"}
	cert.Spec.TLS = &mygroupv1alpha1.AccountTLS{Require: mygroupv1alpha1.AccountRequireX509}
	certKey := testenv.Create(t, env.Client, cert)
	waitReady(t, certKey, metav1.ConditionTrue, mygroupv1alpha1.ReasonReady)
	if got, want := accountRequirements(t, certUser), `X509 "" 0/0/0`; got != want {
		t.Errorf("an X509 account of a target that requires TLS: %s, want %s", got, want)
	}
	deleteUser(t, plainKey)
	deleteUser(t, certKey)
	assertNoSecrets(t, o, ns, pw)
}

// TestAccountRequirementsSchema: subject and issuer only with require X509; no quote or backslash in them.
func TestAccountRequirementsSchema(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "reqschema")
	for name, tc := range map[string]struct {
		tls *mygroupv1alpha1.AccountTLS
		msg string
	}{
		"subject with SSL": {&mygroupv1alpha1.AccountTLS{Require: mygroupv1alpha1.AccountRequireSSL, Subject: "/CN=a"}, "subject and issuer need require: X509"},
		"quote":            {&mygroupv1alpha1.AccountTLS{Require: mygroupv1alpha1.AccountRequireX509, Subject: "/CN=a'"}, "spec.tls.subject"},
		"backslash":        {&mygroupv1alpha1.AccountTLS{Require: mygroupv1alpha1.AccountRequireX509, Issuer: `/CN=a\`}, "spec.tls.issuer"},
		"unknown":          {&mygroupv1alpha1.AccountTLS{Require: "CIPHER"}, "spec.tls.require"},
	} {
		d := newDBU(ns, strings.ReplaceAll(strings.ToLower(name), " ", "-"), "u", "s", "k")
		d.Spec.TLS = tc.tls
		if err := env.Client.Create(ctx, d); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want Invalid with %q", name, err, tc.msg)
		}
	}
	ok := newDBU(ns, "ok", "u", "s", "k")
	ok.Spec.TLS = &mygroupv1alpha1.AccountTLS{}
	if err := env.Client.Create(ctx, ok); err != nil || ok.Spec.TLS.Require != mygroupv1alpha1.AccountRequireSSL {
		t.Errorf("tls: {}: %v, require %q (want the default, SSL)", err, ok.Spec.TLS.Require)
	}
}
