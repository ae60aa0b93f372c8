/*
Copyright 2026 The operator101 Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package mygroup

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	mygroupv1alpha1 "github.com/operator101/operator101/apis/mygroup/v1alpha1"
	"github.com/operator101/operator101/controllers/internal/kit"
	"github.com/operator101/operator101/controllers/mygroup/sqlx"
)

// How a changed password Secret is noticed. Secrets are read with single GETs through the API reader: the
// operator needs `get` on Secrets and never lists or watches them, so it holds no Secret in memory. Without
// a Secret watch, a change is noticed at the next check of its DatabaseUser: at most ResyncPeriod later
// (10m by default), or at once when the DatabaseUser itself changes (`kubectl annotate dbu NAME rotate=1`).
// Every check reads the Secret and compares its mysql_native_password hash with the account's
// authentication_string in mysql.user. Alternatives, and why not:
//   - a Secret informer (even metadata-only): list/watch on Secrets cluster-wide, which the operator must
//     not have;
//   - remembering a hash of the password (annotation, status, memory): password-derived data outside the
//     database, and a write per rotation; lost on restart when in memory;
//   - logging in as the user to test the password: a connection per check, failed-login noise in the
//     database's logs, and it would trip max_connect_errors or lockout policies.
// The comparison keeps no state, and also reverts a password changed by hand in the database.
//
// namespace=system makes these rules a Role: the CSV's permissions, which OLM grants only in the namespaces
// the operator is installed for (docs/security.md).
// +kubebuilder:rbac:groups=mygroup.handsomeguy.cn,resources=databaseusers,verbs=get;list;watch;patch,namespace=system
// +kubebuilder:rbac:groups=mygroup.handsomeguy.cn,resources=databaseusers/status,verbs=get;patch,namespace=system
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get,namespace=system
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch,namespace=system

// Reconciler makes database accounts match DatabaseUsers. Secrets are read with its options' Reader: direct
// GETs, never cached or watched.
type Reconciler struct {
	kit.Base
	cfg Config
}

// outcome is the result of one check: the Ready condition's reason and message, and how to go on.
type outcome struct {
	reason  string
	message string
	// retry asks for exponential backoff; otherwise a failure waits for a change of the DatabaseUser.
	retry bool
}

func (o outcome) ready() bool { return o.reason == mygroupv1alpha1.ReasonReady }

// Reconcile checks one DatabaseUser against its database.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	dbu := &mygroupv1alpha1.DatabaseUser{}
	if err := r.Client.Get(ctx, req.NamespacedName, dbu); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	target := targetName(dbu, r.cfg.DefaultTarget)
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("user", dbu.Spec.User, "target", target))

	if !dbu.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, dbu, target)
	}
	if !controllerutil.ContainsFinalizer(dbu, mygroupv1alpha1.Finalizer) {
		before := dbu.DeepCopy()
		controllerutil.AddFinalizer(dbu, mygroupv1alpha1.Finalizer)
		// The optimistic lock keeps another party's finalizer, added meanwhile, from being overwritten.
		if err := r.Client.Patch(ctx, dbu, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
	}
	if err := r.leavePreviousTarget(ctx, dbu, target); err != nil {
		return ctrl.Result{}, err
	}
	out := r.sync(ctx, dbu, target)
	if err := r.report(ctx, dbu, target, out); err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case out.ready():
		return ctrl.Result{RequeueAfter: r.cfg.ResyncPeriod}, nil
	case out.retry:
		// The message is redacted; returning it as an error gives exponential backoff.
		return ctrl.Result{}, errors.New(out.reason + ": " + out.message)
	default:
		return ctrl.Result{}, nil
	}
}

// sync makes the account match the spec and says how it went.
func (r *Reconciler) sync(ctx context.Context, dbu *mygroupv1alpha1.DatabaseUser, target string) outcome {
	ref := dbu.Spec.Password
	secret := &corev1.Secret{}
	err := r.Reader.Get(ctx, types.NamespacedName{Namespace: dbu.Namespace, Name: ref.Name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		return outcome{mygroupv1alpha1.ReasonSecretNotFound, fmt.Sprintf("Secret %q not found", ref.Name), true}
	case err != nil:
		return outcome{mygroupv1alpha1.ReasonSecretNotFound, fmt.Sprintf("reading Secret %q: %v", ref.Name, err), true}
	}
	password, ok := secret.Data[ref.Key]
	if !ok {
		return outcome{mygroupv1alpha1.ReasonKeyNotFound, fmt.Sprintf("Secret %q has no key %q", ref.Name, ref.Key), true}
	}
	if len(password) == 0 {
		return outcome{mygroupv1alpha1.ReasonKeyNotFound, fmt.Sprintf("key %q of Secret %q is empty", ref.Key, ref.Name), true}
	}

	db, out, admin := r.connect(ctx, target)
	if db == nil {
		return out
	}
	defer func() { _ = db.Close() }()
	account := desiredAccount(dbu, string(password))
	n, err := db.Ensure(ctx, account)
	if err != nil {
		return failure(err, "", string(password), sqlx.NativePasswordHash(string(password)), admin)
	}
	if n > 0 {
		log.FromContext(ctx).Info("account changed to match the spec", "statements", n)
	}
	return outcome{mygroupv1alpha1.ReasonReady, fmt.Sprintf("account %s@%s matches the spec", account.User, account.Host), false}
}

// connect opens the target's database as its admin account.
func (r *Reconciler) connect(ctx context.Context, target string) (*sqlx.Client, outcome, string) {
	secretName, ok := r.cfg.Targets[target]
	if !ok {
		known := make([]string, 0, len(r.cfg.Targets))
		for k := range r.cfg.Targets {
			known = append(known, k)
		}
		sort.Strings(known)
		return nil, outcome{mygroupv1alpha1.ReasonUnknownTarget,
			fmt.Sprintf("target %q is not configured in the operator (configured: %v)", target, known), false}, ""
	}
	s := &corev1.Secret{}
	if err := r.Reader.Get(ctx, types.NamespacedName{Namespace: r.cfg.OperatorNamespace, Name: secretName}, s); err != nil {
		return nil, outcome{mygroupv1alpha1.ReasonTargetSecretInvalid,
			fmt.Sprintf("reading the Secret of target %q: %v", target, err), true}, ""
	}
	t, err := targetFromSecret(s)
	if err != nil {
		return nil, outcome{mygroupv1alpha1.ReasonTargetSecretInvalid, err.Error(), true}, t.Password
	}
	db, err := sqlx.Open(ctx, t, r.cfg.ConnectTimeout)
	if err != nil {
		return nil, failure(err, fmt.Sprintf("target %q: ", target), t.Password), t.Password
	}
	return db, outcome{}, t.Password
}

// failure turns a SQL error into an outcome, with every secret redacted from its message.
func failure(err error, prefix string, secrets ...string) outcome {
	msg := prefix + redact(err.Error(), secrets...)
	switch sqlx.KindOf(err) {
	case sqlx.KindUnreachable:
		return outcome{mygroupv1alpha1.ReasonDatabaseUnreachable, msg, true}
	case sqlx.KindAccessDenied:
		return outcome{mygroupv1alpha1.ReasonAccessDenied, msg, true}
	case sqlx.KindInvalidAccount:
		return outcome{mygroupv1alpha1.ReasonInvalidUser, msg, false}
	case sqlx.KindInvalidGrant:
		return outcome{mygroupv1alpha1.ReasonInvalidGrant, msg, false}
	default:
		return outcome{mygroupv1alpha1.ReasonDatabaseError, msg, true}
	}
}

// leavePreviousTarget drops the account from the target it lived in before the `target` label changed
// (status.target remembers it), unless cleanupPolicy is Skip or both names lead to the same Secret. Until
// that works, status.target keeps the previous target, so that the move is retried with backoff.
func (r *Reconciler) leavePreviousTarget(ctx context.Context, dbu *mygroupv1alpha1.DatabaseUser, target string) error {
	prev := dbu.Status.Target
	if prev == "" || prev == target || dbu.Spec.CleanupPolicy == mygroupv1alpha1.CleanupSkip {
		return nil
	}
	prevSecret, known := r.cfg.Targets[prev]
	if !known || prevSecret == r.cfg.Targets[target] {
		return nil
	}
	db, out, admin := r.connect(ctx, prev)
	if db != nil {
		var dropped bool
		var err error
		dropped, err = db.Drop(ctx, dbu.Spec.User, accountHost(dbu))
		_ = db.Close()
		if err == nil {
			if dropped {
				log.FromContext(ctx).Info("account dropped from the previous target", "previousTarget", prev)
				r.Recorder.Eventf(dbu, nil, corev1.EventTypeNormal, "AccountMoved", "Reconcile",
					"account %s@%s dropped from previous target %q", dbu.Spec.User, accountHost(dbu), prev)
			}
			return nil
		}
		out = failure(err, "", admin)
	}
	out.message = fmt.Sprintf("cannot drop the account from previous target %q yet: %s", prev, out.message)
	if err := r.report(ctx, dbu, prev, out); err != nil {
		return err
	}
	return errors.New(out.reason + ": " + out.message)
}

// finalize drops the account (unless cleanupPolicy is Skip) and then lets the DatabaseUser go.
func (r *Reconciler) finalize(ctx context.Context, dbu *mygroupv1alpha1.DatabaseUser, target string) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(dbu, mygroupv1alpha1.Finalizer) {
		return ctrl.Result{}, nil
	}
	switch dbu.Spec.CleanupPolicy {
	case mygroupv1alpha1.CleanupSkip:
		r.Recorder.Eventf(dbu, nil, corev1.EventTypeNormal, "AccountKept", "Delete",
			"cleanupPolicy is Skip: account %s@%s stays in target %q", dbu.Spec.User, accountHost(dbu), target)
	default:
		if _, known := r.cfg.Targets[target]; !known {
			// Nothing this operator can reach: holding the object forever would block its namespace.
			r.Recorder.Eventf(dbu, nil, corev1.EventTypeWarning, "AccountNotDropped", "Delete",
				"target %q is not configured in the operator; the account was not dropped", target)
			break
		}
		db, out, admin := r.connect(ctx, target)
		if db == nil {
			return r.retryFinalize(ctx, dbu, target, out)
		}
		dropped, err := db.Drop(ctx, dbu.Spec.User, accountHost(dbu))
		_ = db.Close()
		if err != nil && sqlx.KindOf(err) != sqlx.KindInvalidAccount {
			return r.retryFinalize(ctx, dbu, target, failure(err, "", admin))
		}
		// An account name the database cannot store cannot exist either: nothing to drop.
		if dropped {
			log.FromContext(ctx).Info("account dropped")
			r.Recorder.Eventf(dbu, nil, corev1.EventTypeNormal, "AccountDropped", "Delete",
				"account %s@%s dropped from target %q", dbu.Spec.User, accountHost(dbu), target)
		}
	}
	before := dbu.DeepCopy()
	controllerutil.RemoveFinalizer(dbu, mygroupv1alpha1.Finalizer)
	if err := r.Client.Patch(ctx, dbu, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("removing finalizer: %w", err))
	}
	return ctrl.Result{}, nil
}

// retryFinalize keeps the finalizer, says why in the Ready condition, and retries with backoff.
func (r *Reconciler) retryFinalize(ctx context.Context, dbu *mygroupv1alpha1.DatabaseUser, target string, out outcome) (ctrl.Result, error) {
	out.message = "cannot drop the account yet: " + out.message
	if err := r.report(ctx, dbu, target, out); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, errors.New(out.reason + ": " + out.message)
}

// report writes the status when it changed, with an Event when the Ready reason changed.
func (r *Reconciler) report(ctx context.Context, dbu *mygroupv1alpha1.DatabaseUser, target string, out outcome) error {
	now := metav1.NewTime(r.Clock.Now())
	before := dbu.DeepCopy()
	dbu.Status = computeStatus(dbu.Status, dbu.Generation, target, out, now, r.cfg.StatusRefresh)
	return kit.Report(ctx, r.Client, r.Recorder, before, dbu, readyEvents(before.Status, out)...)
}

// readyEvents is the Event a check deserves: one when the Ready reason changes.
func readyEvents(old mygroupv1alpha1.DatabaseUserStatus, out outcome) []kit.Event {
	if prev := meta.FindStatusCondition(old.Conditions, mygroupv1alpha1.ConditionReady); prev != nil && prev.Reason == out.reason {
		return nil
	}
	kind := corev1.EventTypeWarning
	if out.ready() {
		kind = corev1.EventTypeNormal
	}
	return []kit.Event{{Type: kind, Reason: out.reason, Action: "Reconcile", Note: out.message}}
}

// computeStatus is the status one check leads to. lastCheckedTime moves only on success, and only when it
// is older than refresh: a converged DatabaseUser's status does not change on every resync.
func computeStatus(old mygroupv1alpha1.DatabaseUserStatus, generation int64, target string, out outcome,
	now metav1.Time, refresh time.Duration) mygroupv1alpha1.DatabaseUserStatus {
	s := *old.DeepCopy()
	cond := metav1.Condition{Type: mygroupv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
		Reason: out.reason, Message: out.message, ObservedGeneration: generation, LastTransitionTime: now}
	if out.ready() {
		cond.Status = metav1.ConditionTrue
		if s.LastCheckedTime == nil || now.Sub(s.LastCheckedTime.Time) >= refresh {
			s.LastCheckedTime = &now
		}
	}
	meta.SetStatusCondition(&s.Conditions, cond)
	s.ObservedGeneration = generation
	s.Target = target
	return s
}
