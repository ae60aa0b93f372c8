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

package at

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/internal/controller/health"
	"github.com/operator101/operator101/internal/controller/priority"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/internal/controller/report"
)

// How the command runs exactly once. The state lives in the API server, never in the operator's memory:
//   - the pod has one name, PodName(at), and an owner reference to the At. Before creating it the reconciler
//     checks, with an uncached GET, that its cached At is current and still PENDING. A create that meets
//     AlreadyExists means an earlier incarnation created it (and crashed before writing the status): the
//     existing pod is adopted, not replaced, if the At controls it. A pod of that name the At does not control
//     (someone else's) is never deleted, adopted or taken for the At's run: the At waits, PENDING, reason
//     PodNameTaken, and runs once that pod is gone.
//   - the pod is created first; the reconcile its event brings writes RUNNING. Every status write carries the
//     At's resourceVersion (optimistic lock), so a reconcile working from a stale copy cannot move the phase
//     back.
//   - once DONE or FAILED the status is final: the pod's later fate (deleted by hand or by the TTL) changes
//     nothing, and no pod is created again. An At RUNNING whose pod is gone (checked uncached; a pod of that
//     name it does not control counts as gone) becomes FAILED with reason PodDeleted: the command may have run.
//   - a pod that does not start (still Pending after the start deadline) is deleted, and only then the At is
//     written FAILED (reason StartDeadlineExceeded). The delete carries the pod's UID and resourceVersion, so a
//     pod that started meanwhile is not deleted; and only an At already stored as RUNNING is treated so, so that
//     a crash between the delete and the status write finds a RUNNING At without its pod (FAILED, PodDeleted),
//     never a PENDING At that would create the pod again.
//   - with spec.retries, each attempt is such a run under a name of its own, fixed in advance
//     (AttemptPodName; the first keeps PodName), created only once the stored status records the attempt
//     before it as failed (retry.go).
// The one gap: a pod created, finished and deleted while the operator was down before it wrote RUNNING is
// created again. Closing it would mean writing the status before creating the pod, which trades "exactly
// once" for "at most once" on a crash between the two.

// namespace=system makes these rules a Role: the CSV's permissions, which OLM grants only in the namespaces
// the operator is installed for (docs/admin/security.md).
// +kubebuilder:rbac:groups=cnat.programming-kubernetes.info,resources=ats,verbs=get;list;watch,namespace=system
// +kubebuilder:rbac:groups=cnat.programming-kubernetes.info,resources=ats/status,verbs=get;patch,namespace=system
// finalizers (update): every child's owner reference sets blockOwnerDeletion, which the
// OwnerReferencesPermissionEnforcement admission plugin (on by default in OpenShift) admits only from a user
// who may update the owner's finalizers subresource. The operator sets no finalizer on an At.
// +kubebuilder:rbac:groups=cnat.programming-kubernetes.info,resources=ats/finalizers,verbs=update,namespace=system
// namespaces (get): the UID range of the At's namespace (PodUID). A Role grants get on the namespace it is in
// (the API server puts a namespace's own name in a request for it), so the rule reaches no other namespace.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get,namespace=system
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete,namespace=system
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch,namespace=system

// Reconciler drives Ats: PENDING until the schedule, then a pod, then the pod's outcome. Its options' Reader
// (uncached) confirms the At is current before its pod is created, and finds a pod the cache has not seen.
type Reconciler struct {
	reconciler.Base
	startDeadline time.Duration
	defaultImage  string
	uids          namespaceUIDs
}

func newReconciler(b reconciler.Base, cfg Config) *Reconciler {
	d := cfg.StartDeadline
	if d <= 0 {
		d = DefaultStartDeadline
	}
	return &Reconciler{Base: b, startDeadline: d, defaultImage: cfg.DefaultImage}
}

// Reconcile brings one At one step further.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	at := &cnatv1alpha1.At{}
	if err := r.Client.Get(ctx, req.NamespacedName, at); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	now := r.Clock.Now()
	// Finished: the status is final; only the TTL remains. An At that finished under an operator that did not
	// set Ready, Reconciling and Stalled gets them, in one write; afterwards writeStatus writes nothing.
	if isFinished(at.Status.Phase) {
		if err := r.writeStatus(ctx, at, at.Status); err != nil {
			return ctrl.Result{}, err
		}
		return r.cleanup(ctx, at, now)
	}

	attempt, retrying := currentAttempt(at.Status)
	podKey := types.NamespacedName{Namespace: at.Namespace, Name: AttemptPodName(at.Name, attempt)}
	pod, err := r.getPod(ctx, r.Client, podKey)
	if err != nil {
		return ctrl.Result{}, err
	}

	if pod != nil && metav1.IsControlledBy(pod, at) {
		return r.observePod(ctx, at, pod, attempt, now)
	}

	if at.Status.Phase == cnatv1alpha1.PhaseRunning && !retrying {
		// The cache may lag behind the pod's creation: ask the API server before concluding it is gone. A pod
		// of that name the At does not control is not its run: its own pod is gone.
		pod, err = r.getPod(ctx, r.Reader, podKey)
		if err != nil {
			return ctrl.Result{}, err
		}
		if pod != nil && metav1.IsControlledBy(pod, at) {
			return r.observePod(ctx, at, pod, attempt, now)
		}
		return ctrl.Result{}, r.writeStatus(ctx, at, podLost(at.Status, podKey.Name, now))
	}

	if pod != nil {
		// Someone else's pod (labelled as operator101's), or the pod of an earlier At of this name not yet
		// garbage collected: wait for it to go.
		return r.podNameTaken(ctx, at, pod, now)
	}
	if retrying {
		// The next attempt: its schedule, suspend and starting deadline were for the first.
		return r.start(ctx, at, podKey, attempt, now)
	}

	// PENDING (or new).
	when, err := Schedule(at)
	if errors.Is(err, errUnknownZone) {
		// The schema cannot know the zone database: the At waits for its timeZone to be fixed (a spec change
		// triggers the next reconcile), with one Warning Event when it gets the reason.
		st := waiting(at.Status, metav1.ConditionFalse, cnatv1alpha1.ReasonUnknownTimeZone,
			fmt.Sprintf("timeZone %q is not a time zone the operator knows (IANA names such as Europe/Berlin); the command runs once it is fixed",
				ptr.Deref(at.Spec.TimeZone, "")), now)
		events := reasonEvent(at.Status, corev1.EventTypeWarning, cnatv1alpha1.ReasonUnknownTimeZone, "Schedule", st.Message)
		return ctrl.Result{}, r.writeStatus(ctx, at, st, events...)
	}
	if err != nil {
		// The schema rejects such schedules; an At stored before the schema existed lands here. A spec
		// change triggers the next reconcile.
		st := waiting(at.Status, metav1.ConditionFalse, cnatv1alpha1.ReasonInvalidSchedule, err.Error(), now)
		return ctrl.Result{}, r.writeStatus(ctx, at, st)
	}
	// Too late: the run never starts, whether suspended or not (resuming could not make it start in time).
	var deadline time.Time
	if d := at.Spec.StartingDeadlineSeconds; d != nil {
		deadline = when.Add(time.Duration(*d) * time.Second)
		if now.After(deadline) {
			// MISSED is final: make sure, past the cache, that no earlier incarnation created the pod (and
			// crashed before writing RUNNING). The status write carries the At's resourceVersion, so a stale
			// PENDING copy of an At that ran cannot be made MISSED.
			pod, err = r.getPod(ctx, r.Reader, podKey)
			if err != nil {
				return ctrl.Result{}, err
			}
			if pod != nil && metav1.IsControlledBy(pod, at) {
				return r.observePod(ctx, at, pod, attempt, now)
			}
			return ctrl.Result{}, r.writeStatus(ctx, at, missed(at.Status, when, time.Duration(*d)*time.Second, ptr.Deref(at.Spec.Suspend, false), now))
		}
	}
	if ptr.Deref(at.Spec.Suspend, false) {
		// Resuming is a spec change, which brings the next reconcile; the deadline, if any, is the only time
		// that changes anything meanwhile.
		st := suspended(at.Status, when, now)
		events := reasonEvent(at.Status, corev1.EventTypeNormal, cnatv1alpha1.ReasonSuspended, "Schedule", st.Message)
		if err := r.writeStatus(ctx, at, st, events...); err != nil {
			return ctrl.Result{}, err
		}
		if deadline.IsZero() {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{RequeueAfter: deadline.Sub(now) + time.Second}, nil
	}
	if wait := when.Sub(now); wait > 0 {
		logger.V(1).Info("waiting for the schedule", "schedule", at.Spec.Schedule, "in", wait)
		if err := r.writeStatus(ctx, at, pending(at.Status, when, now)); err != nil {
			return ctrl.Result{}, err
		}
		// When it falls due it goes ahead of the pods' events (priority.Progress): Ats due together
		// get their pods first, the Running status of the earlier ones after.
		return ctrl.Result{RequeueAfter: wait, Priority: ptr.To(priority.Progress)}, nil
	}
	return r.start(ctx, at, podKey, attempt, now)
}

// start creates the pod of the At's attempt, due now: the first at its schedule, a later one once the one
// before failed.
func (r *Reconciler) start(ctx context.Context, at *cnatv1alpha1.At, podKey types.NamespacedName, attempt int32, now time.Time) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	// Due. Make sure the cached At is the current one before acting on it: a stale PENDING copy of an At
	// that already ran must not start it again. A newer version reaches the cache with an event.
	fresh := &cnatv1alpha1.At{}
	if err := r.Reader.Get(ctx, client.ObjectKeyFromObject(at), fresh); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if fresh.UID != at.UID || fresh.ResourceVersion != at.ResourceVersion {
		logger.V(1).Info("cached At is stale; waiting for the newer version")
		return ctrl.Result{}, nil
	}

	if c := meta.FindStatusCondition(at.Status.Conditions, cnatv1alpha1.ConditionSucceeded); c != nil && c.Reason == cnatv1alpha1.ReasonPodNameTaken {
		// The name was taken at the last look, by a pod the cache does not hold (no operator101 label): look
		// again past the cache rather than send a create that would be refused every NotOwnedRetry.
		pod, err := r.getPod(ctx, r.Reader, podKey)
		if err != nil {
			return ctrl.Result{}, err
		}
		if pod != nil && !metav1.IsControlledBy(pod, at) {
			return r.podNameTaken(ctx, at, pod, now)
		}
	}
	deadline := attemptDeadlineSeconds(at, attempt, now)
	if deadline <= 0 {
		return ctrl.Result{}, r.writeStatus(ctx, at, noTimeLeft(at.Status, attempt, now))
	}

	// The create is the check that the name is free: it never takes over an existing pod, whether the cache
	// holds it or not (the cache holds only operator101's pods).
	uid, err := r.namespaceUID(ctx, at.Namespace)
	if err != nil {
		r.Recorder.Eventf(at, nil, corev1.EventTypeWarning, "PodCreateFailed", "Run", "creating pod %s: %v", podKey.Name, err)
		return ctrl.Result{}, fmt.Errorf("creating pod %s: %w", podKey.Name, err)
	}
	// Built from the At just read past the cache (the same version as the cached one), which holds the env
	// the cache does not keep (trimAt).
	desired := AttemptPod(fresh, PodDefaults{Image: r.defaultImage, ProxyEnv: r.ProxyEnv, UID: uid}, attempt, deadline)
	err = r.Client.Create(ctx, desired)
	switch {
	case err == nil:
		// RUNNING is written by the reconcile the new pod's event brings (the pod != nil case above), not
		// here: when many Ats fall due at once, every worker goes on to the next due At's pod instead of
		// waiting for a status write. A crash in between is the AlreadyExists case below, or the pod is
		// found in the cache.
		logger.Info("pod created", "pod", desired.Name, "attempt", attempt)
		return ctrl.Result{}, nil
	case apierrors.IsAlreadyExists(err):
		// Created before a crash or restart: adopt it, never replace it.
		pod, err := r.getPod(ctx, r.Reader, podKey)
		if err != nil {
			return ctrl.Result{}, err
		}
		if pod == nil {
			return ctrl.Result{}, fmt.Errorf("pod %s: exists on create, gone on get; retrying", podKey.Name)
		}
		if !metav1.IsControlledBy(pod, at) {
			return r.podNameTaken(ctx, at, pod, now)
		}
		return ctrl.Result{}, r.writeStatus(ctx, at, observe(at, pod, attempt, now))
	default:
		r.Recorder.Eventf(at, nil, corev1.EventTypeWarning, "PodCreateFailed", "Run", "creating pod %s: %v", podKey.Name, err)
		return ctrl.Result{}, fmt.Errorf("creating pod %s: %w", podKey.Name, err)
	}
}

// uidTTL is how long the UID of a namespace's pods is kept (namespaceUIDs).
const uidTTL = 10 * time.Second

// namespaceUIDs keeps the UID the pods of each namespace run as for uidTTL, and makes one read of a namespace
// at a time: Ats fall due together, often many in one namespace, and the UID range OpenShift gives a
// namespace is set when it is created. Its own code because controller-runtime's cache would need list and
// watch on namespaces cluster-wide, and client-go offers no expiring cache of single reads.
type namespaceUIDs struct {
	mu    sync.Mutex
	known map[string]uidEntry
	reads singleflight.Group
}

type uidEntry struct {
	uid   int64
	until time.Time
}

func (c *namespaceUIDs) get(ns string, read func() (int64, error)) (int64, error) {
	c.mu.Lock()
	e, ok := c.known[ns]
	c.mu.Unlock()
	if ok && time.Now().Before(e.until) {
		return e.uid, nil
	}
	v, err, _ := c.reads.Do(ns, func() (any, error) {
		uid, err := read()
		if err != nil {
			return int64(0), err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.known == nil {
			c.known = map[string]uidEntry{}
		}
		for k, e := range c.known { // the namespaces no At fell due in lately
			if time.Now().After(e.until) {
				delete(c.known, k)
			}
		}
		c.known[ns] = uidEntry{uid: uid, until: time.Now().Add(uidTTL)}
		return uid, nil
	})
	return v.(int64), err
}

// namespaceUID is the UID the pod of an At in ns runs as (PodUID), from the namespace read with a GET past the
// cache at most every uidTTL (namespaceUIDs), when a pod is about to be created. A cache of namespaces would
// need list and watch on them cluster-wide, which a namespaced install does not have.
func (r *Reconciler) namespaceUID(ctx context.Context, ns string) (int64, error) {
	return r.uids.get(ns, func() (int64, error) { return r.readNamespaceUID(ctx, ns) })
}

func (r *Reconciler) readNamespaceUID(ctx context.Context, ns string) (int64, error) {
	n := &metav1.PartialObjectMetadata{}
	n.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	if err := r.Reader.Get(ctx, types.NamespacedName{Name: ns}, n); err != nil {
		return 0, fmt.Errorf("reading namespace %s for its UID range: %w", ns, err)
	}
	uid, err := PodUID(n.GetAnnotations())
	if err != nil {
		return 0, fmt.Errorf("namespace %s: %w", ns, err)
	}
	return uid, nil
}

// observePod writes the status the At's own pod gives, and bounds the pod's start: a pod still Pending
// (not scheduled, its image not pulled, ...) once the start deadline passed is deleted and the At FAILED.
// Until then the reconcile comes back at the deadline.
func (r *Reconciler) observePod(ctx context.Context, at *cnatv1alpha1.At, pod *corev1.Pod, attempt int32, now time.Time) (ctrl.Result, error) {
	if !notStarted(pod) {
		st := observe(at, pod, attempt, now)
		var events []report.Event
		if _, retrying := currentAttempt(st); retrying {
			if c := succeededCondition(at.Status); c == nil || c.Reason != cnatv1alpha1.ReasonRetrying || c.Message != st.Message {
				events = append(events, report.Event{Type: corev1.EventTypeWarning, Reason: cnatv1alpha1.ReasonRetrying, Action: "Run", Note: st.Message})
			}
		}
		return ctrl.Result{}, r.writeStatus(ctx, at, st, events...)
	}
	wait := startDeadline(at, pod, r.startDeadline).Sub(now)
	if _, retrying := currentAttempt(at.Status); wait > 0 || at.Status.Phase != cnatv1alpha1.PhaseRunning || retrying {
		// A retrying At has not stored this attempt yet: it would create its pod again.
		// Only a RUNNING At loses its pod (see "exactly once" above); the status write brings the next look.
		if err := r.writeStatus(ctx, at, observe(at, pod, attempt, now)); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: max(wait, 0)}, nil
	}
	why := whyNotStarted(pod)
	if pod.DeletionTimestamp == nil {
		rv := pod.ResourceVersion
		err := r.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID, ResourceVersion: &rv},
			client.PropagationPolicy(metav1.DeletePropagationBackground))
		switch {
		case apierrors.IsConflict(err):
			// The pod changed since the cache saw it (it may have started): look again at the newer one.
			return ctrl.Result{RequeueAfter: report.ConflictRetry}, nil
		case err != nil && !apierrors.IsNotFound(err):
			return ctrl.Result{}, fmt.Errorf("deleting pod %s, which did not start: %w", pod.Name, err)
		}
		log.FromContext(ctx).Info("pod deleted: it did not start in time", "pod", pod.Name, "deadline", r.startDeadline, "why", why)
	}
	return ctrl.Result{}, r.writeStatus(ctx, at, startTimedOut(at.Status, pod.Name, r.startDeadline, why, now))
}

// podNameTaken is the reconcile of a due At whose pod name is taken by pod, which it does not control: it stays
// PENDING with reason PodNameTaken, and a Warning Event when it gets that reason. The pod is not touched. No
// event tells when that pod goes (it is not in the cache, or its events go to its own controller), so the At
// looks again every NotOwnedRetry.
func (r *Reconciler) podNameTaken(ctx context.Context, at *cnatv1alpha1.At, pod *corev1.Pod, now time.Time) (ctrl.Result, error) {
	st := waiting(at.Status, metav1.ConditionUnknown, cnatv1alpha1.ReasonPodNameTaken,
		fmt.Sprintf("Pod %s/%s exists and is not controlled by this At; the command runs once it is deleted", pod.Namespace, pod.Name), now)
	if at.Status.Phase == cnatv1alpha1.PhaseRunning {
		// Retrying: the next attempt's name is taken. The At stays RUNNING (its schedule and command frozen),
		// and the attempt before stays recorded as failed.
		st.Phase = cnatv1alpha1.PhaseRunning
	}
	r.Metrics.ChildNotOwned("Pod")
	events := reasonEvent(at.Status, corev1.EventTypeWarning, cnatv1alpha1.ReasonPodNameTaken, "Run", st.Message)
	if err := r.writeStatus(ctx, at, st, events...); err != nil {
		return ctrl.Result{}, err
	}
	return r.RetryNotOwned(), nil
}

// cleanup deletes the pods of a finished At (one per attempt) once ttlSecondsAfterFinished passed since it
// finished, and asks to be called again exactly then.
func (r *Reconciler) cleanup(ctx context.Context, at *cnatv1alpha1.At, now time.Time) (ctrl.Result, error) {
	if at.Spec.TTLSecondsAfterFinished == nil {
		return ctrl.Result{}, nil
	}
	names := []string{PodName(at.Name)}
	for _, a := range at.Status.Attempts {
		if a.Attempt > 0 {
			names = append(names, AttemptPodName(at.Name, a.Attempt))
		}
	}
	var res ctrl.Result
	for _, name := range names {
		pod, err := r.getPod(ctx, r.Client, types.NamespacedName{Namespace: at.Namespace, Name: name})
		if err != nil {
			return ctrl.Result{}, err
		}
		if pod == nil || !metav1.IsControlledBy(pod, at) || pod.DeletionTimestamp != nil {
			continue
		}
		if res, err = r.cleanupPod(ctx, at, pod, now); err != nil || res.RequeueAfter > 0 {
			return res, err
		}
	}
	return res, nil
}

func (r *Reconciler) cleanupPod(ctx context.Context, at *cnatv1alpha1.At, pod *corev1.Pod, now time.Time) (ctrl.Result, error) {
	done := now
	if at.Status.CompletionTime != nil {
		done = at.Status.CompletionTime.Time
	}
	expiry := done.Add(time.Duration(*at.Spec.TTLSecondsAfterFinished) * time.Second)
	if wait := expiry.Sub(now); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	err := r.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return ctrl.Result{}, fmt.Errorf("deleting finished pod %s: %w", pod.Name, err)
	}
	if err == nil {
		log.FromContext(ctx).Info("finished pod deleted after its TTL", "pod", pod.Name)
		r.Recorder.Eventf(at, pod, corev1.EventTypeNormal, "PodDeleted", "Cleanup",
			"pod %s deleted %ds after the command finished", pod.Name, *at.Spec.TTLSecondsAfterFinished)
	}
	return ctrl.Result{}, nil
}

func (r *Reconciler) getPod(ctx context.Context, c client.Reader, key types.NamespacedName) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	if err := c.Get(ctx, key, pod); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading pod %s: %w", key.Name, err)
	}
	return pod, nil
}

// writeStatus writes st when it differs from the At's status, with an Event when the phase changes, and the
// events given.
func (r *Reconciler) writeStatus(ctx context.Context, at *cnatv1alpha1.At, st cnatv1alpha1.AtStatus, events ...report.Event) error {
	st = observed(st, at.Generation, r.Clock.Now())
	before := at.DeepCopy()
	at.Status = st
	if err := r.Report(ctx, before, at, append(phaseEvents(before.Status.Phase, st), events...)...); err != nil {
		return err
	}
	r.count(at, before.Status.Phase)
	return nil
}

// count tells the metrics of an At whose status, just written, moved from phase old: a run that started (its
// delay from the schedule) or ended (its result). A status written again in the same phase counts nothing.
func (r *Reconciler) count(at *cnatv1alpha1.At, old string) {
	st := at.Status
	if old == st.Phase {
		return
	}
	switch st.Phase {
	case cnatv1alpha1.PhaseRunning:
		// From PENDING, or straight from a new At's empty phase when it is due at once.
		if when, err := Schedule(at); err == nil && st.StartTime != nil {
			r.Metrics.AtStarted(st.StartTime.Sub(when))
		}
	case cnatv1alpha1.PhaseDone:
		r.Metrics.AtRunEnded("Succeeded")
	case cnatv1alpha1.PhaseFailed:
		r.Metrics.AtRunEnded("Failed")
	case cnatv1alpha1.PhaseMissed:
		r.Metrics.AtRunEnded("Missed")
	}
}

// observed is st as written for generation, observed at now: with the generation observed, and the Ready,
// Reconciling and Stalled conditions that generic tools read (verdict).
func observed(st cnatv1alpha1.AtStatus, generation int64, now time.Time) cnatv1alpha1.AtStatus {
	st = *st.DeepCopy() // st may share its conditions with the At as read, which Report compares with
	st.ObservedGeneration = generation
	if st.Phase != cnatv1alpha1.PhasePending {
		st.NextRunTime = nil // kubectl get at shows the next run of a PENDING At only
	}
	for i := range st.Conditions {
		st.Conditions[i].ObservedGeneration = generation
	}
	st.Conditions = health.Set(st.Conditions, generation, verdict(st), metav1.NewTime(now))
	return st
}

// reasonEvent is the one Event an At gets when its Succeeded condition takes reason: none when old, the status
// it had, already had that reason.
func reasonEvent(old cnatv1alpha1.AtStatus, eventType, reason, action, note string) []report.Event {
	if c := succeededCondition(old); c != nil && c.Reason == reason {
		return nil
	}
	return []report.Event{{Type: eventType, Reason: reason, Action: action, Note: note}}
}

// phaseEvents is the Event an At's move from phase old to st deserves: one when it leaves PENDING, its first
// state (kubectl get shows the schedule; an Event saying so would be one more write per At and no news).
func phaseEvents(old string, st cnatv1alpha1.AtStatus) []report.Event {
	if old == st.Phase || st.Phase == cnatv1alpha1.PhasePending {
		return nil
	}
	e := report.Event{Type: corev1.EventTypeNormal, Action: "Run", Note: st.Message}
	switch st.Phase {
	case cnatv1alpha1.PhaseRunning:
		e.Reason = "Started"
	case cnatv1alpha1.PhaseDone:
		e.Reason = "Succeeded"
	case cnatv1alpha1.PhaseFailed:
		e.Type, e.Reason = corev1.EventTypeWarning, "Failed"
	case cnatv1alpha1.PhaseMissed:
		e.Type, e.Reason = corev1.EventTypeWarning, cnatv1alpha1.ReasonMissed
	}
	return []report.Event{e}
}
