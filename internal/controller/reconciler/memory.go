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

package reconciler

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator101/operator101/internal/controller/apply"
	"github.com/operator101/operator101/internal/controller/digest"
	"github.com/operator101/operator101/internal/controller/report"
)

// Memory is everything the controllers of one manager remember between reconciles: the digests the cache
// transforms and the applies share (Applied, keyed by Keys), and the statuses Report wrote (report.Statuses).
// The manager's maker builds one with NewMemory, before the cache whose transforms record into it, and passes
// it to every controller in Options. What it remembers of an object goes once the cache has moved past that
// object or it is deleted: Hook puts that handler on the informer of every kind registered with it, the kinds
// whose status a controller reports (NewBase) and those a cache transform of Applied was made for.
type Memory struct {
	keys     *digest.Keyed
	Applied  *apply.Memory
	statuses *report.Statuses

	mu       sync.Mutex
	reported map[reflect.Type]client.Object
}

// NewMemory returns a Memory that remembers nothing yet, with a digest key of its own.
func NewMemory() *Memory {
	keys := digest.New()
	return &Memory{keys: keys, Applied: apply.NewMemory(keys), statuses: report.NewStatuses(),
		reported: map[reflect.Type]client.Object{}}
}

// Keys is what m's digests are keyed by: the cache transforms that seal what they keep take it
// (cachetrim.Metadata).
func (m *Memory) Keys() *digest.Keyed { return m.keys }

// reports registers the kind of obj as one whose status a controller writes.
func (m *Memory) reports(obj client.Object) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reported[reflect.TypeOf(obj)] = obj
}

// Hook puts m's handler (Handler) on the informer, in c, of every kind registered with m: call it once, after
// every controller's Setup.
func (m *Memory) Hook(ctx context.Context, c cache.Informers) error {
	kinds := map[reflect.Type]client.Object{}
	for _, obj := range m.Applied.Kinds() {
		kinds[reflect.TypeOf(obj)] = obj
	}
	m.mu.Lock()
	for t, obj := range m.reported {
		kinds[t] = obj
	}
	m.mu.Unlock()
	for _, obj := range kinds {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("the informer of %T: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(m.Handler()); err != nil {
			return fmt.Errorf("the informer of %T: %w", obj, err)
		}
	}
	return nil
}

// Handler is the informer handler that drops what m remembers of an object once the cache holds a newer
// version of it (the statuses Report wrote) or the object is deleted (those and the digests of Applied).
func (m *Memory) Handler() toolscache.ResourceEventHandlerFuncs {
	object := func(obj any) (metav1.Object, bool) {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		o, ok := obj.(metav1.Object)
		return o, ok
	}
	seen := func(obj any) {
		if o, ok := object(obj); ok {
			m.statuses.Seen(o)
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    seen,
		UpdateFunc: func(_, obj any) { seen(obj) },
		DeleteFunc: func(obj any) {
			if o, ok := object(obj); ok {
				m.statuses.Forget(o)
				m.Applied.Forget(o.GetUID())
			}
		},
	}
}
