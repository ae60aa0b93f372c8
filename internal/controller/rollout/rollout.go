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

// The conditions of a kind that runs a Deployment (MyWeb, AppService): Available, Progressing and Degraded,
// derived from the Deployment and from the error of writing the children, and the Events their transitions
// deserve.
package rollout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator101/operator101/api/conditions"
	"github.com/operator101/operator101/internal/controller/apply"
	"github.com/operator101/operator101/internal/controller/health"
	"github.com/operator101/operator101/internal/controller/report"
)

// How the API server says a node port belongs to another Service, and that it lies outside the cluster's
// node-port range (--service-node-port-range; the schema accepts any port, since it cannot know the range).
const (
	allocatedPort = "provided port is already allocated"
	outOfRange    = "provided port is not in the valid range"
)

// DegradedReason names the cause of a failed write, so that a person knows what to do.
func DegradedReason(err error) string {
	switch {
	case errors.Is(err, apply.ErrNotOwned):
		return conditions.ReasonNotOwned
	case apierrors.IsInvalid(err) && strings.Contains(err.Error(), allocatedPort):
		return conditions.ReasonNodePortInUse
	case apierrors.IsInvalid(err) && strings.Contains(err.Error(), outOfRange):
		return conditions.ReasonNodePortOutOfRange
	}
	return conditions.ReasonApplyFailed
}

// DegradedMessage is the message of Degraded for a failed write: the API server's own words, with the advice
// that fits.
func DegradedMessage(err error) string {
	switch DegradedReason(err) {
	case conditions.ReasonNodePortInUse:
		return "a node port is already used by another Service; choose a free one: " + err.Error()
	case conditions.ReasonNodePortOutOfRange:
		return "a node port is outside the cluster's node-port range; choose one inside it: " + err.Error()
	}
	return err.Error()
}

// Input is what the rollout conditions are computed from.
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
	// ProbeFailing says which pods run but fail their readiness probe (ProbeFailures); empty when none do.
	ProbeFailing string
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
		set(conditions.Available, metav1.ConditionTrue, conditions.ReasonAvailable, msg)
	} else if in.ProbeFailing != "" {
		set(conditions.Available, metav1.ConditionFalse, conditions.ReasonProbeFailing,
			fmt.Sprintf("%d of %d pods ready; %s", ds.ReadyReplicas, in.Desired, in.ProbeFailing))
	} else {
		set(conditions.Available, metav1.ConditionFalse, conditions.ReasonUnavailable, fmt.Sprintf("%d of %d pods ready", ds.ReadyReplicas, in.Desired))
	}

	progress := condition(dep, appsv1.DeploymentProgressing)
	stuck := progress != nil && progress.Status == corev1.ConditionFalse && progress.Reason == conditions.ReasonDeadlineExceeded
	complete := dep.Generation > 0 && ds.ObservedGeneration >= dep.Generation &&
		ds.UpdatedReplicas == in.Desired && ds.Replicas == in.Desired && ds.AvailableReplicas == in.Desired
	switch {
	case stuck:
		set(conditions.Progressing, metav1.ConditionFalse, conditions.ReasonDeadlineExceeded, progress.Message)
	case complete:
		set(conditions.Progressing, metav1.ConditionFalse, conditions.ReasonRolloutComplete,
			fmt.Sprintf("%d of %d pods run the current spec", ds.UpdatedReplicas, in.Desired))
	case in.ProbeFailing != "":
		set(conditions.Progressing, metav1.ConditionTrue, conditions.ReasonProbeFailing,
			fmt.Sprintf("%d of %d pods run the current spec, %d available; %s", ds.UpdatedReplicas, in.Desired, ds.AvailableReplicas, in.ProbeFailing))
	default:
		set(conditions.Progressing, metav1.ConditionTrue, conditions.ReasonRollingOut,
			fmt.Sprintf("%d of %d pods run the current spec, %d available", ds.UpdatedReplicas, in.Desired, ds.AvailableReplicas))
	}

	failure := condition(dep, appsv1.DeploymentReplicaFailure)
	switch {
	case in.ApplyErr != nil:
		set(conditions.Degraded, metav1.ConditionTrue, DegradedReason(in.ApplyErr), DegradedMessage(in.ApplyErr))
	case stuck:
		set(conditions.Degraded, metav1.ConditionTrue, conditions.ReasonDeadlineExceeded,
			"the rollout is stuck (an image that does not pull, a pod that does not start?): "+progress.Message)
	case failure != nil && failure.Status == corev1.ConditionTrue:
		set(conditions.Degraded, metav1.ConditionTrue, conditions.ReasonReplicaFailure, "pods cannot be created: "+failure.Message)
	default:
		set(conditions.Degraded, metav1.ConditionFalse, conditions.ReasonAsExpected, "the children match the spec")
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

// Events lists the condition changes from old to cur that deserve an Event, i.e. the ones a person may act
// on: Available or Degraded changing status or reason (for a new object: becoming Available or Degraded; it
// starts unavailable and progressing, which is no news), and Progressing only while the object was serving, i.e.
// the rollout of a change. The first rollout of a new object is told by one Event, Available; a stuck rollout by
// Degraded. Every Event is a write to the API server: two per new object made up a quarter of the operator's
// writes at scale (docs/contributing/performance.md).
func Events(old, cur []metav1.Condition) []report.Event {
	var out []report.Event
	serving := meta.IsStatusConditionTrue(old, conditions.Available)
	for _, c := range cur {
		if health.Kstatus(c.Type) {
			continue // Available, Progressing and Degraded tell each transition already
		}
		prev := meta.FindStatusCondition(old, c.Type)
		if prev != nil && prev.Status == c.Status && prev.Reason == c.Reason {
			continue
		}
		if c.Type == conditions.Progressing && !serving {
			continue
		}
		if prev == nil && c.Status != metav1.ConditionTrue {
			continue
		}
		bad := (c.Type == conditions.Degraded && c.Status == metav1.ConditionTrue) ||
			(c.Type == conditions.Available && c.Status == metav1.ConditionFalse)
		t := corev1.EventTypeNormal
		if bad {
			t = corev1.EventTypeWarning
		}
		out = append(out, report.Event{Type: t, Reason: c.Reason, Action: "Reconcile",
			Note: c.Type + "=" + string(c.Status) + ": " + c.Message})
	}
	return out
}

// DeploymentUnseen tells whether a reconcile that wrote its children without an error should end without a
// status, with UnseenRetry as its result: the cache has not seen the Deployment (dep is what it holds), which
// has just been written. The Deployment's event brings the reconcile that reports its rollout from what it
// shows; a status written now would say only that nothing was observed yet, one write more for every new
// object.
func DeploymentUnseen(dep *appsv1.Deployment, applyErr error) bool {
	return applyErr == nil && dep.GetUID() == ""
}

// UnseenRetry is the result of a reconcile that ends without a status (DeploymentUnseen): should the
// Deployment's event never come (a watch that relisted after the Deployment's label was removed), the object
// is looked at again in 30 s. The event, which normally comes within milliseconds, replaces it in the queue.
func UnseenRetry() ctrl.Result { return ctrl.Result{RequeueAfter: 30 * time.Second} }

// probeGrace is how long a container runs unready before it counts as failing its readiness probe rather than
// starting: three default periods.
const probeGrace = 15 * time.Second

// ProbeFailures tells which of pods run a container that has not passed its readiness probe for probeGrace
// (a message naming the first and how many they are; empty when none), and, when some are unready but do not
// count yet, when to look again (0 when none): a container that runs unready for less, when it would count; one
// that does not run yet (a pod being scheduled, an image being pulled, a container waiting to restart), after
// probeGrace. Nothing else would bring that look: a container that starts, and then fails its probe, changes
// nothing in its Deployment's status, whose changes are what the reconcilers watch.
func ProbeFailures(pods []corev1.Pod, now time.Time) (string, time.Duration) {
	var first string
	var failing int
	var recheck time.Duration
	later := func(wait time.Duration) {
		if recheck == 0 || wait < recheck {
			recheck = wait
		}
	}
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if len(p.Status.ContainerStatuses) == 0 {
			later(probeGrace) // not started yet
			continue
		}
		for _, c := range p.Status.ContainerStatuses {
			if c.Ready {
				continue
			}
			if c.State.Running == nil {
				later(probeGrace)
				continue
			}
			running := now.Sub(c.State.Running.StartedAt.Time)
			if running < probeGrace {
				later(probeGrace - running)
				continue
			}
			failing++
			if first == "" {
				first = fmt.Sprintf("container %s of pod %s has run for %s without passing its readiness probe (kubectl describe pod %s shows why)",
					c.Name, p.Name, running.Round(time.Second), p.Name)
			}
			break
		}
	}
	switch failing {
	case 0:
		return "", recheck
	case 1:
		return first, recheck
	}
	return fmt.Sprintf("%s, and %d more pods alike", first, failing-1), recheck
}

// CheckProbes lists, past the cache (reader), the pods matching podLabels in namespace when dep (as the cache
// holds it; nil when there is none) has pods that are not ready, and says what ProbeFailures finds of them.
// It reads nothing when every pod is ready: a converged object costs no lookup.
func CheckProbes(ctx context.Context, reader client.Reader, dep *appsv1.Deployment, namespace string, podLabels map[string]string,
	now time.Time) (string, time.Duration, error) {
	if dep == nil || dep.Status.Replicas <= dep.Status.ReadyReplicas {
		return "", 0, nil
	}
	pods := &corev1.PodList{}
	if err := reader.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels(podLabels)); err != nil {
		return "", 0, fmt.Errorf("listing the pods of Deployment %s/%s: %w", namespace, dep.Name, err)
	}
	msg, recheck := ProbeFailures(pods.Items, now)
	return msg, recheck, nil
}

// RecheckProbes is a reconcile's result res, err, looking again after recheck (when not 0) if it would not
// otherwise: a pod still starting then counts as failing its probe, which no watch event would tell.
func RecheckProbes(res ctrl.Result, err error, recheck time.Duration) (ctrl.Result, error) {
	if err == nil && res.IsZero() && recheck > 0 {
		res.RequeueAfter = recheck
	}
	return res, err
}
