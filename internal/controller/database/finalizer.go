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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/mysqlaccount"
)

// finalize lets a deleted Database go. cleanupPolicy Skip (the default) keeps the database and removes its
// claim when the server answers (never holding the deletion). Delete drops the database, with its data, only
// when the server records it as this Database's; until the server answers, the deletion is held. A target
// that does not exist, or that another installation serves, lets the Database go with its database left.
func (r *Reconciler) finalize(ctx context.Context, d *mygroupv1alpha1.Database, name string) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(d, mygroupv1alpha1.DatabaseFinalizer) {
		return ctrl.Result{}, nil
	}
	t, out := r.readTarget(ctx, name)

	if d.Spec.CleanupPolicy != mygroupv1alpha1.CleanupDelete {
		how := ""
		if out == nil {
			how = ", no longer recorded as operator101's"
			if failed := r.onServer(ctx, t, func(db *mysqlaccount.Client) error {
				_, err := db.ReleaseDatabase(ctx, d.Spec.Name, claimant(d))
				return err
			}); failed != nil {
				how = "; its claim was not removed (" + failed.reason + ")"
			}
		}
		r.Recorder.Eventf(d, nil, corev1.EventTypeNormal, "DatabaseKept", "Delete",
			"cleanupPolicy is Skip: database %q stays in target %q%s", d.Spec.Name, name, how)
		return r.release(ctx, d)
	}

	switch {
	case out != nil && out.retry:
		return r.retryFinalize(ctx, d, name, *out)
	case out != nil:
		r.Recorder.Eventf(d, nil, corev1.EventTypeWarning, "DatabaseNotDropped", "Delete",
			"database %q was not dropped: %s", d.Spec.Name, out.message)
		return r.release(ctx, d)
	}
	if failed := r.onServer(ctx, t, func(db *mysqlaccount.Client) error {
		res, err := db.DropDatabase(ctx, d.Spec.Name, claimant(d))
		switch {
		case err != nil:
			return err
		case res.NotClaimed:
			r.Recorder.Eventf(d, nil, corev1.EventTypeWarning, "DatabaseNotDropped", "Delete",
				"database %q in target %q is not this Database's to manage: nothing was dropped", d.Spec.Name, name)
		default:
			log.FromContext(ctx).Info("database dropped", "existed", res.Dropped)
			r.Recorder.Eventf(d, nil, corev1.EventTypeNormal, "DatabaseDropped", "Delete",
				"database %q dropped from target %q", d.Spec.Name, name)
		}
		return nil
	}); failed != nil {
		return r.retryFinalize(ctx, d, name, *failed)
	}
	return r.release(ctx, d)
}

// release removes the finalizer: the Database goes.
func (r *Reconciler) release(ctx context.Context, d *mygroupv1alpha1.Database) (ctrl.Result, error) {
	if _, err := r.patchFinalizer(ctx, key(d), controllerutil.RemoveFinalizer); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("removing finalizer: %w", err))
	}
	return ctrl.Result{}, nil
}

// patchFinalizer adds or removes the finalizer on the Database as the API server holds it (read past the
// cache, which trims other controllers' finalizers), with optimistic locking.
func (r *Reconciler) patchFinalizer(ctx context.Context, k types.NamespacedName,
	change func(client.Object, string) bool) (*mygroupv1alpha1.Database, error) {
	whole := &mygroupv1alpha1.Database{}
	if err := r.Reader.Get(ctx, k, whole); err != nil {
		return nil, err
	}
	before := whole.DeepCopy()
	if !change(whole, mygroupv1alpha1.DatabaseFinalizer) {
		return whole, nil
	}
	return whole, r.Client.Patch(ctx, whole, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// retryFinalize says in the status why the deletion is held, and retries with backoff.
func (r *Reconciler) retryFinalize(ctx context.Context, d *mygroupv1alpha1.Database, target string, out outcome) (ctrl.Result, error) {
	out = out.within("deletion is held until the database is dropped: ",
		". To delete the Database and keep the database, set spec.cleanupPolicy to Skip")
	if err := r.report(ctx, d, target, out); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, errors.New(out.reason + ": " + out.logged())
}
