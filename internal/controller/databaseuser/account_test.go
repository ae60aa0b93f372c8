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

package databaseuser

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/events"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/internal/mysqlaccount"
	"github.com/operator101/operator101/test/mariadbtest"
)

// The pure functions: no cluster, no database.

func TestTargetName(t *testing.T) {
	d := &mygroupv1alpha1.DatabaseUser{}
	if got := targetName(d, "default"); got != "default" {
		t.Errorf("no label: %q", got)
	}
	d.Labels = map[string]string{"target": "that-database"}
	if got := targetName(d, "default"); got != "that-database" {
		t.Errorf("label: %q", got)
	}
}

func TestDesiredAccount(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec mygroupv1alpha1.DatabaseUserSpec
		want mysqlaccount.Account
	}{{
		name: "minimal: host defaults to %",
		spec: mygroupv1alpha1.DatabaseUserSpec{User: "u"},
		want: mysqlaccount.Account{User: "u", Host: "%", Password: "pw"},
	}, {
		name: "everything",
		spec: mygroupv1alpha1.DatabaseUserSpec{User: "u", Host: "10.0.0.%", MaxUserConnections: ptr.To[int32](7),
			Grants: []mygroupv1alpha1.Grant{{Database: "a", Privileges: []mygroupv1alpha1.Privilege{"SELECT", "INSERT"}},
				{Database: "b", Privileges: []mygroupv1alpha1.Privilege{"ALL PRIVILEGES"}}}},
		want: mysqlaccount.Account{User: "u", Host: "10.0.0.%", Password: "pw", MaxUserConnections: 7,
			Grants: map[string][]string{"a": {"SELECT", "INSERT"}, "b": {"ALL PRIVILEGES"}}},
	}, {
		name: "hourly limits and a client certificate with its subject and issuer",
		spec: mygroupv1alpha1.DatabaseUserSpec{User: "u", MaxQueriesPerHour: ptr.To[int32](1000), MaxUpdatesPerHour: ptr.To[int32](100),
			MaxConnectionsPerHour: ptr.To[int32](10), TLS: &mygroupv1alpha1.AccountTLS{Require: mygroupv1alpha1.AccountRequireX509,
				Subject: "/CN=u", Issuer: "/CN=CA"}},
		want: mysqlaccount.Account{User: "u", Host: "%", Password: "pw", MaxQueriesPerHour: 1000, MaxUpdatesPerHour: 100,
			MaxConnectionsPerHour: 10, TLS: mysqlaccount.TLSRequirement{Require: mysqlaccount.RequireX509, Subject: "/CN=u", Issuer: "/CN=CA"}},
	}, {
		name: "TLS",
		spec: mygroupv1alpha1.DatabaseUserSpec{User: "u", TLS: &mygroupv1alpha1.AccountTLS{Require: mygroupv1alpha1.AccountRequireSSL}},
		want: mysqlaccount.Account{User: "u", Host: "%", Password: "pw", TLS: mysqlaccount.TLSRequirement{Require: mysqlaccount.RequireSSL}},
	}, {
		name: "tls: {} requires TLS (the schema's default)",
		spec: mygroupv1alpha1.DatabaseUserSpec{User: "u", TLS: &mygroupv1alpha1.AccountTLS{}},
		want: mysqlaccount.Account{User: "u", Host: "%", Password: "pw", TLS: mysqlaccount.TLSRequirement{Require: mysqlaccount.RequireSSL}},
	}, {
		name: "require None",
		spec: mygroupv1alpha1.DatabaseUserSpec{User: "u", TLS: &mygroupv1alpha1.AccountTLS{Require: mygroupv1alpha1.AccountRequireNone}},
		want: mysqlaccount.Account{User: "u", Host: "%", Password: "pw"},
	}} {
		got := desiredAccount(&mygroupv1alpha1.DatabaseUser{Spec: tc.spec}, "pw")
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestDesiredClaimedAccount: adoption follows the target's existingAccounts and adoptableAccounts, and an
// account to adopt carries
// the databases the target allows the DatabaseUser's namespace, against which its privileges are checked.
func TestDesiredClaimedAccount(t *testing.T) {
	dbu := &mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "app", UID: "uid"},
		Spec: mygroupv1alpha1.DatabaseUserSpec{User: "u"}}
	target := &mygroupv1alpha1.DatabaseTarget{Spec: mygroupv1alpha1.DatabaseTargetSpec{
		Databases: []string{"${namespace}", "${namespace}_*", "shared"}, ExistingAccounts: mygroupv1alpha1.ExistingAccountsRefuse}}
	if a := desiredClaimedAccount(dbu, allowanceOf(target, dbu), "pw"); a.Adopt || a.AdoptDatabases != nil ||
		a.Claimant != (mysqlaccount.Claimant{UID: "uid", Namespace: "team-a", Name: "app"}) {
		t.Errorf("Refuse: %+v", a)
	}
	target.Spec.ExistingAccounts = mygroupv1alpha1.ExistingAccountsAdopt
	if a := desiredClaimedAccount(dbu, allowanceOf(target, dbu), "pw"); a.Adopt {
		t.Errorf("Adopt, the account not listed: %+v", a)
	}
	target.Spec.AdoptableAccounts = []mygroupv1alpha1.AdoptableAccounts{{Namespace: "team-a", Users: []string{"v", "u"}}}
	a := desiredClaimedAccount(dbu, allowanceOf(target, dbu), "pw")
	if want := []string{"team-a", "team-a_*", "shared"}; !a.Adopt || !reflect.DeepEqual(a.AdoptDatabases, want) {
		t.Errorf("Adopt: %+v, want databases %q", a, want)
	}
	target.Spec.Databases = nil
	if a := desiredClaimedAccount(dbu, allowanceOf(target, dbu), "pw"); !a.Adopt || len(a.AdoptDatabases) != 0 {
		t.Errorf("Adopt, no databases: %+v", a)
	}
}

// TestTargetRequiresTLS: a target's requireTLS makes an account that asks for nothing, or for None, require
// TLS; one that asks for a client certificate keeps it; without it, the DatabaseUser's own choice stands.
func TestTargetRequiresTLS(t *testing.T) {
	target := &mygroupv1alpha1.DatabaseTarget{Spec: mygroupv1alpha1.DatabaseTargetSpec{RequireTLS: true, AllowedNamespaces: []string{"*"}}}
	for _, tc := range []struct {
		name       string
		tls        *mygroupv1alpha1.AccountTLS
		requireTLS bool
		want       mysqlaccount.TLSRequirement
	}{
		{"target requires, account asks nothing", nil, true, mysqlaccount.TLSRequirement{Require: mysqlaccount.RequireSSL}},
		{"target requires, account asks None", &mygroupv1alpha1.AccountTLS{Require: mygroupv1alpha1.AccountRequireNone}, true,
			mysqlaccount.TLSRequirement{Require: mysqlaccount.RequireSSL}},
		{"target requires, account asks X509", &mygroupv1alpha1.AccountTLS{Require: mygroupv1alpha1.AccountRequireX509, Subject: "/CN=u"}, true,
			mysqlaccount.TLSRequirement{Require: mysqlaccount.RequireX509, Subject: "/CN=u"}},
		{"target does not, account asks nothing", nil, false, mysqlaccount.TLSRequirement{}},
		{"target does not, account asks SSL", &mygroupv1alpha1.AccountTLS{Require: mygroupv1alpha1.AccountRequireSSL}, false,
			mysqlaccount.TLSRequirement{Require: mysqlaccount.RequireSSL}},
	} {
		target.Spec.RequireTLS = tc.requireTLS
		dbu := &mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app"},
			Spec: mygroupv1alpha1.DatabaseUserSpec{User: "u", TLS: tc.tls}}
		if got := desiredClaimedAccount(dbu, allowanceOf(target, dbu), "pw").TLS; got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// allowanceOf is what target's policy gives dbu, refused or not.
func allowanceOf(target *mygroupv1alpha1.DatabaseTarget, dbu *mygroupv1alpha1.DatabaseUser) allowance {
	allowed, _ := checkPolicy(target, dbu)
	return allowed
}

func TestTargetFromSecret(t *testing.T) {
	secret := func(kv ...string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "op", Name: "t"}, Data: map[string][]byte{}}
		for i := 0; i+1 < len(kv); i += 2 {
			s.Data[kv[i]] = []byte(kv[i+1])
		}
		return s
	}
	plain := &mygroupv1alpha1.DatabaseTargetSpec{TLS: mygroupv1alpha1.DatabaseTargetTLS{Mode: mygroupv1alpha1.TLSDisabled}}
	got, err := targetFromSecret(plain, secret("host", "db", "username", "admin", "password", "TOPSECRET"))
	if err != nil || got != (mysqlaccount.Target{Host: "db", Port: 3306, User: "admin", Password: "TOPSECRET"}) {
		t.Errorf("default port: %+v, %v", got, err)
	}
	if got, err := targetFromSecret(plain, secret("host", "db", "port", "3307", "username", "a", "password", "p")); err != nil || got.Port != 3307 {
		t.Errorf("port: %+v, %v", got, err)
	}
	// TLS is on unless the target says Disabled, and VerifyFull checks the Secret's host unless serverName is set.
	for _, tc := range []struct {
		spec       mygroupv1alpha1.DatabaseTargetTLS
		serverName string
		verify     bool
	}{
		{mygroupv1alpha1.DatabaseTargetTLS{}, "db", true},
		{mygroupv1alpha1.DatabaseTargetTLS{Mode: mygroupv1alpha1.TLSVerifyFull, ServerName: "mysql.example"}, "mysql.example", true},
		{mygroupv1alpha1.DatabaseTargetTLS{Mode: mygroupv1alpha1.TLSRequired}, "", false},
	} {
		got, err := targetFromSecret(&mygroupv1alpha1.DatabaseTargetSpec{TLS: tc.spec}, secret("host", "db", "username", "a", "password", "p"))
		if err != nil || got.TLS == nil {
			t.Errorf("%+v: TLS %v, %v", tc.spec, got.TLS, err)
			continue
		}
		if tc.verify && (got.TLS.InsecureSkipVerify && got.TLS.VerifyPeerCertificate == nil || got.TLS.ServerName != tc.serverName) {
			t.Errorf("%+v: does not verify %q: %+v", tc.spec, tc.serverName, got.TLS)
		}
	}
	if _, err := targetFromSecret(&mygroupv1alpha1.DatabaseTargetSpec{}, secret("host", "db", "username", "a", "password", "p", "tls.crt", "not a certificate")); err == nil {
		t.Error("a client certificate without its key was accepted")
	}
	for name, s := range map[string]*corev1.Secret{
		"missing password":  secret("host", "db", "username", "a"),
		"bad port":          secret("host", "db", "port", "TOPSECRET", "username", "a", "password", "TOPSECRET"),
		"port out of range": secret("host", "db", "port", "70000", "username", "a", "password", "p"),
	} {
		_, err := targetFromSecret(plain, s)
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "TOPSECRET") {
			t.Errorf("%s: error carries a secret value: %v", name, err)
		}
	}
}

func TestFailureRedactsAndClassifies(t *testing.T) {
	err := &mysqlaccount.Error{Kind: mysqlaccount.KindAccessDenied, Op: "connecting", Err: errors.New("denied for p4ss and *HASH")}
	out := failure(err, "target \"x\": ", "p4ss", "*HASH")
	if out.reason != mygroupv1alpha1.ReasonAccessDenied || !out.retry ||
		strings.Contains(out.message, "p4ss") || strings.Contains(out.message, "*HASH") {
		t.Errorf("%+v", out)
	}
	for kind, reason := range map[mysqlaccount.Kind]string{
		mysqlaccount.KindUnreachable:     mygroupv1alpha1.ReasonDatabaseUnreachable,
		mysqlaccount.KindInvalidAccount:  mygroupv1alpha1.ReasonInvalidUser,
		mysqlaccount.KindInvalidGrant:    mygroupv1alpha1.ReasonInvalidGrant,
		mysqlaccount.KindOther:           mygroupv1alpha1.ReasonDatabaseError,
		mysqlaccount.KindNotClaimed:      mygroupv1alpha1.ReasonAccountNotOwned,
		mysqlaccount.KindReserved:        mygroupv1alpha1.ReasonAccountReserved,
		mysqlaccount.KindPasswordTooLong: mygroupv1alpha1.ReasonPasswordTooLong,
	} {
		if got := failure(&mysqlaccount.Error{Kind: kind, Op: "x", Err: errors.New("y")}, ""); got.reason != reason {
			t.Errorf("kind %d: %s, want %s", kind, got.reason, reason)
		}
	}
}

func TestComputeStatus(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ready := outcome{reason: mygroupv1alpha1.ReasonReady, message: "ok"}
	s1 := computeStatus(mygroupv1alpha1.DatabaseUserStatus{}, 3, "default", ready, t0, time.Hour)
	if s1.ObservedGeneration != 3 || s1.Target != "default" || !s1.LastCheckedTime.Equal(&t0) ||
		s1.Conditions[0].Status != metav1.ConditionTrue || !s1.Conditions[0].LastTransitionTime.Equal(&t0) {
		t.Fatalf("first: %+v", s1)
	}
	// A resync ten minutes later changes nothing: no write at rest.
	t1 := metav1.NewTime(t0.Add(10 * time.Minute))
	if s2 := computeStatus(s1, 3, "default", ready, t1, time.Hour); !reflect.DeepEqual(s2, s1) {
		t.Errorf("resync changed the status: %+v", s2)
	}
	// After the refresh interval, lastCheckedTime moves; the transition time does not.
	t2 := metav1.NewTime(t0.Add(time.Hour))
	s3 := computeStatus(s1, 3, "default", ready, t2, time.Hour)
	if !s3.LastCheckedTime.Equal(&t2) || !s3.Conditions[0].LastTransitionTime.Equal(&t0) {
		t.Errorf("refresh: %+v", s3)
	}
	// A failure flips the condition and keeps the last successful check.
	s4 := computeStatus(s3, 3, "default", outcome{reason: mygroupv1alpha1.ReasonDatabaseUnreachable, message: "down"}, t2, time.Hour)
	if c := s4.Conditions[0]; c.Status != metav1.ConditionFalse || c.Reason != mygroupv1alpha1.ReasonDatabaseUnreachable ||
		!s4.LastCheckedTime.Equal(&t2) {
		t.Errorf("failure: %+v", s4)
	}
}

// TestFailureTellsTenantsOnlyTheirs: what a DatabaseUser's condition and Events say of a failure to connect
// names no admin account, no server address or port, and not the operator's IP, which MySQL's access-denied
// errors carry ('user'@'client-host'); the full error stays in the detail, for the operator's log and the
// DatabaseTarget's status. The errors are real: Open against a listener answering 1045 or 1130, and against an
// address nothing answers (192.0.2.1, TEST-NET-1).
func TestFailureTellsTenantsOnlyTheirs(t *testing.T) {
	const adminUser, operatorIP, adminPw = "dbadmin", "10.1.2.3", "s3cret-admin-pw"
	denied := mariadbtest.ErrorServer(t, 1045, "Access denied for user '"+adminUser+"'@'"+operatorIP+"' (using password: YES)")
	blocked := mariadbtest.ErrorServer(t, 1130, "Host '"+operatorIP+"' is not allowed to connect to this MariaDB server")
	for _, tc := range []struct {
		name   string
		host   string
		port   int
		reason string
		says   string
	}{
		{"access denied", "127.0.0.1", denied, mygroupv1alpha1.ReasonAccessDenied, "denied access to the operator's admin account (error 1045)"},
		{"host not allowed", "127.0.0.1", blocked, mygroupv1alpha1.ReasonDatabaseError, "answered with an error (error 1130)"},
		{"unreachable", "192.0.2.1", 3306, mygroupv1alpha1.ReasonDatabaseUnreachable, "cannot reach the database server"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := mysqlaccount.Open(ctx, mysqlaccount.Target{Host: tc.host, Port: tc.port, User: adminUser, Password: adminPw},
			300*time.Millisecond)
		cancel()
		if err == nil {
			t.Fatalf("%s: connected", tc.name)
		}
		out := failure(err, `DatabaseTarget "shared": `, adminPw)
		t.Logf("%s: tenant: %s | log: %s", tc.name, out.message, out.logged())
		if out.reason != tc.reason || !strings.Contains(out.message, tc.says) || !strings.HasPrefix(out.message, `DatabaseTarget "shared": `) {
			t.Errorf("%s: %s %q; want %s saying %q", tc.name, out.reason, out.message, tc.reason, tc.says)
		}
		port := strconv.Itoa(tc.port)
		for _, secret := range []string{adminUser, tc.host, port, operatorIP, adminPw, "Access denied", "MariaDB server"} {
			if strings.Contains(out.message, secret) {
				t.Errorf("%s: the tenant reads %q: %s", tc.name, secret, out.message)
			}
		}
		// The cluster admin keeps all of it (but the password).
		if !strings.Contains(out.logged(), tc.host+":"+port) || !strings.Contains(out.logged(), adminUser) ||
			strings.Contains(out.logged(), adminPw) {
			t.Errorf("%s: the log reads %q", tc.name, out.logged())
		}
		if tc.port != 3306 && !strings.Contains(out.logged(), operatorIP) {
			t.Errorf("%s: the log lost the server's error: %q", tc.name, out.logged())
		}
		// Wrapped as deletion and target moves wrap it: the same holds.
		for _, wrapped := range []outcome{out.within("deletion is held until the account is dropped: ", "."),
			out.within(`cannot drop the account from previous target "old" yet: `, "")} {
			if strings.Contains(wrapped.message, adminUser) || strings.Contains(wrapped.message, port) ||
				!strings.Contains(wrapped.logged(), adminUser) {
				t.Errorf("%s: wrapped: %q / %q", tc.name, wrapped.message, wrapped.logged())
			}
		}
	}

	// The errors mysqlaccount makes of the tenant's own request are given as they are, and an account not
	// theirs reads the same, whatever the server holds behind it.
	notOwned := &mysqlaccount.Error{Kind: mysqlaccount.KindNotClaimed, Op: "account u@%",
		Err: errors.New("user name \"u\" is not this DatabaseUser's to manage"), Why: `user "u" also exists with host "10.0.0.9"`}
	if out := failure(notOwned, ""); out.message != notOwned.Error() || out.reason != mygroupv1alpha1.ReasonAccountNotOwned ||
		!strings.Contains(out.logged(), "10.0.0.9") {
		t.Errorf("not owned: %+v", out)
	}
}

// TestNotDroppedEventSaysOnlyNotOwned: the Event of a drop that found the account not this DatabaseUser's says
// that, and nothing of whether such an account exists (Drop answers NotClaimed either way).
func TestNotDroppedEventSaysOnlyNotOwned(t *testing.T) {
	rec := events.NewFakeRecorder(1)
	r := &Reconciler{Base: reconciler.Base{Recorder: rec}}
	dbu := &mygroupv1alpha1.DatabaseUser{Spec: mygroupv1alpha1.DatabaseUserSpec{User: "u"}}
	r.droppedEvent(context.Background(), dbu, "shared", mysqlaccount.DropResult{NotClaimed: true}, "AccountDropped", "dropped")
	got := <-rec.Events
	if !strings.Contains(got, "AccountNotDropped") || !strings.Contains(got, "not this DatabaseUser's") ||
		strings.Contains(got, "created") || strings.Contains(got, "exist") {
		t.Errorf("Event %q", got)
	}
}
