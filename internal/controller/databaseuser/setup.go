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

// Package databaseuser holds the DatabaseUser and DatabaseTarget controllers: MySQL/MariaDB accounts as Kubernetes
// objects, in database servers the cluster admin declares with a policy.
package databaseuser

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/reconciler"
)

// Config configures the DatabaseUser controller.
type Config struct {
	// OperatorNamespace is where this installation runs: it serves the DatabaseTargets whose admin Secret is
	// there.
	OperatorNamespace string
	// DefaultTarget is the DatabaseTarget of DatabaseUsers without a `target` label (default DefaultTarget).
	DefaultTarget string
	// ResyncPeriod is how often a Ready DatabaseUser is checked in its database (default DefaultResyncPeriod,
	// at least 1s): drift is repaired and a changed password Secret rotates the password within this period.
	ResyncPeriod time.Duration
	// StatusRefresh is how stale status.lastCheckedTime may get before a successful check rewrites it
	// (default 1h), so that a converged DatabaseUser costs no API write on most resyncs.
	StatusRefresh time.Duration
	// ConnectTimeout bounds connecting to a database (default 5s).
	ConnectTimeout time.Duration
	// ReconcileTimeout bounds one check of a DatabaseUser, all its statements included (default
	// DefaultReconcileTimeout): a server that answers slowly, or drips bytes, holds a worker no longer.
	ReconcileTimeout time.Duration
	// MigratingTargets are the names the former DATABASE_TARGETS variable still lists: targets the cluster admin
	// is migrating to DatabaseTargets (docs/admin/database-targets.md). While no DatabaseTarget of such a name exists, a
	// deleted DatabaseUser of it is held, not released with its account left on the server.
	MigratingTargets []string
}

// The defaults of Config.
const (
	DefaultTarget           = "default"
	DefaultResyncPeriod     = 10 * time.Minute
	DefaultReconcileTimeout = 30 * time.Second
)

func (c *Config) complete() error {
	if c.DefaultTarget == "" {
		c.DefaultTarget = DefaultTarget
	}
	if c.ResyncPeriod == 0 {
		c.ResyncPeriod = DefaultResyncPeriod
	}
	if c.ResyncPeriod < time.Second {
		return fmt.Errorf("the DatabaseUser resync period must be at least 1s, got %v", c.ResyncPeriod)
	}
	if c.StatusRefresh <= 0 {
		c.StatusRefresh = time.Hour
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 5 * time.Second
	}
	if c.ReconcileTimeout <= 0 {
		c.ReconcileTimeout = DefaultReconcileTimeout
	}
	return nil
}

// targetIndex indexes DatabaseUsers by the DatabaseTarget they use, so that a target's change reaches them.
const targetIndex = "databaseuser.target"

// Setup registers the DatabaseUser and DatabaseTarget controllers with the manager.
func Setup(mgr ctrl.Manager, o reconciler.Options, cfg Config) error {
	if err := cfg.complete(); err != nil {
		return err
	}
	ctx := context.Background()
	if err := mgr.GetFieldIndexer().IndexField(ctx, &mygroupv1alpha1.DatabaseUser{}, targetIndex, func(obj client.Object) []string {
		return []string{targetName(obj.(*mygroupv1alpha1.DatabaseUser), cfg.DefaultTarget)}
	}); err != nil {
		return fmt.Errorf("indexing DatabaseUsers by target: %w", err)
	}
	o.ReconcileTimeout = cfg.ReconcileTimeout
	r := &Reconciler{Base: reconciler.NewBase(mgr, "databaseuser", o, &mygroupv1alpha1.DatabaseUser{}), cfg: cfg}
	r.shares = newShares(r.Workers)
	// Changes of the spec, the target label and deletion change the desired account; annotations let
	// `kubectl annotate dbu NAME rotate=<anything>` check the account at once (after changing its password
	// Secret, say) instead of at the next resync. A DatabaseTarget's creation, deletion or spec change (its
	// policy) is checked at once in every DatabaseUser that uses it.
	if err := reconciler.Complete(ctrl.NewControllerManagedBy(mgr).
		Named("databaseuser").
		For(&mygroupv1alpha1.DatabaseUser{}, builder.WithPredicates(reconciler.ChangedByOthers())).
		Watches(&mygroupv1alpha1.DatabaseTarget{}, handler.EnqueueRequestsFromMapFunc(r.usersOf),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})), r.Options, r); err != nil {
		return err
	}
	t := &TargetReconciler{Base: reconciler.NewBase(mgr, "databasetarget", o, &mygroupv1alpha1.DatabaseTarget{}), cfg: cfg}
	return reconciler.Complete(ctrl.NewControllerManagedBy(mgr).
		Named("databasetarget").
		For(&mygroupv1alpha1.DatabaseTarget{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})), t.Options, t)
}

// usersOf lists the DatabaseUsers that use a target.
func (r *Reconciler) usersOf(ctx context.Context, target client.Object) []reconcile.Request {
	var list mygroupv1alpha1.DatabaseUserList
	if err := r.Client.List(ctx, &list, client.MatchingFields{targetIndex: target.GetName()}); err != nil {
		log.FromContext(ctx).Error(err, "listing the DatabaseUsers of a DatabaseTarget", "target", target.GetName())
		return nil
	}
	reqs := make([]reconcile.Request, len(list.Items))
	for i := range list.Items {
		reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
	}
	return reqs
}
