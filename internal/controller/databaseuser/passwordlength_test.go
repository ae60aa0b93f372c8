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
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/databaseuser"
	"github.com/operator101/operator101/internal/mysqlaccount"
	"github.com/operator101/operator101/test/mariadbtest"
	"github.com/operator101/operator101/test/testenv"
)

// TestPasswordTooLongRefused: against a MySQL 8.4 server (a fake one that logs the operator in and answers
// SELECT VERSION()), a DatabaseUser whose Secret holds a password one byte longer than caching_sha2_password
// accepts (257 bytes) is refused: Ready=False, reason PasswordTooLong, a message naming the Secret, the key,
// both lengths and the server, and exactly one Warning Event over several resyncs. The server receives nothing
// but SELECT VERSION(): the account is neither read nor changed, and nothing was hashed. The password appears
// in no log line, Event or status. Shortened to 256 bytes (the limit), it is accepted: the operator goes on to
// read the account, which the fake refuses. Needs no MariaDB.
func TestPasswordTooLongRefused(t *testing.T) {
	fake := mariadbtest.StartFake(t, mariadbtest.FakeOptions{Version: "8.4.3"})
	opNS := env.NewNamespace(t, "dbu-pwlen")
	adminPw := randomPassword(t, "admin")
	mkSecret(t, opNS, "fake-mysql", map[string]string{"host": "127.0.0.1", "port": fake.PortString(),
		"username": "operator101admin", "password": adminPw})
	mkTarget(t, "fake-mysql84", opNS, "fake-mysql", nil)
	op := startManager(t, nil, opNS, databaseuser.Config{ResyncPeriod: resync})
	targetReady(t, "fake-mysql84", mygroupv1alpha1.ReasonConnected)

	limit := mysqlaccount.MaxCachingSHA2PasswordLength
	pad := func(prefix string, n int) string { return prefix + strings.Repeat("x", n-len(prefix)) }
	tooLong, atLimit := pad(randomPassword(t, "long"), limit+1), pad(randomPassword(t, "limit"), limit)
	tenant := env.NewNamespace(t, "tenant")
	mkSecret(t, tenant, "s", map[string]string{"pw": tooLong})
	dbu := newDBU(tenant, "app", uniqueUser("app"), "s", "pw")
	dbu.Labels = map[string]string{mygroupv1alpha1.TargetLabel: "fake-mysql84"}
	dbu.Spec.CleanupPolicy = mygroupv1alpha1.CleanupSkip // the fake holds no account to drop
	key := testenv.Create(t, env.Client, dbu)

	got := waitReady(t, key, metav1.ConditionFalse, mygroupv1alpha1.ReasonPasswordTooLong)
	c := meta.FindStatusCondition(got.Status.Conditions, mygroupv1alpha1.ConditionReady)
	t.Logf("%s: %s", c.Reason, c.Message)
	for _, want := range []string{`Secret "s"`, `key "pw"`, fmt.Sprintf("%d bytes long", limit+1),
		fmt.Sprintf("the %d bytes MySQL 8.4.3 accepts", limit), "caching_sha2_password", "Shorten it"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("the condition's message does not say %q: %s", want, c.Message)
		}
	}

	// Several resyncs later: still refused, the same single Event, nothing sent but SELECT VERSION().
	n := op.mgr.Reconciles.Get(key)
	poll(t, timeout, "3 more checks of the DatabaseUser", func() error {
		if got := op.mgr.Reconciles.Get(key); got < n+3 {
			return fmt.Errorf("%d checks", got)
		}
		return nil
	})
	waitReady(t, key, metav1.ConditionFalse, mygroupv1alpha1.ReasonPasswordTooLong)
	evs := testenv.EventsOfReason(t, env.Client, tenant, "app", mygroupv1alpha1.ReasonPasswordTooLong)
	if len(evs) != 1 || evs[0].Type != corev1.EventTypeWarning || evs[0].Series != nil {
		t.Errorf("want one Warning Event %s, got %+v", mygroupv1alpha1.ReasonPasswordTooLong, evs)
	}
	logins, commands := fake.Received()
	t.Logf("%d checks, %d logins to the server, commands %q", op.mgr.Reconciles.Get(key), logins, commands)
	if logins == 0 {
		t.Fatal("no login to the fake server: the test would prove nothing")
	}
	for _, cmd := range commands {
		if cmd != "SELECT VERSION()" && cmd != "command 0x1" { // COM_QUIT
			t.Errorf("the server received %q for a password it cannot take", cmd)
		}
	}
	assertNoSecrets(t, op, tenant, tooLong, adminPw)

	// At the limit: accepted, and the operator reads the account (which the fake refuses).
	setSecret(t, tenant, "s", map[string]string{"pw": atLimit})
	poll(t, timeout, "the account read once the password is 256 bytes", func() error {
		_, commands := fake.Received()
		for _, cmd := range commands {
			if cmd != "SELECT VERSION()" && cmd != "command 0x1" {
				return nil
			}
		}
		return errors.New("nothing but SELECT VERSION() yet")
	})
	waitReady(t, key, metav1.ConditionFalse, mygroupv1alpha1.ReasonDatabaseError)
	assertNoSecrets(t, op, tenant, tooLong, atLimit, adminPw)

	deleteUser(t, key)
}
