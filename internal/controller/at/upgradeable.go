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
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/internal/controller/kit"
)

// The Upgradeable gate keeps OLM's Upgradeable condition False while an At's command actually runs, so that
// OLM does not replace the operator in the middle of a run:
//   - held only by a pod that runs (phase Running): a pod still Pending (its image not pulled, no node for
//     it) holds nothing, and the start deadline ends it anyway;
//   - never past the pod's activeDeadlineSeconds, counted from its start (status.startTime): by then the
//     kubelet has killed the command, or the node is gone and nothing runs it any more;
//   - the message names the Ats that hold it (namespace/name, the first maxHolderNames in order, then "and N
//     more").
//
// It is its own controller with one work item, which every event of an At's pod (and, at start, one initial
// event) queues: the queue folds a burst of events into one look. A look lists the running At pods through a
// cache index (runningAtPodIndex), so it costs the number of running pods, never the number of Ats, and an
// At's own reconcile pays nothing for it. It writes only when the condition changes: at once when its status
// flips, at most every messageRefresh when only the message does (the names or the count of the holders).

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

	// What the OperatorCondition is known to hold (nil after a start), and when it was last written. One
	// worker: no lock.
	last      *metav1.Condition
	lastWrite time.Time
}

// Reconcile sets the condition from the running At pods in the cache.
func (u *upgradeable) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	now := u.clock.Now()
	pods := &corev1.PodList{}
	if err := u.cache.List(ctx, pods, client.MatchingFields{runningAtPodIndex: "true"}, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the running At pods for the Upgradeable condition: %w", err)
	}
	names, next := holders(pods.Items, now)
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

// holders are the Ats (namespace/name, sorted) whose pods run at now and have not reached their deadline, and
// the earliest of those deadlines (zero without holders).
func holders(pods []corev1.Pod, now time.Time) ([]string, time.Time) {
	var names []string
	var next time.Time
	for i := range pods {
		pod := &pods[i]
		ref := metav1.GetControllerOf(pod)
		if pod.Status.Phase != corev1.PodRunning || ref == nil {
			continue
		}
		deadline := runDeadline(pod)
		if !now.Before(deadline) {
			continue
		}
		names = append(names, pod.Namespace+"/"+ref.Name)
		if next.IsZero() || deadline.Before(next) {
			next = deadline
		}
	}
	sort.Strings(names)
	return names, next
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

func sameCondition(a *metav1.Condition, b metav1.Condition) bool {
	return a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message
}

// conditionMissing tells whether err is Get's answer for an OperatorCondition without the condition (a
// plain error saying "not found", from operator-lib and from namespacedCondition alike), not an API error.
func conditionMissing(err error) bool {
	var status apierrors.APIStatus
	return err != nil && !errors.As(err, &status) && strings.Contains(err.Error(), "not found")
}

// atPodEvents lets through the events of pods an At controls, the only ones that change the gate.
func atPodEvents() predicate.Predicate {
	return predicate.NewPredicateFuncs(isAtPod)
}

// setupUpgradeable registers the gate with the manager: the pod index, and its controller, triggered by every
// event of an At's pod and once at start.
func setupUpgradeable(mgr ctrl.Manager, o kit.Options, cond conditions.Condition) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, runningAtPodIndex, indexRunningAtPod); err != nil {
		return fmt.Errorf("indexing running At pods: %w", err)
	}
	u := &upgradeable{cache: mgr.GetClient(), cond: cond, clock: o.Clock}
	toGate := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []ctrl.Request { return []ctrl.Request{gateRequest} })
	atStart := source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[ctrl.Request]) error {
		q.Add(gateRequest)
		return nil
	})
	o.Workers = 1
	return kit.Complete(ctrl.NewControllerManagedBy(mgr).
		Named("at-upgradeable").
		Watches(&corev1.Pod{}, toGate, builder.WithPredicates(atPodEvents())).
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
