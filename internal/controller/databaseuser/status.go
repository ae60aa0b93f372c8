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

package databaseuser

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/health"
	"github.com/operator101/operator101/internal/controller/report"
	"github.com/operator101/operator101/internal/mysqlaccount"
)

// What a DatabaseUser is told: its status, written when it changed, and its Events.

// statusWriteTimeout bounds a status write. It runs on a context of its own, so that a check that ran out of
// its deadline (ReconcileTimeout: a slow server) can still say so.
const statusWriteTimeout = 10 * time.Second

// report writes the status when it changed, with an Event when the Ready reason changed.
func (r *Reconciler) report(ctx context.Context, dbu *mygroupv1alpha1.DatabaseUser, target string, out outcome) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), statusWriteTimeout)
	defer cancel()
	now := metav1.NewTime(r.Clock.Now())
	before := dbu.DeepCopy()
	dbu.Status = computeStatus(dbu.Status, dbu.Generation, target, out, now, r.cfg.StatusRefresh)
	return r.Report(ctx, before, dbu, readyEvents(before.Status, out)...)
}

// readyEvents is the Event a check deserves: one when the Ready reason changes.
func readyEvents(old mygroupv1alpha1.DatabaseUserStatus, out outcome) []report.Event {
	if prev := meta.FindStatusCondition(old.Conditions, mygroupv1alpha1.ConditionReady); prev != nil && prev.Reason == out.reason {
		return nil
	}
	kind := corev1.EventTypeWarning
	if out.ready() {
		kind = corev1.EventTypeNormal
	}
	return []report.Event{{Type: kind, Reason: out.reason, Action: "Reconcile", Note: out.message}}
}

// computeStatus is the status one check leads to. lastCheckedTime moves only on success, and only when it
// is older than refresh: a converged DatabaseUser's status does not change on every resync.
func computeStatus(old mygroupv1alpha1.DatabaseUserStatus, generation int64, target string, out outcome,
	now metav1.Time, refresh time.Duration) mygroupv1alpha1.DatabaseUserStatus {
	s := *old.DeepCopy()
	cond := metav1.Condition{Type: mygroupv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
		Reason: out.reason, Message: out.message, ObservedGeneration: generation, LastTransitionTime: now}
	if out.ready() {
		cond.Status = metav1.ConditionTrue
		if s.LastCheckedTime == nil || now.Sub(s.LastCheckedTime.Time) >= refresh {
			s.LastCheckedTime = &now
		}
	}
	meta.SetStatusCondition(&s.Conditions, cond)
	s.Conditions = health.Set(s.Conditions, generation, out.verdict(), now)
	s.ObservedGeneration = generation
	s.Target = target
	return s
}

// droppedEvent tells what a drop did: dropped the account, or left one that is not this DatabaseUser's. The
// latter says only that: the same words whether or not such an account exists, which is not the tenant's to
// know.
func (r *Reconciler) droppedEvent(ctx context.Context, dbu *mygroupv1alpha1.DatabaseUser, target string, res mysqlaccount.DropResult,
	reason, what string) {
	acct := dbu.Spec.User + "@" + accountHost(dbu)
	switch {
	case res.Dropped:
		log.FromContext(ctx).Info("account "+what, "target", target)
		r.Recorder.Eventf(dbu, nil, corev1.EventTypeNormal, reason, "Delete", "account %s %s %q", acct, what, target)
	case res.NotClaimed:
		r.Recorder.Eventf(dbu, nil, corev1.EventTypeWarning, "AccountNotDropped", "Delete",
			"account %s in target %q is not this DatabaseUser's to manage: nothing was dropped", acct, target)
	}
}
