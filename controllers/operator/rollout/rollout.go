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

// Package rollout holds what the MyWeb and AppService controllers share: both run a Deployment and report it
// in the same conditions (Available, Progressing, Degraded), apply children only when they differ, and raise
// Events only when a condition changes.
package rollout

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/operator101/operator101/controllers/internal/apply"
)

// Condition types, the same for both kinds.
const (
	Available   = "Available"
	Progressing = "Progressing"
	Degraded    = "Degraded"
)

// Reasons of the conditions.
const (
	ReasonAvailable          = "MinimumReplicasAvailable"
	ReasonUnavailable        = "MinimumReplicasUnavailable"
	ReasonRollingOut         = "RollingOut"
	ReasonRolloutComplete    = "RolloutComplete"
	ReasonDeadlineExceeded   = "ProgressDeadlineExceeded"
	ReasonReplicaFailure     = "ReplicaFailure"
	ReasonNodePortInUse      = "NodePortInUse"
	ReasonNodePortOutOfRange = "NodePortOutOfRange"
	ReasonNotOwned           = "ChildNotOwned"
	ReasonApplyFailed        = "ApplyFailed"
	ReasonAsExpected         = "AsExpected"
)

// ChangedByOthers lets through the events of a custom resource that someone else than its controller made:
// creation, deletion, and updates that change its spec (generation), labels or annotations. The controller's
// own status writes are left out: each would cost a reconcile (reading and comparing three children) that
// finds nothing to do, since the status was derived from what that reconcile had observed.
func ChangedByOthers() predicate.Predicate {
	return predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
		predicate.AnnotationChangedPredicate{})
}

// How the API server says a node port belongs to another Service, and that it lies outside the cluster's
// node-port range (--service-node-port-range; the schema accepts any port, since it cannot know the range).
const (
	allocatedPort = "provided port is already allocated"
	outOfRange    = "provided port is not in the valid range"
)

// ErrNotOwned: a child's name is taken by an object the custom resource does not control.
var ErrNotOwned = errors.New("exists and is not controlled by this resource; rename or delete it")

// DegradedReason names the cause of a failed write, so that a person knows what to do.
func DegradedReason(err error) string {
	switch {
	case errors.Is(err, ErrNotOwned):
		return ReasonNotOwned
	case apierrors.IsInvalid(err) && strings.Contains(err.Error(), allocatedPort):
		return ReasonNodePortInUse
	case apierrors.IsInvalid(err) && strings.Contains(err.Error(), outOfRange):
		return ReasonNodePortOutOfRange
	}
	return ReasonApplyFailed
}

// DegradedMessage is the message of Degraded for a failed write: the API server's own words, with the advice
// that fits.
func DegradedMessage(err error) string {
	switch DegradedReason(err) {
	case ReasonNodePortInUse:
		return "a node port is already used by another Service; choose a free one: " + err.Error()
	case ReasonNodePortOutOfRange:
		return "a node port is outside the cluster's node-port range; choose one inside it: " + err.Error()
	}
	return err.Error()
}

// Found is obj when the cache had it (the API server gave it a UID), nil otherwise.
func Found[O client.Object](obj O) O {
	var zero O
	if obj.GetUID() == "" {
		return zero
	}
	return obj
}

// ApplyChild applies desired unless observed already matches it. observed is what the cache holds (empty when
// the child does not exist). An existing child must be controlled by owner: the operator does not take over
// objects it did not create.
func ApplyChild[O client.Object, A runtime.ApplyConfiguration](ctx context.Context, c client.Client, owner metav1.Object,
	kind string, observed O, desired A, extract apply.Extractor[O, A]) error {
	if observed.GetUID() != "" && !metav1.IsControlledBy(observed, owner) {
		return fmt.Errorf("%s %s/%s %w", kind, observed.GetNamespace(), observed.GetName(), ErrNotOwned)
	}
	if _, err := apply.IfChanged(ctx, c, Found(observed), desired, extract); err != nil {
		return err
	}
	return nil
}

// Input is what the conditions are computed from.
type Input struct {
	// Generation of the custom resource.
	Generation int64
	// Desired number of pods.
	Desired int32
	// Deployment as observed; nil when it does not exist yet.
	Deployment *appsv1.Deployment
	// ApplyErr is the error of writing the children; nil when they match the spec.
	ApplyErr error
	// Where tells, in the Available message, where the application is reached (may be empty). It is left out
	// while ApplyErr is set.
	Where string
	// Now is the lastTransitionTime of the conditions that change.
	Now metav1.Time
}

// Conditions returns old updated from in: Available follows the Deployment's Available condition, Progressing
// is True until every pod runs the current template, Degraded is True when the children cannot be written or
// the rollout is stuck or failing. Conditions that keep their status keep their lastTransitionTime.
func Conditions(old []metav1.Condition, in Input) []metav1.Condition {
	out := make([]metav1.Condition, len(old))
	copy(out, old)
	dep := in.Deployment
	if dep == nil {
		dep = &appsv1.Deployment{} // not created yet: no pods, nothing rolled out
	}
	ds := dep.Status
	set := func(t string, st metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&out, metav1.Condition{Type: t, Status: st, Reason: reason, Message: msg,
			ObservedGeneration: in.Generation, LastTransitionTime: in.Now})
	}

	if c := condition(dep, appsv1.DeploymentAvailable); c != nil && c.Status == corev1.ConditionTrue {
		msg := fmt.Sprintf("%d of %d pods ready", ds.ReadyReplicas, in.Desired)
		if in.Where != "" && in.ApplyErr == nil {
			// Only when every child is as specified: a Service that could not be written (a node port outside
			// the range, or taken) means the pods run but are not reached there. Degraded tells why.
			msg += "; " + in.Where
		}
		set(Available, metav1.ConditionTrue, ReasonAvailable, msg)
	} else {
		set(Available, metav1.ConditionFalse, ReasonUnavailable, fmt.Sprintf("%d of %d pods ready", ds.ReadyReplicas, in.Desired))
	}

	progress := condition(dep, appsv1.DeploymentProgressing)
	stuck := progress != nil && progress.Status == corev1.ConditionFalse && progress.Reason == ReasonDeadlineExceeded
	complete := dep.Generation > 0 && ds.ObservedGeneration >= dep.Generation &&
		ds.UpdatedReplicas == in.Desired && ds.Replicas == in.Desired && ds.AvailableReplicas == in.Desired
	switch {
	case stuck:
		set(Progressing, metav1.ConditionFalse, ReasonDeadlineExceeded, progress.Message)
	case complete:
		set(Progressing, metav1.ConditionFalse, ReasonRolloutComplete,
			fmt.Sprintf("%d of %d pods run the current spec", ds.UpdatedReplicas, in.Desired))
	default:
		set(Progressing, metav1.ConditionTrue, ReasonRollingOut,
			fmt.Sprintf("%d of %d pods run the current spec, %d available", ds.UpdatedReplicas, in.Desired, ds.AvailableReplicas))
	}

	failure := condition(dep, appsv1.DeploymentReplicaFailure)
	switch {
	case in.ApplyErr != nil:
		set(Degraded, metav1.ConditionTrue, DegradedReason(in.ApplyErr), DegradedMessage(in.ApplyErr))
	case stuck:
		set(Degraded, metav1.ConditionTrue, ReasonDeadlineExceeded,
			"the rollout is stuck (an image that does not pull, a pod that does not start?): "+progress.Message)
	case failure != nil && failure.Status == corev1.ConditionTrue:
		set(Degraded, metav1.ConditionTrue, ReasonReplicaFailure, "pods cannot be created: "+failure.Message)
	default:
		set(Degraded, metav1.ConditionFalse, ReasonAsExpected, "the children match the spec")
	}
	return out
}

func condition(dep *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range dep.Status.Conditions {
		if dep.Status.Conditions[i].Type == t {
			return &dep.Status.Conditions[i]
		}
	}
	return nil
}

// maxNote keeps an Event's note under the API server's limit of 1kB.
const maxNote = 1000

// Transition is one condition change worth an Event.
type Transition struct {
	EventType, Reason, Note string
}

// Transitions lists the condition changes from old to cur that deserve an Event, i.e. the ones a person may act
// on: Available or Degraded changing status or reason (for a new object: becoming Available or Degraded; it
// starts unavailable and progressing, which is no news), and Progressing only while the object was serving, i.e.
// the rollout of a change. The first rollout of a new object is told by one Event, Available; a stuck rollout by
// Degraded. Every Event is a write to the API server: two per new object made up a quarter of the operator's
// writes at scale (docs/performance.md).
func Transitions(old, cur []metav1.Condition) []Transition {
	var out []Transition
	serving := meta.IsStatusConditionTrue(old, Available)
	for _, c := range cur {
		prev := meta.FindStatusCondition(old, c.Type)
		if prev != nil && prev.Status == c.Status && prev.Reason == c.Reason {
			continue
		}
		if c.Type == Progressing && !serving {
			continue
		}
		if prev == nil && c.Status != metav1.ConditionTrue {
			continue
		}
		bad := (c.Type == Degraded && c.Status == metav1.ConditionTrue) ||
			(c.Type == Available && c.Status == metav1.ConditionFalse)
		t := corev1.EventTypeNormal
		if bad {
			t = corev1.EventTypeWarning
		}
		note := c.Type + "=" + string(c.Status) + ": " + c.Message
		if len(note) > maxNote {
			note = note[:maxNote-3] + "..."
		}
		out = append(out, Transition{EventType: t, Reason: c.Reason, Note: note})
	}
	return out
}
