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
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/health"
	"github.com/operator101/operator101/internal/controller/report"
)

// statusWriteTimeout bounds the status write at the end of a reconcile, even past the reconcile's own
// deadline: what a slow server took is still reported.
const statusWriteTimeout = 10 * time.Second

// report writes d's status from out, only when it changed, and an Event when the Ready reason changed.
func (r *Reconciler) report(ctx context.Context, d *mygroupv1alpha1.Database, target string, out outcome) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), statusWriteTimeout)
	defer cancel()
	before := d.DeepCopy()
	d.Status = computeStatus(d.Status, d.Generation, target, out, metav1.NewTime(r.Clock.Now()))
	return r.Report(ctx, before, d, readyEvents(before.Status, out)...)
}

// readyEvents is the Event of a transition of the Ready reason, none when it stays.
func readyEvents(old mygroupv1alpha1.DatabaseStatus, out outcome) []report.Event {
	if prev := meta.FindStatusCondition(old.Conditions, mygroupv1alpha1.ConditionReady); prev != nil && prev.Reason == out.reason {
		return nil
	}
	kind := corev1.EventTypeWarning
	if out.ready() {
		kind = corev1.EventTypeNormal
	}
	return []report.Event{{Type: kind, Reason: out.reason, Action: "Reconcile", Note: out.message}}
}

// computeStatus is the status after a check that led to out: a pure function, so that a check that finds
// what the last one found writes nothing.
func computeStatus(old mygroupv1alpha1.DatabaseStatus, generation int64, target string, out outcome,
	now metav1.Time) mygroupv1alpha1.DatabaseStatus {
	s := *old.DeepCopy()
	cond := metav1.Condition{Type: mygroupv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
		Reason: out.reason, Message: out.message, ObservedGeneration: generation, LastTransitionTime: now}
	if out.ready() {
		cond.Status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&s.Conditions, cond)
	s.Conditions = health.Set(s.Conditions, generation, out.verdict(), now)
	s.ObservedGeneration = generation
	s.Target = target
	return s
}
