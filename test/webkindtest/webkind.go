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

// Package webkindtest holds what the envtest suites of MyWeb and AppService share: the two kinds run a
// Deployment behind a Service (NodePort, ClusterIP or LoadBalancer), so they are started, counted and refused
// alike. It imports internal/controller (the real manager's cache), so only the black-box tests (package
// myweb_test, appservice_test) use it; test/testenv cannot, since tests inside internal/controller import it.
package webkindtest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/operator101/operator101/api/conditions"
	"github.com/operator101/operator101/internal/controller"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/internal/controller/route"
	"github.com/operator101/operator101/test/testenv"
)

// Kind is one kind the shared checks run over (T: *operatorv1.MyWeb, *appv1.AppService), as its suite
// describes it.
type Kind[T client.Object] struct {
	// Env is the suite's environment: build Kind once testenv.Run has set it.
	Env *testenv.Env
	// Name is the kind (MyWeb), as Events name it; Resource is its resource (mywebs), as the API paths do.
	Name, Resource string
	// Setup registers the kind's controller with a manager, given which route kinds the cluster serves.
	Setup func(ctrl.Manager, reconciler.Options, route.Served) error
	// Routes is which route kinds the suite's API server serves (route.Discover): zero, none but Ingress.
	Routes route.Served
	// Conditions reads the conditions of the custom resource at key.
	Conditions func(g gomega.Gomega, key types.NamespacedName) []metav1.Condition
}

// Start runs the kind's controller in a manager on cfg (Env.Config when nil), with the real manager's cache:
// only operator101's own children (labelled managed-by), trimmed.
func (k Kind[T]) Start(t *testing.T, cfg *rest.Config) (*testenv.Manager, *testenv.Reconciles) {
	t.Helper()
	return k.StartWith(t, cfg, reconciler.Options{})
}

// StartWith is Start with options o (its workers are set here).
func (k Kind[T]) StartWith(t *testing.T, cfg *rest.Config, o reconciler.Options) (*testenv.Manager, *testenv.Reconciles) {
	t.Helper()
	o.Workers = 2
	// One Memory, as cmd/main.go makes it: the cache's transforms and the controller compare each other's
	// digests.
	o.Memory = reconciler.NewMemory()
	proxyEnv, memory := o.ProxyEnv, o.Memory
	mgr := k.Env.StartManager(t, cfg, func(mgr ctrl.Manager) error {
		return k.Setup(mgr, o, k.Routes)
	}, func(co *ctrl.Options) {
		co.Cache = controller.CacheOptions(controller.Options{ProxyEnv: proxyEnv, Routes: k.Routes}, memory)
	})
	return mgr, mgr.Reconciles
}

// empty returns a new, empty custom resource of the kind.
func (k Kind[T]) empty() T {
	var zero T
	return reflect.New(reflect.TypeOf(zero).Elem()).Interface().(T)
}

// named returns the custom resource ns/name, with nothing else set.
func (k Kind[T]) named(ns, name string) T {
	o := k.empty()
	o.SetNamespace(ns)
	o.SetName(name)
	return o
}

// Events lists "type reason" of the Events about the custom resource ns/name.
func (k Kind[T]) Events(g gomega.Gomega, ns, name string) []string {
	return testenv.EventsAbout(g, k.Env.Client, ns, k.Name, name)
}

// WaitQuiet waits until the writes have stopped: the counter does not move across a reconcile of key (poked
// through an annotation).
func (k Kind[T]) WaitQuiet(t *testing.T, rec *testenv.Reconciles, key types.NamespacedName, counter *testenv.Counter, within time.Duration) {
	t.Helper()
	testenv.WaitQuiet(t, rec, key, counter, func() { testenv.Poke(t, k.Env.Client, key, k.empty()) }, within)
}

// freePortWhenDone deletes the custom resource ns/name and its Service once the operator has stopped (cleanups
// run last first), so that the next run (-count=N) finds its node port free: envtest runs no garbage collector.
func (k Kind[T]) freePortWhenDone(t *testing.T, ns, name string) {
	t.Cleanup(func() {
		_ = k.Env.Client.Delete(ctx, k.named(ns, name))
		_ = k.Env.Client.Delete(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	})
}

var ctx = context.Background()

// expectNoChildLookups fails the test when the operator looked a child up past the cache, or read the custom
// resource whole: it does so only for a child the cache lacks or that differs from what it would apply, never
// for a converged one.
func (k Kind[T]) expectNoChildLookups(t *testing.T, counter *testenv.Counter, what string) {
	t.Helper()
	gets := counter.Gets()
	if n := gets["GET configmaps"] + gets["GET deployments"] + gets["GET services"] + gets["GET "+k.Resource]; n != 0 {
		t.Errorf("%s: %d uncached lookups: %v", what, n, gets)
	}
}

// ExpectNoWritesAtRest checks that the converged custom resource at key costs no write and no read past the
// cache whatever triggers a reconcile: a label on it, then a restart of the operator (mgr, started on cfg,
// whose requests counter counts; rec counts its reconciles).
func (k Kind[T]) ExpectNoWritesAtRest(t *testing.T, mgr *testenv.Manager, rec *testenv.Reconciles, cfg *rest.Config,
	counter *testenv.Counter, key types.NamespacedName, within time.Duration) {
	t.Helper()
	counter.Reset()
	testenv.WaitReconciled(t, rec, key, within, func() {
		testenv.Patch(t, k.Env.Client, key, k.empty(), func(o T) { o.SetLabels(map[string]string{"unrelated": "label"}) })
	})
	if n := counter.Total(); n != 0 {
		t.Errorf("a label on a converged %s caused %d writes: %s", k.Name, n, counter)
	}
	k.expectNoChildLookups(t, counter, "a label on a converged "+k.Name)

	mgr.Stop(t)
	counter.Reset()
	_, rec2 := k.Start(t, cfg)
	testenv.Eventually(t, within, func(g gomega.Gomega) { g.Expect(rec2.Get(key)).To(gomega.BeNumerically(">=", 1)) })
	if n := counter.Total(); n != 0 {
		t.Errorf("a restarted operator wrote %d times to a converged %s: %s", n, k.Name, counter)
	}
	k.expectNoChildLookups(t, counter, "a restarted operator, converged "+k.Name)
}

// Cached reads the custom resource at key from mgr's cache, and says how many bytes of JSON it is there.
func (k Kind[T]) Cached(t *testing.T, mgr *testenv.Manager, key types.NamespacedName) (T, int) {
	t.Helper()
	cached := k.empty()
	if err := mgr.GetClient().Get(ctx, key, cached); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(cached)
	if err != nil {
		t.Fatal(err)
	}
	return cached, len(b)
}

// ExpectConvergedCostsNothing waits until the writes about key have stopped, then checks that a reconcile of
// it (poked through an annotation) costs no write and no read past the cache; what names the custom resource
// in the messages.
func (k Kind[T]) ExpectConvergedCostsNothing(t *testing.T, rec *testenv.Reconciles, key types.NamespacedName,
	counter *testenv.Counter, within time.Duration, what string) {
	t.Helper()
	k.WaitQuiet(t, rec, key, counter, within)
	counter.Reset()
	testenv.WaitReconciled(t, rec, key, within, func() { testenv.Poke(t, k.Env.Client, key, k.empty()) })
	if n := counter.Total(); n != 0 {
		t.Errorf("%s caused %d writes: %s", what, n, counter)
	}
	k.expectNoChildLookups(t, counter, what)
}

// ExpectNodePortQuotaRefusal checks that in a namespace (named after prefix) whose ResourceQuota allows no
// node port, the Service of owner (made by newOwner in it, asking nodePorts node ports) is refused by the API
// server's quota admission; the custom resource reports it, Degraded with the quota's message and one Warning
// Event, while its other children are applied; it retries with backoff (no hot loop); and it heals once the
// quota allows the ports (follows: its children carry its spec).
func (k Kind[T]) ExpectNodePortQuotaRefusal(t *testing.T, prefix string, newOwner func(ns string) T, nodePorts int64,
	follows func(g gomega.Gomega, key types.NamespacedName), within time.Duration) {
	t.Helper()
	owner, rec, counter := k.startCounted(t, prefix, newOwner)
	testenv.NodePortQuota(t, k.Env.Client, owner.GetNamespace(), 0)
	key := testenv.Create(t, k.Env.Client, owner)
	k.expectServiceRefused(t, key, conditions.ReasonApplyFailed,
		"exceeded quota: nodeports, requested: services.nodeports="+strconv.FormatInt(nodePorts, 10), within)
	if err := k.Env.Client.Get(ctx, key, &corev1.Service{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the Service: %v, want NotFound", err)
	}

	testenv.ExpectBackoffWhileServiceRefused(t, k.Env.Client, rec, counter, key, conditions.ReasonApplyFailed)

	testenv.SetNodePortQuota(t, k.Env.Client, owner.GetNamespace(), nodePorts)
	k.expectHeals(t, key, follows)
}

// counted is a custom resource created under an operator (Start) whose requests counter counts.
type counted[T client.Object] struct {
	owner   T
	key     types.NamespacedName
	mgr     *testenv.Manager
	rec     *testenv.Reconciles
	cfg     *rest.Config
	counter *testenv.Counter
}

// startAndCreate starts the operator on a counted config, then creates the custom resource newOwner makes in a
// new namespace named after prefix.
func (k Kind[T]) startAndCreate(t *testing.T, prefix string, newOwner func(ns string) T) counted[T] {
	t.Helper()
	c := counted[T]{}
	c.cfg, c.counter = testenv.Counting(k.Env.Config)
	c.mgr, c.rec = k.Start(t, c.cfg)
	c.owner = newOwner(k.Env.NewNamespace(t, prefix))
	c.key = testenv.Create(t, k.Env.Client, c.owner)
	return c
}

// expectNoWritesAtRest is ExpectNoWritesAtRest of c, once its writes have stopped.
func (k Kind[T]) expectNoWritesAtRest(t *testing.T, c counted[T], within time.Duration) {
	t.Helper()
	k.WaitQuiet(t, c.rec, c.key, c.counter, within)
	k.ExpectNoWritesAtRest(t, c.mgr, c.rec, c.cfg, c.counter, c.key, within)
}

// startCounted starts the operator on a counted config, and makes (without creating it) the custom resource
// newOwner makes in a new namespace named after prefix; its Service is deleted once the operator has stopped.
func (k Kind[T]) startCounted(t *testing.T, prefix string, newOwner func(ns string) T) (T, *testenv.Reconciles, *testenv.Counter) {
	t.Helper()
	cfg, counter := testenv.Counting(k.Env.Config)
	owner := newOwner(k.Env.NewNamespace(t, prefix))
	k.freePortWhenDone(t, owner.GetNamespace(), owner.GetName())
	_, rec := k.Start(t, cfg)
	return owner, rec, counter
}

// expectServiceRefused waits until the custom resource at key is Degraded for reason, with message, and has a
// Warning Event of it, while its other children are applied.
func (k Kind[T]) expectServiceRefused(t *testing.T, key types.NamespacedName, reason, message string, within time.Duration) {
	t.Helper()
	testenv.Eventually(t, within, func(g gomega.Gomega) {
		testenv.ExpectCondition(g, k.Conditions(g, key), conditions.Degraded, metav1.ConditionTrue, reason, message)
		g.Expect(k.Events(g, key.Namespace, key.Name)).To(gomega.ContainElement("Warning " + reason))
		g.Expect(k.Env.Client.Get(ctx, key, &appsv1.Deployment{})).To(gomega.Succeed(), "the other children are applied")
	})
}

// expectHeals waits, up to 90 seconds, until the custom resource at key is no longer Degraded and follows.
func (k Kind[T]) expectHeals(t *testing.T, key types.NamespacedName, follows func(g gomega.Gomega, key types.NamespacedName)) {
	t.Helper()
	gomega.NewWithT(t).Eventually(func(g gomega.Gomega) {
		g.Expect(meta.IsStatusConditionFalse(k.Conditions(g, key), conditions.Degraded)).To(gomega.BeTrue())
		follows(g, key)
	}).WithTimeout(90 * time.Second).WithPolling(100 * time.Millisecond).Should(gomega.Succeed())
}

// ExpectNodePortOfAnotherTenant checks that a node port a Service of another namespace holds (node ports are
// one range for the whole cluster) makes the custom resource newOwner makes in a namespace named after prefix,
// asking for nodePort, Degraded, NodePortInUse, with the allocator's message and a Warning Event.
func (k Kind[T]) ExpectNodePortOfAnotherTenant(t *testing.T, prefix string, newOwner func(ns string) T, nodePort int32,
	within time.Duration) {
	t.Helper()
	other, ns := k.Env.NewNamespace(t, "other"), k.Env.NewNamespace(t, prefix)
	owner := newOwner(ns)
	k.freePortWhenDone(t, ns, owner.GetName())
	squatter := testenv.NodePortSquatter(t, k.Env.Client, other, nodePort)
	// Deleted once the operator has stopped, so that the port is never the operator's: deleted before, the
	// next run (-count=3) found it allocated with no Service holding it.
	t.Cleanup(func() { _ = k.Env.Client.Delete(ctx, squatter) })
	k.Start(t, nil)
	key := testenv.Create(t, k.Env.Client, owner)
	testenv.Eventually(t, within, func(g gomega.Gomega) {
		testenv.ExpectCondition(g, k.Conditions(g, key), conditions.Degraded, metav1.ConditionTrue,
			conditions.ReasonNodePortInUse, "provided port is already allocated")
		g.Expect(k.Events(g, ns, key.Name)).To(gomega.ContainElement("Warning " + conditions.ReasonNodePortInUse))
	})
}

// CreateSample creates the sample config/samples/file unchanged, in a new namespace named after prefix (as
// `kubectl apply -n` does), deletes it when the test ends, and returns its key.
func (k Kind[T]) CreateSample(t *testing.T, file, prefix string) types.NamespacedName {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(k.Env.Root, "config/samples", file))
	if err != nil {
		t.Fatal(err)
	}
	sample := k.empty()
	if err := yaml.UnmarshalStrict(data, sample); err != nil {
		t.Fatal(err)
	}
	sample.SetNamespace(k.Env.NewNamespace(t, prefix))
	if err := k.Env.Client.Create(ctx, sample); err != nil {
		t.Fatalf("the sample does not apply: %v", err)
	}
	t.Cleanup(func() { _ = k.Env.Client.Delete(ctx, sample) })
	return client.ObjectKeyFromObject(sample)
}

// ExpectNodePortTaken checks that a node port another Service holds makes the custom resource newOwner makes
// (in a namespace named after prefix, asking for nodePort, its other children applied) Degraded with the API
// server's message and one Warning Event; that the controller retries with backoff (no hot loop); and that it
// recovers once the port is free (follows: its children carry its spec).
func (k Kind[T]) ExpectNodePortTaken(t *testing.T, prefix string, newOwner func(ns string) T, nodePort int32,
	follows func(g gomega.Gomega, key types.NamespacedName), within time.Duration) {
	t.Helper()
	owner, _, counter := k.startCounted(t, prefix, newOwner)
	ns := owner.GetNamespace()
	squatter := testenv.NodePortSquatter(t, k.Env.Client, ns, nodePort)
	key := testenv.Create(t, k.Env.Client, owner)
	k.expectServiceRefused(t, key, conditions.ReasonNodePortInUse, "provided port is already allocated", within)
	// Backoff, not a hot loop: a handful of attempts to apply the Service over 3 seconds.
	counter.Reset()
	gomega.NewWithT(t).Consistently(func() int { return counter.Writes(false)["PATCH services"] }).
		WithTimeout(3*time.Second).WithPolling(100*time.Millisecond).Should(gomega.BeNumerically("<=", 12), "a hot loop: %s", counter)
	t.Logf("attempts to apply the Service while its node port is taken, over 3s: %d", counter.Writes(false)["PATCH services"])
	if n := len(testenv.EventsOfReason(t, k.Env.Client, ns, key.Name, conditions.ReasonNodePortInUse)); n != 1 {
		t.Errorf("%d %s Events, want 1 (Events on transitions only)", n, conditions.ReasonNodePortInUse)
	}
	testenv.Eventually(t, within, func(g gomega.Gomega) {
		var n int
		for _, e := range k.Events(g, ns, key.Name) {
			if e == "Warning "+conditions.ReasonNodePortInUse {
				n++
			}
		}
		g.Expect(n).To(gomega.Equal(1), "Events on transitions only")
	})

	if err := k.Env.Client.Delete(ctx, squatter); err != nil {
		t.Fatal(err)
	}
	k.expectHeals(t, key, follows)
}

// AnyImage is an image a tenant names: no policy of the operator's knows it.
const AnyImage = "registry.example/anything:1"

// ExpectEditorGetsWhatCreatingPodsGives checks that a user bound to the editor role of config/rbac/role alone,
// who may not create a pod in owner's namespace (nor read the Secret named secret there, unless it is empty),
// makes the operator run pods there: owner, which they create, names AnyImage and asks for the ServiceAccount
// token, and its pods run AnyImage with the token of the namespace's default ServiceAccount; expectPod, when
// not nil, checks what else owner asks of them.
func (k Kind[T]) ExpectEditorGetsWhatCreatingPodsGives(t *testing.T, role, secret string, owner T,
	expectPod func(g gomega.Gomega, pod corev1.PodSpec), within time.Duration) {
	t.Helper()
	ns := owner.GetNamespace()
	k.freePortWhenDone(t, ns, owner.GetName())
	k.Start(t, nil)
	editor, err := client.New(k.Env.EditorOnly(t, ns, role), client.Options{Scheme: k.Env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	testenv.ExpectForbidden(t, editor, ns, secret)

	key := testenv.Create(t, editor, owner)
	testenv.Eventually(t, within, func(g gomega.Gomega) {
		var dep appsv1.Deployment
		g.Expect(k.Env.Client.Get(ctx, key, &dep)).To(gomega.Succeed())
		pod := dep.Spec.Template.Spec
		g.Expect(pod.Containers[0].Image).To(gomega.Equal(AnyImage))
		g.Expect(pod.AutomountServiceAccountToken).To(gomega.HaveValue(gomega.BeTrue()))
		g.Expect(pod.ServiceAccountName).To(gomega.BeEmpty(), "the namespace's default ServiceAccount")
		if expectPod != nil {
			expectPod(g, pod)
		}
	})
}

// ExpectProbeFailureReported checks that the custom resource newOwner makes (in a namespace named after
// prefix, one pod wanted) reports Available=False with reason ReadinessProbeFailing, naming the pod, once a pod
// of its Deployment has run unready for a while, and MinimumReplicasAvailable once the pod is ready. envtest
// runs no kubelet: the test writes the pod's and the Deployment's status in the order a kubelet and the
// Deployment controller do: the Deployment's status while the pod has not started, then the pod running, which
// changes nothing in the Deployment's status (the reconciler must look again by itself).
func (k Kind[T]) ExpectProbeFailureReported(t *testing.T, prefix string, newOwner func(ns string) T, within time.Duration) {
	t.Helper()
	k.Start(t, nil)
	ns := k.Env.NewNamespace(t, prefix)
	key := testenv.Create(t, k.Env.Client, newOwner(ns))
	var dep appsv1.Deployment
	testenv.Eventually(t, within, func(g gomega.Gomega) {
		g.Expect(k.Env.Client.Get(ctx, key, &dep)).To(gomega.Succeed())
	})

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name + "-abc12", Labels: dep.Spec.Template.Labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: dep.Spec.Template.Spec.Containers[0].Name, Image: "x"}}}}
	if err := k.Env.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	setContainer := func(ready bool, since time.Time) {
		t.Helper()
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: pod.Spec.Containers[0].Name, Ready: ready, Image: "x", ImageID: "x",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(since)}}}}}
		if err := k.Env.Client.Status().Update(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	// The pod is created, not started: the Deployment says so, and the reconcile that brings finds no container.
	testenv.SetDeploymentStatus(t, k.Env.Client, key, func(s *appsv1.DeploymentStatus, d *appsv1.Deployment) {
		*s = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, UnavailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse,
				Reason: "MinimumReplicasUnavailable", LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()}}}
	})
	testenv.Eventually(t, within, func(g gomega.Gomega) {
		testenv.ExpectCondition(g, k.Conditions(g, key), conditions.Progressing, metav1.ConditionTrue, conditions.ReasonRollingOut,
			"1 of 1 pods run the current spec")
	})
	// Then it runs, started a minute ago, never ready: past any start-up. Only the reconciler's own look again,
	// at most the start-up's grace (15 s) later, can see it.
	setContainer(false, time.Now().Add(-time.Minute))
	testenv.Eventually(t, within+15*time.Second, func(g gomega.Gomega) {
		c := meta.FindStatusCondition(k.Conditions(g, key), conditions.Available)
		g.Expect(c).NotTo(gomega.BeNil())
		g.Expect(c.Status).To(gomega.Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(gomega.Equal(conditions.ReasonProbeFailing))
		g.Expect(c.Message).To(gomega.ContainSubstring("pod " + pod.Name))
		g.Expect(c.Message).To(gomega.ContainSubstring("readiness probe"))
	})

	setContainer(true, time.Now().Add(-time.Minute))
	testenv.MarkDeploymentAvailable(t, k.Env.Client, key)
	testenv.Eventually(t, within, func(g gomega.Gomega) {
		testenv.ExpectCondition(g, k.Conditions(g, key), conditions.Available, metav1.ConditionTrue, conditions.ReasonAvailable, "")
	})
}

// ExpectDisruptionBudget checks the PodDisruptionBudget of the custom resource newOwner makes (in a namespace
// named after prefix, with 2 pods wanted): controlled by it, one pod unavailable at most, selecting the pods of
// its Deployment; gone when scale sets one pod, back with three; and no write at rest (a label, a restart).
func (k Kind[T]) ExpectDisruptionBudget(t *testing.T, prefix string, newOwner func(ns string) T,
	scale func(t *testing.T, key types.NamespacedName, replicas int32), within time.Duration) {
	t.Helper()
	c := k.startAndCreate(t, prefix, newOwner)
	owner, key := c.owner, c.key
	budget := func(g gomega.Gomega) *policyv1.PodDisruptionBudget {
		var pdb policyv1.PodDisruptionBudget
		g.Expect(k.Env.Client.Get(ctx, key, &pdb)).To(gomega.Succeed())
		var dep appsv1.Deployment
		g.Expect(k.Env.Client.Get(ctx, key, &dep)).To(gomega.Succeed())
		g.Expect(metav1.IsControlledBy(&pdb, owner)).To(gomega.BeTrue(), "controlled by the %s", k.Name)
		g.Expect(pdb.Spec.MaxUnavailable).To(gomega.HaveValue(gomega.Equal(intstr.FromInt32(1))))
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		g.Expect(sel.Matches(labels.Set(dep.Spec.Template.Labels))).To(gomega.BeTrue(), "selects the Deployment's pods")
		return &pdb
	}
	testenv.Eventually(t, within, func(g gomega.Gomega) { budget(g) })
	k.expectNoWritesAtRest(t, c, within)

	scale(t, key, 1)
	testenv.Eventually(t, within, func(g gomega.Gomega) {
		err := k.Env.Client.Get(ctx, key, &policyv1.PodDisruptionBudget{})
		g.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue(), "one pod, no budget: %v", err)
	})
	scale(t, key, 3)
	testenv.Eventually(t, within, func(g gomega.Gomega) { budget(g) })
}

// ExpectIngress checks the Ingress of the custom resource newOwner makes (in a namespace named after prefix,
// asking for an Ingress of host shop.example, class "web" and TLS Secret "shop-tls"): controlled by it, routing
// the host's every path to servicePort of its Service over TLS; IngressAdmitted False (NotAdmitted) until an
// ingress controller writes an address into the Ingress's status, then True; no write at rest (a label, a
// restart); and, once removeIngress drops it from the spec, the Ingress deleted and the condition gone.
func (k Kind[T]) ExpectIngress(t *testing.T, prefix string, newOwner func(ns string) T, servicePort int32,
	removeIngress func(t *testing.T, key types.NamespacedName), within time.Duration) {
	t.Helper()
	c := k.startAndCreate(t, prefix, newOwner)
	owner, key := c.owner, c.key
	var ing networkingv1.Ingress
	testenv.Eventually(t, within, func(g gomega.Gomega) {
		g.Expect(k.Env.Client.Get(ctx, key, &ing)).To(gomega.Succeed())
		g.Expect(metav1.IsControlledBy(&ing, owner)).To(gomega.BeTrue(), "controlled by the %s", k.Name)
		g.Expect(ing.Spec.IngressClassName).To(gomega.HaveValue(gomega.Equal("web")))
		g.Expect(ing.Spec.TLS).To(gomega.Equal([]networkingv1.IngressTLS{{Hosts: []string{"shop.example"}, SecretName: "shop-tls"}}))
		g.Expect(ing.Spec.Rules).To(gomega.HaveLen(1))
		rule := ing.Spec.Rules[0]
		g.Expect(rule.Host).To(gomega.Equal("shop.example"))
		g.Expect(rule.HTTP.Paths).To(gomega.HaveLen(1))
		path := rule.HTTP.Paths[0]
		g.Expect(path.Path).To(gomega.Equal("/"))
		g.Expect(path.PathType).To(gomega.HaveValue(gomega.Equal(networkingv1.PathTypePrefix)))
		g.Expect(path.Backend.Service.Name).To(gomega.Equal(key.Name), "the Service")
		g.Expect(path.Backend.Service.Port.Number).To(gomega.Equal(servicePort))
		testenv.ExpectCondition(g, k.Conditions(g, key), conditions.IngressAdmitted, metav1.ConditionFalse,
			conditions.ReasonIngressNotAdmitted, "class web")
	})

	// An ingress controller admits it: it writes the address it serves it at.
	if err := k.Env.Client.Get(ctx, key, &ing); err != nil {
		t.Fatal(err)
	}
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.10"}}
	if err := k.Env.Client.Status().Update(ctx, &ing); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, within, func(g gomega.Gomega) {
		testenv.ExpectCondition(g, k.Conditions(g, key), conditions.IngressAdmitted, metav1.ConditionTrue,
			conditions.ReasonIngressAdmitted, "https://shop.example/ is served by the ingress controller at 192.0.2.10")
	})
	k.expectNoWritesAtRest(t, c, within)

	removeIngress(t, key)
	testenv.Eventually(t, within, func(g gomega.Gomega) {
		err := k.Env.Client.Get(ctx, key, &networkingv1.Ingress{})
		g.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue(), "no ingress asked, no Ingress: %v", err)
		g.Expect(meta.FindStatusCondition(k.Conditions(g, key), conditions.IngressAdmitted)).To(gomega.BeNil())
	})
}

// ExpectHTTPRoute checks the HTTPRoute of the custom resource newOwner makes (in a namespace named after prefix,
// asking for one for host shop.example through Gateway "public" of its namespace and listener "https" of Gateway
// infra/edge) on an API server that serves HTTPRoute (k.Routes): controlled by it, routing
// every path of the host name to servicePort of its Service through both parents; HTTPRouteAdmitted Unknown
// (Pending) while no Gateway answered, False (NotAccepted, with the Gateway's reason and message) while one
// refuses, True once both accepted; no write at rest (a label, a restart); and, once removeRoute drops it from
// the spec, the HTTPRoute deleted and the condition gone.
func (k Kind[T]) ExpectHTTPRoute(t *testing.T, prefix string, newOwner func(ns string) T, servicePort int32,
	removeRoute func(t *testing.T, key types.NamespacedName), within time.Duration) {
	t.Helper()
	c := k.startAndCreate(t, prefix, newOwner)
	owner, key, ns := c.owner, c.key, c.key.Namespace
	var hr gatewayv1.HTTPRoute
	testenv.Eventually(t, within, func(g gomega.Gomega) {
		g.Expect(k.Env.Client.Get(ctx, key, &hr)).To(gomega.Succeed())
		g.Expect(metav1.IsControlledBy(&hr, owner)).To(gomega.BeTrue(), "controlled by the %s", k.Name)
		g.Expect(hr.Spec.Hostnames).To(gomega.Equal([]gatewayv1.Hostname{"shop.example"}))
		g.Expect(hr.Spec.ParentRefs).To(gomega.HaveLen(2))
		g.Expect(hr.Spec.ParentRefs[0].Name).To(gomega.BeEquivalentTo("public"))
		g.Expect(hr.Spec.ParentRefs[0].Namespace).To(gomega.BeNil())
		g.Expect(hr.Spec.ParentRefs[1].Name).To(gomega.BeEquivalentTo("edge"))
		g.Expect(hr.Spec.ParentRefs[1].Namespace).To(gomega.HaveValue(gomega.BeEquivalentTo("infra")))
		g.Expect(hr.Spec.ParentRefs[1].SectionName).To(gomega.HaveValue(gomega.BeEquivalentTo("https")))
		g.Expect(hr.Spec.Rules).To(gomega.HaveLen(1))
		rule := hr.Spec.Rules[0]
		g.Expect(rule.Matches).To(gomega.HaveLen(1))
		g.Expect(rule.Matches[0].Path.Type).To(gomega.HaveValue(gomega.Equal(gatewayv1.PathMatchPathPrefix)))
		g.Expect(rule.Matches[0].Path.Value).To(gomega.HaveValue(gomega.Equal("/")))
		g.Expect(rule.BackendRefs).To(gomega.HaveLen(1))
		g.Expect(rule.BackendRefs[0].Name).To(gomega.BeEquivalentTo(key.Name), "the Service")
		g.Expect(rule.BackendRefs[0].Port).To(gomega.HaveValue(gomega.BeEquivalentTo(servicePort)))
		testenv.ExpectCondition(g, k.Conditions(g, key), conditions.HTTPRouteAdmitted, metav1.ConditionUnknown,
			conditions.ReasonHTTPRoutePending, "no answer yet from Gateway "+ns+"/public, Gateway infra/edge (listener https)")
	})

	// The Gateways' controller answers: one parent accepts the route, the other refuses it, then accepts it.
	answer := func(edge metav1.ConditionStatus, reason, message string) {
		t.Helper()
		if err := k.Env.Client.Get(ctx, key, &hr); err != nil {
			t.Fatal(err)
		}
		infra, https := gatewayv1.Namespace("infra"), gatewayv1.SectionName("https")
		parent := func(ref gatewayv1.ParentReference, status metav1.ConditionStatus, reason, message string) gatewayv1.RouteParentStatus {
			return gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: "example.com/gateway-controller",
				Conditions: []metav1.Condition{{Type: "Accepted", Status: status, Reason: reason, Message: message,
					ObservedGeneration: hr.Generation, LastTransitionTime: metav1.Now()}}}
		}
		hr.Status.Parents = []gatewayv1.RouteParentStatus{
			parent(gatewayv1.ParentReference{Name: "public"}, metav1.ConditionTrue, "Accepted", "Route is accepted"),
			parent(gatewayv1.ParentReference{Name: "edge", Namespace: &infra, SectionName: &https}, edge, reason, message),
		}
		if err := k.Env.Client.Status().Update(ctx, &hr); err != nil {
			t.Fatal(err)
		}
	}
	answer(metav1.ConditionFalse, "NotAllowedByListeners", "listener https allows no routes from namespace "+ns)
	testenv.Eventually(t, within, func(g gomega.Gomega) {
		testenv.ExpectCondition(g, k.Conditions(g, key), conditions.HTTPRouteAdmitted, metav1.ConditionFalse,
			conditions.ReasonHTTPRouteNotAccepted, "Gateway infra/edge (listener https) did not accept HTTPRoute "+key.Name+
				": NotAllowedByListeners: listener https allows no routes from namespace "+ns)
	})
	answer(metav1.ConditionTrue, "Accepted", "Route is accepted")
	testenv.Eventually(t, within, func(g gomega.Gomega) {
		testenv.ExpectCondition(g, k.Conditions(g, key), conditions.HTTPRouteAdmitted, metav1.ConditionTrue,
			conditions.ReasonHTTPRouteAccepted, "HTTPRoute "+key.Name+" is accepted by Gateway "+ns+"/public, Gateway infra/edge (listener https)")
	})
	k.expectNoWritesAtRest(t, c, within)
	if n := c.counter.Gets()["GET httproutes"]; n != 0 {
		t.Errorf("%d lookups of the HTTPRoute past the cache at rest", n)
	}

	removeRoute(t, key)
	testenv.Eventually(t, within, func(g gomega.Gomega) {
		err := k.Env.Client.Get(ctx, key, &gatewayv1.HTTPRoute{})
		g.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue(), "no httpRoute asked, no HTTPRoute: %v", err)
		g.Expect(meta.FindStatusCondition(k.Conditions(g, key), conditions.HTTPRouteAdmitted)).To(gomega.BeNil())
	})
}

// ExpectHTTPRouteNotServed checks, on an API server that does not serve HTTPRoute (as controller.Discover finds
// it), that the custom resource newOwner makes (asking for an HTTPRoute) gets its other children and becomes
// Available, that HTTPRouteAdmitted is False (HTTPRouteNotServed) with the restart that picks a CRD up, and
// that it costs no write at rest (a label, a restart).
func (k Kind[T]) ExpectHTTPRouteNotServed(t *testing.T, prefix string, newOwner func(ns string) T, within time.Duration) {
	t.Helper()
	o, err := controller.Discover(controller.Options{Discovery: discovery.NewDiscoveryClientForConfigOrDie(k.Env.Config)})
	if err != nil {
		t.Fatal(err)
	}
	if o.Routes.HTTPRoute {
		t.Fatal("the suite's API server serves HTTPRoute")
	}
	k.Routes = o.Routes
	c := k.startAndCreate(t, prefix, newOwner)
	key := c.key
	testenv.Eventually(t, within, func(g gomega.Gomega) {
		g.Expect(k.Env.Client.Get(ctx, key, &corev1.Service{})).To(gomega.Succeed())
		g.Expect(k.Env.Client.Get(ctx, key, &appsv1.Deployment{})).To(gomega.Succeed())
	})
	testenv.MarkDeploymentAvailable(t, k.Env.Client, key)
	testenv.Eventually(t, within, func(g gomega.Gomega) {
		conds := k.Conditions(g, key)
		testenv.ExpectCondition(g, conds, conditions.Available, metav1.ConditionTrue, conditions.ReasonAvailable, "")
		testenv.ExpectCondition(g, conds, conditions.Degraded, metav1.ConditionFalse, conditions.ReasonAsExpected, "")
		testenv.ExpectCondition(g, conds, conditions.HTTPRouteAdmitted, metav1.ConditionFalse,
			conditions.ReasonHTTPRouteNotServed, route.RestartHint)
	})
	k.expectNoWritesAtRest(t, c, within)
}
