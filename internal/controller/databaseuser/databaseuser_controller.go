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
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/reconciler"
)

// How a changed password Secret is noticed. Secrets are read with single GETs through the API reader: the
// operator needs `get` on Secrets (and create and patch for those it writes for a DatabaseUser: password.go,
// connection.go) and never lists or watches them, so it holds no Secret in memory. Without
// a Secret watch, a change is noticed at the next check of its DatabaseUser: at most ResyncPeriod later
// (10m by default), or at once when the DatabaseUser itself changes (`kubectl annotate dbu NAME rotate=1`).
// Every check reads the Secret and compares it with what the server holds: on MariaDB, the password's
// mysql_native_password hash with the account's authentication_string (which also reverts a password changed
// by hand); on MySQL, whose caching_sha2_password strings are salted, a digest of the password and the
// string the server stored, both kept in the claims in the server (package mysqlaccount). Alternatives,
// and why not:
//   - a Secret informer (even metadata-only): list/watch on Secrets cluster-wide, which the operator must
//     not have;
//   - remembering a hash of the password in Kubernetes (annotation, status) or in memory: password-derived
//     data outside the database, a write per rotation, or lost on restart;
//   - logging in as the user to test the password: a connection per check, failed-login noise in the
//     database's logs, and it would trip max_connect_errors or lockout policies.
//
// namespace=system makes these rules a Role: the CSV's permissions, which OLM grants only in the namespaces
// the operator is installed for (docs/admin/security.md).
// +kubebuilder:rbac:groups=mygroup.handsomeguy.cn,resources=databaseusers,verbs=get;list;watch;patch,namespace=system
// +kubebuilder:rbac:groups=mygroup.handsomeguy.cn,resources=databaseusers/status,verbs=get;patch,namespace=system
// Secrets: get, to read password Secrets and admin Secrets; create and patch (server-side apply), to write the
// Secrets the operator makes for a DatabaseUser, only by the names its spec gives (`<name>-password` when
// spec.password is unset, spec.connectionSecret.name), and never over one the DatabaseUser does not control
// (apply.Child, ChildNotOwned). No list or watch: no Secret is held in memory.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;patch,namespace=system
// finalizers (update): those Secrets' owner reference sets blockOwnerDeletion, which the
// OwnerReferencesPermissionEnforcement admission plugin (on by default in OpenShift) admits only from a user
// who may update the owner's finalizers subresource.
// +kubebuilder:rbac:groups=mygroup.handsomeguy.cn,resources=databaseusers/finalizers,verbs=update,namespace=system
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch,namespace=system
// The DatabaseTarget rules are in databasetarget_controller.go.

// Reconciler makes database accounts match DatabaseUsers, within what their DatabaseTarget allows, and only
// accounts operator101 created for them (the claims in the server, see package mysqlaccount). Secrets are
// read with its options' Reader: direct GETs, never cached or watched.
//
// One reconcile is a few steps, each in a file of its own, and each reaches a database server through
// onServer (target.go), which reads a DatabaseTarget at most once per reconcile:
//   - finalize (finalizer.go): a deleted DatabaseUser's account is dropped, or kept and disowned;
//   - leavePreviousTarget (move.go): a DatabaseUser whose `target` label changed leaves its former target;
//   - syncAccount (account_sync.go): the account is made to match the spec, with the password of its Secret.
type Reconciler struct {
	reconciler.Base
	cfg    Config
	shares *shares
}

// Reconcile checks one DatabaseUser against its database.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// Fetch the DatabaseUser from the cache; one that is gone needs nothing: its finalizer ran.
	dbu := &mygroupv1alpha1.DatabaseUser{}
	if err := r.Client.Get(ctx, req.NamespacedName, dbu); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	target := targetName(dbu, r.cfg.DefaultTarget)
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("user", dbu.Spec.User, "target", target))

	// Wait for a share of the workers: a slow server or a busy namespace holds no more than its half
	// (fairness.go).
	release, ok := r.shares.take(req.String(), target, dbu.Namespace)
	if !ok {
		return ctrl.Result{RequeueAfter: retryAfter()}, nil
	}
	defer release()

	// Every step below reads the DatabaseTargets it needs through targets: each at most once.
	targets := r.targetReads()

	// Being deleted: drop the account, or keep it, and let the DatabaseUser go.
	if !dbu.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, targets, dbu, target)
	}

	// The finalizer comes first, so that no account exists that a deletion would not drop.
	if !controllerutil.ContainsFinalizer(dbu, mygroupv1alpha1.Finalizer) {
		whole, err := r.patchFinalizer(ctx, req.NamespacedName, controllerutil.AddFinalizer)
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
		dbu = whole
	}

	// Moved to another target: the account leaves the former one first.
	if err := r.leavePreviousTarget(ctx, targets, dbu, target); err != nil {
		return ctrl.Result{}, err
	}

	// Make the account match the spec, and say how it went in the status.
	began := r.Clock.Now()
	out := r.syncAccount(ctx, targets, dbu, target)
	r.Metrics.DatabaseUserChecked(metricTarget(target, out), out.reason, r.Clock.Since(began))
	if err := r.report(ctx, dbu, target, out); err != nil {
		return ctrl.Result{}, err
	}

	// Come back at the next resync when Ready, with backoff when the cause may pass, or when something changes.
	switch {
	case out.ready():
		return ctrl.Result{RequeueAfter: r.cfg.ResyncPeriod}, nil
	case out.retry:
		// The message is redacted; returning it as an error gives exponential backoff, and the full cause
		// in the operator's log.
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

// metricTarget is the target label of a check on target that led to out: empty when no DatabaseTarget has that
// name, so that a name a tenant made up is in no label.
func metricTarget(target string, out outcome) string {
	if out.reason == mygroupv1alpha1.ReasonUnknownTarget {
		return ""
	}
	return target
}
