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

package controller

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Options configures every controller of the manager. main fills it from flags and the environment.
type Options struct {
	// WatchNamespace is the raw WATCH_NAMESPACE value: empty for all namespaces, one name, or a comma list.
	// OLM sets it from the OperatorGroup's target namespaces.
	WatchNamespace string
	// OperatorNamespace is the namespace the manager runs in (POD_NAMESPACE / OPERATOR_NAMESPACE).
	OperatorNamespace string
	// MaxConcurrentReconciles is the number of workers of each controller but the At controller's.
	MaxConcurrentReconciles int
	// MaxConcurrentAtReconciles is the number of workers of the At controller. Ats fall due together, and the
	// reconcile of a due At is two requests (a GET past the cache and the pod's POST), so more workers bring the
	// pods out sooner; its memory is small (docs/performance.md).
	MaxConcurrentAtReconciles int
	// ClientQPS and ClientBurst bound the manager's requests to the API server.
	ClientQPS   float32
	ClientBurst int

	watchNamespaces []string

	// --- DatabaseUser (mygroup) ---
	// LegacyDatabaseTargets is DATABASE_TARGETS, which configured database targets before the DatabaseTarget
	// kind. It is no longer read: main says so in the log, with the way to migrate (docs/databases.md).
	LegacyDatabaseTargets string
	// DatabaseDefaultTarget is the target of DatabaseUsers without a `target` label.
	DatabaseDefaultTarget string
	// DatabaseResyncPeriod is how often each DatabaseUser is checked against its database (drift repair,
	// password rotation from a changed Secret).
	DatabaseResyncPeriod time.Duration
}

// The client's rate limit. controller-runtime gives each kind its own token bucket, so these bound the requests
// per second of one kind (Events, pods, ...), not of the manager. client-go's usual 5-20/s queued the Events of
// a thousand new objects for a minute and held a burst of due Ats to one pod per 20-50 ms; the API server's
// priority and fairness, not the client, is what protects it. Measured in docs/performance.md.
const (
	DefaultClientQPS   = 200
	DefaultClientBurst = 400
)

// BindFlags registers the controllers' flags.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.MaxConcurrentReconciles, "max-concurrent-reconciles", 4, "Workers per controller (but the At controller).")
	fs.IntVar(&o.MaxConcurrentAtReconciles, "max-concurrent-at-reconciles", 16, "Workers of the At controller.")
	fs.Func("kube-api-qps", fmt.Sprintf("Sustained requests per second to the API server, per kind (default %d).", DefaultClientQPS), func(v string) error {
		q, err := strconv.ParseFloat(v, 32)
		o.ClientQPS = float32(q)
		return err
	})
	fs.IntVar(&o.ClientBurst, "kube-api-burst", DefaultClientBurst, "Request burst to the API server, per kind.")
	o.ClientQPS = DefaultClientQPS
	o.bindDatabaseFlags(fs)
}

// Complete reads the environment and validates the options.
func (o *Options) Complete(getenv func(string) string) error {
	if getenv == nil {
		getenv = os.Getenv
	}
	o.WatchNamespace = getenv("WATCH_NAMESPACE")
	ns, err := parseWatchNamespace(o.WatchNamespace)
	if err != nil {
		return err
	}
	o.watchNamespaces = ns
	if o.OperatorNamespace == "" {
		o.OperatorNamespace = firstNonEmpty(getenv("OPERATOR_NAMESPACE"), getenv("POD_NAMESPACE"))
	}
	if o.MaxConcurrentReconciles < 1 {
		return fmt.Errorf("--max-concurrent-reconciles must be at least 1, got %d", o.MaxConcurrentReconciles)
	}
	if o.MaxConcurrentAtReconciles < 1 {
		return fmt.Errorf("--max-concurrent-at-reconciles must be at least 1, got %d", o.MaxConcurrentAtReconciles)
	}
	if o.ClientQPS <= 0 || o.ClientBurst <= 0 {
		return fmt.Errorf("--kube-api-qps and --kube-api-burst must be positive, got %v and %d", o.ClientQPS, o.ClientBurst)
	}
	return o.completeDatabase(getenv)
}

// WatchNamespaceList is the namespaces the manager watches; nil means all of them.
func (o *Options) WatchNamespaceList() []string { return o.watchNamespaces }

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

// --- DatabaseUser (mygroup) ---

func (o *Options) bindDatabaseFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.DatabaseDefaultTarget, "database-default-target", "",
		"DatabaseTarget of DatabaseUsers without a target label (env DATABASE_DEFAULT_TARGET; default \"default\").")
	fs.DurationVar(&o.DatabaseResyncPeriod, "database-resync-period", 0,
		"How often each DatabaseUser is checked in its database (env DATABASE_RESYNC_PERIOD; default 10m).")
}

func (o *Options) completeDatabase(getenv func(string) string) error {
	o.LegacyDatabaseTargets = getenv("DATABASE_TARGETS")
	if o.DatabaseDefaultTarget == "" {
		o.DatabaseDefaultTarget = firstNonEmpty(getenv("DATABASE_DEFAULT_TARGET"), "default")
	}
	if o.DatabaseResyncPeriod == 0 {
		o.DatabaseResyncPeriod = 10 * time.Minute
		if v := getenv("DATABASE_RESYNC_PERIOD"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("DATABASE_RESYNC_PERIOD: %w", err)
			}
			o.DatabaseResyncPeriod = d
		}
	}
	if o.DatabaseResyncPeriod < time.Second {
		return fmt.Errorf("--database-resync-period must be at least 1s, got %v", o.DatabaseResyncPeriod)
	}
	return nil
}
