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

// Package appservice holds the AppService controller: an image run as a Deployment, exposed by a NodePort Service.
package appservice

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appv1 "github.com/operator101/operator101/api/app/v1"
	batchv1alpha1 "github.com/operator101/operator101/api/batch/v1alpha1"
	"github.com/operator101/operator101/internal/controller/apply"
	"github.com/operator101/operator101/internal/controller/priority"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/internal/controller/route"
	"github.com/operator101/operator101/internal/proxyenv"
)

// Config is the AppService controller's own configuration, besides reconciler.Options.
type Config struct {
	// Routes is which route kinds the cluster served at setup (route.Discover): an HTTPRoute is watched and
	// applied only where it is served. ForCache must be given the same.
	Routes route.Served
}

// Setup registers the AppService controller of each AppService API with the manager.
func Setup(mgr ctrl.Manager, o reconciler.Options, c Config) error {
	if err := register(mgr, o, c, "appservice", v1API); err != nil {
		return err
	}
	return register(mgr, o, c, "appservice-batch", batchAPI)
}

func register[T client.Object](mgr ctrl.Manager, o reconciler.Options, c Config, name string, api apiOf[T]) error {
	r := &AppServiceReconciler[T]{Base: reconciler.NewBase(mgr, "appservice", o, api.new()), api: api, routes: c.Routes}
	b := ctrl.NewControllerManagedBy(mgr)
	if c.Routes.HTTPRoute {
		// The HTTPRoute's status says whether its Gateways accepted it.
		b = b.Owns(&gatewayv1.HTTPRoute{})
	}
	return reconciler.Complete(b.
		Named(name).
		For(api.new(), builder.WithPredicates(reconciler.ChangedByOthers())).
		// The Deployment's rollout is the object's progress: ahead of new objects (priority.Progress).
		Watches(&appsv1.Deployment{}, priority.OwnerAhead(mgr, api.new())).
		Owns(&corev1.Service{}).
		// The Ingress's status says whether a controller admitted it.
		Owns(&networkingv1.Ingress{}).
		// A budget's status follows every pod; only a change of its spec or labels needs a look.
		Owns(&policyv1.PodDisruptionBudget{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))),
		r.Options, r)
}

// Children is what the reconcile applies for a, by kind: its builders' output (a nil Service: none may exist);
// an HTTPRoute only where routes says the cluster serves it.
func Children(a *appv1.AppService, proxyEnv proxyenv.Env, routes route.Served) (map[string]runtime.ApplyConfiguration, error) {
	dep, err := Deployment(a, proxyEnv)
	if err != nil {
		return nil, err
	}
	c := map[string]runtime.ApplyConfiguration{"Deployment": dep, "Service": Service(a), "PodDisruptionBudget": DisruptionBudget(a),
		"Ingress": Ingress(a)}
	if routes.HTTPRoute {
		c["HTTPRoute"] = HTTPRoute(a)
	}
	return c, nil
}

// ForCache is how the manager's cache holds the AppServices of both APIs: without their environment (up to
// 100 values of 32 KiB each) and resources, with the digests of the children the reconcile would apply
// (apply.OwnerForCache), remembered in m. proxyEnv is the reconcile's (reconciler.Options), routes its Config's.
func ForCache(m *apply.Memory, proxyEnv proxyenv.Env, routes route.Served) map[client.Object]ctrlcache.ByObject {
	return map[client.Object]ctrlcache.ByObject{
		v1API.new(): forCache(m, v1API, proxyEnv, routes, func(a *appv1.AppService) {
			a.Spec.Application = stripped(a.Spec.Application)
			a.Status.Conditions = m.Strings().Conditions(a.Status.Conditions)
		}),
		batchAPI.new(): forCache(m, batchAPI, proxyEnv, routes, func(b *batchv1alpha1.AppService) {
			b.Spec.Application = stripped(b.Spec.Application)
			b.Status.Conditions = m.Strings().Conditions(b.Status.Conditions)
		}),
	}
}

func forCache[T client.Object](m *apply.Memory, api apiOf[T], proxyEnv proxyenv.Env, routes route.Served, strip func(T)) ctrlcache.ByObject {
	return ctrlcache.ByObject{Transform: apply.OwnerForCache(m, func(obj T) (map[string]runtime.ApplyConfiguration, error) {
		return Children(api.view(obj), proxyEnv, routes)
	}, strip)}
}

// stripped is app without what only the Deployment's builder reads; Status reads the ports.
func stripped(app appv1.Application) appv1.Application {
	app.Envs, app.Resources = nil, corev1.ResourceRequirements{}
	return app
}
