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

// Package app holds the AppService controller: an image run as a Deployment, exposed by a NodePort Service.
package app

import (
	"github.com/operator-framework/operator-lib/proxy"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	appv1 "github.com/operator101/operator101/api/app/v1"
	"github.com/operator101/operator101/controllers/operator/rollout"
)

// Setup registers the AppService controller with the manager. The proxy settings OLM gives the operator
// (HTTP_PROXY, HTTPS_PROXY, NO_PROXY) are read once, here, and passed on to the application.
func Setup(mgr ctrl.Manager, workers int, opts ...Option) error {
	r := &AppServiceReconciler{
		client:   mgr.GetClient(),
		recorder: mgr.GetEventRecorder("operator101-appservice"),
		clock:    clock.RealClock{},
		proxyEnv: proxy.ReadProxyVarsFromEnv(),
	}
	for _, o := range opts {
		o(r)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("appservice").
		For(&appv1.AppService{}, builder.WithPredicates(rollout.ChangedByOthers())).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// Option configures the AppService controller.
type Option func(*AppServiceReconciler)

// WithReconciled calls f at the end of every reconcile, after its writes (tests wait for reconciles with it).
func WithReconciled(f func(ctrl.Request)) Option {
	return func(r *AppServiceReconciler) { r.reconciled = f }
}
