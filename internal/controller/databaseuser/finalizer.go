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
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/mysqlaccount"
)

// The finalizer: a deleted DatabaseUser's account is dropped (or, with cleanupPolicy Skip, kept and disowned)
// before the DatabaseUser goes.

// finalize drops the account (unless cleanupPolicy is Skip) and then lets the DatabaseUser go. A target that
// is gone, or served by another installation, releases the DatabaseUser without dropping anything: holding it
// would block its namespace's deletion forever.
func (r *Reconciler) finalize(ctx context.Context, targets *targetReads, dbu *mygroupv1alpha1.DatabaseUser, name string) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(dbu, mygroupv1alpha1.Finalizer) {
		return ctrl.Result{}, nil
	}
	acct := dbu.Spec.User + "@" + accountHost(dbu)

	// cleanupPolicy Skip: the account stays, no longer recorded as this DatabaseUser's when the server answers.
	if dbu.Spec.CleanupPolicy == mygroupv1alpha1.CleanupSkip {
		r.Recorder.Eventf(dbu, nil, corev1.EventTypeNormal, "AccountKept", "Delete",
			"cleanupPolicy is Skip: account %s stays in target %q%s", acct, name, r.disown(ctx, targets, dbu, name))
		return r.release(ctx, dbu)
	}

	// A target that cannot be read now holds the DatabaseUser; one that is not there, or not this
	// installation's, lets it go.
	target, out := targets.get(ctx, name)
	switch {
	case out != nil && out.retry:
		return r.retryFinalize(ctx, dbu, name, *out)
	case out != nil && out.reason == mygroupv1alpha1.ReasonUnknownTarget && slices.Contains(r.cfg.MigratingTargets, name):
		// The target is being migrated from DATABASE_TARGETS: its account is on a server the admin is about to
		// declare. Creating the DatabaseTarget (a watched kind) lets the deletion go on.
		out.message = fmt.Sprintf("DatabaseTarget %q does not exist yet, and the operator's DATABASE_TARGETS still "+
			"names it: the cluster admin is migrating it (docs/admin/database-targets.md)", name)
		return r.retryFinalize(ctx, dbu, name, *out)
	case out != nil:
		r.Recorder.Eventf(dbu, nil, corev1.EventTypeWarning, "AccountNotDropped", "Delete",
			"account %s was not dropped: %s", acct, out.message)
		return r.release(ctx, dbu)
	}

	// Drop the account on the target's server; until that works, the deletion is held.
	if out := r.onServer(ctx, targets, name, func(db *mysqlaccount.Client) error {
		res, err := db.DropAccount(ctx, accountToDrop(dbu, target))
		switch k := mysqlaccount.KindOf(err); {
		case err == nil:
			r.droppedEvent(ctx, dbu, name, res, "AccountDropped", "dropped from target")
		case k == mysqlaccount.KindInvalidAccount:
			// A name the server cannot store cannot exist either: nothing to drop.
		case k == mysqlaccount.KindReserved:
			r.Recorder.Eventf(dbu, nil, corev1.EventTypeWarning, "AccountNotDropped", "Delete",
				"account %s is reserved: never dropped by operator101", acct)
		default:
			return err
		}
		return nil
	}); out != nil {
		return r.retryFinalize(ctx, dbu, name, *out)
	}
	return r.release(ctx, dbu)
}

// accountToDrop is what a deleted DatabaseUser may drop: the account it claimed, whatever the target's policy
// says now (the admin may have narrowed it since), and, on an Adopt target, an account without a claim that
// it would have adopted alive (made by an earlier operator101, whose accounts have no claim, and deleted
// before adopting). A DatabaseUser the policy refuses could adopt nothing alive, so it adopts nothing on its
// way out either: a hand-made account of its name stays, and the Event reads as for any account not its own.
func accountToDrop(dbu *mygroupv1alpha1.DatabaseUser, target *mygroupv1alpha1.DatabaseTarget) mysqlaccount.Account {
	allowed, refused := checkPolicy(target, dbu)
	if refused != nil {
		allowed = allowance{}
	}
	return desiredClaimedAccount(dbu, allowed, "")
}

// disown removes the claims of a kept account, so that the target's existingAccounts: Adopt can
// give it to another DatabaseUser. Best effort: Skip is also the way out when the server cannot be reached, so
// nothing here may hold the DatabaseUser. It returns what to add to the Event.
func (r *Reconciler) disown(ctx context.Context, targets *targetReads, dbu *mygroupv1alpha1.DatabaseUser, name string) string {
	if _, out := targets.get(ctx, name); out != nil {
		return ""
	}
	if out := r.onServer(ctx, targets, name, func(db *mysqlaccount.Client) error {
		_, err := db.Release(ctx, dbu.Spec.User, accountHost(dbu), claimant(dbu))
		return err
	}); out != nil {
		return "; its claims was not removed (" + out.reason + ")"
	}
	return ", no longer recorded as operator101's"
}

// release removes the finalizer.
func (r *Reconciler) release(ctx context.Context, dbu *mygroupv1alpha1.DatabaseUser) (ctrl.Result, error) {
	if _, err := r.patchFinalizer(ctx, client.ObjectKeyFromObject(dbu), controllerutil.RemoveFinalizer); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("removing finalizer: %w", err))
	}
	return ctrl.Result{}, nil
}

// patchFinalizer adds or removes (change) operator101's finalizer on the DatabaseUser as the API server holds
// it, read past the cache: the cache's copy keeps only this finalizer (ForCache), and a merge patch replaces
// the list whole. The resourceVersion keeps another party's finalizer, added meanwhile, from being overwritten.
// It returns the object as the server has it then.
func (r *Reconciler) patchFinalizer(ctx context.Context, key types.NamespacedName,
	change func(client.Object, string) bool) (*mygroupv1alpha1.DatabaseUser, error) {
	whole := &mygroupv1alpha1.DatabaseUser{}
	if err := r.Reader.Get(ctx, key, whole); err != nil {
		return nil, err
	}
	before := whole.DeepCopy()
	if !change(whole, mygroupv1alpha1.Finalizer) {
		return whole, nil
	}
	return whole, r.Client.Patch(ctx, whole, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// retryFinalize keeps the finalizer, says why in the Ready condition, and retries with backoff.
func (r *Reconciler) retryFinalize(ctx context.Context, dbu *mygroupv1alpha1.DatabaseUser, target string, out outcome) (ctrl.Result, error) {
	out = out.within("deletion is held until the account is dropped: ",
		". To delete the DatabaseUser and keep the account, set spec.cleanupPolicy to Skip (docs/admin/database-targets.md)")
	if err := r.report(ctx, dbu, target, out); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, errors.New(out.reason + ": " + out.logged())
}
