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

// The operator101 manager: one process that runs the controllers of all four kinds.
package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/operator101/operator101/api"
	"github.com/operator101/operator101/internal/controller"
	"github.com/operator101/operator101/internal/metricsauth"
)

// config is everything the command line and the environment decide.
type config struct {
	metricsAddr          string
	metricsSecure        bool
	probeAddr            string
	pprofAddr            string
	leaderElect          bool
	leaderElectNamespace string
	enableHTTP2          bool
	controllers          controller.Options
	zap                  zap.Options
	// memoryLimit is the Go runtime's soft memory limit in bytes (0: none set here), from memoryLimit().
	memoryLimit int64
}

// memoryLimitHeadroom is the part of the container's memory limit kept out of the Go runtime's soft limit: the
// manager binary's own pages (28-31 MiB resident since the metrics filter no longer links k8s.io/apiserver, 45-50
// before; counted by the cgroup but not by Go) and thread stacks. It was sized, at N=3000, before that change,
// and has not been measured smaller since.
const memoryLimitHeadroom = 64 << 20

// memoryLimit returns the soft memory limit for the Go runtime: MEMORY_LIMIT (bytes; the Deployment sets it from
// the container's limits.memory through the downward API) less memoryLimitHeadroom, and never below half of it,
// so that the garbage collector works harder near the limit instead of the kernel killing the pod. GOMEMLIMIT,
// when set, is the runtime's own and wins.
func memoryLimit(getenv func(string) string) (int64, error) {
	raw := getenv("MEMORY_LIMIT")
	if raw == "" || getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("MEMORY_LIMIT=%q: want a positive number of bytes", raw)
	}
	return max(n-memoryLimitHeadroom, n/2), nil
}

// defaultGCPercent is the manager's GOGC unless the environment sets one. Go's default, 100, lets the heap grow
// to twice what is live before a collection; the manager's live heap is its cache, which grows with the cluster.
// With 20 the heap stays within 1.2 times the live one, for about a fifth more CPU (docs/performance.md has the
// figures).
const defaultGCPercent = 20

// gcPercent is defaultGCPercent, or 0 (leave the runtime alone) when GOGC is set.
func gcPercent(getenv func(string) string) int {
	if getenv("GOGC") != "" {
		return 0
	}
	return defaultGCPercent
}

// parseConfig reads flags and environment. It never exits: main decides what an error means.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (*config, error) {
	cfg := &config{}
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&cfg.metricsAddr, "metrics-bind-address", ":8443",
		"Address the metrics endpoint binds to (\"0\" disables it).")
	fs.BoolVar(&cfg.metricsSecure, "metrics-secure", true,
		"Serve metrics over HTTPS behind Kubernetes authentication and authorization.")
	fs.StringVar(&cfg.probeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz probes.")
	fs.StringVar(&cfg.pprofAddr, "pprof-bind-address", "", "Address of a pprof endpoint (empty disables it).")
	fs.BoolVar(&cfg.leaderElect, "leader-elect", true,
		"Elect a leader through a Lease so that only one replica reconciles at a time.")
	fs.StringVar(&cfg.leaderElectNamespace, "leader-election-namespace", "",
		"Namespace of the leader election Lease (default: the namespace the manager runs in).")
	fs.BoolVar(&cfg.enableHTTP2, "enable-http2", false,
		"Allow HTTP/2 on the metrics server (off by default: HTTP/2 rapid reset, CVE-2023-44487).")
	cfg.controllers.BindFlags(fs)
	cfg.zap.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if err := cfg.controllers.Complete(getenv); err != nil {
		return nil, err
	}
	var err error
	if cfg.memoryLimit, err = memoryLimit(getenv); err != nil {
		return nil, err
	}
	return cfg, nil
}

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
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&cfg.zap)))
	log := ctrl.Log.WithName("setup")
	if cfg.memoryLimit > 0 {
		debug.SetMemoryLimit(cfg.memoryLimit)
		log.Info("Go memory limit set from the container's", "bytes", cfg.memoryLimit)
	}
	if gcPercent := gcPercent(os.Getenv); gcPercent > 0 {
		debug.SetGCPercent(gcPercent)
	}

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(api.AddToScheme(scheme))

	restConfig, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	restConfig.QPS, restConfig.Burst = cfg.controllers.ClientQPS, cfg.controllers.ClientBurst
	if err := checkAPIServer(restConfig); err != nil {
		return err
	}

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
		// linking k8s.io/apiserver's authenticator and authorizer factories (docs/performance.md).
		metricsOpts.FilterProvider = metricsauth.FilterProvider
	}

	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsOpts,
		WebhookServer:                 webhook.NewServer(webhook.Options{TLSOpts: tlsOpts}),
		HealthProbeBindAddress:        cfg.probeAddr,
		PprofBindAddress:              cfg.pprofAddr,
		LeaderElection:                cfg.leaderElect,
		LeaderElectionID:              "operator101.operator101.io",
		LeaderElectionNamespace:       cfg.leaderElectNamespace,
		LeaderElectionReleaseOnCancel: true,
		Cache:                         cfg.controllers.CacheOptions(),
		Client:                        client.Options{Cache: &client.CacheOptions{Unstructured: false}},
		GracefulShutdownTimeout:       durationPtr(30 * time.Second),
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	if err := controller.SetupWithManager(mgr, cfg.controllers); err != nil {
		return fmt.Errorf("setting up controllers: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("adding ready check: %w", err)
	}

	if cfg.controllers.LegacyDatabaseTargets != "" {
		log.Info("DATABASE_TARGETS is set but no longer read: create a DatabaseTarget for each of its entries "+
			"(docs/databases.md, \"Migrating from DATABASE_TARGETS\"), then remove the variable",
			"DATABASE_TARGETS", cfg.controllers.LegacyDatabaseTargets)
	}
	log.Info("starting manager", "watchNamespaces", cfg.controllers.WatchNamespaceList(),
		"leaderElection", cfg.leaderElect, "metrics", cfg.metricsAddr)
	// SIGTERM or SIGINT cancel the context; the manager stops its controllers and releases the lease.
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		return fmt.Errorf("running manager: %w", err)
	}
	log.Info("manager stopped")
	return nil
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
