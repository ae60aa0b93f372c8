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
	"sort"
	"strings"
	"time"

	apiv2 "github.com/operator-framework/api/pkg/operators/v2"
	"github.com/operator-framework/operator-lib/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/internal/controller/reconciler"
)

// The Upgradeable gate keeps OLM's Upgradeable condition False while an At's command actually runs, so that
// OLM does not replace the operator in the middle of a run:
//   - held only by the run an At's status records, never by a pod merely labelled and owned like one: the At
//     is RUNNING (a status only the operator writes, through the status subresource), controls the pod (its
//     UID in the pod's controller reference), the pod has the one name the operator gives the At's pod
//     (PodName), and it was created at the time the At recorded as its run's start (status.startTime, the
//     creation time the API server stamped on the pod the At took for its run). Any other pod of the At, or
//     a pod of a PENDING, DONE or FAILED At, holds nothing, whoever labelled it as operator101's;
//   - held only by a pod that runs (phase Running): a pod still Pending (its image not pulled, no node for
//     it) holds nothing, and the start deadline ends it anyway;
//   - never past the pod's activeDeadlineSeconds, counted from its start (status.startTime): by then the
//     kubelet has killed the command, or the node is gone and nothing runs it any more;
//   - never past the At's own bound (runBound): its activeDeadlineSeconds plus the start deadline after the
//     run's start its status records, whatever the pod says of its own deadline or start;
//   - the message names the Ats that hold it (namespace/name, the first maxHolderNames in order, then "and N
//     more").
//
// It is its own controller with one work item, which every event of an At's pod, every change of an At's run
// (its phase, recorded start or deadline) and, at start, one initial event queue: the queue folds a burst of
// events into one look. A look lists the running At pods through a cache index (runningAtPodIndex) and reads
// each one's At from the cache, so it costs the number of running pods, never the number of Ats, sends no
// request to the API server, and an At's own reconcile pays nothing for it. It writes only when the condition
// changes: at once when its status flips, at most every messageRefresh when only the message does (the names
// or the count of the holders).

// runningAtPodIndex is the cache index of pods that run an At's command: "true" for a pod controlled by an
// At whose phase is Running; other pods are not in it.
const runningAtPodIndex = "cnat.programming-kubernetes.info/running-at-pod"

// indexRunningAtPod is the index function of runningAtPodIndex.
func indexRunningAtPod(obj client.Object) []string {
	if pod, ok := obj.(*corev1.Pod); ok && pod.Status.Phase == corev1.PodRunning && isAtPod(pod) {
		return []string{"true"}
	}
	return nil
}

// isAtPod tells whether an At controls pod.
func isAtPod(obj client.Object) bool {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != "At" {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == cnatv1alpha1.GroupVersion.Group
}

// gateRequest is the gate's one work item.
var gateRequest = ctrl.Request{NamespacedName: types.NamespacedName{Name: "upgradeable"}}

// maxHolderNames is how many Ats the message names; the rest are counted.
const maxHolderNames = 3

// messageRefresh is how often, at most, the condition is rewritten when only its message changes.
const messageRefresh = 10 * time.Second

// upgradeable is the gate's reconciler. Without an OperatorCondition it is not set up at all.
type upgradeable struct {
	cache client.Reader
	cond  conditions.Condition
	clock clock.PassiveClock
	// startDeadline is the At controller's: how long after its creation an At's pod may take to start.
	startDeadline time.Duration

	// What the OperatorCondition is known to hold (nil after a start), and when it was last written. One
	// worker: no lock.
	last      *metav1.Condition
	lastWrite time.Time
}

// Reconcile sets the condition from the running At pods in the cache and their Ats.
func (u *upgradeable) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	now := u.clock.Now()
	pods := &corev1.PodList{}
	if err := u.cache.List(ctx, pods, client.MatchingFields{runningAtPodIndex: "true"}, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the running At pods for the Upgradeable condition: %w", err)
	}
	runs := make([]run, 0, len(pods.Items))
	for i := range pods.Items {
		pod := &pods.Items[i]
		ref := metav1.GetControllerOf(pod)
		if ref == nil {
			continue
		}
		at := &cnatv1alpha1.At{}
		err := u.cache.Get(ctx, types.NamespacedName{Namespace: pod.Namespace, Name: ref.Name}, at, client.UnsafeDisableDeepCopy)
		switch {
		case apierrors.IsNotFound(err):
			continue // no At: no run (the garbage collector removes the pod)
		case err != nil:
			return ctrl.Result{}, fmt.Errorf("reading the At of pod %s/%s for the Upgradeable condition: %w", pod.Namespace, pod.Name, err)
		}
		runs = append(runs, run{pod: pod, at: at})
	}
	names, next := holders(runs, u.startDeadline, now)
	want := gateCondition(names)
	res := ctrl.Result{}
	if !next.IsZero() {
		res.RequeueAfter = next.Sub(now) // the first holder's deadline: the condition may change then
	}
	if u.last != nil && sameCondition(u.last, want) {
		return res, nil
	}
	if u.last != nil && u.last.Status == want.Status {
		if wait := u.lastWrite.Add(messageRefresh).Sub(now); wait > 0 {
			if res.RequeueAfter == 0 || wait < res.RequeueAfter {
				res.RequeueAfter = wait
			}
			return res, nil
		}
	}
	cur, err := u.cond.Get(ctx)
	switch {
	case err == nil && sameCondition(cur, want):
		u.last = &want
		return res, nil
	case conditionMissing(err) && want.Status == metav1.ConditionTrue:
		// OLM reads a missing Upgradeable condition as upgradeable: nothing to write.
		u.last = &want
		return res, nil
	}
	if err := u.cond.Set(ctx, want.Status, conditions.WithReason(want.Reason), conditions.WithMessage(want.Message)); err != nil {
		return ctrl.Result{}, fmt.Errorf("setting the OperatorCondition's Upgradeable=%s: %w", want.Status, err)
	}
	log.FromContext(ctx).Info("Upgradeable condition set", "status", want.Status, "message", want.Message)
	u.last, u.lastWrite = &want, now
	return res, nil
}

// run is a running pod an At controls, with that At, as the cache holds them.
type run struct {
	pod *corev1.Pod
	at  *cnatv1alpha1.At
}

// holders are the Ats (namespace/name, sorted) whose recorded runs (recordedRun) run at now and have reached
// neither the pod's deadline nor the At's bound, and the earliest of those deadlines (zero without holders).
// startDeadline is the At controller's.
func holders(runs []run, startDeadline time.Duration, now time.Time) ([]string, time.Time) {
	var names []string
	var next time.Time
	for _, r := range runs {
		if r.pod.Status.Phase != corev1.PodRunning || !recordedRun(r.at, r.pod) {
			continue
		}
		deadline := runDeadline(r.pod)
		if bound := runBound(r.at, startDeadline); bound.Before(deadline) {
			deadline = bound
		}
		if !now.Before(deadline) {
			continue
		}
		names = append(names, r.at.Namespace+"/"+r.at.Name)
		if next.IsZero() || deadline.Before(next) {
			next = deadline
		}
	}
	sort.Strings(names)
	return names, next
}

// recordedRun tells whether pod is the run at's status records: the At is RUNNING, it controls the pod (by
// UID), the pod has the name the operator gives the At's pod, and the pod was created when the At's run
// started (status.startTime is the creation time of the pod the At took for its run, and the API server, not
// whoever creates a pod, stamps creation times). A second pod a tenant makes for their At, under another name,
// or under the At's pod name after the recorded pod was deleted, is not the run; nor is any pod of an At that
// is PENDING, DONE or FAILED.
//
// With retries, the run is the current attempt's (currentAttempt): its pod name (AttemptPodName) and the
// creation time its record holds; an At between two attempts (retrying) holds nothing, and the pod of an
// earlier attempt is not the run.
func recordedRun(at *cnatv1alpha1.At, pod *corev1.Pod) bool {
	if at.Status.Phase != cnatv1alpha1.PhaseRunning || at.Status.StartTime == nil || !metav1.IsControlledBy(pod, at) {
		return false
	}
	attempt, retrying := currentAttempt(at.Status)
	if retrying {
		return false
	}
	started := at.Status.StartTime
	if n := len(at.Status.Attempts); n > 0 {
		started = at.Status.Attempts[n-1].StartTime
	}
	return started != nil && pod.Name == AttemptPodName(at.Name, attempt) && pod.CreationTimestamp.Equal(started)
}

// runBound is the latest moment at's run may hold the gate: its activeDeadlineSeconds (which the API server
// defaults to DefaultActiveDeadlineSeconds and caps at MaxActiveDeadlineSeconds; capped here too, for an At
// stored before the schema did) plus the start deadline, after the run's start its status records (the
// first attempt's: all attempts share one activeDeadlineSeconds, so retries never extend it). The
// kubelet counts the pod's activeDeadlineSeconds from when it accepted the pod, which is within the start
// deadline of the pod's creation, or the At controller deletes the pod. at.Status.StartTime must be set.
func runBound(at *cnatv1alpha1.At, startDeadline time.Duration) time.Time {
	secs := min(activeDeadlineSeconds(at), cnatv1alpha1.MaxActiveDeadlineSeconds)
	return at.Status.StartTime.Add(time.Duration(secs)*time.Second + startDeadline)
}

// runDeadline is when the kubelet ends a pod that still runs: its activeDeadlineSeconds (the default for a
// pod without one, made before Ats had the field) after its start (its creation until the kubelet says).
func runDeadline(pod *corev1.Pod) time.Time {
	start := pod.CreationTimestamp.Time
	if pod.Status.StartTime != nil {
		start = pod.Status.StartTime.Time
	}
	secs := int64(cnatv1alpha1.DefaultActiveDeadlineSeconds)
	if d := pod.Spec.ActiveDeadlineSeconds; d != nil && *d > 0 {
		secs = *d
	}
	return start.Add(time.Duration(secs) * time.Second)
}

// gateCondition is the Upgradeable condition the holders (sorted At names) ask for.
func gateCondition(names []string) metav1.Condition {
	c := metav1.Condition{Type: apiv2.Upgradeable, Status: metav1.ConditionTrue, Reason: cnatv1alpha1.ReasonNoAtRunning,
		Message: "no At is running a command"}
	if len(names) == 0 {
		return c
	}
	shown := strings.Join(names[:min(len(names), maxHolderNames)], ", ")
	if more := len(names) - maxHolderNames; more > 0 {
		shown += fmt.Sprintf(" and %d more", more)
	}
	c.Status, c.Reason = metav1.ConditionFalse, cnatv1alpha1.ReasonAtRunning
	if len(names) == 1 {
		c.Message = "At " + shown + " is running a command; upgrade when it finished (at the latest at its activeDeadlineSeconds)"
	} else {
		c.Message = fmt.Sprintf("%d Ats are running a command: %s; upgrade when they finished (at the latest at their activeDeadlineSeconds)",
			len(names), shown)
	}
	return c
}

// sameAttempt tells whether two statuses of an At record the same current attempt, as the gate reads it.
func sameAttempt(a, b cnatv1alpha1.AtStatus) bool {
	ka, ra := currentAttempt(a)
	kb, rb := currentAttempt(b)
	return ka == kb && ra == rb
}

func sameCondition(a *metav1.Condition, b metav1.Condition) bool {
	return a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message
}

// conditionMissing tells whether err is Get's answer for an OperatorCondition without the condition (a
// plain error saying "not found", from operator-lib and from namespacedCondition alike), not an API error.
func conditionMissing(err error) bool {
	var status apierrors.APIStatus
	return err != nil && !errors.As(err, &status) && strings.Contains(err.Error(), "not found")
}

// atPodEvents lets through the events of pods an At controls, the only pods that change the gate.
func atPodEvents() predicate.Predicate {
	return predicate.NewPredicateFuncs(isAtPod)
}

// atRunEvents lets through the events of Ats that change the gate: an At that is RUNNING appearing or going,
// and a change of an At's run (its phase, recorded start or deadline) to or from RUNNING. The pod's own
// events do not tell when its At's RUNNING reaches the cache, nor when the At goes.
func atRunEvents() predicate.Predicate {
	running := func(obj client.Object) bool {
		at, ok := obj.(*cnatv1alpha1.At)
		return ok && at.Status.Phase == cnatv1alpha1.PhaseRunning
	}
	return predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return running(e.Object) },
		DeleteFunc:  func(e event.DeleteEvent) bool { return running(e.Object) },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, ok1 := e.ObjectOld.(*cnatv1alpha1.At)
			cur, ok2 := e.ObjectNew.(*cnatv1alpha1.At)
			if !ok1 || !ok2 || (!running(old) && !running(cur)) {
				return false
			}
			return old.Status.Phase != cur.Status.Phase || !old.Status.StartTime.Equal(cur.Status.StartTime) ||
				activeDeadlineSeconds(old) != activeDeadlineSeconds(cur) || !sameAttempt(old.Status, cur.Status)
		},
	}
}

// setupUpgradeable registers the gate with the manager: the pod index, and its controller, triggered by every
// event of an At's pod, every change of an At's run and once at start. startDeadline is the At controller's.
func setupUpgradeable(mgr ctrl.Manager, o reconciler.Options, cond conditions.Condition, startDeadline time.Duration) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, runningAtPodIndex, indexRunningAtPod); err != nil {
		return fmt.Errorf("indexing running At pods: %w", err)
	}
	u := &upgradeable{cache: mgr.GetClient(), cond: cond, clock: o.Clock, startDeadline: startDeadline}
	toGate := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []ctrl.Request { return []ctrl.Request{gateRequest} })
	atStart := source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[ctrl.Request]) error {
		q.Add(gateRequest)
		return nil
	})
	o.Workers = 1
	return reconciler.Complete(ctrl.NewControllerManagedBy(mgr).
		Named("at-upgradeable").
		Watches(&corev1.Pod{}, toGate, builder.WithPredicates(atPodEvents())).
		Watches(&cnatv1alpha1.At{}, toGate, builder.WithPredicates(atRunEvents())).
		WatchesRawSource(atStart), o, u)
}

// namespacedCondition is operator-lib's conditions.Condition for an OperatorCondition whose name and namespace
// are known. Written here because operator-lib's own implementation is unexported and found only through its
// factory, which reads the key from the environment and the service account's namespace file (absent in a
// local run and in tests).
type namespacedCondition struct {
	c    client.Client
	key  types.NamespacedName
	kind apiv2.ConditionType
}

// newOperatorCondition returns the condition kind of the OperatorCondition key, read and written through c
// (an uncached client whose scheme knows operators.coreos.com/v2).
func newOperatorCondition(c client.Client, key types.NamespacedName, kind apiv2.ConditionType) conditions.Condition {
	return &namespacedCondition{c: c, key: key, kind: kind}
}

func (n *namespacedCondition) Get(ctx context.Context) (*metav1.Condition, error) {
	oc := &apiv2.OperatorCondition{}
	if err := n.c.Get(ctx, n.key, oc); err != nil {
		return nil, err
	}
	if c := meta.FindStatusCondition(oc.Spec.Conditions, string(n.kind)); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("condition %s not found in OperatorCondition %s", n.kind, n.key)
}

func (n *namespacedCondition) Set(ctx context.Context, status metav1.ConditionStatus, opts ...conditions.Option) error {
	oc := &apiv2.OperatorCondition{}
	if err := n.c.Get(ctx, n.key, oc); err != nil {
		return err
	}
	c := metav1.Condition{Type: string(n.kind), Status: status}
	for _, o := range opts {
		o(&c)
	}
	meta.SetStatusCondition(&oc.Spec.Conditions, c)
	return n.c.Update(ctx, oc)
}
