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

// Package appservice holds the AppService controller: an image run as a Deployment, exposed by a NodePort Service.
package appservice

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator101/operator101/internal/controller/kit"
)

// Config is the AppService controller's own configuration; it has none yet besides kit.Options.
type Config struct{}

// Setup registers the AppService controller of each AppService API with the manager.
func Setup(mgr ctrl.Manager, o kit.Options, _ Config) error {
	if err := register(mgr, o, "appservice", v1API); err != nil {
		return err
	}
	return register(mgr, o, "appservice-batch", batchAPI)
}

func register[T client.Object](mgr ctrl.Manager, o kit.Options, name string, api apiOf[T]) error {
	r := &AppServiceReconciler[T]{Base: kit.NewBase(mgr, "appservice", o), api: api}
	return kit.Complete(ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(api.new(), builder.WithPredicates(kit.ChangedByOthers())).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}), r.Options, r)
}
