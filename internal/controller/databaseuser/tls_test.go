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
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/databaseuser"
	"github.com/operator101/operator101/test/mariadbtest"
	"github.com/operator101/operator101/test/testenv"
)

// tcpRecorder is a listener on 127.0.0.1 that counts the connections made to it and closes each at once: it
// speaks no MySQL, so nothing is ever sent to it past the TCP handshake, and a count of 0 proves no connection
// was attempted.
type tcpRecorder struct {
	ln    net.Listener
	conns atomic.Int64
}

func recordConnections(t *testing.T) *tcpRecorder {
	t.Helper()
	r := &tcpRecorder{}
	r.ln = mariadbtest.Serve(t, func(c net.Conn) {
		r.conns.Add(1)
		_ = c.Close()
	})
	return r
}

func (r *tcpRecorder) port() string { return strconv.Itoa(mariadbtest.Port(r.ln)) }

// selfSignedCA is the PEM of a CA certificate that no one trusts.
func selfSignedCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "operator101 test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// targetReady waits until target name's Ready condition has reason for its generation, and returns it. It
// fails at once when unreached, given, sees a connection meanwhile.
func targetReady(t *testing.T, name, reason string, unreached ...*tcpRecorder) *metav1.Condition {
	t.Helper()
	var got *metav1.Condition
	poll(t, timeout, "DatabaseTarget "+name+" reports "+reason, func() error {
		for _, r := range unreached {
			if n := r.conns.Load(); n != 0 {
				t.Fatalf("DatabaseTarget %s: %d connections to its server", name, n)
			}
		}
		dt := &mygroupv1alpha1.DatabaseTarget{}
		if err := env.Client.Get(context.Background(), types.NamespacedName{Name: name}, dt); err != nil {
			return err
		}
		got = meta.FindStatusCondition(dt.Status.Conditions, mygroupv1alpha1.ConditionReady)
		if got == nil || got.Reason != reason || got.ObservedGeneration != dt.Generation {
			return fmt.Errorf("status %+v", dt.Status)
		}
		return nil
	})
	return got
}

// TestVerifyCAWithoutCARefused: a DatabaseTarget with tls.mode VerifyCA whose admin Secret has no ca.crt would
// accept any publicly trusted certificate for any name, so the operator refuses it: the target reports
// Ready=False, TargetSecretInvalid, with a message saying to add ca.crt or use VerifyFull, and a DatabaseUser
// of it reports the same reason, pointing to the target's status without naming the Secret; neither controller opens a connection to the Secret's host (a listener the test owns),
// over repeated reconciles, so no admin login is sent. Beside it, VerifyFull without ca.crt (the system's
// roots, the name checked) is not refused: its operator connects (to another listener of the test's, which
// shows that such a listener sees a connection). Adding ca.crt to the refused target's Secret lifts the refusal:
// the operator then connects. Needs no MariaDB.
func TestVerifyCAWithoutCARefused(t *testing.T) {
	refused, full := recordConnections(t), recordConnections(t)
	opNS := env.NewNamespace(t, "dbt-tls")
	adminPw := randomPassword(t, "admin")
	secret := func(r *tcpRecorder) map[string]string {
		return map[string]string{"host": "127.0.0.1", "port": r.port(), "username": "operator101admin", "password": adminPw}
	}
	mkSecret(t, opNS, "no-ca", secret(refused))
	mkSecret(t, opNS, "no-ca-full", secret(full))
	mkTarget(t, "verifyca-no-ca", opNS, "no-ca", func(s *mygroupv1alpha1.DatabaseTargetSpec) {
		s.TLS = mygroupv1alpha1.DatabaseTargetTLS{Mode: mygroupv1alpha1.TLSVerifyCA}
	})
	mkTarget(t, "verifyfull-no-ca", opNS, "no-ca-full", func(s *mygroupv1alpha1.DatabaseTargetSpec) {
		s.TLS = mygroupv1alpha1.DatabaseTargetTLS{Mode: mygroupv1alpha1.TLSVerifyFull}
	})
	op := startManager(t, nil, opNS, databaseuser.Config{ResyncPeriod: resync})

	// The target: refused, with what to do.
	c := targetReady(t, "verifyca-no-ca", mygroupv1alpha1.ReasonTargetSecretInvalid, refused)
	t.Logf("VerifyCA without ca.crt: %s: %s", c.Reason, c.Message)
	if c.Status != metav1.ConditionFalse {
		t.Errorf("Ready=%s, want False", c.Status)
	}
	for _, want := range []string{"VerifyCA", "ca.crt", "admin Secret " + opNS + "/no-ca", "VerifyFull"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("the condition's message does not say %q: %s", want, c.Message)
		}
	}
	// A DatabaseUser of that target: the same reason, the same check before any connection.
	tenant := env.NewNamespace(t, "tenant")
	mkSecret(t, tenant, "s", map[string]string{"pw": randomPassword(t, "app")})
	dbu := newDBU(tenant, "app", uniqueUser("app"), "s", "pw")
	dbu.Labels = map[string]string{mygroupv1alpha1.TargetLabel: "verifyca-no-ca"}
	dbu.Spec.CleanupPolicy = mygroupv1alpha1.CleanupSkip // its target never connects: nothing to drop
	key := testenv.Create(t, env.Client, dbu)
	got := waitReady(t, key, metav1.ConditionFalse, mygroupv1alpha1.ReasonTargetSecretInvalid)
	// The tenant is told where to look; the Secret's name and what is wrong with it are the cluster admin's.
	msg := meta.FindStatusCondition(got.Status.Conditions, mygroupv1alpha1.ConditionReady).Message
	if !strings.Contains(msg, "DatabaseTarget's status") || strings.Contains(msg, opNS) {
		t.Errorf("the DatabaseUser's message does not point to the target's status, or names its Secret: %s", msg)
	}

	// Retried with backoff, each time refused before any connection.
	targetKey := types.NamespacedName{Name: "verifyca-no-ca"}
	n := op.mgr.Reconciles.Get(targetKey)
	poll(t, timeout, "3 more reconciles of the target", func() error {
		if got := op.mgr.Reconciles.Get(targetKey); got < n+3 {
			return fmt.Errorf("%d reconciles", got)
		}
		return nil
	})
	userReconciles := op.mgr.Reconciles.Get(key)

	// VerifyFull without ca.crt is not refused: it connects (the listener speaks no MySQL: unreachable).
	fc := targetReady(t, "verifyfull-no-ca", mygroupv1alpha1.ReasonDatabaseUnreachable)
	t.Logf("VerifyFull without ca.crt: %s: %s", fc.Reason, fc.Message)
	if full.conns.Load() == 0 {
		t.Error("VerifyFull without ca.crt made no connection: the listener would not see one either")
	}

	if got := refused.conns.Load(); got != 0 {
		t.Fatalf("VerifyCA without ca.crt: %d connections to the server (target reconciled %d times, "+
			"DatabaseUser %d times)", got, op.mgr.Reconciles.Get(targetKey), userReconciles)
	}
	t.Logf("no connection over %d reconciles of the target and %d of the DatabaseUser",
		op.mgr.Reconciles.Get(targetKey), userReconciles)
	if strings.Contains(op.log.String(), adminPw) {
		t.Error("the admin password is in the operator's log")
	}

	// The way out the message gives: add ca.crt. The operator then connects (and the listener, no MariaDB,
	// makes it unreachable).
	data := secret(refused)
	data["ca.crt"] = selfSignedCA(t)
	setSecret(t, opNS, "no-ca", data)
	poll(t, timeout, "a connection once ca.crt is there", func() error {
		if refused.conns.Load() == 0 {
			return errors.New("none yet")
		}
		return nil
	})
	targetReady(t, "verifyca-no-ca", mygroupv1alpha1.ReasonDatabaseUnreachable)

	deleteUser(t, key)
}
