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

package apply

import (
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator101/operator101/internal/controller/cachetrim"
	"github.com/operator101/operator101/internal/controller/digest"
)

// Memory is what applying children remembers between reconciles, shared by the manager's cache transforms
// (ChildForCache, OwnerForCache) and the reconcilers (Child, IfChanged, CachedConverged): one per manager,
// made before its cache. It remembers, by UID, the last digest the cache transforms took of each child that has
// a generation (a Deployment) and of each owner, under a key of everything else that digest depends on
// (specKey), so that an event that changed none of it costs no extraction from managedFields, the most
// expensive step of the transform: a Deployment's status, which its controller writes several times per
// rollout. apply remembers the digest of what it applied under the key of the object the API server answered
// with (rememberApplied), so the watch event of operator101's own write costs none either; OwnerForCache
// remembers the digests of an owner's children the same way, so that its status writes cost no build. Entries
// go when the informer sees the object deleted (Forget, on the informer of every kind in Kinds). Its own code
// because no library keeps such a memo for a cache transform.
type Memory struct {
	keys     *digest.Keyed
	digests  *digest.Memo
	applying *inFlight
	strings  *cachetrim.Interner

	mu    sync.Mutex
	kinds map[reflect.Type]client.Object
}

// NewMemory returns an empty Memory whose digests are keyed by keys.
func NewMemory(keys *digest.Keyed) *Memory {
	return &Memory{keys: keys, digests: digest.NewMemo(), applying: &inFlight{m: map[string]int{}},
		strings: cachetrim.NewInterner(), kinds: map[reflect.Type]client.Object{}}
}

// Strings is the Interner the cache's copies share their strings through (the transforms of MyWebs and
// AppServices, which keep their conditions with it).
func (m *Memory) Strings() *cachetrim.Interner { return m.strings }

// Keys is what m's digests are keyed by.
func (m *Memory) Keys() *digest.Keyed { return m.keys }

// Forget drops what m remembers of the object of uid: it is deleted.
func (m *Memory) Forget(uid types.UID) { m.digests.Forget(uid) }

// Kinds is an object of each kind a cache transform of m was made for (ChildForCache, OwnerForCache): the
// informers whose deletions m must hear of (Forget).
func (m *Memory) Kinds() []client.Object {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]client.Object, 0, len(m.kinds))
	for _, o := range m.kinds {
		out = append(out, o)
	}
	return out
}

// rememberKind records O among m's Kinds.
func rememberKind[O client.Object](m *Memory) {
	t := reflect.TypeFor[O]()
	if t.Kind() != reflect.Pointer {
		return
	}
	obj, ok := reflect.New(t.Elem()).Interface().(client.Object)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.kinds[t] = obj
}
