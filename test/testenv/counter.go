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
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// Counter counts the write requests (POST, PUT, PATCH, DELETE) a client sends to the API server, by verb and
// resource, as the API server sees them on the wire, and apart from them the GETs of one object by name (not
// lists, not watches: what the cache does).
type Counter struct {
	mu     sync.Mutex
	counts map[string]int
	gets   map[string]int
	// only, when set, is what is counted.
	only *Scope
}

// Scope is what a Counter counts (Only): the requests of objects in Namespaces, and of the cluster-scoped
// Objects, each named "resource/name" (databasetargets/default).
type Scope struct {
	Namespaces, Objects []string
}

// Only counts, from now on, only the requests within s: a test of one tenant's objects is not told of what the
// manager does for the objects other tests left behind (envtest runs no namespace controller, so a deleted
// namespace keeps its objects, and a new manager reconciles them) or for those still converging beside them.
func (c *Counter) Only(s Scope) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.only = &s
}

// counted tells whether a request of path is counted (Only).
func (c *Counter) counted(path string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.only == nil {
		return true
	}
	if ns, ok := namespaceOf(path); ok {
		return slices.Contains(c.only.Namespaces, ns)
	}
	parts, _ := resourceParts(path)
	return len(parts) >= 2 && slices.Contains(c.only.Objects, parts[0]+"/"+parts[1])
}

// Counting returns a copy of cfg whose requests are counted by the returned Counter.
func Counting(cfg *rest.Config) (*rest.Config, *Counter) {
	c := &Counter{counts: map[string]int{}, gets: map[string]int{}}
	out := rest.CopyConfig(cfg)
	prev := out.WrapTransport
	out.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if prev != nil {
			rt = prev(rt)
		}
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if !c.counted(r.URL.Path) {
				return rt.RoundTrip(r)
			}
			switch r.Method {
			case http.MethodGet:
				if namesOneObject(r.URL.Path) {
					c.addGet("GET " + resourceOf(r.URL.Path))
				}
			case http.MethodHead, http.MethodOptions:
			default:
				c.add(r.Method + " " + resourceOf(r.URL.Path))
			}
			return rt.RoundTrip(r)
		})
	}
	return out, c
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// resourceOf names the resource (and subresource) of an API path:
// /apis/apps/v1/namespaces/ns/deployments/x/status -> deployments/status.
func resourceOf(path string) string {
	parts, _ := resourceParts(path)
	switch len(parts) {
	case 0:
		return path
	case 1, 2:
		return parts[0]
	default:
		return parts[0] + "/" + parts[2]
	}
}

// namesOneObject tells whether an API path names one object (or a subresource of it), not a collection.
func namesOneObject(path string) bool {
	parts, api := resourceParts(path)
	return api && len(parts) >= 2
}

// resourceParts is an API path from the resource on: /apis/apps/v1/namespaces/ns/deployments/x/status ->
// deployments, x, status; api is false for a path outside /api and /apis (discovery, openapi, health).
func resourceParts(path string) (parts []string, api bool) {
	parts, _, api = apiPath(path)
	return parts, api
}

// namespaceOf is the namespace an API path is in: /api/v1/namespaces/ns/pods/x -> ns; ok is false for a
// cluster-scoped object or collection (a Namespace itself included) and for a path outside /api and /apis.
func namespaceOf(path string) (ns string, ok bool) {
	_, ns, _ = apiPath(path)
	return ns, ns != ""
}

// apiPath splits an API path: /apis/apps/v1/namespaces/ns/deployments/x/status -> (deployments, x, status), ns.
func apiPath(path string) (parts []string, ns string, api bool) {
	parts = strings.Split(strings.Trim(path, "/"), "/")
	// Drop the prefix: api/v1 or apis/GROUP/VERSION.
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts, api = parts[2:], true
	case len(parts) >= 3 && parts[0] == "apis":
		parts, api = parts[3:], true
	}
	if api && len(parts) > 2 && parts[0] == "namespaces" {
		parts, ns = parts[2:], parts[1]
	}
	return parts, ns, api
}

func (c *Counter) addGet(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gets[key]++
}

func (c *Counter) add(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[key]++
}

// Reset forgets every count.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts = map[string]int{}
	c.gets = map[string]int{}
}

// Gets returns the counts of GETs of one object by name, by "GET resource" (GET configmaps).
func (c *Counter) Gets() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.gets))
	for k, v := range c.gets {
		out[k] = v
	}
	return out
}

// Writes returns the counts by "VERB resource", leaving out Events and Leases (leader election) unless
// includeBookkeeping is set.
func (c *Counter) Writes(includeBookkeeping bool) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.counts {
		if !includeBookkeeping && (strings.HasSuffix(k, " events") || strings.HasSuffix(k, " leases")) {
			continue
		}
		out[k] = v
	}
	return out
}

// Total is the number of writes, without Events and Leases.
func (c *Counter) Total() int {
	n := 0
	for _, v := range c.Writes(false) {
		n += v
	}
	return n
}

// String lists the counts, sorted, for failure messages.
func (c *Counter) String() string {
	w := c.Writes(true)
	keys := make([]string, 0, len(w))
	for k := range w {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, w[k])
	}
	return strings.TrimSpace(b.String())
}
