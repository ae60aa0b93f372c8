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

// Package gatewayapi_test runs MyWeb's and AppService's HTTPRoute on an API server that serves the Gateway API
// (the HTTPRoute and Gateway CRDs of the sigs.k8s.io/gateway-api module go.mod requires). The suites of
// internal/controller/myweb and internal/controller/appservice run on one that does not.
package gatewayapi_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "github.com/operator101/operator101/api/app/v1"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/controller"
	"github.com/operator101/operator101/internal/controller/appservice"
	"github.com/operator101/operator101/internal/controller/myweb"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/internal/controller/route"
	"github.com/operator101/operator101/test/testenv"
	"github.com/operator101/operator101/test/webkindtest"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	crds, err := testenv.GatewayAPICRDs()
	if err != nil {
		fmt.Fprintf(os.Stderr, "gatewayapi: %v\n", err)
		os.Exit(1)
	}
	os.Exit(testenv.RunWith(m, &env, crds...))
}

const timeout = 30 * time.Second

var ctx = context.Background()

var (
	discoverOnce sync.Once
	options      controller.Options
)

// discovered is controller.Options as cmd/main.go makes them on this API server: Discover through a discovery
// client, and the Gateway API registered in the suite's scheme. The test fails unless HTTPRoute is found.
func discovered(t *testing.T) controller.Options {
	t.Helper()
	discoverOnce.Do(func() {
		o := controller.Options{Discovery: discovery.NewDiscoveryClientForConfigOrDie(env.Config)}
		var err error
		if options, err = controller.Discover(o); err == nil {
			err = controller.AddToScheme(env.Scheme, options)
		}
		utilruntime.Must(err)
	})
	if !options.Routes.HTTPRoute {
		t.Fatal("HTTPRoute is not discovered on an API server with its CRD")
	}
	return options
}

// kind is webkindtest's Kind for T, with the routes discovered here; conditions reads T's conditions.
func kind[T client.Object](t *testing.T, name, resource string, conditions func(T) []metav1.Condition,
	setup func(ctrl.Manager, reconciler.Options, route.Served) error) webkindtest.Kind[T] {
	return webkindtest.Kind[T]{Env: env, Name: name, Resource: resource, Routes: discovered(t).Routes, Setup: setup,
		Conditions: func(g gomega.Gomega, key types.NamespacedName) []metav1.Condition {
			var zero T
			obj := reflect.New(reflect.TypeOf(zero).Elem()).Interface().(T)
			g.Expect(env.Client.Get(ctx, key, obj)).To(gomega.Succeed())
			return conditions(obj)
		}}
}

func web(t *testing.T) webkindtest.Kind[*operatorv1.MyWeb] {
	return kind(t, "MyWeb", "mywebs", func(w *operatorv1.MyWeb) []metav1.Condition { return w.Status.Conditions },
		func(mgr ctrl.Manager, o reconciler.Options, routes route.Served) error {
			return myweb.Setup(mgr, o, myweb.Config{Routes: routes})
		})
}

func app(t *testing.T) webkindtest.Kind[*appv1.AppService] {
	return kind(t, "AppService", "appservices", func(a *appv1.AppService) []metav1.Condition { return a.Status.Conditions },
		func(mgr ctrl.Manager, o reconciler.Options, routes route.Served) error {
			return appservice.Setup(mgr, o, appservice.Config{Routes: routes})
		})
}

// routed is a MyWeb asking for the HTTPRoute webkindtest.ExpectHTTPRoute checks.
func routed(ns, name string) *operatorv1.MyWeb {
	return &operatorv1.MyWeb{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: operatorv1.MyWebSpec{Image: "nginx", PageContentHtml: "<h1>one</h1>", HTTPRoute: &operatorv1.HTTPRoute{
			ParentRefs: []operatorv1.ParentReference{{Name: "public"}, {Name: "edge", Namespace: "infra", SectionName: "https"}},
			Hostnames:  []string{"shop.example"}}}}
}

// patch changes the object at key with change, retrying on a conflict.
func patch[T client.Object](t *testing.T, key types.NamespacedName, obj T, change func(T)) {
	t.Helper()
	testenv.Patch(t, env.Client, key, obj, change)
}

// TestMyWebHTTPRoute: spec.httpRoute gets an HTTPRoute to the Service's port 80 through its Gateways, whose
// answers the MyWeb reports; no write at rest; removed from the spec, the HTTPRoute goes.
func TestMyWebHTTPRoute(t *testing.T) {
	web(t).ExpectHTTPRoute(t, "web", func(ns string) *operatorv1.MyWeb { return routed(ns, "routed") }, 80,
		func(t *testing.T, key types.NamespacedName) {
			patch(t, key, &operatorv1.MyWeb{}, func(w *operatorv1.MyWeb) { w.Spec.HTTPRoute = nil })
		}, timeout)
}

// routedApp is an AppService asking for the same HTTPRoute as routed, to its first TCP port (8000).
func routedApp(ns, name string) *appv1.AppService {
	w := routed(ns, name)
	return &appv1.AppService{ObjectMeta: w.ObjectMeta, Spec: appv1.AppServiceSpec{Size: ptr.To[int32](1),
		Application: appv1.Application{Image: "nginx:1.27", HTTPRoute: &appv1.HTTPRoute{
			ParentRefs: []appv1.ParentReference{{Name: "public"}, {Name: "edge", Namespace: "infra", SectionName: "https"}},
			Hostnames:  w.Spec.HTTPRoute.Hostnames},
			Ports: []appv1.ServicePort{{Name: "dns", Port: 53, Protocol: "UDP"}, {Name: "web", Port: 8000, TargetPort: ptr.To[int32](8080)}}}}}
}

// TestAppServiceHTTPRoute: the same for an AppService, to its first TCP port's Service port.
func TestAppServiceHTTPRoute(t *testing.T) {
	app(t).ExpectHTTPRoute(t, "appservice", func(ns string) *appv1.AppService { return routedApp(ns, "routed") }, 8000,
		func(t *testing.T, key types.NamespacedName) {
			patch(t, key, &appv1.AppService{}, func(a *appv1.AppService) { a.Spec.HTTPRoute = nil })
		}, timeout)
}

// TestHTTPRouteNeverAdopted: a tenant's HTTPRoute of a MyWeb's or an AppService's name, labelled or not, is
// never taken over: the custom resource is Degraded (ChildNotOwned) and heals once it is gone
// (testenv.TakenName).
func TestHTTPRouteNeverAdopted(t *testing.T) {
	list := func(l client.ObjectList) func() client.ObjectList {
		return func() client.ObjectList { return l.DeepCopyObject().(client.ObjectList) }
	}
	for _, k := range []struct {
		kind, prefix string
		start        func(*testing.T, *rest.Config, reconciler.Options) (*testenv.Manager, *testenv.Reconciles)
		newOwner     func(ns, name string) client.Object
		conditions   func(g gomega.Gomega, key types.NamespacedName) []metav1.Condition
		// children are the kinds of what the custom resource creates (the HTTPRoute too).
		children []func() client.ObjectList
	}{
		{kind: "MyWeb", prefix: "web",
			start:      web(t).StartWith,
			newOwner:   func(ns, name string) client.Object { return routed(ns, name) },
			conditions: web(t).Conditions,
			children: []func() client.ObjectList{list(&corev1.ConfigMapList{}), list(&appsv1.DeploymentList{}),
				list(&corev1.ServiceList{}), list(&gatewayv1.HTTPRouteList{})}},
		{kind: "AppService", prefix: "appservice",
			start:      app(t).StartWith,
			newOwner:   func(ns, name string) client.Object { return routedApp(ns, name) },
			conditions: app(t).Conditions,
			children: []func() client.ObjectList{list(&appsv1.DeploymentList{}), list(&corev1.ServiceList{}),
				list(&gatewayv1.HTTPRouteList{})}},
	} {
		t.Run(k.kind, func(t *testing.T) {
			// An operator of this kind only, whose writes alone the counter counts.
			cfg, counter := testenv.Counting(env.Config)
			_, rec := k.start(t, cfg, reconciler.Options{NotOwnedRetry: 200 * time.Millisecond})
			check := testenv.TakenName{Client: env.Client, Counter: counter, Reconciles: rec,
				NewOwner: k.newOwner, Conditions: k.conditions, Children: k.children}
			t.Run("unlabelled", func(t *testing.T) {
				check.Run(t, testenv.TenantHTTPRoute(env.NewNamespace(t, k.prefix), "shop"), timeout)
			})
			// Labelled as operator101's, the cache holds it: still not the custom resource's.
			t.Run("labelled", func(t *testing.T) {
				hr := testenv.TenantHTTPRoute(env.NewNamespace(t, k.prefix), "shop")
				hr.Labels["app.kubernetes.io/managed-by"] = "operator101"
				check.Run(t, hr, timeout)
			})
		})
	}
}

// With HTTPRoute served, the manager caches HTTPRoutes, /readyz waits for them, and it gets ready: the
// wiring of cmd/main.go (Discover, AddToScheme, CacheOptions, SetupWithManager, Watched).
func TestReadyWithHTTPRoute(t *testing.T) {
	o := discovered(t)
	memory := reconciler.NewMemory()
	cacheOpts := controller.CacheOptions(o, memory)
	watched, err := controller.Watched(cacheOpts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(watched, func(obj client.Object) bool { _, ok := obj.(*gatewayv1.HTTPRoute); return ok }) {
		t.Fatalf("HTTPRoute is served and not watched: %T", watched)
	}
	m := env.StartManager(t, nil, func(mgr ctrl.Manager) error { return controller.SetupWithManager(mgr, o, memory) },
		func(co *ctrl.Options) { co.Cache = cacheOpts })
	select {
	case <-m.Elected():
	case <-time.After(timeout):
		t.Fatal("the manager did not start its controllers")
	}
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		g.Expect(controller.Readiness(m.Manager, watched)(httptest.NewRequest("GET", "/readyz", nil))).To(gomega.Succeed())
	})
}
