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

package at_test

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	atctl "github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/test/testenv"
)

func reason(g gomega.Gomega, at *cnatv1alpha1.At) string {
	c := meta.FindStatusCondition(getAt(g, key(at)).Status.Conditions, cnatv1alpha1.ConditionSucceeded)
	g.Expect(c).NotTo(gomega.BeNil())
	return c.Reason
}

func setSuspend(t *testing.T, at *cnatv1alpha1.At, v bool) {
	t.Helper()
	cur := &cnatv1alpha1.At{}
	must(t, env.Client.Get(context.Background(), key(at), cur))
	patch := client.MergeFrom(cur.DeepCopy())
	cur.Spec.Suspend = ptr.To(v)
	must(t, env.Client.Patch(context.Background(), cur, patch))
}

// A suspended At does not run, however long past its schedule; resumed (before its deadline, when it has one)
// it runs once. While suspended the reconciler asks to come back only at the deadline, if any.
func TestSuspendedAtRunsOnceResumed(t *testing.T) {
	for _, c := range []struct {
		name     string
		deadline *int64
		requeue  time.Duration
	}{
		{"no deadline", nil, 0},
		{"resumed before the deadline", ptr.To[int64](600), 600*time.Second - 3*time.Minute + time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			ns := env.NewNamespace(t, "at")
			clk := newClock()
			rec := events.NewFakeRecorder(100)
			r := atctl.NewReconciler(env.Client, rec, reconciler.Options{Clock: clk, Reader: env.Client}, atctl.Config{})
			at := createAt(t, ns, "paused", sched(t0.Add(time.Minute)), "echo once", func(a *cnatv1alpha1.At) {
				a.Spec.Suspend = ptr.To(true)
				a.Spec.StartingDeadlineSeconds = c.deadline
			})
			req := ctrl.Request{NamespacedName: key(at)}
			// Three minutes past the schedule (less than the start deadline the pod gets, which a fake clock
			// counts from the schedule).
			clk.Step(4 * time.Minute)
			res, err := r.Reconcile(context.Background(), req)
			must(t, err)
			g.Expect(res.RequeueAfter).To(gomega.Equal(c.requeue))
			g.Expect(getAt(g, key(at)).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhasePending))
			g.Expect(reason(g, at)).To(gomega.Equal(cnatv1alpha1.ReasonSuspended))
			_, ok := getPod(t, key(at))
			g.Expect(ok).To(gomega.BeFalse(), "a suspended At ran")
			rv := getAt(g, key(at)).ResourceVersion
			_, err = r.Reconcile(context.Background(), req)
			must(t, err)
			g.Expect(getAt(g, key(at)).ResourceVersion).To(gomega.Equal(rv), "a converged suspended At was written")
			g.Expect(rec.Events).To(gomega.HaveLen(1), "one Event when it is suspended")
			g.Expect(<-rec.Events).To(gomega.ContainSubstring(cnatv1alpha1.ReasonSuspended))

			setSuspend(t, at, false)
			for range 3 {
				_, err = r.Reconcile(context.Background(), req)
				must(t, err)
			}
			pod, ok := getPod(t, key(at))
			g.Expect(ok).To(gomega.BeTrue(), "resumed, it did not run: %+v", getAt(g, key(at)))
			g.Expect(pod.Name).To(gomega.Equal(atctl.PodName(at.Name)))
			g.Expect(getAt(g, key(at)).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseRunning))
		})
	}
}

// startingDeadlineSeconds: a run that could not start in time (created too late, or suspended past it) is
// MISSED, reason Missed, with one Warning Event and no pod, and stays so; within the deadline it runs; without
// one it runs however late (TestBookSample).
func TestMissedDeadlineIsReportedWithoutARun(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	clk := newClock()
	rec := events.NewFakeRecorder(100)
	r := atctl.NewReconciler(env.Client, rec, reconciler.Options{Clock: clk, Reader: env.Client}, atctl.Config{})
	late := createAt(t, ns, "late", sched(t0.Add(-61*time.Second)), "echo late",
		func(a *cnatv1alpha1.At) { a.Spec.StartingDeadlineSeconds = ptr.To[int64](60) })
	inTime := createAt(t, ns, "in-time", sched(t0.Add(-60*time.Second)), "echo in time",
		func(a *cnatv1alpha1.At) { a.Spec.StartingDeadlineSeconds = ptr.To[int64](60) })
	suspended := createAt(t, ns, "suspended", sched(t0.Add(time.Minute)), "echo suspended", func(a *cnatv1alpha1.At) {
		a.Spec.StartingDeadlineSeconds = ptr.To[int64](30)
		a.Spec.Suspend = ptr.To(true)
	})
	reconcile := func(at *cnatv1alpha1.At) ctrl.Result {
		t.Helper()
		res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key(at)})
		must(t, err)
		return res
	}
	reconcile(late)
	reconcile(inTime)
	st := getAt(g, key(late)).Status
	g.Expect(st.Phase).To(gomega.Equal(cnatv1alpha1.PhaseMissed))
	g.Expect(reason(g, late)).To(gomega.Equal(cnatv1alpha1.ReasonMissed))
	g.Expect(st.Message).To(gomega.ContainSubstring("startingDeadlineSeconds"))
	g.Expect(st.StartTime).To(gomega.BeNil())
	_, ok := getPod(t, key(late))
	g.Expect(ok).To(gomega.BeFalse(), "a missed run started")
	_, ok = getPod(t, key(inTime))
	g.Expect(ok).To(gomega.BeTrue(), "a run just within its deadline did not start")
	g.Expect(rec.Events).To(gomega.HaveLen(1))
	g.Expect(<-rec.Events).To(gomega.ContainSubstring(cnatv1alpha1.ReasonMissed))

	// Final: a later look writes nothing and runs nothing, whatever the clock says.
	rv := getAt(g, key(late)).ResourceVersion
	clk.Step(time.Hour)
	reconcile(late)
	g.Expect(getAt(g, key(late)).ResourceVersion).To(gomega.Equal(rv))
	_, ok = getPod(t, key(late))
	g.Expect(ok).To(gomega.BeFalse())

	// Suspended past its deadline: MISSED, and resuming does not run it.
	reconcile(suspended)
	g.Expect(getAt(g, key(suspended)).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseMissed))
	g.Expect(getAt(g, key(suspended)).Status.Message).To(gomega.ContainSubstring("(suspended)"))
	setSuspend(t, suspended, false)
	reconcile(suspended)
	_, ok = getPod(t, key(suspended))
	g.Expect(ok).To(gomega.BeFalse(), "resumed after its deadline, it ran")
	// The schedule and command are frozen, as for any At that is no longer PENDING.
	cur := getAt(g, key(suspended))
	cur.Spec.Schedule = sched(t0.Add(2 * time.Hour))
	g.Expect(env.Client.Update(context.Background(), cur)).NotTo(gomega.Succeed())
}

// Past its deadline, an At whose pod an earlier operator created (and crashed before writing RUNNING, the
// cache not holding the pod yet) is RUNNING with that pod, never MISSED: the pod is looked for past the cache.
func TestMissedOnlyWithoutAPod(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	at := createAt(t, ns, "started", sched(t0.Add(-time.Hour)), "echo once",
		func(a *cnatv1alpha1.At) { a.Spec.StartingDeadlineSeconds = ptr.To[int64](60) })
	must(t, env.Client.Create(context.Background(), atctl.Pod(at, atctl.PodDefaults{})))
	// The cached client sees no pod; the Reader does.
	r := atctl.NewReconciler(staleCache{Client: env.Client}, events.NewFakeRecorder(100), reconciler.Options{Clock: newClock(), Reader: env.Client}, atctl.Config{})
	_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key(at)})
	must(t, err)
	g.Expect(getAt(g, key(at)).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseRunning))
}

// The schema: startingDeadlineSeconds is not negative.
func TestStartingDeadlineSecondsValidation(t *testing.T) {
	ns := env.NewNamespace(t, "at")
	bad := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "bad-"},
		Spec: cnatv1alpha1.AtSpec{Schedule: "2030-01-01T00:00:00Z", Command: "true", StartingDeadlineSeconds: ptr.To[int64](-1)}}
	testenv.ExpectInvalid(t, env.Client, bad, "spec.startingDeadlineSeconds")
}
