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

package testenv

// The check that an operator101 kind never adopts an object it did not create (a tenant's own object that has
// the name one of its children would get), shared by the MyWeb and AppService suites.

import (
	"context"
	"reflect"
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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/operator101/operator101/api/conditions"
)

// A tenant's own objects, without operator101's label (so the operator's cache does not hold them): a page,
// a web server, and a ClusterIP Service in front of it.

// TenantConfigMap is a tenant's ConfigMap.
func TenantConfigMap(ns, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"team": "shop"}},
		Data: map[string]string{"index.html": "<h1>the tenant's own page</h1>"}}
}

// TenantDeployment is a tenant's Deployment of one nginx pod labelled app=name.
func TenantDeployment(ns, name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"team": "shop"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
			},
		},
	}
}

// TenantService is a tenant's ClusterIP Service selecting app=name.
func TenantService(ns, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"team": "shop"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
}

// TenantDisruptionBudget is a tenant's PodDisruptionBudget for the pods app=name.
func TenantDisruptionBudget(ns, name string) *policyv1.PodDisruptionBudget {
	minAvailable := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"team": "shop"}},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}},
	}
}

// TenantIngress is a tenant's Ingress for a Service of that name.
func TenantIngress(ns, name string) *networkingv1.Ingress {
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"team": "shop"}},
		Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
			Name: name, Port: networkingv1.ServiceBackendPort{Number: 80}}}},
	}
}

// TenantHTTPRoute is a tenant's HTTPRoute, through Gateway "public", to port 80 of a Service of that name.
func TenantHTTPRoute(ns, name string) *gatewayv1.HTTPRoute {
	port := gatewayv1.PortNumber(80)
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"team": "shop"}},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "public"}}},
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name), Port: &port}}}}}},
		},
	}
}

// TakenName checks that an operator101 kind that runs a Deployment (MyWeb, AppService) never adopts an object
// that has one of its children's names and that operator101 did not create.
type TakenName struct {
	// Client is an administrator client, uncached.
	Client client.Client
	// Counter counts the requests of the operator under test; Reconciles counts its reconciles. Its
	// reconciler.Options.NotOwnedRetry must be short (a fraction of a second).
	Counter    *Counter
	Reconciles *Reconciles
	// NewOwner returns a new custom resource named name in ns, not created yet.
	NewOwner func(ns, name string) client.Object
	// Conditions reads the custom resource's conditions at key.
	Conditions func(g gomega.Gomega, key types.NamespacedName) []metav1.Condition
	// Children are empty lists of the kinds of its children, for the part of the garbage collector.
	Children []func() client.ObjectList
}

// Run creates foreign, then a custom resource of the same name, and checks that:
//   - foreign stays as it was (its resourceVersion does not change), and no other write is made while it is
//     there, across reconciles that no event triggers (the operator looks again every NotOwnedRetry);
//   - the custom resource is Degraded, reason ChildNotOwned, naming foreign (kind namespace/name), with exactly
//     one Warning Event, and its other children are created;
//   - once the custom resource is deleted (and the garbage collector has deleted what it owns), foreign is
//     still there and unchanged: it never got an owner reference;
//   - a custom resource of that name created again, and untouched afterwards, heals once foreign is deleted:
//     the child is created, controlled by it, Degraded=False, and Available=True once the Deployment is.
func (c TakenName) Run(t *testing.T, foreign client.Object, within time.Duration) {
	t.Helper()
	ctx := context.Background()
	gvk, err := c.Client.GroupVersionKindFor(foreign)
	if err != nil {
		t.Fatal(err)
	}
	ns, name := foreign.GetNamespace(), foreign.GetName()
	naming := gvk.Kind + " " + ns + "/" + name + " exists and is not controlled by this resource"
	fkey := client.ObjectKeyFromObject(foreign)
	Create(t, c.Client, foreign)
	unchanged := func(t *testing.T, when string) {
		t.Helper()
		now := newLike(foreign)
		if err := c.Client.Get(ctx, fkey, now); err != nil {
			t.Fatalf("%s: the %s is gone: %v", when, gvk.Kind, err)
		}
		if now.GetResourceVersion() != foreign.GetResourceVersion() || now.GetUID() != foreign.GetUID() ||
			len(now.GetOwnerReferences()) != 0 || !reflect.DeepEqual(now.GetLabels(), foreign.GetLabels()) {
			t.Fatalf("%s: the %s was changed: resourceVersion %s (was %s), owner references %+v, labels %v",
				when, gvk.Kind, now.GetResourceVersion(), foreign.GetResourceVersion(), now.GetOwnerReferences(), now.GetLabels())
		}
	}
	degraded := func(key types.NamespacedName, uid types.UID) {
		t.Helper()
		Eventually(t, within, func(g gomega.Gomega) {
			ExpectCondition(g, c.Conditions(g, key), conditions.Degraded, metav1.ConditionTrue, conditions.ReasonNotOwned, naming)
			g.Expect(EventsRegarding(g, c.Client, ns, uid, conditions.ReasonNotOwned)).NotTo(gomega.BeEmpty())
		}, "Degraded, ChildNotOwned, naming the "+gvk.Kind)
	}

	owner := c.NewOwner(ns, name)
	key := Create(t, c.Client, owner)
	degraded(key, owner.GetUID())

	// Nothing triggers the reconciles that follow but the retry: the tenant's object is not in the cache.
	// Two in a row must write nothing (the first ones after creation may still be settling).
	Eventually(t, within, func(g gomega.Gomega) {
		c.Counter.Reset()
		n := c.Reconciles.Get(key)
		g.Eventually(func() int { return c.Reconciles.Get(key) }).WithTimeout(within).WithPolling(Polling).
			Should(gomega.BeNumerically(">=", n+2))
		g.Expect(c.Counter.Total()).To(gomega.Equal(0), "writes while the name is taken: %s", c.Counter)
	}, "reconciles that write nothing while the name is taken")
	unchanged(t, "while the custom resource is Degraded")
	// Its other children, whose names are free, are there and its own.
	for _, l := range c.Children {
		list := l()
		lgvk, err := c.Client.GroupVersionKindFor(list)
		if err != nil {
			t.Fatal(err)
		}
		if lgvk.Kind == gvk.Kind+"List" {
			continue
		}
		if err := c.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		objs, err := meta.ExtractList(list)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, o := range objs {
			if child := o.(client.Object); child.GetName() == name {
				found = metav1.IsControlledBy(child, owner)
			}
		}
		if !found {
			t.Errorf("no %s %s controlled by the custom resource beside the tenant's %s", lgvk.Kind, name, gvk.Kind)
		}
	}
	g := gomega.NewWithT(t)
	evs := EventsRegarding(g, c.Client, ns, owner.GetUID(), conditions.ReasonNotOwned)
	g.Expect(evs).To(gomega.HaveLen(1), "ChildNotOwned Events")
	g.Expect(evs[0].Type).To(gomega.Equal(corev1.EventTypeWarning))
	g.Expect(evs[0].Series).To(gomega.BeNil(), "the Event was recorded again (a series): not on the transition only")
	g.Expect(evs[0].Note).To(gomega.ContainSubstring(naming))

	// Deleting the custom resource deletes what it owns, and only that.
	if err := c.Client.Delete(ctx, owner); err != nil {
		t.Fatal(err)
	}
	Eventually(t, within, func(g gomega.Gomega) {
		g.Expect(apierrors.IsNotFound(c.Client.Get(ctx, key, newLike(owner)))).To(gomega.BeTrue())
	})
	lists := make([]client.ObjectList, len(c.Children))
	for i, l := range c.Children {
		lists[i] = l()
	}
	CollectGarbage(t, c.Client, ns, owner.GetUID(), lists...)
	unchanged(t, "after the custom resource was deleted")

	// Created again, it heals by itself once the tenant's object is gone (which no event tells it).
	owner = c.NewOwner(ns, name)
	Create(t, c.Client, owner)
	degraded(key, owner.GetUID())
	if err := c.Client.Delete(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	Eventually(t, within, func(g gomega.Gomega) {
		g.Expect(meta.IsStatusConditionFalse(c.Conditions(g, key), conditions.Degraded)).To(gomega.BeTrue())
		child := newLike(foreign)
		g.Expect(c.Client.Get(ctx, fkey, child)).To(gomega.Succeed())
		g.Expect(metav1.IsControlledBy(child, owner)).To(gomega.BeTrue(), "the new %s is controlled by the custom resource", gvk.Kind)
	}, "healed once the "+gvk.Kind+" was deleted")
	MarkDeploymentAvailable(t, c.Client, key)
	Eventually(t, within, func(g gomega.Gomega) {
		g.Expect(meta.IsStatusConditionTrue(c.Conditions(g, key), conditions.Available)).To(gomega.BeTrue())
	})
}

// newLike returns a new, empty object of obj's type.
func newLike(obj client.Object) client.Object {
	return reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
}
