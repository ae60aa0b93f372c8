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
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"github.com/operator-framework/api/crds"
	apiv2 "github.com/operator-framework/api/pkg/operators/v2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/internal/controller"
	atctl "github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/internal/controller/managed"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/test/testenv"
)

// olmCondition plays OLM: the OperatorCondition CRD (from operator-framework/api), an OperatorCondition for
// the operator in a namespace of its own, and OPERATOR_CONDITION_NAME naming it. It returns the namespace and
// a function reading the Upgradeable condition (nil while there is none).
func olmCondition(t *testing.T) (atctl.Config, func(g gomega.Gomega) *metav1.Condition) {
	t.Helper()
	ctx := context.Background()
	_, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{
		CRDs: []*apiextensionsv1.CustomResourceDefinition{crds.OperatorCondition()}})
	must(t, err)
	scheme := runtime.NewScheme()
	must(t, apiv2.AddToScheme(scheme))
	oc, err := client.New(env.Config, client.Options{Scheme: scheme})
	must(t, err)
	opNS := env.NewNamespace(t, "at-operator")
	cond := &apiv2.OperatorCondition{ObjectMeta: metav1.ObjectMeta{Namespace: opNS, Name: "operator101.v0.0.1"}}
	must(t, oc.Create(ctx, cond))
	return atctl.Config{OperatorNamespace: opNS, OperatorConditionName: cond.Name}, func(g gomega.Gomega) *metav1.Condition {
		cur := &apiv2.OperatorCondition{}
		g.Expect(oc.Get(ctx, client.ObjectKeyFromObject(cond), cur)).To(gomega.Succeed())
		return meta.FindStatusCondition(cur.Spec.Conditions, apiv2.Upgradeable)
	}
}

// expectUpgradeable waits until the Upgradeable condition has status and a message containing message.
func expectUpgradeable(t *testing.T, get func(gomega.Gomega) *metav1.Condition, status metav1.ConditionStatus, message string) {
	t.Helper()
	reason := cnatv1alpha1.ReasonNoAtRunning
	if status == metav1.ConditionFalse {
		reason = cnatv1alpha1.ReasonAtRunning
	}
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		c := get(g)
		g.Expect(c).NotTo(gomega.BeNil())
		g.Expect(c.Status).To(gomega.Equal(status))
		g.Expect(c.Reason).To(gomega.Equal(reason))
		g.Expect(c.Message).To(gomega.ContainSubstring(message))
	}, "Upgradeable=%s", status)
}

func podKey(at types.NamespacedName) types.NamespacedName {
	return types.NamespacedName{Namespace: at.Namespace, Name: atctl.PodName(at.Name)}
}

// gateClock is a fake clock at this machine's time, to the second, for the gate's tests: the gate bounds a
// run from the start its At's status records (the pod's creation time, which the API server stamps), so its
// clock must agree with the API server's, as it does in a cluster. The At controller's own tests keep t0.
func gateClock() *clocktesting.FakeClock {
	return clocktesting.NewFakeClock(time.Now().UTC().Truncate(time.Second))
}

// Under OLM: Upgradeable=False on the operator's OperatorCondition only while an At's pod runs (phase
// Running, not Pending), naming the At; True again once the pod ends or reaches its activeDeadlineSeconds;
// written only when it changes; and set True at start when a stale False is left from before.
func TestUpgradeableOnlyWhileAPodRuns(t *testing.T) {
	g := gomega.NewWithT(t)
	olm, upgradeable := olmCondition(t)
	ns := env.NewNamespace(t, "at")
	cfg, counter := testenv.Counting(env.Config)
	clk := gateClock()
	now := clk.Now()
	o := reconciler.Options{Clock: clk}
	m := startOperator(t, cfg, ns, o, olm)
	rec := m.Reconciles
	gateRan := func(trigger func()) { testenv.WaitReconciled(t, rec, atctl.UpgradeableGate, timeout, trigger) }

	// At start the gate looks once: no At, no write (OLM reads a missing Upgradeable condition as upgradeable).
	testenv.Eventually(t, timeout, func(g gomega.Gomega) { g.Expect(rec.Get(atctl.UpgradeableGate)).To(gomega.BeNumerically(">=", 1)) })
	g.Expect(upgradeable(g)).To(gomega.BeNil())

	// RUNNING with its pod Pending (the image being pulled): holds nothing.
	a := key(createAt(t, ns, "holds", sched(now), "sleep 600"))
	waitPhase(t, a, cnatv1alpha1.PhaseRunning)
	gateRan(func() { setPodWaiting(t, a, "ContainerCreating", "") })
	g.Expect(upgradeable(g)).To(gomega.BeNil(), "a Pending pod held the upgrade")

	// Running: held, and the message names the At.
	setPodStatus(t, a, corev1.PodRunning, nil)
	expectUpgradeable(t, upgradeable, metav1.ConditionFalse, "At "+ns+"/holds is running a command")
	setPodStatus(t, a, corev1.PodSucceeded, &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: metav1.NewTime(t0)})
	expectUpgradeable(t, upgradeable, metav1.ConditionTrue, "no At is running a command")
	waitPhase(t, a, cnatv1alpha1.PhaseDone)
	g.Expect(counter.Writes(false)["PUT operatorconditions"]).To(gomega.Equal(2), "%s", counter)

	// A pod that still runs at its activeDeadlineSeconds (a node the kubelet no longer reports from) holds the
	// upgrade until then, not after.
	b := key(createAt(t, ns, "forever", sched(now), "sleep infinity", func(x *cnatv1alpha1.At) { x.Spec.ActiveDeadlineSeconds = ptr.To[int64](60) }))
	waitPhase(t, b, cnatv1alpha1.PhaseRunning)
	setPodStatusAt(t, b, corev1.PodRunning, nil, now) // started now: its deadline comes before the At's bound
	expectUpgradeable(t, upgradeable, metav1.ConditionFalse, ns+"/forever")
	clk.Step(59 * time.Second)
	gateRan(func() { testenv.Poke(t, env.Client, podKey(b), &corev1.Pod{}) })
	g.Expect(upgradeable(g).Status).To(gomega.Equal(metav1.ConditionFalse), "released before the deadline")
	clk.Step(time.Second) // the gate asked to look again then; the poke saves the test the real minute
	gateRan(func() { testenv.Poke(t, env.Client, podKey(b), &corev1.Pod{}) })
	expectUpgradeable(t, upgradeable, metav1.ConditionTrue, "no At is running a command")
	g.Expect(getAt(g, b).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseRunning), "the kubelet, not the gate, ends the pod")
	g.Expect(counter.Writes(false)["PUT operatorconditions"]).To(gomega.Equal(4), "%s", counter)

	// At rest, the gate's looks and the At's reconciles write nothing.
	counter.Reset()
	gateRan(func() { testenv.Poke(t, env.Client, podKey(b), &corev1.Pod{}) })
	testenv.WaitReconciled(t, rec, b, timeout, func() { testenv.Poke(t, env.Client, b, &cnatv1alpha1.At{}) })
	g.Expect(counter.Total()).To(gomega.Equal(0), "writes at rest: %s", counter)

	// A False left by an operator that stopped while an At ran, whose At and pod went while it was down: the
	// next operator's first look (no pod event comes) sets True.
	c := key(createAt(t, ns, "left", sched(now), "sleep 600"))
	waitPhase(t, c, cnatv1alpha1.PhaseRunning)
	setPodStatus(t, c, corev1.PodRunning, nil)
	expectUpgradeable(t, upgradeable, metav1.ConditionFalse, ns+"/left")
	m.Stop(t)
	pod, _ := getPod(t, c)
	must(t, env.Client.Delete(context.Background(), pod))
	must(t, env.Client.Delete(context.Background(), &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.Name}}))
	startOperator(t, cfg, ns, o, olm)
	expectUpgradeable(t, upgradeable, metav1.ConditionTrue, "no At is running a command")
}

// Several holders: the message names the first few in order and counts the rest; a change of names alone is
// written at most every 10 s (by the operator's clock), a change of status at once.
func TestUpgradeableMessageNamesTheHolders(t *testing.T) {
	g := gomega.NewWithT(t)
	olm, upgradeable := olmCondition(t)
	ns := env.NewNamespace(t, "at")
	clk := gateClock()
	rec := startOperator(t, nil, ns, reconciler.Options{Clock: clk}, olm).Reconciles
	var ats []types.NamespacedName
	for i := range 5 {
		k := key(createAt(t, ns, fmt.Sprintf("at-%d", i), sched(clk.Now()), "sleep 600"))
		waitPhase(t, k, cnatv1alpha1.PhaseRunning)
		ats = append(ats, k)
	}
	setPodStatus(t, ats[4], corev1.PodRunning, nil)
	expectUpgradeable(t, upgradeable, metav1.ConditionFalse, "At "+ns+"/at-4 is running a command")
	for _, k := range ats[:4] {
		setPodStatus(t, k, corev1.PodRunning, nil)
	}
	testenv.WaitReconciled(t, rec, atctl.UpgradeableGate, timeout, func() { testenv.Poke(t, env.Client, podKey(ats[0]), &corev1.Pod{}) })
	g.Expect(upgradeable(g).Message).To(gomega.HavePrefix("At "+ns+"/at-4 is running a command"), "the message was rewritten within 10 s")
	clk.Step(10 * time.Second)
	testenv.WaitReconciled(t, rec, atctl.UpgradeableGate, timeout, func() { testenv.Poke(t, env.Client, podKey(ats[0]), &corev1.Pod{}) })
	expectUpgradeable(t, upgradeable, metav1.ConditionFalse,
		fmt.Sprintf("5 Ats are running a command: %[1]s/at-0, %[1]s/at-1, %[1]s/at-2 and 2 more;", ns))
	for _, k := range ats {
		setPodStatus(t, k, corev1.PodSucceeded, &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: metav1.NewTime(t0)})
	}
	expectUpgradeable(t, upgradeable, metav1.ConditionTrue, "no At is running a command")
}

// listCounter records the List calls a manager's client makes: the list's type, its field selector and how
// many objects came back.
type listCounter struct {
	client.Client
	mu    sync.Mutex
	calls []listCall
}

type listCall struct {
	list   string
	fields string
	items  int
}

func (c *listCounter) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	err := c.Client.List(ctx, list, opts...)
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	call := listCall{list: fmt.Sprintf("%T", list), items: meta.LenList(list)}
	if lo.FieldSelector != nil {
		call.fields = lo.FieldSelector.String()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call)
	return err
}

func (c *listCounter) take() []listCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = nil
	return out
}

// The gate's cost does not grow with the number of Ats: neither the At reconciles nor the gate ever list Ats
// (the gate reads the At of each running pod from the cache, by name), and the gate lists pods only through
// its cache index, which returns the running pods alone (1 of 30 here).
func TestUpgradeableGateListsOnlyRunningPods(t *testing.T) {
	g := gomega.NewWithT(t)
	olm, upgradeable := olmCondition(t)
	ns := env.NewNamespace(t, "at")
	lists := &listCounter{}
	clk := gateClock()
	o := reconciler.Options{Clock: clk, Workers: 2}
	rec := env.StartManager(t, nil, func(mgr ctrl.Manager) error { return atctl.Setup(mgr, o, olm) },
		func(mo *ctrl.Options) {
			mo.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}
			mo.NewClient = func(cfg *rest.Config, co client.Options) (client.Client, error) {
				c, err := client.New(cfg, co)
				lists.Client = c
				return lists, err
			}
		}).Reconciles

	var ats []types.NamespacedName
	for i := range 30 {
		ats = append(ats, key(createAt(t, ns, fmt.Sprintf("many-%02d", i), sched(clk.Now()), "sleep 600")))
	}
	for _, k := range ats {
		waitPhase(t, k, cnatv1alpha1.PhaseRunning)
	}
	for _, k := range ats[:10] {
		setPodStatus(t, k, corev1.PodSucceeded, &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: metav1.NewTime(t0)})
	}
	setPodStatus(t, ats[29], corev1.PodRunning, nil)
	expectUpgradeable(t, upgradeable, metav1.ConditionFalse, "At "+ns+"/many-29 is running a command")
	for _, k := range ats[:10] {
		waitPhase(t, k, cnatv1alpha1.PhaseDone)
	}

	// Events of every pod (each one a look of the gate, folded by its queue) and reconciles of every At.
	lists.take()
	before := rec.Get(atctl.UpgradeableGate)
	for _, k := range ats {
		testenv.Poke(t, env.Client, podKey(k), &corev1.Pod{})
		testenv.WaitReconciled(t, rec, k, timeout, func() { testenv.Poke(t, env.Client, k, &cnatv1alpha1.At{}) })
	}
	testenv.WaitReconciled(t, rec, atctl.UpgradeableGate, timeout, func() { testenv.Poke(t, env.Client, podKey(ats[0]), &corev1.Pod{}) })
	looks := rec.Get(atctl.UpgradeableGate) - before
	calls := lists.take()
	g.Expect(calls).NotTo(gomega.BeEmpty())
	t.Logf("30 Ats (1 pod running), %d looks of the gate: %d List calls, the first %+v", looks, len(calls), calls[0])
	g.Expect(looks).To(gomega.BeNumerically(">=", 2))
	for _, c := range calls {
		g.Expect(c.list).To(gomega.Equal("*v1.PodList"), "a List of anything but pods: %+v", c)
		g.Expect(c.fields).To(gomega.Equal(atctl.RunningAtPodIndex+"=true"), "a List of pods without the index: %+v", c)
		g.Expect(c.items).To(gomega.Equal(1), "the index returned more than the running pod: %+v", c)
	}
	g.Expect(len(calls)).To(gomega.BeNumerically("<=", looks), "more than one List per look of the gate")
}

// Without an OperatorCondition name (not under OLM: no OPERATOR_CONDITION_NAME) there is no gate: nothing is reported and nothing is needed.
func TestNoOperatorConditionOutsideOLM(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	cfg, counter := testenv.Counting(env.Config)
	rec := startOperator(t, cfg, ns, reconciler.Options{Clock: newClock()}, atctl.Config{}).Reconciles
	at := createAt(t, ns, "no-olm", sched(t0), "true")
	waitPhase(t, key(at), cnatv1alpha1.PhaseRunning)
	setPodStatus(t, key(at), corev1.PodRunning, nil)
	testenv.WaitReconciled(t, rec, key(at), timeout, func() { testenv.Poke(t, env.Client, key(at), &cnatv1alpha1.At{}) })
	g.Expect(counter.Writes(false)["PUT operatorconditions"]).To(gomega.BeZero())
	g.Expect(rec.Get(atctl.UpgradeableGate)).To(gomega.BeZero(), "a gate runs outside OLM")
}

// tenantPod is a pod a tenant who may create pods makes to look like the run of their At: operator101's
// managed-by label (so the operator's cache holds it) and the At's labels, a controller reference to the At,
// and an activeDeadlineSeconds of 68 years. The test plays the kubelet: it runs, from start.
func tenantPod(t *testing.T, at *cnatv1alpha1.At, name string, start time.Time) types.NamespacedName {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: at.Namespace, Name: name,
			Labels: map[string]string{managed.ByLabel: managed.By, "cnat.programming-kubernetes.info/at": at.Name, "app": at.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: cnatv1alpha1.GroupVersion.String(), Kind: "At", Name: at.Name,
				UID: at.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, ActiveDeadlineSeconds: ptr.To[int64](1<<31 - 1),
			Containers: []corev1.Container{{Name: "command", Image: "busybox", Command: []string{"sleep", "infinity"}}}},
	}
	must(t, env.Client.Create(ctx, pod))
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &metav1.Time{Time: start}}
	must(t, env.Client.Status().Update(ctx, pod))
	return client.ObjectKeyFromObject(pod)
}

// A tenant who may create Ats and pods in a namespace cannot hold upgrades with pods of their own, however
// much they look like operator101's (tenantPod: its label, so they are in the operator's cache, a controller
// reference to the tenant's At, Running, no deadline to speak of). Each of these runs and holds nothing:
//   - a pod for an At that is not due for a year (PENDING);
//   - a pod under the pod name of an At that ran and is DONE, its own pod deleted;
//   - a second pod, under another name, for an At that is RUNNING (its own pod still Pending);
//
// while the gate looks at each of them (their events). Only the run an At's status records holds it: an At's
// own pod, as before, named alone in the message even with a second tenant pod of that At running; and once
// the tenant deletes that pod and makes one of their own under its name, the gate is released.
func TestUpgradeableIgnoresATenantsPods(t *testing.T) {
	ctx := context.Background()
	g := gomega.NewWithT(t)
	olm, upgradeable := olmCondition(t)
	ns := env.NewNamespace(t, "at")
	clk := gateClock()
	now := clk.Now()
	rec := startOperator(t, nil, ns, reconciler.Options{Clock: clk}, olm).Reconciles
	// notHeld makes a tenant pod with create and checks, once the gate has looked at it, that nothing holds.
	notHeld := func(what string, create func() types.NamespacedName) {
		t.Helper()
		var pod types.NamespacedName
		testenv.WaitReconciled(t, rec, atctl.UpgradeableGate, timeout, func() { pod = create() })
		testenv.WaitReconciled(t, rec, atctl.UpgradeableGate, timeout, func() { testenv.Poke(t, env.Client, pod, &corev1.Pod{}) })
		if c := upgradeable(g); c != nil {
			g.Expect(c.Status).To(gomega.Equal(metav1.ConditionTrue), "%s: %s held the upgrade: %s", what, pod, c.Message)
		}
	}

	later := createAt(t, ns, "later", sched(now.Add(365*24*time.Hour)), "true")
	waitPhase(t, key(later), cnatv1alpha1.PhasePending)
	notHeld("a PENDING At's pod", func() types.NamespacedName { return tenantPod(t, later, "later-hold", now) })

	done := key(createAt(t, ns, "done", sched(now), "true"))
	waitPhase(t, done, cnatv1alpha1.PhaseRunning)
	setPodStatusAt(t, done, corev1.PodSucceeded, &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: metav1.NewTime(now)}, now)
	doneAt := waitPhase(t, done, cnatv1alpha1.PhaseDone)
	own, _ := getPod(t, done)
	must(t, env.Client.Delete(ctx, own, client.GracePeriodSeconds(0)))
	testenv.Eventually(t, timeout, func(g gomega.Gomega) { _, ok := getPod(t, done); g.Expect(ok).To(gomega.BeFalse()) })
	notHeld("a DONE At's pod under its pod name", func() types.NamespacedName { return tenantPod(t, doneAt, atctl.PodName("done"), now) })

	starting := key(createAt(t, ns, "starting", sched(now), "sleep 600"))
	startingAt := waitPhase(t, starting, cnatv1alpha1.PhaseRunning)
	setPodWaiting(t, starting, "ContainerCreating", "")
	notHeld("a second pod of a RUNNING At", func() types.NamespacedName { return tenantPod(t, startingAt, "starting-extra", now) })
	g.Expect(getAt(g, done).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseDone), "the tenant's pod became the DONE At's run")

	// The operator's own pod holds, as before; the message names its At once, with the tenant's second pod of
	// that At running too (written within 10 s of the operator's clock: the clock moves them).
	legit := key(createAt(t, ns, "legit", sched(now), "sleep 600"))
	legitAt := waitPhase(t, legit, cnatv1alpha1.PhaseRunning)
	setPodStatusAt(t, legit, corev1.PodRunning, nil, now)
	one := "At " + ns + "/legit is running a command;"
	expectUpgradeable(t, upgradeable, metav1.ConditionFalse, one)
	extra := tenantPod(t, legitAt, "legit-extra", now)
	clk.Step(10 * time.Second)
	testenv.WaitReconciled(t, rec, atctl.UpgradeableGate, timeout, func() { testenv.Poke(t, env.Client, extra, &corev1.Pod{}) })
	g.Expect(upgradeable(g).Message).To(gomega.HavePrefix(one))

	// The tenant replaces the At's pod by one of their own under its name, created a second later or more (the
	// API server stamps creation times to the second): released, whether the At follows that pod or fails.
	time.Sleep(time.Until(legitAt.Status.StartTime.Add(time.Second)))
	own, _ = getPod(t, legit)
	must(t, env.Client.Delete(ctx, own, client.GracePeriodSeconds(0)))
	testenv.Eventually(t, timeout, func(g gomega.Gomega) { _, ok := getPod(t, legit); g.Expect(ok).To(gomega.BeFalse()) })
	tenantPod(t, legitAt, atctl.PodName("legit"), now)
	expectUpgradeable(t, upgradeable, metav1.ConditionTrue, "no At is running a command")
	testenv.WaitReconciled(t, rec, atctl.UpgradeableGate, timeout, func() { testenv.Poke(t, env.Client, podKey(legit), &corev1.Pod{}) })
	g.Expect(upgradeable(g).Status).To(gomega.Equal(metav1.ConditionTrue))
}

// A run holds upgrades no longer than its At's bound: the At's activeDeadlineSeconds (60 s here) plus the
// start deadline (5 minutes), after the start its status records, even though its pod still runs (no kubelet
// ends it) and says it started an hour later than it was created (its node's clock ahead), so that its own
// deadline is an hour later.
func TestUpgradeableReleasedAtTheAtsBound(t *testing.T) {
	g := gomega.NewWithT(t)
	olm, upgradeable := olmCondition(t)
	ns := env.NewNamespace(t, "at")
	clk := gateClock()
	rec := startOperator(t, nil, ns, reconciler.Options{Clock: clk}, olm).Reconciles
	k := key(createAt(t, ns, "bounded", sched(clk.Now()), "sleep infinity", func(x *cnatv1alpha1.At) { x.Spec.ActiveDeadlineSeconds = ptr.To[int64](60) }))
	start := waitPhase(t, k, cnatv1alpha1.PhaseRunning).Status.StartTime.Time
	setPodStatusAt(t, k, corev1.PodRunning, nil, start.Add(time.Hour))
	expectUpgradeable(t, upgradeable, metav1.ConditionFalse, "At "+ns+"/bounded is running a command")

	bound := start.Add(60*time.Second + atctl.DefaultStartDeadline)
	poke := func() { testenv.Poke(t, env.Client, podKey(k), &corev1.Pod{}) }
	clk.SetTime(bound.Add(-time.Second))
	testenv.WaitReconciled(t, rec, atctl.UpgradeableGate, timeout, poke)
	g.Expect(upgradeable(g).Status).To(gomega.Equal(metav1.ConditionFalse), "released before the At's bound")
	clk.SetTime(bound) // the gate asked to look again then; the poke saves the test the real 6 minutes
	testenv.WaitReconciled(t, rec, atctl.UpgradeableGate, timeout, poke)
	expectUpgradeable(t, upgradeable, metav1.ConditionTrue, "no At is running a command")
	pod, _ := getPod(t, k)
	g.Expect(pod.Status.Phase).To(gomega.Equal(corev1.PodRunning))
	g.Expect(getAt(g, k).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseRunning), "the kubelet, not the gate, ends the pod")
}

// The gate follows the At as well as its pod. A pod that runs before its At's RUNNING is stored (an operator
// that restarted between the pod's creation and the status write) holds nothing; the At's RUNNING, which no pod
// event tells, then makes it hold; and the At's deletion, which no pod event tells either (envtest has no
// garbage collector), releases it. The test plays the At controller (NewReconciler) beside the gate alone.
func TestUpgradeableFollowsTheAt(t *testing.T) {
	ctx := context.Background()
	g := gomega.NewWithT(t)
	olm, upgradeable := olmCondition(t)
	ns := env.NewNamespace(t, "at")
	clk := gateClock()
	rec := env.StartManager(t, nil, func(mgr ctrl.Manager) error { return atctl.SetupGate(mgr, reconciler.Options{Clock: clk}, olm) },
		func(o *ctrl.Options) {
			o.Cache = controller.CacheOptions(controller.Options{}, reconciler.NewMemory())
			o.Cache.DefaultNamespaces = map[string]cache.Config{ns: {}}
		}).Reconciles
	r := atctl.NewReconciler(env.Client, events.NewFakeRecorder(100), reconciler.Options{Clock: clk, Reader: env.Client}, atctl.Config{})
	at := createAt(t, ns, "restarted", sched(clk.Now()), "sleep 600")
	req := ctrl.Request{NamespacedName: key(at)}
	_, err := r.Reconcile(ctx, req) // creates the pod; RUNNING comes with the next reconcile
	must(t, err)
	testenv.WaitReconciled(t, rec, atctl.UpgradeableGate, timeout, func() { setPodStatusAt(t, key(at), corev1.PodRunning, nil, clk.Now()) })
	g.Expect(upgradeable(g)).To(gomega.BeNil(), "held by a pod whose At is not RUNNING")

	_, err = r.Reconcile(ctx, req)
	must(t, err)
	g.Expect(getAt(g, key(at)).Status.Phase).To(gomega.Equal(cnatv1alpha1.PhaseRunning))
	expectUpgradeable(t, upgradeable, metav1.ConditionFalse, "At "+ns+"/restarted is running a command")

	must(t, env.Client.Delete(ctx, at))
	expectUpgradeable(t, upgradeable, metav1.ConditionTrue, "no At is running a command")
	_, ok := getPod(t, key(at))
	g.Expect(ok).To(gomega.BeTrue(), "the pod went (the test wants the At's deletion alone to release)")
}
