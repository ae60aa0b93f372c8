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
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/database"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/test/mariadbtest"
	"github.com/operator101/operator101/test/testenv"
)

// TestDatabaseThroughTheManager: the controller as Setup registers it, with the cache's shape of Databases
// (database.ForCache): a Database becomes Ready, a change of its DatabaseTarget's policy reaches it through the
// watch alone (the resync is an hour), the database left as it is, and its deletion with cleanupPolicy Delete
// drops it.
func TestDatabaseThroughTheManager(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	o := newOperator(t, nil)
	env.StartManager(t, nil, func(mgr ctrl.Manager) error {
		return database.Setup(mgr, reconciler.Options{Workers: 2}, database.Config{OperatorNamespace: o.ns,
			ResyncPeriod: time.Hour, ConnectTimeout: 2 * time.Second})
	}, func(opts *ctrl.Options) {
		opts.Cache.ByObject = map[client.Object]cache.ByObject{&mygroupv1alpha1.Database{}: database.ForCache()}
	})
	ns := env.NewNamespace(t, "mgr")
	target := "dbmgr-" + strings.TrimPrefix(o.ns, "db-")
	o.mkTarget(t, target, func(s *mygroupv1alpha1.DatabaseTargetSpec) {
		s.AllowedNamespaces = []string{ns}
		s.Databases = []string{"${namespace}_*"}
	})
	db := server.SQL(t)
	name := ns + "_app"
	t.Cleanup(func() { dropByHand(db, name) })
	d := newDatabase(ns, "app", name, target)
	d.Spec.CleanupPolicy = mygroupv1alpha1.CleanupDelete
	key := testenv.Create(t, env.Client, d)
	waitReason := func(reason string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			got := ready(mustGet(t, key))
			if got != nil && got.Reason == reason {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("Ready %+v, want reason %s", got, reason)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitReason(mygroupv1alpha1.ReasonReady)
	if h := observeDatabase(t, db, name, string(mustGet(t, key).UID)); h != (dbHolds{exists: true, claim: "this", defaults: "spec"}) {
		t.Fatalf("the server holds %s", h)
	}

	// The admin narrows the policy: the watch brings it.
	testenv.Patch(t, env.Client, client.ObjectKey{Name: target}, &mygroupv1alpha1.DatabaseTarget{}, func(dt *mygroupv1alpha1.DatabaseTarget) {
		dt.Spec.Databases = []string{"${namespace}_other"}
	})
	waitReason(mygroupv1alpha1.ReasonDatabaseNotAllowed)
	if h := observeDatabase(t, db, name, string(mustGet(t, key).UID)); !h.exists || h.claim != "this" {
		t.Fatalf("a narrowed policy changed the server: %s", h)
	}

	// Deleted with cleanupPolicy Delete: the database it claims is dropped, even under the narrowed policy.
	if err := env.Client.Delete(ctx, mustGet(t, key)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := env.Client.Get(ctx, key, &mygroupv1alpha1.Database{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(fmt.Errorf("the Database is still there: %w", err))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if h := observeDatabase(t, db, name, ""); h.exists || h.claim != "" {
		t.Errorf("after the deletion the server holds %s", h)
	}
}
