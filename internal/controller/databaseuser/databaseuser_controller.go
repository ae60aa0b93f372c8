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

package databaseuser

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/go-sql-driver/mysql"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/internal/controller/report"
	"github.com/operator101/operator101/internal/mysqlaccount"
)

// How a changed password Secret is noticed. Secrets are read with single GETs through the API reader: the
// operator needs `get` on Secrets and never lists or watches them, so it holds no Secret in memory. Without
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
// the operator is installed for (docs/security.md).
// +kubebuilder:rbac:groups=mygroup.handsomeguy.cn,resources=databaseusers,verbs=get;list;watch;patch,namespace=system
// +kubebuilder:rbac:groups=mygroup.handsomeguy.cn,resources=databaseusers/status,verbs=get;patch,namespace=system
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get,namespace=system
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch,namespace=system
// The DatabaseTarget rules are in databasetarget_controller.go.

// Reconciler makes database accounts match DatabaseUsers, within what their DatabaseTarget allows, and only
// accounts operator101 created for them (the claims in the server, see package mysqlaccount). Secrets are
// read with its options' Reader: direct GETs, never cached or watched.
type Reconciler struct {
	reconciler.Base
	cfg    Config
	shares *shares
}

// outcome is the result of one check: the Ready condition's reason and message, and how to go on.
type outcome struct {
	reason string
	// message is what the DatabaseUser's condition and Events say: only what concerns its own account.
	message string
	// detail, when set, is the full cause for the operator's log and the DatabaseTarget's status (both the
	// cluster admin's): the server's address, the admin account, the server's own error text.
	detail string
	// retry asks for exponential backoff; otherwise a failure waits for a change of the DatabaseUser or its
	// DatabaseTarget, or, with recheck, for the next resync (the cause is in the database server).
	retry, recheck bool
}

func (o outcome) ready() bool { return o.reason == mygroupv1alpha1.ReasonReady }

// logged is what the operator's log says of the outcome: the full cause.
func (o outcome) logged() string {
	if o.detail != "" {
		return o.detail
	}
	return o.message
}

// within puts the outcome's message, and its detail, between before and after.
func (o outcome) within(before, after string) outcome {
	o.message = before + o.message + after
	if o.detail != "" {
		o.detail = before + o.detail + after
	}
	return o
}

// Reconcile checks one DatabaseUser against its database.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	dbu := &mygroupv1alpha1.DatabaseUser{}
	if err := r.Client.Get(ctx, req.NamespacedName, dbu); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	target := targetName(dbu, r.cfg.DefaultTarget)
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("user", dbu.Spec.User, "target", target))
	release, ok := r.shares.take(req.String(), target, dbu.Namespace)
	if !ok {
		return ctrl.Result{RequeueAfter: retryAfter()}, nil
	}
	defer release()

	if !dbu.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, dbu, target)
	}
	if !controllerutil.ContainsFinalizer(dbu, mygroupv1alpha1.Finalizer) {
		whole, err := r.patchFinalizer(ctx, req.NamespacedName, controllerutil.AddFinalizer)
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
		dbu = whole
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

// sync makes the account match the spec, if the target's policy allows it, and says how it went.
func (r *Reconciler) sync(ctx context.Context, dbu *mygroupv1alpha1.DatabaseUser, name string) outcome {
	target, out := getTarget(ctx, r.Client, r.cfg.OperatorNamespace, name)
	if out != nil {
		return *out
	}
	if refused := checkPolicy(target, dbu); refused != nil {
		return outcome{reason: refused.reason, message: refused.message}
	}
	ref := dbu.Spec.Password
	secret := &corev1.Secret{}
	err := r.Reader.Get(ctx, types.NamespacedName{Namespace: dbu.Namespace, Name: ref.Name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		return outcome{reason: mygroupv1alpha1.ReasonSecretNotFound, message: fmt.Sprintf("Secret %q not found", ref.Name), retry: true}
	case err != nil:
		return outcome{reason: mygroupv1alpha1.ReasonSecretNotFound, message: fmt.Sprintf("reading Secret %q: %v", ref.Name, err), retry: true}
	}
	password, ok := secret.Data[ref.Key]
	if !ok {
		return outcome{reason: mygroupv1alpha1.ReasonKeyNotFound, message: fmt.Sprintf("Secret %q has no key %q", ref.Name, ref.Key), retry: true}
	}
	if len(password) == 0 {
		return outcome{reason: mygroupv1alpha1.ReasonKeyNotFound, message: fmt.Sprintf("key %q of Secret %q is empty", ref.Key, ref.Name), retry: true}
	}

	db, failed, admin := connect(ctx, r.Reader, &r.cfg, target)
	if db == nil {
		return failed
	}
	defer func() { _ = db.Close() }()
	account := desiredClaimedAccount(dbu, target, string(password))
	n, err := db.Ensure(ctx, account)
	if err != nil {
		prefix := ""
		if mysqlaccount.KindOf(err) == mysqlaccount.KindPasswordTooLong {
			prefix = fmt.Sprintf("Secret %q, key %q: ", ref.Name, ref.Key)
		}
		return failure(err, prefix, string(password), admin)
	}
	if n > 0 {
		log.FromContext(ctx).Info("account changed to match the spec", "statements", n, "server", db.Server().String())
	}
	return outcome{reason: mygroupv1alpha1.ReasonReady, message: fmt.Sprintf("account %s@%s matches the spec in %s",
		account.User, account.Host, db.Server())}
}

// failure turns a SQL error into an outcome, with every secret redacted from its message and detail.
// mysqlaccount puts no password, hash or digest into its errors; the redaction is a second guard. The message,
// for the DatabaseUser's status and Events, is tenantMessage's; the detail, the whole error, goes to the
// operator's log and the DatabaseTarget's status.
func failure(err error, prefix string, secrets ...string) outcome {
	msg := prefix + redact(tenantMessage(err), secrets...)
	out := outcome{message: msg, detail: prefix + redact(mysqlaccount.Detail(err), secrets...)}
	switch mysqlaccount.KindOf(err) {
	case mysqlaccount.KindUnreachable:
		out.reason, out.retry = mygroupv1alpha1.ReasonDatabaseUnreachable, true
	case mysqlaccount.KindAccessDenied:
		out.reason, out.retry = mygroupv1alpha1.ReasonAccessDenied, true
	case mysqlaccount.KindInvalidAccount:
		out.reason = mygroupv1alpha1.ReasonInvalidUser
	case mysqlaccount.KindInvalidGrant:
		out.reason = mygroupv1alpha1.ReasonInvalidGrant
	case mysqlaccount.KindReserved:
		out.reason = mygroupv1alpha1.ReasonAccountReserved
	case mysqlaccount.KindNotClaimed:
		out.reason, out.recheck = mygroupv1alpha1.ReasonAccountNotOwned, true
	case mysqlaccount.KindAdoptionRefused:
		// The server's admin may revoke what stands in the way: looked at again at every resync.
		out.reason, out.recheck = mygroupv1alpha1.ReasonAdoptionRefused, true
	case mysqlaccount.KindUnsupportedServer:
		out.reason, out.recheck = mygroupv1alpha1.ReasonUnsupportedServer, true
	case mysqlaccount.KindPasswordTooLong:
		// The lengths only, never the password. No Secret watch: the next resync reads the Secret again.
		const more = ". Shorten it: until then the account is left as it is"
		out.reason, out.recheck = mygroupv1alpha1.ReasonPasswordTooLong, true
		out.message += more
		out.detail += more
	default:
		out.reason, out.retry = mygroupv1alpha1.ReasonDatabaseError, true
	}
	if out.detail == out.message {
		out.detail = ""
	}
	return out
}

// adminsPart ends the tenant-facing message of a failure whose cause is the cluster admin's to see.
const adminsPart = "; the cluster admin finds the cause in the DatabaseTarget's status and the operator's log"

// tenantMessage is what a DatabaseUser's status and Events say of err: only what concerns the tenant's own
// account. The server's address, the admin account's name, the operator's IP (MySQL's access-denied errors
// name 'user'@'client-host') and any other text of the server's stay out: they are the cluster admin's. The
// server's error number stays (it names nothing). The errors mysqlaccount makes of the tenant's own request
// (a reserved or invalid name, a grant, an account not theirs, adoption refused, the password's length, the
// server's version) are given as they are, unless they wrap an error of the server's or the network.
func tenantMessage(err error) string {
	code := ""
	var me *mysql.MySQLError
	fromServer := errors.As(err, &me)
	if fromServer {
		code = fmt.Sprintf(" (error %d)", me.Number)
	}
	var ne net.Error
	foreign := fromServer || errors.As(err, &ne)
	var e *mysqlaccount.Error
	if !errors.As(err, &e) {
		return "the operator failed to manage the account" + code + adminsPart
	}
	switch e.Kind {
	case mysqlaccount.KindUnreachable:
		return "the operator cannot reach the database server" + code + adminsPart
	case mysqlaccount.KindAccessDenied:
		return "the database server denied access to the operator's admin account" + code + adminsPart
	case mysqlaccount.KindUnsupportedServer:
		if foreign {
			return "the operator cannot tell which database server this is" + code + adminsPart
		}
		return e.Err.Error() // what the server reported of its version, and why it is not supported
	case mysqlaccount.KindOther:
		return "the database server answered with an error" + code + adminsPart
	}
	if foreign { // not even e.Op: a connection's names the server and the admin account
		return "the database server refused what the operator asked of it for this account" + code + adminsPart
	}
	return err.Error()
}

// leavePreviousTarget drops the account from the target it lived in before the `target` label changed
// (status.target remembers it), unless cleanupPolicy is Skip, both targets are the same server, or the
// previous target is gone or served elsewhere. Until that works, status.target keeps the previous target, so
// that the move is retried with backoff.
func (r *Reconciler) leavePreviousTarget(ctx context.Context, dbu *mygroupv1alpha1.DatabaseUser, name string) error {
	prevName := dbu.Status.Target
	if prevName == "" || prevName == name || dbu.Spec.CleanupPolicy == mygroupv1alpha1.CleanupSkip {
		return nil
	}
	prev, gone := getTarget(ctx, r.Client, r.cfg.OperatorNamespace, prevName)
	if gone != nil && !gone.retry {
		return nil // nothing this installation can reach: no account of ours to drop there
	}
	var out outcome
	if gone != nil {
		out = *gone
	} else {
		if cur, _ := getTarget(ctx, r.Client, r.cfg.OperatorNamespace, name); cur != nil &&
			cur.Spec.AdminSecretRef == prev.Spec.AdminSecretRef {
			return nil // the same server under another name
		}
		db, failed, admin := connect(ctx, r.Reader, &r.cfg, prev)
		out = failed
		if db != nil {
			res, err := db.Drop(ctx, dbu.Spec.User, accountHost(dbu), claimant(dbu))
			_ = db.Close()
			if err == nil {
				r.droppedEvent(ctx, dbu, prevName, res, "AccountMoved", "dropped from previous target")
				return nil
			}
			out = failure(err, "", admin)
		}
	}
	out = out.within(fmt.Sprintf("cannot drop the account from previous target %q yet: ", prevName), "")
	if err := r.report(ctx, dbu, prevName, out); err != nil {
		return err
	}
	return errors.New(out.reason + ": " + out.logged())
}

// droppedEvent tells what a drop did: dropped the account, or left one that is not this DatabaseUser's. The
// latter says only that: the same words whether or not such an account exists, which is not the tenant's to
// know.
func (r *Reconciler) droppedEvent(ctx context.Context, dbu *mygroupv1alpha1.DatabaseUser, target string, res mysqlaccount.DropResult,
	reason, what string) {
	acct := dbu.Spec.User + "@" + accountHost(dbu)
	switch {
	case res.Dropped:
		log.FromContext(ctx).Info("account "+what, "target", target)
		r.Recorder.Eventf(dbu, nil, corev1.EventTypeNormal, reason, "Delete", "account %s %s %q", acct, what, target)
	case res.NotClaimed:
		r.Recorder.Eventf(dbu, nil, corev1.EventTypeWarning, "AccountNotDropped", "Delete",
			"account %s in target %q is not this DatabaseUser's to manage: nothing was dropped", acct, target)
	}
}

// finalize drops the account (unless cleanupPolicy is Skip) and then lets the DatabaseUser go. A target that
// is gone, or served by another installation, releases the DatabaseUser without dropping anything: holding it
// would block its namespace's deletion forever.
func (r *Reconciler) finalize(ctx context.Context, dbu *mygroupv1alpha1.DatabaseUser, name string) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(dbu, mygroupv1alpha1.Finalizer) {
		return ctrl.Result{}, nil
	}
	acct := dbu.Spec.User + "@" + accountHost(dbu)
	if dbu.Spec.CleanupPolicy == mygroupv1alpha1.CleanupSkip {
		r.Recorder.Eventf(dbu, nil, corev1.EventTypeNormal, "AccountKept", "Delete",
			"cleanupPolicy is Skip: account %s stays in target %q%s", acct, name, r.disown(ctx, dbu, name))
		return r.release(ctx, dbu)
	}
	target, out := getTarget(ctx, r.Client, r.cfg.OperatorNamespace, name)
	switch {
	case out != nil && out.retry:
		return r.retryFinalize(ctx, dbu, name, *out)
	case out != nil && out.reason == mygroupv1alpha1.ReasonUnknownTarget && slices.Contains(r.cfg.MigratingTargets, name):
		// The target is being migrated from DATABASE_TARGETS: its account is on a server the admin is about to
		// declare. Creating the DatabaseTarget (a watched kind) lets the deletion go on.
		out.message = fmt.Sprintf("DatabaseTarget %q does not exist yet, and the operator's DATABASE_TARGETS still "+
			"names it: the cluster admin is migrating it (docs/databases.md)", name)
		return r.retryFinalize(ctx, dbu, name, *out)
	case out != nil:
		r.Recorder.Eventf(dbu, nil, corev1.EventTypeWarning, "AccountNotDropped", "Delete",
			"account %s was not dropped: %s", acct, out.message)
		return r.release(ctx, dbu)
	}
	db, failed, admin := connect(ctx, r.Reader, &r.cfg, target)
	if db == nil {
		return r.retryFinalize(ctx, dbu, name, failed)
	}
	res, err := db.DropAccount(ctx, accountToDrop(dbu, target))
	_ = db.Close()
	switch k := mysqlaccount.KindOf(err); {
	case err == nil:
		r.droppedEvent(ctx, dbu, name, res, "AccountDropped", "dropped from target")
	case k == mysqlaccount.KindInvalidAccount:
		// A name the server cannot store cannot exist either: nothing to drop.
	case k == mysqlaccount.KindReserved:
		r.Recorder.Eventf(dbu, nil, corev1.EventTypeWarning, "AccountNotDropped", "Delete",
			"account %s is reserved: never dropped by operator101", acct)
	default:
		return r.retryFinalize(ctx, dbu, name, failure(err, "", admin))
	}
	return r.release(ctx, dbu)
}

// accountToDrop is what a deleted DatabaseUser may drop: the account it claimed, whatever the target's policy
// says now (the admin may have narrowed it since), and, on an Adopt target, an account without a claim that
// it would have adopted alive (made by an earlier operator101, whose accounts have no claim, and deleted
// before adopting). A DatabaseUser the policy refuses could adopt nothing alive, so it adopts nothing on its
// way out either: a hand-made account of its name stays, and the Event reads as for any account not its own.
func accountToDrop(dbu *mygroupv1alpha1.DatabaseUser, target *mygroupv1alpha1.DatabaseTarget) mysqlaccount.Account {
	a := desiredClaimedAccount(dbu, target, "")
	if checkPolicy(target, dbu) != nil {
		a.Adopt, a.AdoptDatabases = false, nil
	}
	return a
}

// disown removes the claims of a kept account, so that the target's existingAccounts: Adopt can
// give it to another DatabaseUser. Best effort: Skip is also the way out when the server cannot be reached, so
// nothing here may hold the DatabaseUser. It returns what to add to the Event.
func (r *Reconciler) disown(ctx context.Context, dbu *mygroupv1alpha1.DatabaseUser, name string) string {
	target, out := getTarget(ctx, r.Client, r.cfg.OperatorNamespace, name)
	if out != nil {
		return ""
	}
	db, failed, _ := connect(ctx, r.Reader, &r.cfg, target)
	if db == nil {
		return "; its claims was not removed (" + failed.reason + ")"
	}
	defer func() { _ = db.Close() }()
	if _, err := db.Release(ctx, dbu.Spec.User, accountHost(dbu), claimant(dbu)); err != nil {
		return "; its claims was not removed (" + failure(err, "").reason + ")"
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
		". To delete the DatabaseUser and keep the account, set spec.cleanupPolicy to Skip (docs/databases.md)")
	if err := r.report(ctx, dbu, target, out); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, errors.New(out.reason + ": " + out.logged())
}

// statusWriteTimeout bounds a status write. It runs on a context of its own, so that a check that ran out of
// its deadline (ReconcileTimeout: a slow server) can still say so.
const statusWriteTimeout = 10 * time.Second

// report writes the status when it changed, with an Event when the Ready reason changed.
func (r *Reconciler) report(ctx context.Context, dbu *mygroupv1alpha1.DatabaseUser, target string, out outcome) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), statusWriteTimeout)
	defer cancel()
	now := metav1.NewTime(r.Clock.Now())
	before := dbu.DeepCopy()
	dbu.Status = computeStatus(dbu.Status, dbu.Generation, target, out, now, r.cfg.StatusRefresh)
	return r.Report(ctx, before, dbu, readyEvents(before.Status, out)...)
}

// readyEvents is the Event a check deserves: one when the Ready reason changes.
func readyEvents(old mygroupv1alpha1.DatabaseUserStatus, out outcome) []report.Event {
	if prev := meta.FindStatusCondition(old.Conditions, mygroupv1alpha1.ConditionReady); prev != nil && prev.Reason == out.reason {
		return nil
	}
	kind := corev1.EventTypeWarning
	if out.ready() {
		kind = corev1.EventTypeNormal
	}
	return []report.Event{{Type: kind, Reason: out.reason, Action: "Reconcile", Note: out.message}}
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
