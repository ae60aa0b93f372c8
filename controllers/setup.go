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

// Package controllers wires the controllers of every operator101 kind into one manager.
// The reconcile logic of each kind lives in its group's folder: controllers/<group>/.
package controllers

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/operator101/operator101/controllers/app"
	"github.com/operator101/operator101/controllers/cnat"
	"github.com/operator101/operator101/controllers/internal/apply"
	"github.com/operator101/operator101/controllers/mygroup"
	"github.com/operator101/operator101/controllers/operator"
)

// SetupWithManager registers every controller with the manager.
func SetupWithManager(mgr ctrl.Manager, o Options) error {
	if err := operator.Setup(mgr, o.MaxConcurrentReconciles); err != nil {
		return fmt.Errorf("MyWeb controller: %w", err)
	}
	if err := app.Setup(mgr, o.MaxConcurrentReconciles); err != nil {
		return fmt.Errorf("AppService controller: %w", err)
	}
	if err := cnat.Setup(mgr, o.MaxConcurrentReconciles, cnat.Config{OperatorNamespace: o.OperatorNamespace}); err != nil {
		return fmt.Errorf("At controller: %w", err)
	}
	if err := mygroup.Setup(mgr, o.MaxConcurrentReconciles, mygroup.Config{OperatorNamespace: o.OperatorNamespace, Targets: o.DatabaseTargetMap(), DefaultTarget: o.DatabaseDefaultTarget, ResyncPeriod: o.DatabaseResyncPeriod}); err != nil {
		return fmt.Errorf("DatabaseUser controller: %w", err)
	}
	return nil
}

// CacheOptions scopes the manager's cache to the watched namespaces and keeps cached objects small.
func (o *Options) CacheOptions() cache.Options {
	opts := cache.Options{DefaultTransform: apply.TrimForCache}
	if len(o.watchNamespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range o.watchNamespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}
