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

package database

import (
	"context"
	"errors"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/reconciler"
)

// namespace=system makes these rules a Role: the CSV's permissions, which OLM grants only in the namespaces
// the operator is installed for (docs/admin/security.md). No finalizers subresource: a Database has no child
// with an owner reference (it writes no Kubernetes object but its own status and finalizer).
// +kubebuilder:rbac:groups=mygroup.handsomeguy.cn,resources=databases,verbs=get;list;watch;patch,namespace=system
// +kubebuilder:rbac:groups=mygroup.handsomeguy.cn,resources=databases/status,verbs=get;patch,namespace=system
// The DatabaseTarget rules and the admin Secrets' are DatabaseUser's (package databaseuser); Events' too.

// Reconciler makes databases match Databases, within what their DatabaseTarget allows, and only databases
// operator101 created for them (the claims in the server, see mysqlaccount's database.go). One reconcile is
// a few steps, each in a file of its own:
//   - finalize (finalizer.go): a deleted Database's database is dropped (cleanupPolicy Delete) or kept and
//     disowned (Skip, the default);
//   - leavePreviousTarget (move.go): a Database whose `target` label changed leaves its former target, its
//     database kept there and disowned;
//   - syncDatabase (sync.go): the database is created, or its character set and collation altered.
type Reconciler struct {
	reconciler.Base
	cfg Config
}

// Reconcile checks one Database against its server.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// Fetch the Database from the cache; one that is gone needs nothing: its finalizer ran.
	d := &mygroupv1alpha1.Database{}
	if err := r.Client.Get(ctx, req.NamespacedName, d); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	target := targetOf(d, r.cfg.DefaultTarget)
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("database", d.Spec.Name, "target", target))

	// Being deleted: drop the database, or keep it, and let the Database go.
	if !d.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, d, target)
	}

	// The finalizer comes first, so that no database exists that a deletion would not see.
	if !controllerutil.ContainsFinalizer(d, mygroupv1alpha1.DatabaseFinalizer) {
		whole, err := r.patchFinalizer(ctx, req.NamespacedName, controllerutil.AddFinalizer)
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
		d = whole
	}

	// Moved to another target: the former target's database is disowned first.
	if err := r.leavePreviousTarget(ctx, d, target); err != nil {
		return ctrl.Result{}, err
	}

	// Make the database match the spec, and say how it went in the status.
	out := r.syncDatabase(ctx, d, target)
	if err := r.report(ctx, d, target, out); err != nil {
		return ctrl.Result{}, err
	}

	switch {
	case out.ready():
		return ctrl.Result{RequeueAfter: r.cfg.ResyncPeriod}, nil
	case out.retry:
		return ctrl.Result{}, errors.New(out.reason + ": " + out.logged())
	}
	if out.detail != "" {
		log.FromContext(ctx).Info("not ready", "reason", out.reason, "cause", out.detail)
	}
	if out.recheck {
		return ctrl.Result{RequeueAfter: r.cfg.ResyncPeriod}, nil
	}
	return ctrl.Result{}, nil
}
