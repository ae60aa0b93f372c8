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
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	atctl "github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/test/testenv"
)

// attemptPods lists the At's pods by attempt name (0..max), those that exist.
func attemptPods(t *testing.T, at *cnatv1alpha1.At, maxAttempt int32) map[int32]*corev1.Pod {
	t.Helper()
	out := map[int32]*corev1.Pod{}
	for k := int32(0); k <= maxAttempt; k++ {
		pod := &corev1.Pod{}
		err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: at.Namespace, Name: atctl.AttemptPodName(at.Name, k)}, pod)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			t.Fatal(err)
		default:
			out[k] = pod
		}
	}
	return out
}

// failPod plays the kubelet: attempt k's pod ran and exited code.
func failPod(t *testing.T, at *cnatv1alpha1.At, k int32, code int32) {
	t.Helper()
	pod := attemptPods(t, at, k)[k]
	if pod == nil {
		t.Fatalf("no pod for attempt %d", k)
	}
	pod.Status.Phase = corev1.PodFailed
	pod.Status.StartTime = &metav1.Time{Time: t0}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "command", Image: pod.Spec.Containers[0].Image,
		ImageID: "docker.io/library/busybox@sha256:0", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: "Error", StartedAt: metav1.NewTime(t0), FinishedAt: metav1.NewTime(t0.Add(time.Second))}}}}
	must(t, env.Client.Status().Update(context.Background(), pod))
}

// retries: 2 allows three attempts; each runs only once the one before failed (never two at once), under the
// name fixed for it, and is recorded (attempt, pod, exit code, times); after the third fails the At is FAILED
// with the last exit code, and no fourth pod comes, however often it is reconciled.
func TestRetriesStopAtTheLimit(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	rec := events.NewFakeRecorder(100)
	r := atctl.NewReconciler(env.Client, rec, reconciler.Options{Clock: newClock(), Reader: env.Client}, atctl.Config{})
	at := createAt(t, ns, "flaky", sched(t0), "exit 3", func(a *cnatv1alpha1.At) { a.Spec.Retries = ptr.To[int32](2) })
	reconcile := func() {
		t.Helper()
		for range 3 { // the status of the failed attempt, the next pod, its RUNNING
			_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key(at)})
			must(t, err)
		}
	}
	reconcile()
	for k := int32(0); k <= 2; k++ {
		pods := attemptPods(t, at, 3)
		g.Expect(pods).To(gomega.HaveLen(int(k)+1), "attempt %d: pods %v", k, pods)
		for j := int32(0); j < k; j++ {
			g.Expect(pods[j].Status.Phase).To(gomega.Equal(corev1.PodFailed), "attempt %d runs beside attempt %d", k, j)
		}
		if k > 0 {
			// What was left of the shared deadline (the fake clock has not moved: all of it).
			g.Expect(pods[k].Spec.ActiveDeadlineSeconds).To(gomega.HaveValue(gomega.BeEquivalentTo(cnatv1alpha1.DefaultActiveDeadlineSeconds)))
		}
		st := getAt(g, key(at)).Status
		g.Expect(st.Phase).To(gomega.Equal(cnatv1alpha1.PhaseRunning))
		g.Expect(st.Attempts).To(gomega.HaveLen(int(k) + 1))
		failPod(t, at, k, 3+k)
		reconcile()
	}
	cur := getAt(g, key(at))
	g.Expect(cur.Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseFailed))
	g.Expect(cur.Status.ExitCode).To(gomega.HaveValue(gomega.BeEquivalentTo(5)))
	g.Expect(cur.Status.Attempts).To(gomega.HaveLen(3))
	for k, a := range cur.Status.Attempts {
		g.Expect(a.Attempt).To(gomega.BeEquivalentTo(k))
		g.Expect(a.PodName).To(gomega.Equal(atctl.AttemptPodName(at.Name, int32(k))))
		g.Expect(a.ExitCode).To(gomega.HaveValue(gomega.BeEquivalentTo(3 + k)))
		g.Expect(a.StartTime).NotTo(gomega.BeNil())
		g.Expect(a.CompletionTime).NotTo(gomega.BeNil())
		g.Expect(a.Reason).To(gomega.Equal("Error"))
	}
	rv := cur.ResourceVersion
	reconcile()
	g.Expect(attemptPods(t, at, 4)).To(gomega.HaveLen(3), "a fourth attempt")
	g.Expect(getAt(g, key(at)).ResourceVersion).To(gomega.Equal(rv), "a finished At was written")
	var retryEvents int
	for len(rec.Events) > 0 {
		if strings.Contains(<-rec.Events, cnatv1alpha1.ReasonRetrying) {
			retryEvents++
		}
	}
	g.Expect(retryEvents).To(gomega.Equal(2), "one Retrying Event per retry")

	// The schema: at most MaxRetries, and frozen once started.
	cur.Spec.Retries = ptr.To[int32](3)
	g.Expect(env.Client.Update(context.Background(), cur)).To(gomega.MatchError(gomega.ContainSubstring("retries cannot change once the command started")))
	bad := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "bad-"},
		Spec: cnatv1alpha1.AtSpec{Schedule: sched(t0), Command: "true", Retries: ptr.To[int32](cnatv1alpha1.MaxRetries + 1)}}
	testenv.ExpectInvalid(t, env.Client, bad, "spec.retries")
}

// A retry that succeeds ends DONE; the failed attempt stays recorded.
func TestRetrySucceeds(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	r := atctl.NewReconciler(env.Client, events.NewFakeRecorder(100), reconciler.Options{Clock: newClock(), Reader: env.Client}, atctl.Config{})
	at := createAt(t, ns, "second-time", sched(t0), "true", func(a *cnatv1alpha1.At) { a.Spec.Retries = ptr.To[int32](1) })
	req := ctrl.Request{NamespacedName: key(at)}
	for range 2 {
		_, err := r.Reconcile(context.Background(), req)
		must(t, err)
	}
	failPod(t, at, 0, 1)
	for range 3 {
		_, err := r.Reconcile(context.Background(), req)
		must(t, err)
	}
	pod := attemptPods(t, at, 1)[1]
	g.Expect(pod).NotTo(gomega.BeNil())
	pod.Status.Phase = corev1.PodSucceeded
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "command", Image: pod.Spec.Containers[0].Image,
		ImageID: "docker.io/library/busybox@sha256:0", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", FinishedAt: metav1.NewTime(t0)}}}}
	must(t, env.Client.Status().Update(context.Background(), pod))
	_, err := r.Reconcile(context.Background(), req)
	must(t, err)
	st := getAt(g, key(at)).Status
	g.Expect(st.Phase).To(gomega.Equal(cnatv1alpha1.PhaseDone))
	g.Expect(st.Attempts).To(gomega.HaveLen(2))
	g.Expect(st.Attempts[0].ExitCode).To(gomega.HaveValue(gomega.BeEquivalentTo(1)))
	g.Expect(st.Attempts[1].ExitCode).To(gomega.HaveValue(gomega.BeEquivalentTo(0)))
}

// Exactly once per attempt: the operator stopped and a new one started between every step of a retried At;
// each attempt's pod is created once; a crash after creating attempt 1's pod, before recording it, adopts it.
func TestRetriesExactlyOnceAcrossRestarts(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	cfg, counter := testenv.Counting(env.Config)
	clk := newClock()
	at := createAt(t, ns, "again", sched(t0), "exit 1", func(a *cnatv1alpha1.At) { a.Spec.Retries = ptr.To[int32](1) })
	k := key(at)
	step := func(name string, check func(g gomega.Gomega)) {
		t.Helper()
		m := startOperator(t, cfg, ns, reconciler.Options{Clock: clk}, atctl.Config{})
		testenv.Eventually(t, timeout, func(g gomega.Gomega) {
			g.Expect(m.Reconciles.Get(k)).To(gomega.BeNumerically(">", 0))
			check(g)
		}, name)
		m.Stop(t)
	}
	step("attempt 0 created", func(g gomega.Gomega) {
		g.Expect(getAt(g, k).Status.Attempts).To(gomega.HaveLen(1))
	})
	failPod(t, at, 0, 1)
	step("attempt 1 created", func(g gomega.Gomega) {
		g.Expect(getAt(g, k).Status.Attempts).To(gomega.HaveLen(2))
	})
	step("restart while attempt 1 runs", func(g gomega.Gomega) {
		g.Expect(getAt(g, k).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseRunning))
	})
	failPod(t, at, 1, 1)
	step("attempt 1 failed: FAILED", func(g gomega.Gomega) {
		g.Expect(getAt(g, k).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseFailed))
	})
	g.Expect(podPosts(counter)).To(gomega.Equal(2), "pods created: %s", counter)

	// A crash between creating attempt 1's pod and recording it: the status says attempt 0 failed, attempt 1
	// is due; its pod exists and the cache has not seen it. It is adopted, not created again.
	crashed := createAt(t, ns, "crashed", sched(t0), "exit 1", func(a *cnatv1alpha1.At) { a.Spec.Retries = ptr.To[int32](1) })
	cur := getAt(g, key(crashed))
	cur.Status = cnatv1alpha1.AtStatus{Phase: cnatv1alpha1.PhaseRunning, StartTime: &metav1.Time{Time: t0},
		Attempts: []cnatv1alpha1.AtAttempt{{Attempt: 0, PodName: atctl.PodName(crashed.Name), StartTime: &metav1.Time{Time: t0},
			CompletionTime: &metav1.Time{Time: t0}, ExitCode: ptr.To[int32](1), Reason: "Error"}}}
	must(t, env.Client.Status().Update(context.Background(), cur))
	must(t, env.Client.Create(context.Background(), atctl.AttemptPod(cur, atctl.PodDefaults{}, 1, 60)))
	cfg2, counter2 := testenv.Counting(env.Config)
	c, err := client.New(cfg2, client.Options{Scheme: env.Scheme})
	must(t, err)
	r := atctl.NewReconciler(staleCache{Client: c}, events.NewFakeRecorder(100), reconciler.Options{Clock: clk, Reader: env.Client}, atctl.Config{})
	_, err = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key(crashed)})
	must(t, err)
	st := getAt(g, key(crashed)).Status
	g.Expect(st.Attempts).To(gomega.HaveLen(2))
	g.Expect(st.Attempts[1].PodName).To(gomega.Equal(atctl.AttemptPodName(crashed.Name, 1)))
	g.Expect(podPosts(counter2)).To(gomega.Equal(1), "one create, refused with AlreadyExists: %s", counter2)
	g.Expect(attemptPods(t, crashed, 2)).To(gomega.HaveLen(1), "attempt 0's pod was never there; only attempt 1's")
}

// The next attempt's pod name taken by a pod the At does not control: the At stays RUNNING (retrying), reason
// PodNameTaken, the failed attempt recorded; it neither goes back to PENDING nor touches that pod, and runs the
// attempt once the pod is gone.
func TestRetryWaitsForATakenName(t *testing.T) {
	g := gomega.NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t, "at")
	r := atctl.NewReconciler(env.Client, events.NewFakeRecorder(100), reconciler.Options{Clock: newClock(), Reader: env.Client}, atctl.Config{})
	at := createAt(t, ns, "taken", sched(t0), "exit 1", func(a *cnatv1alpha1.At) { a.Spec.Retries = ptr.To[int32](1) })
	req := ctrl.Request{NamespacedName: key(at)}
	reconcile := func() {
		t.Helper()
		for range 3 {
			_, err := r.Reconcile(ctx, req)
			must(t, err)
		}
	}
	reconcile()
	foreign := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: atctl.AttemptPodName(at.Name, 1)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	must(t, env.Client.Create(ctx, foreign))
	failPod(t, at, 0, 1)
	reconcile()
	st := getAt(g, key(at)).Status
	g.Expect(st.Phase).To(gomega.Equal(cnatv1alpha1.PhaseRunning))
	g.Expect(reason(g, at)).To(gomega.Equal(cnatv1alpha1.ReasonPodNameTaken))
	g.Expect(st.Attempts).To(gomega.HaveLen(1))
	g.Expect(st.Attempts[0].CompletionTime).NotTo(gomega.BeNil())
	got := &corev1.Pod{}
	must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(foreign), got))
	g.Expect(got.OwnerReferences).To(gomega.BeEmpty())

	must(t, env.Client.Delete(ctx, got, client.GracePeriodSeconds(0)))
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(foreign), &corev1.Pod{}))
	}, timeout).
		Should(gomega.BeTrue())
	reconcile()
	st = getAt(g, key(at)).Status
	g.Expect(st.Attempts).To(gomega.HaveLen(2))
	g.Expect(attemptPods(t, at, 1)[1].OwnerReferences).To(gomega.HaveLen(1))
}
