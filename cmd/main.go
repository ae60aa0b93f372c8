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

// The operator101 manager: one process that runs the controllers of all four kinds.
package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"time"
	// The IANA time zone database, compiled in (about 450 KB), for At's spec.timeZone: the released image is
	// FROM scratch and has no /usr/share/zoneinfo. Go uses it only when the system has no database of its own.
	_ "time/tzdata"

	"github.com/go-logr/logr"
	// Mozilla's roots, compiled in, for the TLS connections that verify against the system's roots (a
	// DatabaseUser target's tls.mode VerifyFull without ca.crt): the released image is FROM scratch and has
	// none. Go uses them only when the system has no roots of its own (x509.SetFallbackRoots).
	_ "golang.org/x/crypto/x509roots/fallback"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/operator101/operator101/api"
	"github.com/operator101/operator101/internal/controller"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/internal/kindlimit"
	opmetrics "github.com/operator101/operator101/internal/metrics"
	"github.com/operator101/operator101/internal/metricsauth"
	"github.com/operator101/operator101/internal/restmappercache"
)

func main() {
	if err := run(); err != nil {
		// One line, no stack: the cause is in the message.
		fmt.Fprintf(os.Stderr, "operator101: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := parseConfig(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	ctrl.SetLogger(newLogger(&cfg.zap))
	log := ctrl.Log.WithName("setup")
	if cfg.memoryLimit > 0 {
		debug.SetMemoryLimit(cfg.memoryLimit)
		log.Info("Go memory limit set from the container's", "bytes", cfg.memoryLimit)
	}
	if cfg.gcPercent > 0 {
		debug.SetGCPercent(cfg.gcPercent)
	}

	restConfig, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	// The limit is per kind for every client, the metadata client's writes included (internal/kindlimit).
	kindlimit.New(cfg.clientQPS, cfg.clientBurst).Configure(restConfig)
	if err := checkAPIServer(restConfig); err != nil {
		return err
	}
	// Which optional APIs the cluster serves (the Gateway API's HTTPRoute), asked once: the scheme, the cache
	// and the controllers take that answer. A CRD installed later is picked up on the next start.
	dc, err := discovery.NewDiscoveryClientForConfig(restConfig)
	if err != nil {
		return fmt.Errorf("creating discovery client for %s: %w", restConfig.Host, err)
	}
	cfg.controllers.Discovery = dc
	if cfg.controllers, err = controller.Discover(cfg.controllers); err != nil {
		return err
	}
	log.Info("optional APIs", "httpRoute", cfg.controllers.Routes.HTTPRoute)

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(api.AddToScheme(scheme))
	utilruntime.Must(controller.AddToScheme(scheme, cfg.controllers))

	// HTTP/2 stays off unless asked for; see the flag's help.
	var tlsOpts []func(*tls.Config)
	if !cfg.enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	metricsOpts := metricsserver.Options{
		BindAddress:   cfg.metricsAddr,
		SecureServing: cfg.metricsSecure,
		TLSOpts:       tlsOpts,
	}
	if cfg.metricsSecure {
		// Callers must present a token that may "get /metrics" (see config/rbac/metrics_reader_role.yaml).
		// metricsauth does what controller-runtime's filters.WithAuthenticationAndAuthorization does, without
		// linking k8s.io/apiserver's authenticator and authorizer factories (docs/contributing/performance.md).
		metricsOpts.FilterProvider = metricsauth.FilterProvider
	}

	// What the controllers remember between reconciles, one value shared by the cache's transforms and the
	// controllers.
	memory := reconciler.NewMemory()
	cacheOpts := controller.CacheOptions(cfg.controllers, memory)
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsOpts,
		WebhookServer:                 webhook.NewServer(webhook.Options{TLSOpts: tlsOpts}),
		HealthProbeBindAddress:        cfg.probeAddr,
		PprofBindAddress:              cfg.pprofAddr,
		LeaderElection:                cfg.leaderElect,
		LeaderElectionID:              controller.LeaderElectionID,
		LeaderElectionNamespace:       cfg.leaderElectNamespace,
		LeaderElectionReleaseOnCancel: true,
		Cache:                         cacheOpts,
		MapperProvider:                restmappercache.Provider,
		Client:                        client.Options{Cache: &client.CacheOptions{Unstructured: false}},
		GracefulShutdownTimeout:       durationPtr(30 * time.Second),
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	// The metrics about what the operator manages, beside controller-runtime's own (docs/admin/monitoring.md).
	counted := opmetrics.New()
	if err := counted.Register(ctrlmetrics.Registry); err != nil {
		return fmt.Errorf("registering metrics: %w", err)
	}
	if err := ctrlmetrics.Registry.Register(opmetrics.NewObjects(mgr.GetCache(), ctrl.Log.WithName("metrics"))); err != nil {
		return fmt.Errorf("registering metrics: %w", err)
	}
	cfg.controllers.Metrics = counted
	if err := controller.SetupWithManager(mgr, cfg.controllers, memory); err != nil {
		return fmt.Errorf("setting up controllers: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding health check: %w", err)
	}
	watched, err := controller.Watched(cacheOpts)
	if err != nil {
		return fmt.Errorf("listing the watched kinds: %w", err)
	}
	// Ready means the manager can serve: its cache synced and, on the leader, every watched kind in it.
	if err := mgr.AddReadyzCheck("readyz", controller.Readiness(mgr, watched)); err != nil {
		return fmt.Errorf("adding ready check: %w", err)
	}

	logProxyCredentials(log, cfg)
	if cfg.legacyDatabaseTargets != "" {
		log.Info("DATABASE_TARGETS is set but no longer read: create a DatabaseTarget for each of its entries "+
			"(docs/admin/database-targets.md, \"Migrating from DATABASE_TARGETS\"), then remove the variable",
			"DATABASE_TARGETS", cfg.legacyDatabaseTargets)
	}
	log.Info("starting manager", "watchNamespaces", cfg.controllers.WatchNamespaces,
		"leaderElection", cfg.leaderElect, "metrics", cfg.metricsAddr)
	// SIGTERM or SIGINT cancel the context; the manager stops its controllers and releases the lease.
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		return fmt.Errorf("running manager: %w", err)
	}
	log.Info("manager stopped")
	return nil
}

// logProxyCredentials says, once, which proxy variables the workloads get without the user and password their
// URL holds, and which they do not get at all. It names the variables, never their values.
func logProxyCredentials(log logr.Logger, cfg *config) {
	stripped, omitted := cfg.controllers.ProxyEnv.Stripped(), cfg.controllers.ProxyEnv.Omitted()
	if len(stripped) == 0 && len(omitted) == 0 {
		return
	}
	log.Info("the proxy URL's user and password are not passed to the pods operator101 runs for tenants: "+
		"they get these variables with the proxy's address only (withoutCredentials), "+
		"and not those whose credentials cannot be told from the address (leftOut)",
		"withoutCredentials", stripped, "leftOut", omitted)
}

// checkAPIServer fails fast, with one clear line, when the API server cannot be reached, instead of letting
// the manager retry its informers forever.
func checkAPIServer(restConfig *rest.Config) error {
	probe := rest.CopyConfig(restConfig)
	probe.Timeout = 15 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(probe)
	if err != nil {
		return fmt.Errorf("creating discovery client for %s: %w", restConfig.Host, err)
	}
	if _, err := dc.ServerVersion(); err != nil {
		return fmt.Errorf("API server %s is not reachable: %w", restConfig.Host, err)
	}
	return nil
}

func durationPtr(d time.Duration) *time.Duration { return &d }
