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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	atctl "github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/test/testenv"
)

// A past schedule runs at once; the phase follows the pod to DONE; a DONE At costs no write at rest.
func TestRunsAtOnceAndSucceeds(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	cfg, counter := testenv.Counting(env.Config)
	rec := startOperator(t, cfg, ns, reconciler.Options{Clock: newClock()}, atctl.Config{}).Reconciles

	// (A minute past, within the start deadline: the fake clock's time runs years ahead of the API server's
	// pod creation times, so the pod's start is counted from the schedule.)
	at := createAt(t, ns, "past", sched(t0.Add(-time.Minute)), `echo "hello  world" | tr a-z A-Z`)
	running := waitPhase(t, key(at), cnatv1alpha1.PhaseRunning)
	pod, ok := getPod(t, key(at))
	g.Expect(ok).To(gomega.BeTrue())
	g.Expect(pod.Spec.Containers[0].Command).To(gomega.Equal([]string{"/bin/sh", "-c", `echo "hello  world" | tr a-z A-Z`}))
	g.Expect(metav1.IsControlledBy(pod, running)).To(gomega.BeTrue())
	g.Expect(running.Status.StartTime).NotTo(gomega.BeNil())

	setPodStatus(t, key(at), corev1.PodRunning, nil)
	g.Consistently(func() string { return getAt(g, key(at)).Status.Phase }, 300*time.Millisecond).Should(gomega.Equal(cnatv1alpha1.PhaseRunning))

	finished := metav1.NewTime(t0.Add(-time.Minute).Truncate(time.Second))
	setPodStatus(t, key(at), corev1.PodSucceeded, &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", FinishedAt: finished})
	done := waitPhase(t, key(at), cnatv1alpha1.PhaseDone)
	g.Expect(done.Status.ExitCode).To(gomega.HaveValue(gomega.BeEquivalentTo(0)))
	g.Expect(done.Status.CompletionTime.Time.Equal(finished.Time)).To(gomega.BeTrue())
	c := meta.FindStatusCondition(done.Status.Conditions, cnatv1alpha1.ConditionSucceeded)
	g.Expect(c).NotTo(gomega.BeNil())
	g.Expect(c.Status).To(gomega.Equal(metav1.ConditionTrue))
	g.Eventually(func(g gomega.Gomega) []string { return eventReasons(g, done) }, timeout).Should(
		gomega.ContainElements("Started", "Succeeded"))
	g.Expect(podPosts(counter)).To(gomega.Equal(1))

	// At rest: nudge a reconcile (an annotation) and count the writes it makes.
	counter.Reset()
	testenv.WaitReconciled(t, rec, key(at), timeout, func() { testenv.Poke(t, env.Client, key(at), &cnatv1alpha1.At{}) })
	g.Expect(counter.Total()).To(gomega.Equal(0), "writes at rest: %s", counter)
}

// A failing command: FAILED with the exit code and the reason.
func TestFailureKeepsExitCodeAndReason(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	startOperator(t, nil, ns, reconciler.Options{Clock: newClock()}, atctl.Config{})
	at := createAt(t, ns, "fails", sched(t0), "exit 3")
	waitPhase(t, key(at), cnatv1alpha1.PhaseRunning)
	setPodStatus(t, key(at), corev1.PodFailed, &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error", FinishedAt: metav1.NewTime(t0)})
	failed := waitPhase(t, key(at), cnatv1alpha1.PhaseFailed)
	g.Expect(failed.Status.ExitCode).To(gomega.HaveValue(gomega.BeEquivalentTo(3)))
	g.Expect(failed.Status.Message).To(gomega.ContainSubstring("exited 3 (Error)"))
	c := meta.FindStatusCondition(failed.Status.Conditions, cnatv1alpha1.ConditionSucceeded)
	g.Expect(c.Status).To(gomega.Equal(metav1.ConditionFalse))
	g.Expect(c.Reason).To(gomega.Equal("Error"))
	g.Eventually(func(g gomega.Gomega) []string { return eventReasons(g, failed) }, timeout).Should(gomega.ContainElement("Failed"))
}

// A future schedule: PENDING, and the reconciler asks to come back after exactly the remaining time. Then the
// clock reaches the schedule and the pod starts. The reconciler is called directly with a fake clock.
func TestFutureScheduleRequeuesForTheRemainingTime(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	clk := newClock()
	r := atctl.NewReconciler(env.Client, events.NewFakeRecorder(100), reconciler.Options{Clock: clk, Reader: env.Client}, atctl.Config{})
	at := createAt(t, ns, "later", sched(t0.Add(90*time.Minute+7*time.Second)), "date")
	req := ctrl.Request{NamespacedName: key(at)}

	res, err := r.Reconcile(context.Background(), req)
	must(t, err)
	g.Expect(res.RequeueAfter).To(gomega.Equal(90*time.Minute + 7*time.Second))
	pending := getAt(g, key(at))
	g.Expect(pending.Status.Phase).To(gomega.Equal(cnatv1alpha1.PhasePending))
	_, ok := getPod(t, key(at))
	g.Expect(ok).To(gomega.BeFalse())

	clk.Step(90 * time.Minute)
	res, err = r.Reconcile(context.Background(), req)
	must(t, err)
	g.Expect(res.RequeueAfter).To(gomega.Equal(7 * time.Second))

	// Editing the schedule while PENDING reschedules.
	patch := client.MergeFrom(pending.DeepCopy())
	pending.Spec.Schedule = sched(t0.Add(2 * time.Hour))
	must(t, env.Client.Patch(context.Background(), pending, patch))
	res, err = r.Reconcile(context.Background(), req)
	must(t, err)
	g.Expect(res.RequeueAfter).To(gomega.Equal(30 * time.Minute))

	clk.Step(30 * time.Minute)
	res, err = r.Reconcile(context.Background(), req)
	must(t, err)
	g.Expect(res.RequeueAfter).To(gomega.BeZero())
	_, ok = getPod(t, key(at))
	g.Expect(ok).To(gomega.BeTrue())
	// The due reconcile only creates the pod; the reconcile the pod's event brings writes RUNNING, and comes
	// back at the start deadline should the pod still not have started then.
	g.Expect(getAt(g, key(at)).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhasePending))
	res, err = r.Reconcile(context.Background(), req)
	must(t, err)
	g.Expect(res.RequeueAfter).To(gomega.Equal(atctl.DefaultStartDeadline))
	g.Expect(getAt(g, key(at)).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseRunning))
}

// ttlSecondsAfterFinished: the finished pod is deleted exactly ttl after it finished (a requeue, no polling),
// and the At stays DONE without a new pod.
func TestTTLDeletesTheFinishedPod(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	clk := newClock()
	r := atctl.NewReconciler(env.Client, events.NewFakeRecorder(100), reconciler.Options{Clock: clk, Reader: env.Client}, atctl.Config{})
	at := createAt(t, ns, "ttl", sched(t0), "true", func(a *cnatv1alpha1.At) { a.Spec.TTLSecondsAfterFinished = new(int32(60)) })
	req := ctrl.Request{NamespacedName: key(at)}
	_, err := r.Reconcile(context.Background(), req)
	must(t, err)
	setPodStatus(t, key(at), corev1.PodSucceeded, &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: metav1.NewTime(t0.Add(10 * time.Second))})
	clk.Step(20 * time.Second)
	_, err = r.Reconcile(context.Background(), req) // DONE
	must(t, err)
	g.Expect(getAt(g, key(at)).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseDone))
	res, err := r.Reconcile(context.Background(), req) // the TTL: 60s after t0+10s, now t0+20s
	must(t, err)
	g.Expect(res.RequeueAfter).To(gomega.Equal(50 * time.Second))
	_, ok := getPod(t, key(at))
	g.Expect(ok).To(gomega.BeTrue())

	clk.Step(50 * time.Second)
	res, err = r.Reconcile(context.Background(), req)
	must(t, err)
	g.Expect(res.RequeueAfter).To(gomega.BeZero())
	_, ok = getPod(t, key(at))
	g.Expect(ok).To(gomega.BeFalse(), "the pod outlived its TTL")
	for range 3 {
		_, err = r.Reconcile(context.Background(), req)
		must(t, err)
	}
	_, ok = getPod(t, key(at))
	g.Expect(ok).To(gomega.BeFalse(), "a finished At got a new pod")
	g.Expect(getAt(g, key(at)).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseDone))
}
