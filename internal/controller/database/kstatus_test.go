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

package database

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/test/kstatustest"
)

// TestKstatus: a Database's status, as kstatus (Flux, kpt) reads it: Current when Ready, InProgress while a
// retry may fix it, Failed when a person must act, Terminating while its deletion is held.
func TestKstatus(t *testing.T) {
	now := metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name     string
		out      outcome
		deleting bool
		want     status.Status
	}{
		{"converging, server unreachable", outcome{reason: mygroupv1alpha1.ReasonDatabaseUnreachable, message: "no answer", retry: true}, false, status.InProgressStatus},
		{"available", outcome{reason: mygroupv1alpha1.ReasonReady, message: "the database matches"}, false, status.CurrentStatus},
		{"refused until someone acts", outcome{reason: mygroupv1alpha1.ReasonDatabaseNotOwned, message: "not ours", recheck: true}, false, status.FailedStatus},
		{"not allowed", outcome{reason: mygroupv1alpha1.ReasonDatabaseNotAllowed, message: "outside the policy"}, false, status.FailedStatus},
		{"invalid", outcome{reason: mygroupv1alpha1.ReasonInvalidDatabase, message: "unknown character set"}, false, status.FailedStatus},
		{"deleted", outcome{reason: mygroupv1alpha1.ReasonReady, message: "the database matches"}, true, status.TerminatingStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &mygroupv1alpha1.Database{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", Generation: 2}}
			if tc.deleting {
				d.DeletionTimestamp = &now
			}
			d.Status = computeStatus(d.Status, d.Generation, "t", tc.out, now)
			if got := kstatustest.Compute(t, d, mygroupv1alpha1.GroupVersion.WithKind("Database")); got.Status != tc.want {
				t.Errorf("kstatus says %s (%s), want %s; conditions %+v", got.Status, got.Message, tc.want, d.Status.Conditions)
			}
		})
	}
}

// TestStatusUnchangedWhenNothingChanged: a check that finds what the last one found computes the same status,
// so that Report writes nothing; a new reason is one Event, the same reason none.
func TestStatusUnchangedWhenNothingChanged(t *testing.T) {
	then := metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	later := metav1.NewTime(then.Add(time.Hour))
	ready := outcome{reason: mygroupv1alpha1.ReasonReady, message: "the database matches"}
	first := computeStatus(mygroupv1alpha1.DatabaseStatus{}, 1, "t", ready, then)
	again := computeStatus(first, 1, "t", ready, later)
	if !equalStatus(first, again) {
		t.Errorf("the same check changed the status:\n%+v\n%+v", first, again)
	}
	if ev := readyEvents(first, ready); len(ev) != 0 {
		t.Errorf("Events for no transition: %+v", ev)
	}
	if ev := readyEvents(first, outcome{reason: mygroupv1alpha1.ReasonDatabaseNotOwned}); len(ev) != 1 || ev[0].Type != "Warning" {
		t.Errorf("Events of a transition to DatabaseNotOwned: %+v", ev)
	}
}

func equalStatus(a, b mygroupv1alpha1.DatabaseStatus) bool {
	if a.ObservedGeneration != b.ObservedGeneration || a.Target != b.Target || len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for i := range a.Conditions {
		x, y := a.Conditions[i], b.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message ||
			!x.LastTransitionTime.Equal(&y.LastTransitionTime) || x.ObservedGeneration != y.ObservedGeneration {
			return false
		}
	}
	return true
}
