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

// Package controller wires the controllers of every operator101 kind into one manager. The reconcile logic of
// each kind lives in its own package: internal/controller/<kind>/.
package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/controller/apply"
	"github.com/operator101/operator101/internal/controller/appservice"
	"github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/internal/controller/cachetrim"
	"github.com/operator101/operator101/internal/controller/database"
	"github.com/operator101/operator101/internal/controller/databaseuser"
	"github.com/operator101/operator101/internal/controller/myweb"
	"github.com/operator101/operator101/internal/controller/reconciler"
)

// SetupWithManager registers every controller with the manager. m is the Memory CacheOptions built the
// manager's cache with: the controllers share it with the cache transforms, and it hears of the events of every
// kind registered with it.
func SetupWithManager(mgr ctrl.Manager, o Options, m *reconciler.Memory) error {
	k := reconciler.Options{Workers: o.Workers, ProxyEnv: o.ProxyEnv, Memory: m, Metrics: o.Metrics,
		Events: reconciler.NewEvents(mgr)}
	if err := myweb.Setup(mgr, k, myweb.Config{Routes: o.Routes}); err != nil {
		return fmt.Errorf("MyWeb controller: %w", err)
	}
	if err := appservice.Setup(mgr, k, appservice.Config{Routes: o.Routes}); err != nil {
		return fmt.Errorf("AppService controller: %w", err)
	}
	atOptions := k
	atOptions.Workers = o.AtWorkers
	if err := at.Setup(mgr, atOptions, at.Config{OperatorNamespace: o.OperatorNamespace,
		OperatorConditionName: o.OperatorConditionName, DefaultImage: o.AtDefaultImage}); err != nil {
		return fmt.Errorf("At controller: %w", err)
	}
	if err := databaseuser.Setup(mgr, k, databaseuser.Config{OperatorNamespace: o.OperatorNamespace,
		DefaultTarget: o.DatabaseDefaultTarget, ResyncPeriod: o.DatabaseResyncPeriod,
		MigratingTargets: o.DatabaseMigratingTargets}); err != nil {
		return fmt.Errorf("DatabaseUser controller: %w", err)
	}
	if err := database.Setup(mgr, k, database.Config{OperatorNamespace: o.OperatorNamespace,
		DefaultTarget: o.DatabaseDefaultTarget, ResyncPeriod: o.DatabaseResyncPeriod}); err != nil {
		return fmt.Errorf("Database controller: %w", err)
	}
	// What m remembers of an object goes once the cache has moved past it: every kind whose status a
	// controller reports, and every kind a cache transform remembers digests of, registered themselves.
	return m.Hook(context.Background(), mgr.GetCache())
}

// CacheOptions scopes the manager's cache to the watched namespaces and keeps it small: of the kinds the
// controllers create it holds only objects labelled as operator101's, in the shape the code that reads them
// declares (apply.AppliedChildren for MyWeb's and AppService's children, at.PodCache for At's pods, which leaves
// out the pods of MyWebs and AppServices; apply.HTTPRouteForCache for their HTTPRoutes, only where o.Routes says
// the cluster serves them); MyWebs and AppServices without the fields only their builders read,
// whose size the tenant chooses (myweb.ForCache, appservice.ForCache); Ats and DatabaseUsers without the
// metadata nobody reads (at.ForCache, databaseuser.ForCache); of everything else, operator101's managedFields
// entries (cachetrim.Default). No cached object keeps what its owner may make large and nothing reads: the
// cache's memory follows the number of objects, not their size. Lookups of anything else (a pod that took an
// At's pod name) go to the API server directly.
// The transforms remember digests in m, which SetupWithManager then gives the controllers.
func CacheOptions(o Options, m *reconciler.Memory) cache.Options {
	opts := cache.Options{DefaultTransform: cachetrim.Default, ByObject: apply.AppliedChildren(m.Applied)}
	opts.ByObject[&corev1.Pod{}] = at.PodCache()
	opts.ByObject[&cnatv1alpha1.At{}] = at.ForCache()
	opts.ByObject[&mygroupv1alpha1.DatabaseUser{}] = databaseuser.ForCache()
	opts.ByObject[&mygroupv1alpha1.Database{}] = database.ForCache()
	opts.ByObject[&operatorv1.MyWeb{}] = myweb.ForCache(m.Applied, o.ProxyEnv, o.Routes)
	for obj, by := range appservice.ForCache(m.Applied, o.ProxyEnv, o.Routes) {
		opts.ByObject[obj] = by
	}
	if o.Routes.HTTPRoute {
		// Only where the cluster serves HTTPRoute: an entry here is a kind /readyz waits for (Watched).
		obj, by := apply.HTTPRouteForCache(m.Applied)
		opts.ByObject[obj] = by
	}
	if len(o.WatchNamespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range o.WatchNamespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}
