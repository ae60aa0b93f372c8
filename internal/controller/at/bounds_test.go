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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	atctl "github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/test/testenv"
)

// An image that never pulls: the pod stays Pending (ErrImagePull, then ImagePullBackOff). Until the start
// deadline the At is RUNNING and its pod left alone; at the deadline the pod is deleted and the At FAILED
// (StartDeadlineExceeded) with the kubelet's reason, with one Failed Event, and no pod is ever created again.
// The start deadline comes from the At controller's Config; the fake clock moves it, no test waits it out.
func TestPodStuckPendingFails(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	cfg, counter := testenv.Counting(env.Config)
	clk := newClock()
	const limit = 2 * time.Minute
	rec := startOperator(t, cfg, ns, reconciler.Options{Clock: clk}, atctl.Config{StartDeadline: limit}).Reconciles

	at := createAt(t, ns, "no-image", sched(t0), "echo never", func(a *cnatv1alpha1.At) { a.Spec.Image = "registry.invalid/nope:1" })
	k := key(at)
	waitPhase(t, k, cnatv1alpha1.PhaseRunning)
	setPodWaiting(t, k, "ErrImagePull", `failed to resolve reference "registry.invalid/nope:1"`)
	setPodWaiting(t, k, "ImagePullBackOff", `Back-off pulling image "registry.invalid/nope:1"`)
	poke := func() { testenv.Poke(t, env.Client, k, &cnatv1alpha1.At{}) }

	// A second before the deadline: still RUNNING, the pod kept.
	clk.Step(limit - time.Second)
	testenv.WaitReconciled(t, rec, k, timeout, poke)
	g.Expect(getAt(g, k).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseRunning))
	_, ok := getPod(t, k)
	g.Expect(ok).To(gomega.BeTrue(), "the pod was deleted before its start deadline")

	clk.Step(time.Second)
	poke()
	failed := waitPhase(t, k, cnatv1alpha1.PhaseFailed)
	testenv.ExpectCondition(g, failed.Status.Conditions, cnatv1alpha1.ConditionSucceeded, metav1.ConditionFalse,
		cnatv1alpha1.ReasonStartDeadlineExceeded, `did not start within 2m0s (ImagePullBackOff: Back-off pulling image "registry.invalid/nope:1")`)
	g.Expect(failed.Status.ExitCode).To(gomega.BeNil())
	g.Expect(failed.Status.CompletionTime.Time.Equal(t0.Add(limit))).To(gomega.BeTrue())
	_, ok = getPod(t, k)
	g.Expect(ok).To(gomega.BeFalse(), "the pod that never started is still there")

	// Exactly one Failed Event, naming the reason; more reconciles (and a day later) add none and create no pod.
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		g.Expect(eventReasons(g, failed)).To(gomega.ContainElement("Failed"))
	})
	clk.Step(24 * time.Hour)
	for range 3 {
		testenv.WaitReconciled(t, rec, k, timeout, poke)
	}
	events := testenv.EventsOfReason(t, env.Client, ns, at.Name, "Failed")
	g.Expect(events).To(gomega.HaveLen(1))
	g.Expect(events[0].Type).To(gomega.Equal(corev1.EventTypeWarning))
	g.Expect(events[0].Note).To(gomega.ContainSubstring("ImagePullBackOff"))
	g.Expect(getAt(g, k).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseFailed))
	_, ok = getPod(t, k)
	g.Expect(ok).To(gomega.BeFalse())
	g.Expect(podPosts(counter)).To(gomega.Equal(1), "pods created: %s", counter)
	g.Expect(counter.Writes(false)["DELETE pods"]).To(gomega.Equal(1), "%s", counter)
}

// A pod that starts just before the deadline is not deleted: the start deadline is about starting.
func TestPodStartedInTimeIsKept(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	cfg, counter := testenv.Counting(env.Config)
	clk := newClock()
	rec := startOperator(t, cfg, ns, reconciler.Options{Clock: clk}, atctl.Config{}).Reconciles
	at := createAt(t, ns, "slow-pull", sched(t0), "sleep 600")
	k := key(at)
	waitPhase(t, k, cnatv1alpha1.PhaseRunning)
	setPodWaiting(t, k, "ContainerCreating", "")
	clk.Step(atctl.DefaultStartDeadline - time.Second)
	setPodStatus(t, k, corev1.PodRunning, nil)
	clk.Step(time.Hour - atctl.DefaultStartDeadline) // past the start deadline, within activeDeadlineSeconds
	testenv.WaitReconciled(t, rec, k, timeout, func() { testenv.Poke(t, env.Client, k, &cnatv1alpha1.At{}) })
	g.Expect(getAt(g, k).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseRunning))
	_, ok := getPod(t, k)
	g.Expect(ok).To(gomega.BeTrue())
	g.Expect(counter.Writes(false)["DELETE pods"]).To(gomega.BeZero(), "%s", counter)
}

// activeDeadlineSeconds: the pod carries the At's deadline; the kubelet kills a command that runs past it
// (pod Failed, reason DeadlineExceeded, the container's exit 137) and the At is FAILED with reason
// DeadlineExceeded, in its condition and its one Failed Event.
func TestDeadlineExceededFails(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	startOperator(t, nil, ns, reconciler.Options{Clock: newClock()}, atctl.Config{})
	at := createAt(t, ns, "forever", sched(t0), "sleep infinity", func(a *cnatv1alpha1.At) { a.Spec.ActiveDeadlineSeconds = ptr.To[int64](90) })
	k := key(at)
	waitPhase(t, k, cnatv1alpha1.PhaseRunning)
	pod, _ := getPod(t, k)
	g.Expect(pod.Spec.ActiveDeadlineSeconds).To(gomega.HaveValue(gomega.BeEquivalentTo(90)))

	setPodStatus(t, k, corev1.PodRunning, nil)
	updatePodStatus(t, k, func(p *corev1.Pod) { // what the kubelet writes at the deadline
		p.Status.Phase = corev1.PodFailed
		p.Status.Reason = "DeadlineExceeded"
		p.Status.Message = "Pod was active on the node longer than the specified deadline"
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: "Error", FinishedAt: metav1.NewTime(t0.Add(90 * time.Second))}}
	})
	failed := waitPhase(t, k, cnatv1alpha1.PhaseFailed)
	testenv.ExpectCondition(g, failed.Status.Conditions, cnatv1alpha1.ConditionSucceeded, metav1.ConditionFalse,
		cnatv1alpha1.ReasonDeadlineExceeded, "exited 137 (DeadlineExceeded): Pod was active on the node longer than the specified deadline")
	g.Expect(failed.Status.ExitCode).To(gomega.HaveValue(gomega.BeEquivalentTo(137)))
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		events := testenv.EventsOfReason(t, env.Client, ns, at.Name, "Failed")
		g.Expect(events).To(gomega.HaveLen(1))
		g.Expect(events[0].Note).To(gomega.ContainSubstring("DeadlineExceeded"))
	})
}

// The start deadline deletes the pod of an At stored as RUNNING only: an At whose RUNNING was never written
// (the operator was down from the pod's creation until past the deadline) is written RUNNING first, so that a
// crash right after the delete leaves a RUNNING At without its pod (FAILED, PodDeleted), never a PENDING one
// that would create the pod again.
func TestStartDeadlineNeedsAStoredRunning(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	clk := newClock()
	r := atctl.NewReconciler(env.Client, events.NewFakeRecorder(100), reconciler.Options{Clock: clk, Reader: env.Client}, atctl.Config{})
	at := createAt(t, ns, "late", sched(t0), "true")
	req := ctrl.Request{NamespacedName: key(at)}
	_, err := r.Reconcile(context.Background(), req) // creates the pod
	must(t, err)
	_, ok := getPod(t, key(at))
	g.Expect(ok).To(gomega.BeTrue())

	clk.Step(atctl.DefaultStartDeadline + time.Minute)
	res, err := r.Reconcile(context.Background(), req)
	must(t, err)
	g.Expect(res.RequeueAfter).To(gomega.BeZero()) // the status write's event brings the next look
	g.Expect(getAt(g, key(at)).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseRunning))
	_, ok = getPod(t, key(at))
	g.Expect(ok).To(gomega.BeTrue(), "the pod was deleted before RUNNING was stored")

	_, err = r.Reconcile(context.Background(), req)
	must(t, err)
	g.Expect(getAt(g, key(at)).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseFailed))
	_, ok = getPod(t, key(at))
	g.Expect(ok).To(gomega.BeFalse())
}
