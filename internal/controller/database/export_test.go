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

package database

import (
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/operator101/operator101/internal/controller/reconciler"
)

// NewReconciler is a Database reconciler on c (its cache and its reader both), for tests that call Reconcile
// themselves, without a manager.
func NewReconciler(c client.Client, events recorder.EventRecorder, cfg Config) (reconcile.Reconciler, error) {
	if err := cfg.complete(); err != nil {
		return nil, err
	}
	return &Reconciler{Base: reconciler.Base{Client: c, Recorder: events,
		Options: reconciler.Options{Workers: 1, Clock: clock.RealClock{}, Reader: c, Memory: reconciler.NewMemory()}}, cfg: cfg}, nil
}
