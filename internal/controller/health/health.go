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

// Package health sets the conditions generic tools read on every kind: Ready, Reconciling and Stalled, as
// kstatus (sigs.k8s.io/cli-utils/pkg/kstatus) defines them. Each kind says, from its own conditions, which
// State its object is in (a Verdict); Set writes the three conditions from it. Like the kinds' own conditions,
// they keep their lastTransitionTime while their status holds, so a converged object's status does not change.
package health

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/operator101/operator101/api/conditions"
)

// State is kstatus' verdict on an object whose generation the operator has observed.
type State int

const (
	// Current: the object is as its spec asks (Ready=True).
	Current State = iota
	// InProgress: the operator is bringing the object to its spec and expects to get there (Reconciling=True).
	InProgress
	// Failed: the operator cannot bring the object to its spec without a person (Stalled=True).
	Failed
)

// String is the name kstatus gives the state.
func (s State) String() string {
	switch s {
	case Current:
		return "Current"
	case InProgress:
		return "InProgress"
	case Failed:
		return "Failed"
	}
	return "Unknown"
}

// Verdict is a kind's judgement of its object: the state, and the reason and message of the kind's own
// condition that decided it.
type Verdict struct {
	State   State
	Reason  string
	Message string
}

// Set returns conds with Ready, Reconciling and Stalled set from v, observed at generation; exactly one of the
// three is True. Conditions that keep their status keep their lastTransitionTime; now is that of the others.
func Set(conds []metav1.Condition, generation int64, v Verdict, now metav1.Time) []metav1.Condition {
	out := make([]metav1.Condition, len(conds))
	copy(out, conds)
	set := func(t string, on bool) {
		st := metav1.ConditionFalse
		if on {
			st = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&out, metav1.Condition{Type: t, Status: st, Reason: v.Reason, Message: v.Message,
			ObservedGeneration: generation, LastTransitionTime: now})
	}
	set(conditions.Ready, v.State == Current)
	set(conditions.Reconciling, v.State == InProgress)
	set(conditions.Stalled, v.State == Failed)
	return out
}

// Rollout is the verdict on a kind that runs a Deployment (MyWeb, AppService) from its rollout conditions
// (rollout.Conditions): Failed while Degraded, InProgress while a rollout is under way or too few pods are
// ready, Current once every pod runs the current spec and the minimum is ready. Ready therefore turns False
// during the rollout of a change while Available stays True: Ready answers "is my last change rolled out",
// Available "is it serving".
func Rollout(conds []metav1.Condition) Verdict {
	if c := meta.FindStatusCondition(conds, conditions.Degraded); c != nil && c.Status == metav1.ConditionTrue {
		return Verdict{State: Failed, Reason: c.Reason, Message: c.Message}
	}
	if c := meta.FindStatusCondition(conds, conditions.Progressing); c != nil && c.Status != metav1.ConditionFalse {
		return Verdict{State: InProgress, Reason: c.Reason, Message: c.Message}
	}
	c := meta.FindStatusCondition(conds, conditions.Available)
	if c == nil {
		return Verdict{State: InProgress, Reason: conditions.ReasonUnavailable, Message: "no pod observed yet"}
	}
	if c.Status != metav1.ConditionTrue {
		return Verdict{State: InProgress, Reason: c.Reason, Message: c.Message}
	}
	return Verdict{State: Current, Reason: c.Reason, Message: c.Message}
}

// Kstatus reports whether t is one of the conditions Set writes, which a kind's own Events leave out: the
// kind's own conditions already tell each transition.
func Kstatus(t string) bool {
	return t == conditions.Ready || t == conditions.Reconciling || t == conditions.Stalled
}
