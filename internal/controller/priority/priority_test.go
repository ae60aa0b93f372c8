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

package priority

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestPrioritized: in controller-runtime's priority queue, a request a Prioritized handler enqueues is taken
// before the new objects enqueued earlier, and one the inner handler marks low (an update that changed
// nothing) stays low.
func TestPrioritized(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("kit-test")
	defer q.ShutDown()
	ctx := context.Background()
	cm := func(name, rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
	}
	plain := &handler.EnqueueRequestForObject{}
	ahead := Handler(&handler.EnqueueRequestForObject{}, Progress)

	plain.Create(ctx, event.CreateEvent{Object: cm("new-1", "1")}, q)
	plain.Create(ctx, event.CreateEvent{Object: cm("new-2", "2")}, q)
	ahead.Update(ctx, event.UpdateEvent{ObjectOld: cm("unchanged", "3"), ObjectNew: cm("unchanged", "3")}, q)
	ahead.Update(ctx, event.UpdateEvent{ObjectOld: cm("progress", "4"), ObjectNew: cm("progress", "5")}, q)

	deadline := time.Now().Add(10 * time.Second)
	for q.Len() < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("the queue holds %d requests, want 4", q.Len())
		}
		time.Sleep(10 * time.Millisecond)
	}
	want := []struct {
		name     string
		priority int
	}{{"progress", Progress}, {"new-1", 0}, {"new-2", 0}, {"unchanged", handler.LowPriority}}
	for _, w := range want {
		req, prio, _ := q.GetWithPriority()
		if req.Name != w.name || prio != w.priority {
			t.Errorf("next request: %s at priority %d, want %s at %d", req.Name, prio, w.name, w.priority)
		}
		q.Done(req)
	}
}
