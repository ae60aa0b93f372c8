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

package rollout

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/operator101/operator101/api/conditions"
	"github.com/operator101/operator101/internal/controller/apply"
	"github.com/operator101/operator101/internal/controller/health"
)

func dep(replicas, ready, updated, available int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	d.Generation = 2
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: replicas, ReadyReplicas: ready,
		UpdatedReplicas: updated, AvailableReplicas: available, Conditions: conds}
	return d
}

func cond(t appsv1.DeploymentConditionType, s corev1.ConditionStatus, reason, msg string) appsv1.DeploymentCondition {
	return appsv1.DeploymentCondition{Type: t, Status: s, Reason: reason, Message: msg}
}

var nodePortTaken = apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, "web", field.ErrorList{
	field.Invalid(field.NewPath("spec", "ports").Index(0).Child("nodePort"), 30100, "provided port is already allocated")})

// nodePortOutOfRange is the API server's answer to a node port outside --service-node-port-range.
var nodePortOutOfRange = apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, "web", field.ErrorList{
	field.Invalid(field.NewPath("spec", "ports").Index(0).Child("nodePort"), 80,
		"provided port is not in the valid range. The range of valid ports is 30000-32767")})

func TestConditions(t *testing.T) {
	availableTrue := cond(appsv1.DeploymentAvailable, corev1.ConditionTrue, "MinimumReplicasAvailable", "")
	cases := []struct {
		name                                string
		in                                  Input
		available, progressing, degraded    metav1.ConditionStatus
		availReason, progReason, degrReason string
	}{
		{"no Deployment yet", Input{Desired: 1},
			"False", "True", "False", conditions.ReasonUnavailable, conditions.ReasonRollingOut, conditions.ReasonAsExpected},
		{"rolled out", Input{Desired: 2, Deployment: dep(2, 2, 2, 2, availableTrue)},
			"True", "False", "False", conditions.ReasonAvailable, conditions.ReasonRolloutComplete, conditions.ReasonAsExpected},
		{"rolling out, still available", Input{Desired: 3, Deployment: dep(3, 2, 1, 2, availableTrue)},
			"True", "True", "False", conditions.ReasonAvailable, conditions.ReasonRollingOut, conditions.ReasonAsExpected},
		{"rollout stuck: image does not pull", Input{Desired: 1, Deployment: dep(1, 0, 1, 0,
			cond(appsv1.DeploymentProgressing, corev1.ConditionFalse, conditions.ReasonDeadlineExceeded, `ReplicaSet "w-1" has timed out progressing.`))},
			"False", "False", "True", conditions.ReasonUnavailable, conditions.ReasonDeadlineExceeded, conditions.ReasonDeadlineExceeded},
		{"replica failure (quota)", Input{Desired: 1, Deployment: dep(0, 0, 0, 0,
			cond(appsv1.DeploymentReplicaFailure, corev1.ConditionTrue, "FailedCreate", "exceeded quota"))},
			"False", "True", "True", conditions.ReasonUnavailable, conditions.ReasonRollingOut, conditions.ReasonReplicaFailure},
		{"node port taken", Input{Desired: 1, ApplyErr: fmt.Errorf("applying Service ns/web: %w", nodePortTaken)},
			"False", "True", "True", conditions.ReasonUnavailable, conditions.ReasonRollingOut, conditions.ReasonNodePortInUse},
		{"node port outside the cluster's range", Input{Desired: 1, ApplyErr: fmt.Errorf("applying Service ns/web: %w", nodePortOutOfRange)},
			"False", "True", "True", conditions.ReasonUnavailable, conditions.ReasonRollingOut, conditions.ReasonNodePortOutOfRange},
		{"child not owned", Input{Desired: 1, ApplyErr: fmt.Errorf("Service ns/web %w", apply.ErrNotOwned)},
			"False", "True", "True", conditions.ReasonUnavailable, conditions.ReasonRollingOut, conditions.ReasonNotOwned},
		{"scaled to zero", Input{Desired: 0, Deployment: dep(0, 0, 0, 0, availableTrue)},
			"True", "False", "False", conditions.ReasonAvailable, conditions.ReasonRolloutComplete, conditions.ReasonAsExpected},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Conditions(nil, tc.in)
			for _, want := range []struct {
				typ    string
				status metav1.ConditionStatus
				reason string
			}{{conditions.Available, tc.available, tc.availReason}, {conditions.Progressing, tc.progressing, tc.progReason}, {conditions.Degraded, tc.degraded, tc.degrReason}} {
				c := meta.FindStatusCondition(got, want.typ)
				if c == nil || c.Status != want.status || c.Reason != want.reason || c.Message == "" {
					t.Errorf("%s = %+v, want %s/%s with a message", want.typ, c, want.status, want.reason)
				}
			}
		})
	}
}

func TestNodePortMessageSaysWhatToDo(t *testing.T) {
	c := meta.FindStatusCondition(Conditions(nil, Input{ApplyErr: nodePortTaken}), conditions.Degraded)
	if c == nil || c.Message[:40] != "a node port is already used by another S" {
		t.Errorf("Degraded = %+v", c)
	}
}

func TestConditionsKeepTransitionTimes(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Hour))
	first := Conditions(nil, Input{Desired: 1, Now: t0})
	again := Conditions(first, Input{Desired: 1, Now: t1})
	for _, c := range again {
		if !c.LastTransitionTime.Equal(&t0) {
			t.Errorf("%s moved its lastTransitionTime without a change", c.Type)
		}
	}
	avail := Conditions(first, Input{Desired: 1, Now: t1, Deployment: dep(1, 1, 1, 1,
		cond(appsv1.DeploymentAvailable, corev1.ConditionTrue, "", ""))})
	if c := meta.FindStatusCondition(avail, conditions.Available); !c.LastTransitionTime.Equal(&t1) {
		t.Errorf("Available turned True at %v, want %v", c.LastTransitionTime, t1)
	}
}

func TestEvents(t *testing.T) {
	start := Conditions(nil, Input{Desired: 1})
	if got := Events(nil, start); len(got) != 0 {
		t.Errorf("a new object raised %+v; it starts unavailable and progressing, no news", got)
	}
	if got := Events(start, start); len(got) != 0 {
		t.Errorf("no change raised %+v", got)
	}
	degraded := Conditions(start, Input{Desired: 1, ApplyErr: nodePortTaken})
	got := Events(start, degraded)
	if len(got) != 1 || got[0].Type != corev1.EventTypeWarning || got[0].Reason != conditions.ReasonNodePortInUse {
		t.Errorf("Degraded raised %+v, want one Warning NodePortInUse", got)
	}
	healed := Conditions(degraded, Input{Desired: 1})
	got = Events(degraded, healed)
	if len(got) != 1 || got[0].Type != corev1.EventTypeNormal || got[0].Reason != conditions.ReasonAsExpected {
		t.Errorf("recovery raised %+v, want one Normal AsExpected", got)
	}
	// The first rollout of a new object: one Event, Available; not also "Progressing: complete".
	availableTrue := cond(appsv1.DeploymentAvailable, corev1.ConditionTrue, "MinimumReplicasAvailable", "")
	up := Conditions(start, Input{Desired: 1, Deployment: dep(1, 1, 1, 1, availableTrue)})
	got = Events(start, up)
	if len(got) != 1 || got[0].Reason != conditions.ReasonAvailable || got[0].Type != corev1.EventTypeNormal {
		t.Errorf("first rollout raised %+v, want one Normal %s", got, conditions.ReasonAvailable)
	}
	// A change rolled out while serving: an Event when it starts and one when it is done.
	rolling := Conditions(up, Input{Generation: 2, Desired: 2, Deployment: dep(2, 1, 1, 1, availableTrue)})
	got = Events(up, rolling)
	if len(got) != 1 || got[0].Reason != conditions.ReasonRollingOut {
		t.Errorf("a rollout of a change raised %+v, want one %s", got, conditions.ReasonRollingOut)
	}
	done := Conditions(rolling, Input{Generation: 2, Desired: 2, Deployment: dep(2, 2, 2, 2, availableTrue)})
	got = Events(rolling, done)
	if len(got) != 1 || got[0].Reason != conditions.ReasonRolloutComplete {
		t.Errorf("the end of a rollout raised %+v, want one %s", got, conditions.ReasonRolloutComplete)
	}
}

func TestDegradedMessage(t *testing.T) {
	for _, tc := range []struct {
		err        error
		reason     string
		wantPrefix string
		wantInside string
	}{
		{nodePortTaken, conditions.ReasonNodePortInUse, "a node port is already used by another Service; choose a free one: ", "already allocated"},
		{nodePortOutOfRange, conditions.ReasonNodePortOutOfRange, "a node port is outside the cluster's node-port range; choose one inside it: ",
			"The range of valid ports is 30000-32767"},
		{fmt.Errorf("Service ns/web %w", apply.ErrNotOwned), conditions.ReasonNotOwned, "Service ns/web exists", "not controlled"},
	} {
		if got := DegradedReason(tc.err); got != tc.reason {
			t.Errorf("DegradedReason(%v) = %s, want %s", tc.err, got, tc.reason)
		}
		msg := DegradedMessage(tc.err)
		if !strings.HasPrefix(msg, tc.wantPrefix) || !strings.Contains(msg, tc.wantInside) {
			t.Errorf("DegradedMessage(%v) = %q, want it to start with %q and name %q", tc.err, msg, tc.wantPrefix, tc.wantInside)
		}
	}
}

// A Deployment that runs while the Service cannot be written: Available (the pods serve), but the message does
// not claim the address the Service would have given; Degraded says why.
func TestAvailableMessageOnlyClaimsTheAddressWhenChildrenApplied(t *testing.T) {
	availableTrue := cond(appsv1.DeploymentAvailable, corev1.ConditionTrue, "MinimumReplicasAvailable", "")
	in := Input{Desired: 1, Deployment: dep(1, 1, 1, 1, availableTrue), Where: "the page is served at http://NODE:30100/"}
	ok := meta.FindStatusCondition(Conditions(nil, in), conditions.Available)
	if !strings.Contains(ok.Message, "served at http://NODE:30100/") {
		t.Errorf("Available message %q does not say where the page is served", ok.Message)
	}
	in.ApplyErr = nodePortOutOfRange
	conds := Conditions(nil, in)
	if c := meta.FindStatusCondition(conds, conditions.Available); c.Status != metav1.ConditionTrue || strings.Contains(c.Message, "served at") {
		t.Errorf("Available with the Service not written: %s %q; want True without the address", c.Status, c.Message)
	}
	if !meta.IsStatusConditionTrue(conds, conditions.Degraded) {
		t.Error("Degraded is not True while the Service cannot be written")
	}
}

// Ready, Reconciling and Stalled, set beside the rollout's conditions, add no Event: Available, Progressing
// and Degraded tell each transition already.
func TestEventsLeaveKstatusConditionsOut(t *testing.T) {
	withHealth := func(c []metav1.Condition) []metav1.Condition {
		return health.Set(c, 1, health.Rollout(c), metav1.Now())
	}
	start := withHealth(Conditions(nil, Input{Desired: 1}))
	if got := Events(nil, start); len(got) != 0 {
		t.Errorf("a new object raised %+v", got)
	}
	degraded := withHealth(Conditions(start, Input{Desired: 1, ApplyErr: nodePortTaken}))
	if got := Events(start, degraded); len(got) != 1 || got[0].Reason != conditions.ReasonNodePortInUse {
		t.Errorf("Degraded (and Stalled) raised %+v, want one NodePortInUse", got)
	}
}

// A container that runs unready past its start-up fails its readiness probe; one that just started, or that
// does not run, does not count, and the first to count says when to look again: a starting one when it would,
// one not running yet (or a pod with no container started) after the start-up's grace, since nothing tells the
// reconciler when it starts. Finished and deleted pods do not count.
func TestProbeFailures(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	pod := func(name string, ready bool, runningFor time.Duration) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
		st := corev1.ContainerStatus{Name: "web", Ready: ready}
		if runningFor >= 0 {
			st.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(now.Add(-runningFor))}
		} else {
			st.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ErrImagePull"}
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{st}
		return p
	}
	pending := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	failed := pod("f", false, -1)
	failed.Status.Phase = corev1.PodFailed
	deleted := pod("d", false, -1)
	deleted.DeletionTimestamp = &metav1.Time{Time: now}
	cases := []struct {
		name        string
		pods        []corev1.Pod
		want        string
		wantRecheck time.Duration
	}{
		{"all ready", []corev1.Pod{pod("a", true, time.Hour)}, "", 0},
		{"not running", []corev1.Pod{pod("a", false, -1)}, "", probeGrace},
		{"not started", []corev1.Pod{pending}, "", probeGrace},
		{"finished or deleted", []corev1.Pod{failed, deleted}, "", 0},
		{"starting", []corev1.Pod{pod("a", false, 5*time.Second)}, "", 10 * time.Second},
		{"starting, and one not running", []corev1.Pod{pod("a", false, -1), pod("b", false, 5*time.Second)}, "", 10 * time.Second},
		{"failing", []corev1.Pod{pod("a", true, time.Hour), pod("b", false, time.Minute)}, "container web of pod b has run for 1m0s", 0},
		{"two failing, one starting", []corev1.Pod{pod("b", false, time.Minute), pod("c", false, time.Hour), pod("d", false, 3*time.Second)},
			"and 1 more pods alike", 12 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, recheck := ProbeFailures(tc.pods, now)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("message %q, want one containing %q", got, tc.want)
			}
			if recheck != tc.wantRecheck {
				t.Errorf("recheck %s, want %s", recheck, tc.wantRecheck)
			}
		})
	}

	in := Input{Generation: 1, Desired: 2, Deployment: dep(2, 1, 2, 1), ProbeFailing: "container web of pod b fails"}
	out := Conditions(nil, in)
	if c := meta.FindStatusCondition(out, conditions.Available); c == nil || c.Reason != conditions.ReasonProbeFailing ||
		!strings.Contains(c.Message, "pod b") {
		t.Errorf("Available %+v, want False, %s, naming the pod", c, conditions.ReasonProbeFailing)
	}
	if c := meta.FindStatusCondition(out, conditions.Progressing); c == nil || c.Reason != conditions.ReasonProbeFailing {
		t.Errorf("Progressing %+v, want %s", c, conditions.ReasonProbeFailing)
	}
}
