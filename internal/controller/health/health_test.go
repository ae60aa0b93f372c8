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

package health_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/operator101/operator101/api/conditions"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/controller/health"
	"github.com/operator101/operator101/test/kstatustest"
)

// Each State reads as kstatus' own status of the same name, with exactly one of the three conditions True;
// an object whose newest generation is not observed yet, or that is being deleted, reads as kstatus says.
func TestSetReadsThroughKstatus(t *testing.T) {
	now := metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name     string
		state    health.State
		observed int64
		deleting bool
		want     status.Status
	}{
		{"current", health.Current, 2, false, status.CurrentStatus},
		{"in progress", health.InProgress, 2, false, status.InProgressStatus},
		{"failed", health.Failed, 2, false, status.FailedStatus},
		{"generation not observed", health.Current, 1, false, status.InProgressStatus},
		{"deleted", health.Current, 2, true, status.TerminatingStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &operatorv1.MyWeb{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", Generation: 2}}
			if tc.deleting {
				w.DeletionTimestamp = &now
			}
			w.Status.ObservedGeneration = tc.observed
			w.Status.Conditions = health.Set(nil, tc.observed, health.Verdict{State: tc.state, Reason: "Why", Message: "because"}, now)
			trues := 0
			for _, c := range w.Status.Conditions {
				if c.Status == metav1.ConditionTrue {
					trues++
				}
			}
			if trues != 1 || len(w.Status.Conditions) != 3 {
				t.Errorf("conditions %+v: want Ready, Reconciling and Stalled, one of them True", w.Status.Conditions)
			}
			if got := kstatustest.Compute(t, w, operatorv1.GroupVersion.WithKind("MyWeb")); got.Status != tc.want {
				t.Errorf("kstatus says %s (%s), want %s", got.Status, got.Message, tc.want)
			}
		})
	}
}

// A verdict that does not change keeps every lastTransitionTime: a converged object's status is not rewritten.
func TestSetKeepsTransitionTimes(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Hour))
	v := health.Verdict{State: health.InProgress, Reason: "RollingOut", Message: "1 of 2"}
	first := health.Set(nil, 1, v, t0)
	again := health.Set(first, 1, v, t1)
	for _, c := range again {
		if !c.LastTransitionTime.Equal(&t0) {
			t.Errorf("%s moved its lastTransitionTime to %v", c.Type, c.LastTransitionTime)
		}
	}
	done := health.Set(again, 1, health.Verdict{State: health.Current, Reason: "Done", Message: "2 of 2"}, t1)
	if c := meta.FindStatusCondition(done, conditions.Stalled); !c.LastTransitionTime.Equal(&t0) {
		t.Errorf("Stalled stayed False but moved to %v", c.LastTransitionTime)
	}
	if c := meta.FindStatusCondition(done, conditions.Ready); c.Status != metav1.ConditionTrue || !c.LastTransitionTime.Equal(&t1) {
		t.Errorf("Ready = %+v, want True since t1", c)
	}
}

func TestRollout(t *testing.T) {
	cond := func(typ string, st metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: st, Reason: reason}
	}
	for _, tc := range []struct {
		name  string
		conds []metav1.Condition
		want  health.State
	}{
		{"nothing observed", nil, health.InProgress},
		{"first rollout", []metav1.Condition{cond(conditions.Available, "False", conditions.ReasonUnavailable),
			cond(conditions.Progressing, "True", conditions.ReasonRollingOut), cond(conditions.Degraded, "False", conditions.ReasonAsExpected)}, health.InProgress},
		{"available", []metav1.Condition{cond(conditions.Available, "True", conditions.ReasonAvailable),
			cond(conditions.Progressing, "False", conditions.ReasonRolloutComplete), cond(conditions.Degraded, "False", conditions.ReasonAsExpected)}, health.Current},
		{"serving while rolling out a change", []metav1.Condition{cond(conditions.Available, "True", conditions.ReasonAvailable),
			cond(conditions.Progressing, "True", conditions.ReasonRollingOut), cond(conditions.Degraded, "False", conditions.ReasonAsExpected)}, health.InProgress},
		{"lost pods", []metav1.Condition{cond(conditions.Available, "False", conditions.ReasonUnavailable),
			cond(conditions.Progressing, "False", conditions.ReasonRolloutComplete), cond(conditions.Degraded, "False", conditions.ReasonAsExpected)}, health.InProgress},
		{"degraded while available", []metav1.Condition{cond(conditions.Available, "True", conditions.ReasonAvailable),
			cond(conditions.Progressing, "False", conditions.ReasonRolloutComplete), cond(conditions.Degraded, "True", conditions.ReasonNotOwned)}, health.Failed},
	} {
		if got := health.Rollout(tc.conds); got.State != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got.State, tc.want)
		}
	}
}
