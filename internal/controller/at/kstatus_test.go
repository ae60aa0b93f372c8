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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/api/conditions"
	"github.com/operator101/operator101/test/kstatustest"
)

// kstatus, as Flux and kpt read it, tells each state of an At. A far-off schedule is Ready (Current): the At
// is accepted and on track, so `kubectl wait --for=condition=Ready` and a Flux health check do not wait for
// the command to run; FAILED and MISSED are Failed, never Current.
func TestKstatus(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := func(phase corev1.PodPhase) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a-pod", CreationTimestamp: metav1.NewTime(now)}}
		p.Status.Phase = phase
		return p
	}
	empty := cnatv1alpha1.AtStatus{}
	for _, tc := range []struct {
		name     string
		st       cnatv1alpha1.AtStatus
		deleting bool
		want     status.Status
		ready    bool
	}{
		{"pending, a year ahead", pending(empty, now.AddDate(1, 0, 0), now), false, status.CurrentStatus, true},
		{"suspended", suspended(empty, now.Add(time.Hour), now), false, status.CurrentStatus, true},
		{"running", fromPod(empty, pod(corev1.PodRunning), now), false, status.CurrentStatus, true},
		{"done", fromPod(empty, pod(corev1.PodSucceeded), now), false, status.CurrentStatus, true},
		{"failed", fromPod(empty, pod(corev1.PodFailed), now), false, status.FailedStatus, false},
		{"pod deleted", podLost(empty, "a-pod", now), false, status.FailedStatus, false},
		{"missed", missed(empty, now.Add(-time.Hour), time.Minute, false, now), false, status.FailedStatus, false},
		{"unknown time zone", waiting(empty, metav1.ConditionFalse, cnatv1alpha1.ReasonUnknownTimeZone, "no zone Mars/Base", now),
			false, status.FailedStatus, false},
		{"pod name taken", waiting(empty, metav1.ConditionUnknown, cnatv1alpha1.ReasonPodNameTaken, "taken", now),
			false, status.FailedStatus, false},
		{"pod name taken between two attempts", func() cnatv1alpha1.AtStatus {
			s := waiting(empty, metav1.ConditionUnknown, cnatv1alpha1.ReasonPodNameTaken, "taken", now)
			s.Phase = cnatv1alpha1.PhaseRunning
			return s
		}(), false, status.FailedStatus, false},
		{"deleted", pending(empty, now.Add(time.Hour), now), true, status.TerminatingStatus, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Generation: 3}}
			if tc.deleting {
				at.DeletionTimestamp = &metav1.Time{Time: now}
			}
			at.Status = observed(tc.st, at.Generation, now)
			if got := kstatustest.Compute(t, at, cnatv1alpha1.GroupVersion.WithKind("At")); got.Status != tc.want {
				t.Errorf("kstatus says %s (%s), want %s; conditions %+v", got.Status, got.Message, tc.want, at.Status.Conditions)
			}
			if got := meta.IsStatusConditionTrue(at.Status.Conditions, conditions.Ready); got != tc.ready {
				t.Errorf("Ready %v, want %v", got, tc.ready)
			}
			if meta.FindStatusCondition(at.Status.Conditions, cnatv1alpha1.ConditionSucceeded) == nil {
				t.Errorf("Succeeded is gone: %+v", at.Status.Conditions)
			}
		})
	}
}

// The status of a converged At does not change from one reconcile to the next: no write.
func TestObservedIsStable(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	first := observed(pending(cnatv1alpha1.AtStatus{}, now.Add(time.Hour), now), 1, now)
	again := observed(pending(first, now.Add(time.Hour), now.Add(time.Minute)), 1, now.Add(time.Minute))
	if len(first.Conditions) != len(again.Conditions) {
		t.Fatalf("conditions %+v then %+v", first.Conditions, again.Conditions)
	}
	for i := range first.Conditions {
		if first.Conditions[i] != again.Conditions[i] {
			t.Errorf("%s changed: %+v then %+v", first.Conditions[i].Type, first.Conditions[i], again.Conditions[i])
		}
	}
}
