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

package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/operator-framework/operator-lib/proxy"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/internal/controller"
	"github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/internal/controller/databaseuser"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/internal/proxyenv"
)

// config is everything the command line and the environment decide. parseConfig is the only code in the
// manager that reads either; a value left zero here takes the default of the package that uses it, which the
// flag's help names.
type config struct {
	metricsAddr          string
	metricsSecure        bool
	probeAddr            string
	pprofAddr            string
	leaderElect          bool
	leaderElectNamespace string
	enableHTTP2          bool
	// clientQPS and clientBurst bound the manager's requests to the API server.
	clientQPS   float32
	clientBurst int
	controllers controller.Options
	zap         zap.Options
	// memoryLimit is the Go runtime's soft memory limit in bytes (0: none set here), from memoryLimit().
	memoryLimit int64
	// gcPercent is the Go runtime's GOGC (0: leave the runtime alone), from gcPercent().
	gcPercent int
	// legacyDatabaseTargets is DATABASE_TARGETS, which configured database targets before the DatabaseTarget
	// kind. It is no longer read: main says so in the log, with the way to migrate (docs/admin/database-targets.md).
	legacyDatabaseTargets string
}

// The client's rate limit. controller-runtime gives each kind its own token bucket, so these bound the requests
// per second of one kind (Events, pods, ...), not of the manager. client-go's usual 5-20/s queued the Events of
// a thousand new objects for a minute and held a burst of due Ats to one pod per 20-50 ms; the API server's
// priority and fairness, not the client, is what protects it (docs/contributing/performance.md).
const (
	defaultClientQPS   = 200
	defaultClientBurst = 400
)

// parseConfig reads flags and environment. It never exits: main decides what an error means.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (*config, error) {
	cfg := &config{clientQPS: defaultClientQPS}
	c := &cfg.controllers
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
	fs.Func("kube-api-qps", fmt.Sprintf("Sustained requests per second to the API server, per kind (default %d).", defaultClientQPS), func(v string) error {
		q, err := strconv.ParseFloat(v, 32)
		cfg.clientQPS = float32(q)
		return err
	})
	fs.IntVar(&cfg.clientBurst, "kube-api-burst", defaultClientBurst, "Request burst to the API server, per kind.")
	fs.IntVar(&c.Workers, "max-concurrent-reconciles", 0,
		fmt.Sprintf("Workers per controller, but the At controller (0: %d).", reconciler.DefaultWorkers))
	fs.IntVar(&c.AtWorkers, "max-concurrent-at-reconciles", 0,
		fmt.Sprintf("Workers of the At controller (0: %d).", at.DefaultWorkers))
	fs.StringVar(&c.DatabaseDefaultTarget, "database-default-target", "",
		fmt.Sprintf("DatabaseTarget of DatabaseUsers without a target label (env DATABASE_DEFAULT_TARGET; empty: %q).", databaseuser.DefaultTarget))
	fs.DurationVar(&c.DatabaseResyncPeriod, "database-resync-period", 0,
		fmt.Sprintf("How often each DatabaseUser is checked in its database (env DATABASE_RESYNC_PERIOD; 0: %v).", databaseuser.DefaultResyncPeriod))
	cfg.zap.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if c.Workers < 0 || c.AtWorkers < 0 {
		return nil, fmt.Errorf("--max-concurrent-reconciles and --max-concurrent-at-reconciles must not be negative, got %d and %d",
			c.Workers, c.AtWorkers)
	}
	if cfg.clientQPS <= 0 || cfg.clientBurst <= 0 {
		return nil, fmt.Errorf("--kube-api-qps and --kube-api-burst must be positive, got %v and %d", cfg.clientQPS, cfg.clientBurst)
	}
	if err := readEnvironment(cfg, getenv); err != nil {
		return nil, err
	}
	return cfg, nil
}

// readEnvironment reads what OLM, the Deployment and the runtime give the manager as environment variables.
// A flag, when given, wins over the variable of the same setting.
func readEnvironment(cfg *config, getenv func(string) string) error {
	c := &cfg.controllers
	ns, err := parseWatchNamespace(getenv("WATCH_NAMESPACE"))
	if err != nil {
		return err
	}
	c.WatchNamespaces = ns
	c.OperatorNamespace = firstNonEmpty(getenv("OPERATOR_NAMESPACE"), getenv("POD_NAMESPACE"))
	c.OperatorConditionName = getenv("OPERATOR_CONDITION_NAME")
	c.AtDefaultImage = getenv(cnatv1alpha1.DefaultImageEnv)
	// The cluster's proxy, as operator-lib reads it (from the process environment, not getenv), for the
	// workloads the operator runs in tenants' namespaces: never with the user and password of a proxy URL.
	c.ProxyEnv = proxyenv.New(proxy.ReadProxyVarsFromEnv())
	cfg.legacyDatabaseTargets = getenv("DATABASE_TARGETS")
	c.DatabaseMigratingTargets = legacyTargetNames(cfg.legacyDatabaseTargets)
	if c.DatabaseDefaultTarget == "" {
		c.DatabaseDefaultTarget = getenv("DATABASE_DEFAULT_TARGET")
	}
	if v := getenv("DATABASE_RESYNC_PERIOD"); c.DatabaseResyncPeriod == 0 && v != "" {
		if c.DatabaseResyncPeriod, err = time.ParseDuration(v); err != nil {
			return fmt.Errorf("DATABASE_RESYNC_PERIOD: %w", err)
		}
	}
	if c.DatabaseResyncPeriod < 0 {
		return fmt.Errorf("the DatabaseUser resync period must not be negative, got %v", c.DatabaseResyncPeriod)
	}
	if cfg.memoryLimit, err = memoryLimit(getenv); err != nil {
		return err
	}
	cfg.gcPercent = gcPercent(getenv)
	return nil
}

// parseWatchNamespace turns a WATCH_NAMESPACE value into a sorted list of distinct namespace names.
// An empty value (or only commas and spaces) means every namespace and returns nil.
func parseWatchNamespace(v string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, part := range strings.Split(v, ",") {
		name := strings.TrimSpace(part)
		if name == "" || seen[name] {
			continue
		}
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			return nil, fmt.Errorf("WATCH_NAMESPACE: %q is not a valid namespace name: %s", name, strings.Join(errs, "; "))
		}
		seen[name] = true
		out = append(out, name)
	}
	sort.Strings(out)
	return out, nil
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
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
// With 40 the heap stays within 1.4 times the live one (docs/contributing/performance.md has the figures).
const defaultGCPercent = 40

// gcPercent is defaultGCPercent, or 0 (leave the runtime alone) when GOGC is set.
func gcPercent(getenv func(string) string) int {
	if getenv("GOGC") != "" {
		return 0
	}
	return defaultGCPercent
}

// legacyTargetNames are the target names of DATABASE_TARGETS (name=secretName,...), the format 0.1.0 read.
func legacyTargetNames(v string) []string {
	var names []string
	for _, entry := range strings.Split(v, ",") {
		if name, _, _ := strings.Cut(strings.TrimSpace(entry), "="); name != "" {
			names = append(names, name)
		}
	}
	return names
}
