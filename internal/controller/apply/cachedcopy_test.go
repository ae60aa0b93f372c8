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

package apply

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	toolscache "k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/operator101/operator101/internal/controller/cachetrim"
	"github.com/operator101/operator101/internal/controller/digest"
	"github.com/operator101/operator101/internal/controller/managed"
	"github.com/operator101/operator101/test/testenv"
)

// maxCachedStruct bounds the Go struct of the cache's copy of a Deployment, Service, Ingress,
// PodDisruptionBudget or HTTPRoute: a quarter of a Deployment's (1232 bytes), half of a Service's (592).
const maxCachedStruct = 304

// TestCachedCopiesAreSmall: the cache holds each child but ConfigMaps in a small type of our own, whose read
// (DeepCopyObject, as controller-runtime's cache reads) is the API type with the metadata and the fields the
// reconcilers read, and which the transform returns as it is when handed it again.
func TestCachedCopiesAreSmall(t *testing.T) {
	m := NewMemory(digest.New())
	transforms := map[reflect.Type]toolscache.TransformFunc{}
	for obj, by := range AppliedChildren(m) {
		transforms[reflect.TypeOf(obj)] = by.Transform
	}
	obj, by := HTTPRouteForCache(m)
	transforms[reflect.TypeOf(obj)] = by.Transform

	meta := func(kind string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: types.UID("u-" + kind), Generation: 2, ResourceVersion: "9",
			Labels:      map[string]string{managed.ByLabel: managed.By, "app": "web"},
			Annotations: map[string]string{"note": "dropped"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "operator.k8s-summit.org/v1", Kind: "MyWeb", Name: "web",
				UID: "owner", Controller: ptr(true)}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: managed.FieldManager, Operation: metav1.ManagedFieldsOperationApply,
				APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:app":{}}}}`)}}}
	}
	lb := []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}}
	cases := []struct {
		in client.Object
		// kept is what a read of the cache's copy holds besides the metadata.
		kept func(client.Object) any
		want any
	}{
		{&appsv1.Deployment{ObjectMeta: meta("Deployment"), Spec: appsv1.DeploymentSpec{Replicas: ptr[int32](2)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, ReadyReplicas: 1, AvailableReplicas: 1}},
			func(o client.Object) any { d := o.(*appsv1.Deployment); return []any{d.Spec, d.Status} },
			[]any{appsv1.DeploymentSpec{}, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, ReadyReplicas: 1, AvailableReplicas: 1}}},
		{&corev1.Service{ObjectMeta: meta("Service"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP,
				TargetPort: intstr.FromInt32(8080), NodePort: 30080}}}, Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: lb}}},
			func(o client.Object) any { s := o.(*corev1.Service); return []any{s.Spec, s.Status} },
			[]any{corev1.ServiceSpec{Ports: []corev1.ServicePort{{NodePort: 30080}}},
				corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: lb}}}},
		{&networkingv1.Ingress{ObjectMeta: meta("Ingress"), Spec: networkingv1.IngressSpec{IngressClassName: ptr("nginx")},
			Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.2"}}}}},
			func(o client.Object) any { i := o.(*networkingv1.Ingress); return []any{i.Spec, i.Status} },
			[]any{networkingv1.IngressSpec{}, networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{
				Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.2"}}}}}},
		{&policyv1.PodDisruptionBudget{ObjectMeta: meta("PodDisruptionBudget"), Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr(intstr.FromInt32(1))},
			Status: policyv1.PodDisruptionBudgetStatus{CurrentHealthy: 2}},
			func(o client.Object) any { p := o.(*policyv1.PodDisruptionBudget); return []any{p.Spec, p.Status} },
			[]any{policyv1.PodDisruptionBudgetSpec{}, policyv1.PodDisruptionBudgetStatus{}}},
		{&gatewayv1.HTTPRoute{ObjectMeta: meta("HTTPRoute"), Spec: gatewayv1.HTTPRouteSpec{Hostnames: []gatewayv1.Hostname{"web.example"}},
			Status: gatewayv1.HTTPRouteStatus{RouteStatus: gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{{ControllerName: "example.net/gw"}}}}},
			func(o client.Object) any { h := o.(*gatewayv1.HTTPRoute); return []any{h.Spec, h.Status} },
			[]any{gatewayv1.HTTPRouteSpec{}, gatewayv1.HTTPRouteStatus{RouteStatus: gatewayv1.RouteStatus{
				Parents: []gatewayv1.RouteParentStatus{{ControllerName: "example.net/gw"}}}}}},
	}
	for _, c := range cases {
		kind := reflect.TypeOf(c.in)
		transform := transforms[kind]
		if transform == nil {
			t.Fatalf("no cache transform of %v", kind)
		}
		out, err := transform(c.in.DeepCopyObject())
		if err != nil {
			t.Fatal(err)
		}
		if _, small := out.(cachedCopy); !small {
			t.Fatalf("the cache holds a %v as %T, not a small copy of ours", kind, out)
		}
		if size := reflect.TypeOf(out).Elem().Size(); size > maxCachedStruct {
			t.Errorf("the cache's copy of a %v is a struct of %d bytes, want at most %d (the API type's: %d)",
				kind, size, maxCachedStruct, kind.Elem().Size())
		}
		if again, err := transform(out); err != nil || again != out {
			t.Errorf("%v: the transform handed its own output returned %p (%v), want it as it is (%p)", kind, again, err, out)
		}

		read := out.(runtime.Object).DeepCopyObject()
		if reflect.TypeOf(read) != kind {
			t.Fatalf("a read of the cache's copy of a %v is a %T", kind, read)
		}
		got := read.(client.Object)
		cached := out.(client.Object)
		if got.GetName() != "web" || got.GetUID() != c.in.GetUID() || got.GetGeneration() != 2 || got.GetResourceVersion() != "9" ||
			!metav1.IsControlledBy(got, &metav1.ObjectMeta{UID: "owner"}) || got.GetSelfLink() == "" ||
			!reflect.DeepEqual(got.GetLabels(), map[string]string{managed.ByLabel: managed.By}) || got.GetAnnotations() != nil ||
			got.GetManagedFields() != nil {
			t.Errorf("%v: a read of the cache's copy has the metadata %+v", kind, got)
		}
		if !reflect.DeepEqual(c.kept(got), c.want) {
			t.Errorf("%v: a read of the cache's copy holds\n%+v\nwant\n%+v", kind, c.kept(got), c.want)
		}
		// A read is the reader's own: changing it changes nothing in the cache.
		got.GetOwnerReferences()[0].Name = "changed"
		got.SetLabels(map[string]string{"x": "y"})
		if cached.GetOwnerReferences()[0].Name != "web" || cached.GetLabels()[managed.ByLabel] != managed.By {
			t.Errorf("%v: a change of a read reached the cache's copy", kind)
		}
	}

	// A ConfigMap's struct is small already (288 bytes): the cache holds it as itself, without its data.
	cm, err := transforms[reflect.TypeOf(&corev1.ConfigMap{})](&corev1.ConfigMap{ObjectMeta: meta("ConfigMap"), Data: map[string]string{"a": "b"}})
	if c, ok := cm.(*corev1.ConfigMap); err != nil || !ok || c.Data != nil {
		t.Errorf("the cache's copy of a ConfigMap: %#v (%v)", cm, err)
	}
}

// TestCacheReadsSmallCopiesAsTheirKind: a controller-runtime cache made with AppliedChildren, watching one
// namespace as the manager does with --watch-namespaces, stores Deployments and Services as small copies (its
// event handlers get those), and a Get or List of a Deployment or Service from it gives the API type with the
// status the API server holds: a reconcile reads what it read when the cache held the API type.
func TestCacheReadsSmallCopiesAsTheirKind(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := env.NewNamespace(t, "smallcopy")
	c, err := ctrlcache.New(env.Config, ctrlcache.Options{Scheme: env.Scheme, ByObject: AppliedChildren(NewMemory(digest.New())),
		DefaultNamespaces: map[string]ctrlcache.Config{ns: {}}})
	if err != nil {
		t.Fatal(err)
	}
	stored := make(chan any, 10)
	for _, o := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}} {
		inf, err := c.GetInformer(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) { stored <- obj }}); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		if err := c.Start(ctx); err != nil {
			t.Error(err)
		}
	}()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("the cache did not sync")
	}

	labels := map[string]string{managed.ByLabel: managed.By, "app": "web"}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: ptr[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}}}
	testenv.Create(t, env.Client, dep)
	now := metav1.Now()
	dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 1,
		AvailableReplicas: 1, UnavailableReplicas: 1, Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable",
				Message: "Deployment does not have minimum availability.", LastUpdateTime: now, LastTransitionTime: now},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded",
				Message: `ReplicaSet "web-5d4" has timed out progressing.`, LastUpdateTime: now, LastTransitionTime: now}}}
	if err := env.Client.Status().Update(ctx, dep); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: labels},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: labels,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}}
	testenv.Create(t, env.Client, svc)

	// What a reconcile read when the cache held the API type: the status but the conditions' times and the
	// message of the Available condition.
	want := *dep.Status.DeepCopy()
	want.Conditions = deploymentConditionsForCache(cachetrim.NewInterner(), want.Conditions)
	testenv.Eventually(t, 30*time.Second, func(g gomega.Gomega) {
		got := &appsv1.Deployment{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(dep), got)).To(gomega.Succeed())
		g.Expect(got.Status).To(gomega.Equal(want))
		g.Expect(got.UID).To(gomega.Equal(dep.UID))
		g.Expect(got.Spec).To(gomega.Equal(appsv1.DeploymentSpec{}))
		list := &appsv1.DeploymentList{}
		g.Expect(c.List(ctx, list, client.InNamespace(ns))).To(gomega.Succeed())
		g.Expect(list.Items).To(gomega.HaveLen(1))
		g.Expect(list.Items[0].Status).To(gomega.Equal(want))

		s := &corev1.Service{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(svc), s)).To(gomega.Succeed())
		g.Expect(s.Spec.Ports).To(gomega.HaveLen(1))
		g.Expect(s.Spec.Ports[0].NodePort).To(gomega.Equal(svc.Spec.Ports[0].NodePort))
		g.Expect(s.Spec.Ports[0].NodePort).NotTo(gomega.BeZero())
	}, "the cache's Deployment and Service")
	for range 2 {
		select {
		case obj := <-stored:
			if _, small := obj.(cachedCopy); !small {
				t.Errorf("the informer stores and hands its handlers a %T, not a small copy", obj)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no event of the informers")
		}
	}
}
