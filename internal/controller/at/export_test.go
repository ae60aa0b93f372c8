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

package at

import (
	"errors"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/operator101/operator101/internal/controller/reconciler"
)

// What the tests of package cnat_test reach that the operator keeps unexported.

// NewReconciler is the At reconciler Setup registers, on a cached client the test chooses (a stale cache, say),
// without the controller around it: a status write that meets a newer object returns report.ErrStale, which the
// controller turns into a look again (reconciler.Complete). o needs its Clock and Reader.
func NewReconciler(c client.Client, rec recorder.EventRecorder, o reconciler.Options, cfg Config) reconcile.Reconciler {
	return newReconciler(reconciler.Base{Client: c, Recorder: rec, Options: o}, cfg)
}

// UpgradeableGate is the request of every reconcile of the Upgradeable gate (testenv.Reconciles counts them).
var UpgradeableGate = gateRequest.NamespacedName

// RunningAtPodIndex is the cache index the gate lists pods by.
const RunningAtPodIndex = runningAtPodIndex

// SetupGate registers the Upgradeable gate alone, for cfg's OperatorCondition, without the At controller (and
// with the default start deadline): a test that plays the At controller itself (NewReconciler) orders the At's
// steps and its pod's as it needs.
func SetupGate(mgr ctrl.Manager, o reconciler.Options, cfg Config) error {
	cond, err := operatorCondition(mgr, types.NamespacedName{Namespace: cfg.OperatorNamespace, Name: cfg.OperatorConditionName})
	if err != nil {
		return err
	}
	return setupUpgradeable(mgr, o.WithDefaults(mgr), cond, DefaultStartDeadline)
}

// IsUnknownZone tells whether err is Schedule's for a time zone the operator does not know.
func IsUnknownZone(err error) bool { return errors.Is(err, errUnknownZone) }
