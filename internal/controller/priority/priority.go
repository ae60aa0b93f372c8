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

// Package priority puts the reconciles that finish work already started ahead in controller-runtime's
// priority queue.
package priority

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Progress is the work-queue priority of a reconcile that finishes work already started: an object
// whose Deployment changed (its rollout went on), an At whose time came. controller-runtime's priority queue
// (on by default) takes higher priorities first and, within one, the oldest; new objects and edits come at
// priority 0, and controller-runtime gives the initial list and unchanged objects handler.LowPriority. So
// under a burst of new objects, an object whose Deployment became available gets its status at once instead
// of waiting behind every other object's first pass (docs/contributing/performance.md).
const Progress = 10

// Handler returns h with the requests it enqueues at priority p, unless h chooses one itself (as
// controller-runtime's handlers choose handler.LowPriority for an object that did not change). Outside a
// priority queue h is unchanged.
func Handler(h handler.EventHandler, p int) handler.EventHandler {
	return prioritized{h: h, p: p}
}

// OwnerAhead is what the builder's Owns enqueues for a child (its controlling owner, of owner's kind), at
// Progress: a child's change is the owner's work going on.
func OwnerAhead(mgr ctrl.Manager, owner client.Object) handler.EventHandler {
	return Handler(handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), owner,
		handler.OnlyControllerOwner()), Progress)
}

type prioritized struct {
	h handler.EventHandler
	p int
}

func (h prioritized) queue(q workqueue.TypedRateLimitingInterface[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		return atPriority{PriorityQueue: pq, p: h.p}
	}
	return q
}

func (h prioritized) Create(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.h.Create(ctx, e, h.queue(q))
}

func (h prioritized) Update(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.h.Update(ctx, e, h.queue(q))
}

func (h prioritized) Delete(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.h.Delete(ctx, e, h.queue(q))
}

func (h prioritized) Generic(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.h.Generic(ctx, e, h.queue(q))
}

// atPriority is a priority queue whose additions without a priority get p.
type atPriority struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	p int
}

func (q atPriority) Add(r reconcile.Request) { q.AddWithOpts(priorityqueue.AddOpts{}, r) }

func (q atPriority) AddWithOpts(o priorityqueue.AddOpts, rs ...reconcile.Request) {
	if o.Priority == nil {
		o.Priority = &q.p
	}
	q.PriorityQueue.AddWithOpts(o, rs...)
}
