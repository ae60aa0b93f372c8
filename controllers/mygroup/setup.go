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

// Package mygroup holds the DatabaseUser controller: MySQL/MariaDB accounts as Kubernetes objects.
package mygroup

import (
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"

	mygroupv1alpha1 "github.com/operator101/operator101/apis/mygroup/v1alpha1"
	"github.com/operator101/operator101/controllers/internal/kit"
)

// Config configures the DatabaseUser controller.
type Config struct {
	// OperatorNamespace holds the target Secrets.
	OperatorNamespace string
	// Targets maps target names (the `target` label) to Secret names in OperatorNamespace.
	Targets map[string]string
	// DefaultTarget is the target of DatabaseUsers without a `target` label.
	DefaultTarget string
	// ResyncPeriod is how often a Ready DatabaseUser is checked in its database (default 10m): drift is
	// repaired and a changed password Secret rotates the password within this period.
	ResyncPeriod time.Duration
	// StatusRefresh is how stale status.lastCheckedTime may get before a successful check rewrites it
	// (default 1h), so that a converged DatabaseUser costs no API write on most resyncs.
	StatusRefresh time.Duration
	// ConnectTimeout bounds connecting to a database (default 5s).
	ConnectTimeout time.Duration
}

func (c *Config) complete() error {
	if c.DefaultTarget == "" {
		c.DefaultTarget = "default"
	}
	if c.ResyncPeriod <= 0 {
		c.ResyncPeriod = 10 * time.Minute
	}
	if c.StatusRefresh <= 0 {
		c.StatusRefresh = time.Hour
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 5 * time.Second
	}
	if len(c.Targets) > 0 && c.OperatorNamespace == "" {
		return fmt.Errorf("database targets are configured but the operator namespace is unknown " +
			"(set POD_NAMESPACE or OPERATOR_NAMESPACE)")
	}
	return nil
}

// Setup registers the DatabaseUser controller with the manager.
func Setup(mgr ctrl.Manager, o kit.Options, cfg Config) error {
	if err := cfg.complete(); err != nil {
		return err
	}
	r := &Reconciler{Base: kit.NewBase(mgr, "databaseuser", o), cfg: cfg}
	// Changes of the spec, the target label and deletion change the desired account; annotations let
	// `kubectl annotate dbu NAME rotate=<anything>` check the account at once (after changing its password
	// Secret, say) instead of at the next resync.
	return kit.Complete(ctrl.NewControllerManagedBy(mgr).
		Named("databaseuser").
		For(&mygroupv1alpha1.DatabaseUser{}, builder.WithPredicates(kit.ChangedByOthers())), r.Options, r)
}
