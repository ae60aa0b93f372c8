/*
Copyright 2026 The operator101 Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package operator holds the MyWeb controller: one HTML page served by nginx on a node port.
package operator

import (
	"github.com/operator-framework/operator-lib/proxy"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/controllers/operator/rollout"
)

// Setup registers the MyWeb controller with the manager. The proxy settings OLM gives the operator
// (HTTP_PROXY, HTTPS_PROXY, NO_PROXY) are read once, here, and passed on to the web servers.
func Setup(mgr ctrl.Manager, workers int, opts ...Option) error {
	r := &MyWebReconciler{
		client:   mgr.GetClient(),
		recorder: mgr.GetEventRecorder("operator101-myweb"),
		clock:    clock.RealClock{},
		proxyEnv: proxy.ReadProxyVarsFromEnv(),
	}
	for _, o := range opts {
		o(r)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("myweb").
		For(&operatorv1.MyWeb{}, builder.WithPredicates(rollout.ChangedByOthers())).
		Owns(&corev1.ConfigMap{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// Option configures the MyWeb controller.
type Option func(*MyWebReconciler)

// WithReconciled calls f at the end of every reconcile, after its writes (tests wait for reconciles with it).
func WithReconciled(f func(ctrl.Request)) Option {
	return func(r *MyWebReconciler) { r.reconciled = f }
}

// WithClock sets the time source of the conditions' lastTransitionTime (default: the real clock).
func WithClock(c clock.PassiveClock) Option {
	return func(r *MyWebReconciler) { r.clock = c }
}
