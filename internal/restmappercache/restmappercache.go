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

// Package restmappercache remembers the REST mappings a manager's clients ask for.
//
// controller-runtime's metadata client asks its RESTMapper for the mapping of an object's kind on every request,
// and the dynamic mapper answers by walking a priority list of every API group the server serves, allocating a
// no-match error for each group it passes: in the bench, a quarter of everything the manager allocated
// (docs/contributing/performance.md). A kind's resource and scope do not change while the kind is served (a
// CustomResourceDefinition's plural and scope cannot change), so a mapping found once is kept; an error is not,
// so a kind installed later is still found. Its own code because neither client-go nor controller-runtime
// offers a mapper that remembers its answers.
package restmappercache

import (
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Mapper is a RESTMapper that answers RESTMapping from memory once it has found a mapping; every other
// question goes to the mapper it wraps.
type Mapper struct {
	meta.RESTMapper

	mu    sync.RWMutex
	found map[key]meta.RESTMapping
}

type key struct {
	kind     schema.GroupKind
	versions string
}

// New wraps m.
func New(m meta.RESTMapper) *Mapper {
	return &Mapper{RESTMapper: m, found: map[key]meta.RESTMapping{}}
}

// Provider is a manager's MapperProvider: controller-runtime's dynamic mapper, wrapped.
func Provider(c *rest.Config, httpClient *http.Client) (meta.RESTMapper, error) {
	m, err := apiutil.NewDynamicRESTMapper(c, httpClient)
	if err != nil {
		return nil, err
	}
	return New(m), nil
}

// RESTMapping is the wrapped mapper's answer for gk in versions, remembered when it is one. Each caller gets its
// own copy.
func (m *Mapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	k := key{kind: gk, versions: strings.Join(versions, ",")}
	m.mu.RLock()
	found, ok := m.found[k]
	m.mu.RUnlock()
	if ok {
		return &found, nil
	}
	mapping, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.found[k] = *mapping
	m.mu.Unlock()
	return mapping, nil
}
