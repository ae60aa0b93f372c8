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

package controllers

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Options configures every controller of the manager. main fills it from flags and the environment.
type Options struct {
	// WatchNamespace is the raw WATCH_NAMESPACE value: empty for all namespaces, one name, or a comma list.
	// OLM sets it from the OperatorGroup's target namespaces.
	WatchNamespace string
	// OperatorNamespace is the namespace the manager runs in (POD_NAMESPACE / OPERATOR_NAMESPACE).
	OperatorNamespace string
	// MaxConcurrentReconciles is the number of workers of each controller.
	MaxConcurrentReconciles int
	// ClientQPS and ClientBurst bound the manager's requests to the API server.
	ClientQPS   float32
	ClientBurst int

	watchNamespaces []string
}

// BindFlags registers the controllers' flags.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.MaxConcurrentReconciles, "max-concurrent-reconciles", 4, "Workers per controller.")
	fs.Func("kube-api-qps", "Sustained requests per second to the API server (default 50).", func(v string) error {
		q, err := strconv.ParseFloat(v, 32)
		o.ClientQPS = float32(q)
		return err
	})
	fs.IntVar(&o.ClientBurst, "kube-api-burst", 100, "Request burst to the API server.")
	o.ClientQPS = 50
}

// Complete reads the environment and validates the options.
func (o *Options) Complete(getenv func(string) string) error {
	if getenv == nil {
		getenv = os.Getenv
	}
	o.WatchNamespace = getenv("WATCH_NAMESPACE")
	ns, err := ParseWatchNamespace(o.WatchNamespace)
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
	if o.ClientQPS <= 0 || o.ClientBurst <= 0 {
		return fmt.Errorf("--kube-api-qps and --kube-api-burst must be positive, got %v and %d", o.ClientQPS, o.ClientBurst)
	}
	return nil
}

// WatchNamespaceList is the namespaces the manager watches; nil means all of them.
func (o *Options) WatchNamespaceList() []string { return o.watchNamespaces }

// ParseWatchNamespace turns a WATCH_NAMESPACE value into a sorted list of distinct namespace names.
// An empty value (or only commas and spaces) means every namespace and returns nil.
func ParseWatchNamespace(v string) ([]string, error) {
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
