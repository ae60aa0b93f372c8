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
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/databaseuser"
	"github.com/operator101/operator101/test/mariadbtest"
	"github.com/operator101/operator101/test/testenv"
)

// TestTenantsSeeNothingOfTheServer: a DatabaseUser whose target's server refuses the admin account (1045, naming
// 'dbadmin'@'10.1.2.3' as MySQL names the operator) reports AccessDenied, and while its deletion is held, its
// condition and Events name neither the admin account nor the server's address or port nor the operator's IP.
// The DatabaseTarget's condition (the cluster admin's) and the operator's log still say all of it. Needs no
// MariaDB.
func TestTenantsSeeNothingOfTheServer(t *testing.T) {
	ctx := context.Background()
	const adminUser, operatorIP = "dbadmin", "10.1.2.3"
	port := strconv.Itoa(mariadbtest.ErrorServer(t, 1045, "Access denied for user '"+adminUser+"'@'"+operatorIP+"' (using password: YES)"))
	opNS := env.NewNamespace(t, "dbu-leak")
	mkSecret(t, opNS, "denying", map[string]string{"host": "127.0.0.1", "port": port,
		"username": adminUser, "password": randomPassword(t, "admin")})
	mkTarget(t, "denying", opNS, "denying", nil)
	op := startManager(t, nil, opNS, databaseuser.Config{ResyncPeriod: resync})
	leaks := []string{adminUser, "127.0.0.1", port, operatorIP, "Access denied"}

	c := targetReady(t, "denying", mygroupv1alpha1.ReasonAccessDenied)
	for _, want := range []string{adminUser, "127.0.0.1:" + port, operatorIP} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("the DatabaseTarget's condition lost %q: %s", want, c.Message)
		}
	}

	tenant := env.NewNamespace(t, "tenant")
	mkSecret(t, tenant, "s", map[string]string{"pw": randomPassword(t, "app")})
	dbu := newDBU(tenant, "app", uniqueUser("app"), "s", "pw")
	dbu.Labels = map[string]string{mygroupv1alpha1.TargetLabel: "denying"}
	key := testenv.Create(t, env.Client, dbu)
	tenantSees := func(what string) {
		t.Helper()
		got := mustGet(t, key.Namespace, key.Name)
		msg := meta.FindStatusCondition(got.Status.Conditions, mygroupv1alpha1.ConditionReady).Message
		t.Logf("%s: %s", what, msg)
		notes := eventNotes(t, tenant)
		for _, leak := range leaks {
			if strings.Contains(msg, leak) || strings.Contains(notes, leak) {
				t.Errorf("%s: the tenant reads %q: condition %q, Events %q", what, leak, msg, notes)
			}
		}
	}
	waitReady(t, key, metav1.ConditionFalse, mygroupv1alpha1.ReasonAccessDenied)
	tenantSees("reconciled")

	// Deletion is held (the account cannot be dropped), and says why in the same words.
	if err := env.Client.Delete(ctx, mustGet(t, key.Namespace, key.Name)); err != nil {
		t.Fatal(err)
	}
	poll(t, timeout, "deletion held", func() error {
		c := meta.FindStatusCondition(mustGet(t, key.Namespace, key.Name).Status.Conditions, mygroupv1alpha1.ConditionReady)
		if !strings.Contains(c.Message, "deletion is held") {
			return errors.New(c.Message)
		}
		return nil
	})
	tenantSees("deletion held")
	if l := op.log.String(); !strings.Contains(l, operatorIP) || !strings.Contains(l, "127.0.0.1:"+port) {
		t.Error("the operator's log lost the server's error")
	}

	testenv.Patch(t, env.Client, key, &mygroupv1alpha1.DatabaseUser{}, func(d *mygroupv1alpha1.DatabaseUser) {
		d.Spec.CleanupPolicy = mygroupv1alpha1.CleanupSkip
	})
	waitGone(t, key)
	tenantSeesEvents := eventNotes(t, tenant)
	for _, leak := range leaks {
		if strings.Contains(tenantSeesEvents, leak) {
			t.Errorf("the tenant's Events name %q: %s", leak, tenantSeesEvents)
		}
	}
}
