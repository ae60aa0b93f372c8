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

package testenv

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Reconciles counts the finished reconciles of each object of one manager, so a test can wait for "reconciled
// again" instead of sleeping. It needs no hook in the operator: controller-runtime logs the end of every
// reconcile, after the reconciler returned (so after its writes), with the request's namespace and name:
// "Reconcile successful", "Reconcile done, requeueing after ..." (V(5)) or "Reconciler error". StartManager
// reads those lines from the manager's logger (Manager.Reconciles). Should a controller-runtime upgrade reword
// them, every wait on a Reconciles times out: loudly, not silently.
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

// observe returns base, counting each finished reconcile it is told of.
func (r *Reconciles) observe(base logr.Logger) logr.Logger {
	if base.GetSink() == nil {
		base = ctrl.Log
	}
	return logr.New(&reconcileSink{inner: base.GetSink(), rec: r})
}

// reconcileSink passes every line on to inner, as inner would print it, and counts the lines that end a
// reconcile. It is enabled at every level so that controller-runtime's V(5) lines reach it.
type reconcileSink struct {
	inner     logr.LogSink
	rec       *Reconciles
	namespace string
	name      string
}

func (s *reconcileSink) Init(info logr.RuntimeInfo) { s.inner.Init(info) }
func (s *reconcileSink) Enabled(int) bool           { return true }

func (s *reconcileSink) Info(level int, msg string, kv ...any) {
	if strings.HasPrefix(msg, "Reconcile successful") || strings.HasPrefix(msg, "Reconcile done") {
		s.count()
	}
	if s.inner.Enabled(level) {
		s.inner.Info(level, msg, kv...)
	}
}

func (s *reconcileSink) Error(err error, msg string, kv ...any) {
	if msg == "Reconciler error" {
		s.count()
	}
	s.inner.Error(err, msg, kv...)
}

func (s *reconcileSink) count() {
	s.rec.Add(ctrl.Request{NamespacedName: types.NamespacedName{Namespace: s.namespace, Name: s.name}})
}

func (s *reconcileSink) WithValues(kv ...any) logr.LogSink {
	c := *s
	c.inner = s.inner.WithValues(kv...)
	for i := 0; i+1 < len(kv); i += 2 {
		switch kv[i] {
		case "namespace":
			c.namespace, _ = kv[i+1].(string)
		case "name":
			c.name, _ = kv[i+1].(string)
		}
	}
	return &c
}

func (s *reconcileSink) WithName(name string) logr.LogSink {
	c := *s
	c.inner = s.inner.WithName(name)
	return &c
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
