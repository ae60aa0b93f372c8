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

// Package at holds the At controller: a command run once, in a pod, at a scheduled time (the cnat example
// of Programming Kubernetes).
package at

import (
	"fmt"
	"time"

	apiv2 "github.com/operator-framework/api/pkg/operators/v2"
	"github.com/operator-framework/operator-lib/conditions"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/internal/controller/reconciler"
)

// Config is the At controller's own configuration.
type Config struct {
	// OperatorNamespace is where the OperatorCondition lives.
	OperatorNamespace string
	// OperatorConditionName names the OperatorCondition OLM made for this installation (OLM gives it as
	// OPERATOR_CONDITION_NAME). Empty outside OLM: then there is no Upgradeable gate, and nothing is reported.
	OperatorConditionName string
	// StartDeadline is how long an At's pod may stay Pending (its image not pulled, no node for it, ...)
	// before the At is FAILED and the pod deleted (default DefaultStartDeadline).
	StartDeadline time.Duration
	// DefaultImage runs an At's command when the At names no image (default: cnatv1alpha1.DefaultImage; the
	// CSV gives the manager RELATED_IMAGE_BUSYBOX for it).
	DefaultImage string
}

// DefaultWorkers is the At controller's number of workers by default. Ats fall due together, and the reconcile
// of a due At is two requests (a GET past the cache and the pod's POST), so more workers bring the pods out
// sooner; their memory is small (docs/contributing/performance.md).
const DefaultWorkers = 16

// DefaultStartDeadline is how long an At's pod may take to start by default: long enough for a slow image
// pull or a node scaled up for it, short enough that an At whose image does not exist says so soon.
const DefaultStartDeadline = 5 * time.Minute

// Setup registers the At controller with the manager, and under OLM the Upgradeable gate (upgradeable.go).
// The At controller sees every event of an At, its own status writes included (no reconciler.ChangedByOthers): a
// stored RUNNING is what lets the next reconcile give up on a pod that did not start, and the cache holds an
// At's new phase only once its status write comes back as an event.
func Setup(mgr ctrl.Manager, o reconciler.Options, cfg Config) error {
	if o.Workers == 0 {
		o.Workers = DefaultWorkers
	}
	r := newReconciler(reconciler.NewBase(mgr, "at", o, &cnatv1alpha1.At{}), cfg)
	if err := reconciler.Complete(ctrl.NewControllerManagedBy(mgr).
		Named("at").
		For(&cnatv1alpha1.At{}).
		Owns(&corev1.Pod{}), r.Options, r); err != nil {
		return err
	}
	if cfg.OperatorConditionName == "" {
		return nil
	}
	cond, err := operatorCondition(mgr, types.NamespacedName{Namespace: cfg.OperatorNamespace, Name: cfg.OperatorConditionName})
	if err != nil {
		return err
	}
	return setupUpgradeable(mgr, r.Options, cond, r.startDeadline)
}

// operatorCondition is the Upgradeable condition of the OperatorCondition key, read and written with an
// uncached client (one object: no informer, no list/watch permission needed; OLM grants the operator
// get/update/patch on it). operator-lib's InClusterFactory would find the key itself, from the environment and
// the service account's namespace file; the manager reads its configuration once, in cmd/main.go, so the key
// comes from there.
func operatorCondition(mgr ctrl.Manager, key types.NamespacedName) (conditions.Condition, error) {
	if key.Namespace == "" {
		return nil, fmt.Errorf("OperatorCondition %q: the operator's namespace is unknown (POD_NAMESPACE)", key.Name)
	}
	scheme := runtime.NewScheme()
	if err := apiv2.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("OperatorCondition scheme: %w", err)
	}
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("OperatorCondition client: %w", err)
	}
	return newOperatorCondition(c, key, apiv2.ConditionType(apiv2.Upgradeable)), nil
}
