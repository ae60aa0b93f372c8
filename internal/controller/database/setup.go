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

// Package database holds the Database controller: MySQL/MariaDB databases of a tenant's own, in the
// DatabaseTarget a DatabaseUser would use, within the target's `databases` policy, and claimed like accounts.
package database

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/cachetrim"
	"github.com/operator101/operator101/internal/controller/databaseuser"
	"github.com/operator101/operator101/internal/controller/reconciler"
)

// Config configures the Database controller.
type Config struct {
	// OperatorNamespace is where this installation runs: it serves the DatabaseTargets whose admin Secret is
	// there (as for DatabaseUsers).
	OperatorNamespace string
	// DefaultTarget is the DatabaseTarget of Databases without a `target` label (default
	// databaseuser.DefaultTarget, the DatabaseUsers' own).
	DefaultTarget string
	// ResyncPeriod is how often a Ready Database is checked in its server (default
	// databaseuser.DefaultResyncPeriod, at least 1s): a character set changed by hand is set back, a database
	// dropped by hand made again.
	ResyncPeriod time.Duration
	// ConnectTimeout bounds connecting to a database server (default 5s).
	ConnectTimeout time.Duration
	// ReconcileTimeout bounds one check of a Database (default databaseuser.DefaultReconcileTimeout).
	ReconcileTimeout time.Duration
}

func (c *Config) complete() error {
	if c.DefaultTarget == "" {
		c.DefaultTarget = databaseuser.DefaultTarget
	}
	if c.ResyncPeriod == 0 {
		c.ResyncPeriod = databaseuser.DefaultResyncPeriod
	}
	if c.ResyncPeriod < time.Second {
		return fmt.Errorf("the Database resync period must be at least 1s, got %v", c.ResyncPeriod)
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 5 * time.Second
	}
	if c.ReconcileTimeout <= 0 {
		c.ReconcileTimeout = databaseuser.DefaultReconcileTimeout
	}
	return nil
}

// targetIndex indexes Databases by the DatabaseTarget they use, so that a target's change reaches them.
const targetIndex = "database.target"

// Setup registers the Database controller with the manager.
func Setup(mgr ctrl.Manager, o reconciler.Options, cfg Config) error {
	if err := cfg.complete(); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &mygroupv1alpha1.Database{}, targetIndex,
		func(obj client.Object) []string { return []string{databaseuser.TargetOf(obj, cfg.DefaultTarget)} }); err != nil {
		return fmt.Errorf("indexing Databases by target: %w", err)
	}
	o.ReconcileTimeout = cfg.ReconcileTimeout
	r := &Reconciler{Base: reconciler.NewBase(mgr, "database", o, &mygroupv1alpha1.Database{}), cfg: cfg}
	// The spec, the target label and deletion change the desired database; a DatabaseTarget's creation,
	// deletion or spec change (its policy) is checked at once in every Database that uses it.
	return reconciler.Complete(ctrl.NewControllerManagedBy(mgr).
		Named("database").
		For(&mygroupv1alpha1.Database{}, builder.WithPredicates(reconciler.ChangedByOthers())).
		Watches(&mygroupv1alpha1.DatabaseTarget{}, handler.EnqueueRequestsFromMapFunc(r.databasesOf),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})), r.Options, r)
}

// databasesOf lists the Databases that use a target.
func (r *Reconciler) databasesOf(ctx context.Context, target client.Object) []reconcile.Request {
	var list mygroupv1alpha1.DatabaseList
	if err := r.Client.List(ctx, &list, client.MatchingFields{targetIndex: target.GetName()}); err != nil {
		log.FromContext(ctx).Error(err, "listing the Databases of a DatabaseTarget", "target", target.GetName())
		return nil
	}
	reqs := make([]reconcile.Request, len(list.Items))
	for i := range list.Items {
		reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
	}
	return reqs
}

// ForCache is the cache's shape of Databases: the metadata a reconcile reads (the target label, this
// controller's finalizer), the rest of the metadata trimmed.
func ForCache() ctrlcache.ByObject {
	trim := cachetrim.Metadata(mygroupv1alpha1.TargetLabel)
	return ctrlcache.ByObject{Transform: func(obj any) (any, error) {
		if d, ok := obj.(*mygroupv1alpha1.Database); ok && len(d.Finalizers) > 0 {
			if controllerutil.ContainsFinalizer(d, mygroupv1alpha1.DatabaseFinalizer) {
				d.Finalizers = []string{mygroupv1alpha1.DatabaseFinalizer}
			} else {
				d.Finalizers = nil
			}
		}
		return trim(obj)
	}}
}
