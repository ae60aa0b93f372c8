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

// Package reconciler is what every operator101 controller is built from besides its kind's own code. Each
// kind's reconcile follows the same steps:
//
//  1. observe: read the object and its children from the manager's cache (apply.ReadChildren, apply.Found);
//  2. build each child's desired state with the kind's pure builders (in the kind's package);
//  3. apply only what differs, server-side, under one field owner, and never to an object of a child's name
//     that the object does not control, whether the cache holds it or not (apply.Child, apply.IfChanged);
//  4. derive the status from what was observed (a pure function in the kind's package; rollout.Conditions
//     for the kinds that run a Deployment);
//  5. write the status only when it changed, with the object's resourceVersion, and record an Event for each
//     transition a person may act on (Base.Report).
//
// A converged object therefore costs no write. Every kind registers through Complete with the same Options
// (workers, the proxy settings its workloads get, the clock, the uncached reader, the manager's Memory), the
// one policy for a status write that meets a newer object (report.ErrStale: look again in
// report.ConflictRetry) and the one for a child's name taken by an object the owner does not control
// (apply.ErrNotOwned: look again in NotOwnedRetry).
package reconciler

import (
	"context"
	"errors"
	"time"

	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/operator101/operator101/internal/controller/apply"
	"github.com/operator101/operator101/internal/controller/report"
	"github.com/operator101/operator101/internal/controller/rollout"
	"github.com/operator101/operator101/internal/eventrecorder"
	"github.com/operator101/operator101/internal/metrics"
	"github.com/operator101/operator101/internal/proxyenv"
)

// Options is what every controller's Setup takes besides its kind's own configuration.
type Options struct {
	// Workers is the number of reconciles that run at once (default DefaultWorkers).
	Workers int
	// ReconcileTimeout, when set, is the deadline of each reconcile's context (controller-runtime's
	// ReconciliationTimeout).
	ReconcileTimeout time.Duration
	// ProxyEnv is passed on to every workload the operator runs: the cluster's proxy settings, which OLM gives
	// the operator as HTTP_PROXY, HTTPS_PROXY and NO_PROXY (none by default), never with the user and password
	// a proxy URL may hold (proxyenv.New takes them out).
	ProxyEnv proxyenv.Env
	// Clock is the time source of conditions and schedules (default: the real clock).
	Clock clock.PassiveClock
	// Reader reads from the API server, past the cache (default: the manager's API reader).
	Reader client.Reader
	// NotOwnedRetry is how soon an object whose child's name is taken by an object it does not control looks
	// again (default DefaultNotOwnedRetry). No event says when that object goes: it is not in the cache (no
	// managed.ByLabel), or its events go to its own controller.
	NotOwnedRetry time.Duration
	// Memory is what the controllers of one manager remember between reconciles, shared with its cache
	// transforms: pass the one the cache was built with (NewMemory). Without one, WithDefaults makes one of
	// the controller's own, whose digests no cache transform shares: every child then counts as changed.
	Memory *Memory
	// Metrics receives what the controllers count (At runs, DatabaseUser checks, refused children). Without
	// one, WithDefaults makes one of the controller's own, registered nowhere.
	Metrics *metrics.Metrics
	// Events sends the controllers' Events: pass one per manager (NewEvents). Without one, NewBase makes one
	// of the controller's own.
	Events *eventrecorder.Sender
}

// WithDefaults fills what o leaves unset from the manager but Events (NewBase).
func (o Options) WithDefaults(mgr ctrl.Manager) Options {
	if o.Workers < 1 {
		o.Workers = DefaultWorkers
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Reader == nil {
		o.Reader = mgr.GetAPIReader()
	}
	if o.NotOwnedRetry <= 0 {
		o.NotOwnedRetry = DefaultNotOwnedRetry
	}
	if o.Memory == nil {
		o.Memory = NewMemory()
	}
	if o.Metrics == nil {
		o.Metrics = metrics.New()
	}
	return o
}

// NewEvents returns the sender of the Events of the controllers of mgr, which runs it.
func NewEvents(mgr ctrl.Manager) *eventrecorder.Sender {
	s := eventrecorder.New(mgr.GetConfig(), mgr.GetHTTPClient(), mgr.GetScheme(), mgr.GetLogger().WithName("events"))
	if err := mgr.Add(s); err != nil {
		// Only a manager that is stopping refuses a runnable: it runs no reconcile either.
		mgr.GetLogger().Error(err, "the Events sender did not start; no Event will be sent")
	}
	return s
}

// DefaultWorkers is how many reconciles of one controller run at once by default.
const DefaultWorkers = 4

// DefaultNotOwnedRetry is how often, by default, an object whose child's name is taken looks again: a person
// who removes the other object sees the owner heal within it, and a taken name costs one reconcile (reads only,
// no write) per period.
const DefaultNotOwnedRetry = 30 * time.Second

// RetryNotOwned is the result of a reconcile that found a child's name taken by an object the owner does not
// control: look again in NotOwnedRetry, without backoff and without an error.
func (o Options) RetryNotOwned() ctrl.Result {
	return ctrl.Result{RequeueAfter: o.NotOwnedRetry}
}

// Base is what every reconciler holds: the manager's cached client, an Event recorder and the options.
type Base struct {
	Client   client.Client
	Recorder recorder.EventRecorder
	Options
}

// NewBase returns the Base of the controller name (its Events come from "operator101-<name>"), with o's
// unset options filled from the manager. reported is an object of the kind whose status the controller writes
// (Report): its Memory hears of that kind's events (Memory.Hook).
func NewBase(mgr ctrl.Manager, name string, o Options, reported client.Object) Base {
	o = o.WithDefaults(mgr)
	if o.Events == nil {
		o.Events = NewEvents(mgr)
	}
	o.Memory.reports(reported)
	return Base{Client: mgr.GetClient(), Recorder: o.Events.Recorder("operator101-" + name), Options: o}
}

// Report ends a reconcile with report.Statuses.Report, through b's client and recorder. A Base made without
// NewBase and without a Memory remembers no status it wrote.
func (b Base) Report(ctx context.Context, before, obj client.Object, events ...report.Event) error {
	var statuses *report.Statuses
	if b.Memory != nil {
		statuses = b.Memory.statuses
	}
	return statuses.Report(ctx, b.Client, b.Recorder, before, obj, events...)
}

// Applier is what apply.Child and apply.IfChanged take: b's client and reader, and its Memory's.
func (b Base) Applier() apply.Applier {
	return apply.Applier{Client: b.Client, Live: b.Reader, Memory: b.Memory.Applied, Refused: b.Metrics.ChildNotOwned}
}

// MaxRetryDelay caps the delay before a failed reconcile is tried again. controller-runtime's default doubles
// it up to 1000 s, so an object that failed a dozen times (a node port held for a few minutes, a database server
// restarting) waited up to a quarter of an hour after its cause was gone; with the cap it waits at most this.
const MaxRetryDelay = time.Minute

// RetryLimiter is controller-runtime's default rate limiter with the per-object delay capped at MaxRetryDelay:
// 5 ms doubled at each failure, and 10 retries a second at most across the controller's objects.
func RetryLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, MaxRetryDelay),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

// Complete registers r through b with o's workers, the capped retry delay and the conflict policy.
func Complete(b *builder.Builder, o Options, r reconcile.Reconciler) error {
	return b.WithOptions(controller.Options{MaxConcurrentReconciles: o.Workers, ReconciliationTimeout: o.ReconcileTimeout,
		RateLimiter: RetryLimiter()}).
		Complete(staleRetried{r})
}

// staleRetried runs a kind's reconcile with the one conflict policy: a status write that met a newer object
// (report.ErrStale) is looked at again in report.ConflictRetry.
type staleRetried struct{ reconcile.Reconciler }

func (s staleRetried) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := s.Reconciler.Reconcile(ctx, req)
	if errors.Is(err, report.ErrStale) {
		// The cache was behind the API server; look again once it has the newer object. Not a failure:
		// no backoff, no error log.
		log.FromContext(ctx).V(1).Info("status not written, the object changed meanwhile")
		return ctrl.Result{RequeueAfter: report.ConflictRetry}, nil
	}
	return res, err
}

// ChangedByOthers lets through the events of a custom resource that someone other than its controller made:
// creation, deletion, and updates that change its spec (generation), labels, annotations or deletion
// timestamp. The controller's own status writes are left out: each would cost a reconcile that finds nothing
// to do, since the status was derived from what that reconcile had observed. The cache's copy of a MyWeb or
// AppService holds a digest of its labels and annotations in its selfLink instead of them
// (apply.OwnerForCache): a change of the selfLink is one of them.
func ChangedByOthers() predicate.Predicate {
	return predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
		predicate.AnnotationChangedPredicate{}, predicate.Funcs{UpdateFunc: deletionStarted},
		predicate.Funcs{UpdateFunc: selfLinkChanged})
}

// selfLinkChanged lets through the update that changes the digests a cache transform keeps in the selfLink.
func selfLinkChanged(e event.UpdateEvent) bool {
	return e.ObjectOld != nil && e.ObjectNew != nil && e.ObjectOld.GetSelfLink() != e.ObjectNew.GetSelfLink()
}

// deletionStarted lets through the update that sets an object's deletion timestamp.
func deletionStarted(e event.UpdateEvent) bool {
	return e.ObjectOld != nil && e.ObjectNew != nil &&
		(e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil)
}

// ReportRollout ends the reconcile of a kind that runs a Deployment: obj holds the status just derived from
// what was observed, before is obj as it was read, and applyErr the error of writing the children. The status
// is written when it changed, with an Event per condition transition worth telling. A child whose name is taken
// by an object obj does not control (applyErr is apply.ErrNotOwned alone) is looked at again in NotOwnedRetry, since
// no event tells when that object goes; any other applyErr is returned, so that the child is retried with
// backoff (a node port may be freed).
func (b Base) ReportRollout(ctx context.Context, before, obj client.Object, oldConds, newConds []metav1.Condition, applyErr error) (ctrl.Result, error) {
	if err := b.Report(ctx, before, obj, rollout.Events(oldConds, newConds)...); err != nil {
		return ctrl.Result{}, err
	}
	if apply.OnlyNotOwned(applyErr) {
		return b.RetryNotOwned(), nil
	}
	return ctrl.Result{}, applyErr
}
