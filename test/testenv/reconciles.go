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

package testenv

import (
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Reconciles counts the finished reconciles of each object of one manager. Wire Add to a controller's
// "reconciled" hook, so a test can wait for "reconciled again" instead of sleeping.
type Reconciles struct {
	mu sync.Mutex
	n  map[types.NamespacedName]int
}

// NewReconciles returns an empty count.
func NewReconciles() *Reconciles { return &Reconciles{n: map[types.NamespacedName]int{}} }

// Add counts one finished reconcile of req.
func (r *Reconciles) Add(req ctrl.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n[req.NamespacedName]++
}

// Get is the number of finished reconciles of key so far.
func (r *Reconciles) Get(key types.NamespacedName) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[key]
}

// WaitQuiet waits, up to within, until writes have stopped: poke makes the controller reconcile key, and
// counter does not move across that reconcile.
func WaitQuiet(t testing.TB, rec *Reconciles, key types.NamespacedName, counter *Counter, poke func(), within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		writes, n := counter.Total(), rec.Get(key)
		poke()
		for rec.Get(key) <= n {
			if time.Now().After(deadline) {
				t.Fatalf("%s was not reconciled again within %s", key, within)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if counter.Total() == writes {
			return
		}
	}
	t.Fatalf("writes did not stop within %s: %s", within, counter)
}
