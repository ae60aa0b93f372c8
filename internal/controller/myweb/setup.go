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

// Package myweb holds the MyWeb controller: one HTML page served by nginx on a node port.
package myweb

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/controller/apply"
	"github.com/operator101/operator101/internal/controller/priority"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/internal/controller/route"
	"github.com/operator101/operator101/internal/proxyenv"
)

// Config is the MyWeb controller's own configuration, besides reconciler.Options.
type Config struct {
	// Routes is which route kinds the cluster served at setup (route.Discover): an HTTPRoute is watched and
	// applied only where it is served. ForCache must be given the same.
	Routes route.Served
}

// Setup registers the MyWeb controller with the manager.
func Setup(mgr ctrl.Manager, o reconciler.Options, c Config) error {
	r := &MyWebReconciler{Base: reconciler.NewBase(mgr, "myweb", o, &operatorv1.MyWeb{}), routes: c.Routes}
	b := ctrl.NewControllerManagedBy(mgr)
	if c.Routes.HTTPRoute {
		// The HTTPRoute's status says whether its Gateways accepted it.
		b = b.Owns(&gatewayv1.HTTPRoute{})
	}
	return reconciler.Complete(b.
		Named("myweb").
		For(&operatorv1.MyWeb{}, builder.WithPredicates(reconciler.ChangedByOthers())).
		Owns(&corev1.ConfigMap{}).
		// The Deployment's rollout is the object's progress: ahead of new objects (priority.Progress).
		Watches(&appsv1.Deployment{}, priority.OwnerAhead(mgr, &operatorv1.MyWeb{})).
		Owns(&corev1.Service{}).
		// The Ingress's status says whether a controller admitted it.
		Owns(&networkingv1.Ingress{}).
		// A budget's status follows every pod; only a change of its spec or labels needs a look.
		Owns(&policyv1.PodDisruptionBudget{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))),
		r.Options, r)
}

// Children is what the reconcile applies for w, by kind: its builders' output; an HTTPRoute only where routes
// says the cluster serves it.
func Children(w *operatorv1.MyWeb, proxyEnv proxyenv.Env, routes route.Served) map[string]runtime.ApplyConfiguration {
	c := map[string]runtime.ApplyConfiguration{"ConfigMap": ConfigMap(w), "Deployment": Deployment(w, proxyEnv),
		"Service": Service(w), "PodDisruptionBudget": DisruptionBudget(w), "Ingress": Ingress(w)}
	if routes.HTTPRoute {
		c["HTTPRoute"] = HTTPRoute(w)
	}
	return c
}

// ForCache is how the manager's cache holds MyWebs: without their page (up to 512 KiB each), with the digests
// of the children the reconcile would apply (apply.OwnerForCache), remembered in m. proxyEnv is the
// reconcile's (reconciler.Options), routes its Config's.
func ForCache(m *apply.Memory, proxyEnv proxyenv.Env, routes route.Served) ctrlcache.ByObject {
	return ctrlcache.ByObject{Transform: apply.OwnerForCache(m, func(w *operatorv1.MyWeb) (map[string]runtime.ApplyConfiguration, error) {
		return Children(w, proxyEnv, routes), nil
	}, func(w *operatorv1.MyWeb) {
		w.Spec.PageContentHtml = ""
		w.Status.Conditions = m.Strings().Conditions(w.Status.Conditions)
	})}
}
