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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	atctl "github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/test/testenv"
)

// Exactly once: the operator is stopped and a new one started between every step of an At's life; the
// command's pod is created once, and never again after it finished and was deleted.
func TestExactlyOnceAcrossRestarts(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	cfg, counter := testenv.Counting(env.Config)
	clk := newClock()
	// step runs one operator incarnation until it reconciled the At at least once and check passes.
	step := func(name string, k types.NamespacedName, check func(g gomega.Gomega)) {
		t.Helper()
		m := startOperator(t, cfg, ns, reconciler.Options{Clock: clk}, atctl.Config{})
		testenv.Eventually(t, timeout, func(g gomega.Gomega) {
			g.Expect(m.Reconciles.Get(k)).To(gomega.BeNumerically(">", 0))
			check(g)
		}, name)
		m.Stop(t)
		g.Expect(podPosts(counter)).To(gomega.BeNumerically("<=", 1), "%s: pods created: %s", name, counter)
	}

	at := createAt(t, ns, "once", sched(t0.Add(10*time.Minute)), "echo once")
	k := key(at)
	step("pending", k, func(g gomega.Gomega) {
		g.Expect(getAt(g, k).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhasePending))
	})
	_, ok := getPod(t, k)
	g.Expect(ok).To(gomega.BeFalse())

	clk.Step(10 * time.Minute)
	var started *metav1.Time
	step("due: pod created", k, func(g gomega.Gomega) {
		a := getAt(g, k)
		g.Expect(a.Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseRunning))
		started = a.Status.StartTime
	})
	step("restart while RUNNING", k, func(g gomega.Gomega) {
		a := getAt(g, k)
		g.Expect(a.Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseRunning))
		g.Expect(a.Status.StartTime.Equal(started)).To(gomega.BeTrue())
	})
	setPodStatus(t, k, corev1.PodRunning, nil)
	step("pod running", k, func(g gomega.Gomega) {
		g.Expect(getAt(g, k).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseRunning))
	})
	setPodStatus(t, k, corev1.PodSucceeded, &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: metav1.NewTime(t0)})
	step("pod succeeded", k, func(g gomega.Gomega) {
		g.Expect(getAt(g, k).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseDone))
	})
	pod, _ := getPod(t, k)
	must(t, env.Client.Delete(context.Background(), pod))
	g.Eventually(func() bool { _, ok := getPod(t, k); return ok }, timeout).Should(gomega.BeFalse())
	step("finished pod deleted", k, func(g gomega.Gomega) {
		g.Expect(getAt(g, k).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseDone))
	})
	clk.Step(24 * time.Hour)
	step("a day later", k, func(g gomega.Gomega) {
		g.Expect(getAt(g, k).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseDone))
	})
	_, ok = getPod(t, k)
	g.Expect(ok).To(gomega.BeFalse(), "a finished At got a new pod")
	g.Expect(podPosts(counter)).To(gomega.Equal(1), "pods created over the At's life: %s", counter)
}

// A crash between creating the pod and writing RUNNING: the next operator finds the pod by its name and
// adopts it; it creates none.
func TestAdoptsThePodOfACrashedOperator(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	at := createAt(t, ns, "crashed", sched(t0.Add(-time.Minute)), "echo crash")
	// What the crashed operator left: the pod, and an At without status.
	must(t, env.Client.Create(context.Background(), atctl.Pod(at, atctl.PodDefaults{})))

	cfg, counter := testenv.Counting(env.Config)
	startOperator(t, cfg, ns, reconciler.Options{Clock: newClock()}, atctl.Config{})
	waitPhase(t, key(at), cnatv1alpha1.PhaseRunning)
	g.Expect(podPosts(counter)).To(gomega.Equal(0), "writes: %s", counter)
}

// A RUNNING At whose pod disappears before finishing is FAILED (PodDeleted): the command may have run, so it
// is not run again.
func TestPodDeletedWhileRunningIsNotRecreated(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	cfg, counter := testenv.Counting(env.Config)
	startOperator(t, cfg, ns, reconciler.Options{Clock: newClock()}, atctl.Config{})
	at := createAt(t, ns, "lost", sched(t0), "sleep 100")
	waitPhase(t, key(at), cnatv1alpha1.PhaseRunning)
	pod, _ := getPod(t, key(at))
	must(t, env.Client.Delete(context.Background(), pod))
	failed := waitPhase(t, key(at), cnatv1alpha1.PhaseFailed)
	g.Expect(meta.FindStatusCondition(failed.Status.Conditions, cnatv1alpha1.ConditionSucceeded).Reason).To(gomega.Equal("PodDeleted"))
	_, ok := getPod(t, key(at))
	g.Expect(ok).To(gomega.BeFalse())
	g.Expect(podPosts(counter)).To(gomega.Equal(1))
}

// staleCache plays a cache that lags behind the API server: it returns a saved copy of the At and no pod.
type staleCache struct {
	client.Client
	at *cnatv1alpha1.At
}

func (s staleCache) Get(ctx context.Context, k client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	switch o := obj.(type) {
	case *corev1.Pod:
		return apierrors.NewNotFound(corev1.Resource("pods"), k.Name)
	case *cnatv1alpha1.At:
		if s.at != nil {
			s.at.DeepCopyInto(o)
			return nil
		}
	}
	return s.Client.Get(ctx, k, obj, opts...)
}

// A cache that has not seen the pod yet: the create meets AlreadyExists and the pod is adopted, not replaced.
func TestAlreadyExistsAdoptsThePod(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	at := createAt(t, ns, "lagging", sched(t0), "echo lag")
	must(t, env.Client.Create(context.Background(), atctl.Pod(at, atctl.PodDefaults{})))
	before, _ := getPod(t, key(at))

	cfg, counter := testenv.Counting(env.Config)
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	must(t, err)
	r := atctl.NewReconciler(staleCache{Client: c}, events.NewFakeRecorder(100), reconciler.Options{Clock: newClock(), Reader: env.Client}, atctl.Config{})
	_, err = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key(at)})
	must(t, err)
	g.Expect(getAt(g, key(at)).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseRunning))
	after, _ := getPod(t, key(at))
	g.Expect(after.UID).To(gomega.Equal(before.UID), "the pod was replaced")
	g.Expect(podPosts(counter)).To(gomega.Equal(1), "one create attempt, refused with AlreadyExists: %s", counter)
}

// A cache still holding the At as it was before it ran (no status) after the pod was deleted: the uncached
// check sees the At is not current and nothing is created.
func TestStaleCachedAtDoesNotRunAgain(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	at := createAt(t, ns, "stale", sched(t0), "echo stale")
	old := getAt(g, key(at))
	r := atctl.NewReconciler(env.Client, events.NewFakeRecorder(100), reconciler.Options{Clock: newClock(), Reader: env.Client}, atctl.Config{})
	req := ctrl.Request{NamespacedName: key(at)}
	_, err := r.Reconcile(context.Background(), req)
	must(t, err)
	setPodStatus(t, key(at), corev1.PodSucceeded, &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: metav1.NewTime(t0)})
	_, err = r.Reconcile(context.Background(), req)
	must(t, err)
	g.Expect(getAt(g, key(at)).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseDone))
	pod, _ := getPod(t, key(at))
	must(t, env.Client.Delete(context.Background(), pod))

	cfg, counter := testenv.Counting(env.Config)
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	must(t, err)
	stale := atctl.NewReconciler(staleCache{Client: c, at: old}, events.NewFakeRecorder(100), reconciler.Options{Clock: newClock(), Reader: env.Client}, atctl.Config{})
	for range 3 {
		_, err = stale.Reconcile(context.Background(), req)
		must(t, err)
	}
	g.Expect(counter.Total()).To(gomega.Equal(0), "writes from a stale cache: %s", counter)
	_, ok := getPod(t, key(at))
	g.Expect(ok).To(gomega.BeFalse())
	g.Expect(getAt(g, key(at)).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseDone))
}

// A pod of the At's pod name that the At does not control (someone else's, without operator101's label, so
// not in the operator's cache): the At waits, PENDING, reason PodNameTaken naming the pod, with one Warning
// Event; it never runs its command in that pod nor touches it, and tries no create while the name is known
// taken (one refused create, at the first try). The pod gets no owner reference, so deleting the At leaves it.
// An At of that name created again runs once the pod is deleted, without being touched itself.
func TestForeignPodWithThePodName(t *testing.T) {
	ctx := context.Background()
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	foreign := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: atctl.PodName("taken"), Labels: map[string]string{"team": "shop"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "busybox"}}},
	}
	must(t, env.Client.Create(ctx, foreign))
	unchanged := func(when string) {
		t.Helper()
		pod, ok := getPod(t, client.ObjectKeyFromObject(&cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taken"}}))
		g.Expect(ok).To(gomega.BeTrue(), "%s: the pod is gone", when)
		g.Expect(pod.UID).To(gomega.Equal(foreign.UID), when)
		g.Expect(pod.ResourceVersion).To(gomega.Equal(foreign.ResourceVersion), "%s: the pod was written", when)
		g.Expect(pod.OwnerReferences).To(gomega.BeEmpty(), when)
		g.Expect(pod.Labels).To(gomega.Equal(foreign.Labels), when)
	}
	cfg, counter := testenv.Counting(env.Config)
	rec := startOperator(t, cfg, ns, reconciler.Options{Clock: newClock(), NotOwnedRetry: 200 * time.Millisecond}, atctl.Config{}).Reconciles
	taken := func(at *cnatv1alpha1.At) {
		t.Helper()
		testenv.Eventually(t, timeout, func(g gomega.Gomega) {
			a := getAt(g, key(at))
			testenv.ExpectCondition(g, a.Status.Conditions, cnatv1alpha1.ConditionSucceeded, metav1.ConditionUnknown,
				cnatv1alpha1.ReasonPodNameTaken, "Pod "+ns+"/"+foreign.Name+" exists and is not controlled by this At")
			g.Expect(a.Status.Phase).To(gomega.Equal(cnatv1alpha1.PhasePending))
			g.Expect(testenv.EventsRegarding(g, env.Client, ns, at.UID, cnatv1alpha1.ReasonPodNameTaken)).NotTo(gomega.BeEmpty())
		})
	}

	at := createAt(t, ns, "taken", sched(t0), "true")
	taken(at)
	// The retries that follow (no event triggers them) write nothing and send no create.
	counter.Reset()
	n := rec.Get(key(at))
	testenv.Eventually(t, timeout, func(g gomega.Gomega) { g.Expect(rec.Get(key(at))).To(gomega.BeNumerically(">=", n+3)) })
	g.Expect(counter.Total()).To(gomega.Equal(0), "writes while the pod name is taken: %s", counter)
	evs := testenv.EventsRegarding(g, env.Client, ns, at.UID, cnatv1alpha1.ReasonPodNameTaken)
	g.Expect(evs).To(gomega.HaveLen(1))
	g.Expect(evs[0].Type).To(gomega.Equal(corev1.EventTypeWarning))
	g.Expect(evs[0].Series).To(gomega.BeNil(), "the Event was recorded again")
	unchanged("while the At waits")

	// Deleting the At leaves the pod: it has no owner reference for the garbage collector to follow.
	must(t, env.Client.Delete(ctx, at))
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, key(at), &cnatv1alpha1.At{}))).To(gomega.BeTrue())
	})
	g.Expect(testenv.CollectGarbage(t, env.Client, ns, at.UID, &corev1.PodList{})).To(gomega.Equal(0))
	unchanged("after the At was deleted")
	g.Expect(podPosts(counter)).To(gomega.Equal(0), "creates: %s", counter)

	// The At created again runs once the pod is gone, which no event tells it.
	at = createAt(t, ns, "taken", sched(t0), "true")
	taken(at)
	must(t, env.Client.Delete(ctx, foreign))
	running := waitPhase(t, key(at), cnatv1alpha1.PhaseRunning)
	pod, ok := getPod(t, key(at))
	g.Expect(ok).To(gomega.BeTrue())
	g.Expect(metav1.IsControlledBy(pod, running)).To(gomega.BeTrue(), "the At's pod is its own")
	g.Expect(podPosts(counter)).To(gomega.Equal(2), "one refused create while taken, one that ran: %s", counter)
}

// A RUNNING At whose pod was replaced, while the operator was down, by someone else's pod of the same name
// (not in the cache) does not take that pod for its run, even one that succeeded: it is FAILED, PodDeleted,
// and the pod is left alone.
func TestForeignPodIsNotTheRun(t *testing.T) {
	ctx := context.Background()
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	m := startOperator(t, nil, ns, reconciler.Options{Clock: newClock()}, atctl.Config{})
	at := createAt(t, ns, "replaced", sched(t0), "sleep 100")
	waitPhase(t, key(at), cnatv1alpha1.PhaseRunning)
	m.Stop(t)

	pod, _ := getPod(t, key(at))
	must(t, env.Client.Delete(ctx, pod, client.GracePeriodSeconds(0)))
	testenv.Eventually(t, timeout, func(g gomega.Gomega) { _, ok := getPod(t, key(at)); g.Expect(ok).To(gomega.BeFalse()) })
	foreign := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod.Name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "command", Image: "busybox"}}},
	}
	must(t, env.Client.Create(ctx, foreign))
	setPodStatus(t, key(at), corev1.PodSucceeded, &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: metav1.NewTime(t0)})
	before, _ := getPod(t, key(at))

	startOperator(t, nil, ns, reconciler.Options{Clock: newClock()}, atctl.Config{})
	failed := waitPhase(t, key(at), cnatv1alpha1.PhaseFailed)
	g.Expect(meta.FindStatusCondition(failed.Status.Conditions, cnatv1alpha1.ConditionSucceeded).Reason).To(gomega.Equal(cnatv1alpha1.ReasonPodDeleted))
	after, _ := getPod(t, key(at))
	g.Expect(after.ResourceVersion).To(gomega.Equal(before.ResourceVersion), "the pod was written")
	g.Expect(after.OwnerReferences).To(gomega.BeEmpty())
}
