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

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/databaseuser"
)

// adminLoginProtected waits until target name's AdminLoginProtected condition describes its generation, and
// returns it with the target.
func adminLoginProtected(t *testing.T, name string) (*metav1.Condition, *mygroupv1alpha1.DatabaseTarget) {
	t.Helper()
	var got *metav1.Condition
	dt := &mygroupv1alpha1.DatabaseTarget{}
	poll(t, timeout, "DatabaseTarget "+name+" reports AdminLoginProtected", func() error {
		if err := env.Client.Get(context.Background(), types.NamespacedName{Name: name}, dt); err != nil {
			return err
		}
		got = meta.FindStatusCondition(dt.Status.Conditions, mygroupv1alpha1.ConditionAdminLoginProtected)
		if got == nil || got.ObservedGeneration != dt.Generation {
			return fmt.Errorf("status %+v", dt.Status)
		}
		return nil
	})
	return got, dt
}

// TestAdminLoginProtectedCondition: each DatabaseTarget says whether its tls.mode protects the admin login: under
// Disabled and Required AdminLoginProtected is False, reason UnverifiedTLS, with a message that says only
// VerifyCA or VerifyFull protects it from an impostor or a relay; under VerifyCA, VerifyFull and the default
// (VerifyFull) it is True. Ready is what it was: each target's server is a listener that speaks no MySQL
// (DatabaseUnreachable), and, with MariaDB, a Disabled target of the private server is Ready and still warns.
// Changing the mode changes the condition. An admin Secret whose server-public-key.pem is no key is refused
// before any connection. Needs no MariaDB (but uses it when there).
func TestAdminLoginProtectedCondition(t *testing.T) {
	ctx := context.Background()
	opNS := env.NewNamespace(t, "dbt-login")
	adminPw := randomPassword(t, "admin")
	ln, badKey := recordConnections(t), recordConnections(t)
	data := map[string]string{"host": "127.0.0.1", "port": ln.port(), "username": "operator101admin", "password": adminPw,
		"ca.crt": selfSignedCA(t)}
	mkSecret(t, opNS, "listener", data)
	modes := map[string]mygroupv1alpha1.TLSMode{"login-disabled": mygroupv1alpha1.TLSDisabled,
		"login-required": mygroupv1alpha1.TLSRequired, "login-verifyca": mygroupv1alpha1.TLSVerifyCA,
		"login-verifyfull": mygroupv1alpha1.TLSVerifyFull, "login-default": ""}
	for name, mode := range modes {
		mkTarget(t, name, opNS, "listener", func(s *mygroupv1alpha1.DatabaseTargetSpec) {
			s.TLS = mygroupv1alpha1.DatabaseTargetTLS{Mode: mode}
		})
	}
	keyData := map[string]string{"host": "127.0.0.1", "port": badKey.port(), "username": "operator101admin",
		"password": adminPw, "server-public-key.pem": "-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n-----END PUBLIC KEY-----\n"}
	mkSecret(t, opNS, "bad-key", keyData)
	mkTarget(t, "login-bad-key", opNS, "bad-key", nil)
	if server != nil {
		a := server.Admin
		targetSecret(t, opNS, "mariadb", a.Host, a.Port, a.User, a.Password)
		mkTarget(t, "login-mariadb", opNS, "mariadb", nil) // Disabled
	}
	op := startManager(t, nil, opNS, databaseuser.Config{ResyncPeriod: resync})

	for name, mode := range modes {
		c, dt := adminLoginProtected(t, name)
		t.Logf("%s (%q): %s %s: %s", name, dt.Spec.TLS.Mode, c.Status, c.Reason, c.Message)
		switch mode {
		case mygroupv1alpha1.TLSDisabled, mygroupv1alpha1.TLSRequired:
			if c.Status != metav1.ConditionFalse || c.Reason != mygroupv1alpha1.ReasonUnverifiedTLS {
				t.Errorf("%s: %s %s, want False UnverifiedTLS", name, c.Status, c.Reason)
			}
			for _, want := range []string{"tls.mode " + string(mode), "does not verify the server", "relay",
				"Only tls.mode VerifyCA or VerifyFull protects the admin login"} {
				if !strings.Contains(c.Message, want) {
					t.Errorf("%s: the message does not say %q: %s", name, want, c.Message)
				}
			}
		default:
			if c.Status != metav1.ConditionTrue || c.Reason != mygroupv1alpha1.ReasonVerifiedTLS {
				t.Errorf("%s: %s %s, want True VerifiedTLS", name, c.Status, c.Reason)
			}
		}
		// Ready as before: the listener speaks no MySQL.
		targetReady(t, name, mygroupv1alpha1.ReasonDatabaseUnreachable)
	}

	bad := targetReady(t, "login-bad-key", mygroupv1alpha1.ReasonTargetSecretInvalid, badKey)
	if !strings.Contains(bad.Message, "server-public-key.pem") {
		t.Errorf("an admin Secret with a server-public-key.pem that is no key: %s", bad.Message)
	}
	if c, _ := adminLoginProtected(t, "login-bad-key"); c.Status != metav1.ConditionFalse {
		t.Errorf("login-bad-key (Disabled): AdminLoginProtected %s", c.Status)
	}

	if server != nil {
		ready := targetReady(t, "login-mariadb", mygroupv1alpha1.ReasonConnected)
		if c, _ := adminLoginProtected(t, "login-mariadb"); ready.Status != metav1.ConditionTrue || c.Status != metav1.ConditionFalse {
			t.Errorf("a Disabled target of the private MariaDB: Ready %s, AdminLoginProtected %s; want True, False",
				ready.Status, c.Status)
		}
	}

	// Required to VerifyCA: the condition follows the new generation.
	dt := mustGetTarget(t, "login-required")
	dt.Spec.TLS.Mode = mygroupv1alpha1.TLSVerifyCA
	if err := env.Client.Update(ctx, dt); err != nil {
		t.Fatal(err)
	}
	poll(t, timeout, "AdminLoginProtected True after the change to VerifyCA", func() error {
		c, dt := adminLoginProtected(t, "login-required")
		if dt.Spec.TLS.Mode != mygroupv1alpha1.TLSVerifyCA || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("mode %s: %s %s", dt.Spec.TLS.Mode, c.Status, c.Reason)
		}
		return nil
	})
	if strings.Contains(op.log.String(), adminPw) {
		t.Error("the admin password is in the operator's log")
	}
}
