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

package restmappercache

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// counting counts the RESTMapping questions that reach the mapper it wraps.
type counting struct {
	meta.RESTMapper
	asked int
}

func (c *counting) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.asked++
	return c.RESTMapper.RESTMapping(gk, versions...)
}

// TestRemembersWhatItFound: a mapping found once is answered from memory, per kind and versions asked; an
// error is not remembered, so a kind the server starts to serve later is found; a caller that changes its
// answer changes nobody else's.
func TestRemembersWhatItFound(t *testing.T) {
	apps := schema.GroupVersion{Group: "apps", Version: "v1"}
	cnat := schema.GroupVersion{Group: "cnat.programming-kubernetes.info", Version: "v1alpha1"}
	served := meta.NewDefaultRESTMapper([]schema.GroupVersion{apps, cnat})
	served.Add(apps.WithKind("Deployment"), meta.RESTScopeNamespace)
	inner := &counting{RESTMapper: served}
	m := New(inner)
	deployment := schema.GroupKind{Group: "apps", Kind: "Deployment"}

	for range 3 {
		got, err := m.RESTMapping(deployment, "v1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Resource != apps.WithResource("deployments") || got.Scope.Name() != meta.RESTScopeNameNamespace {
			t.Fatalf("mapping %+v", got)
		}
		got.Resource.Resource = "changed by a caller"
	}
	if inner.asked != 1 {
		t.Errorf("the wrapped mapper was asked %d times for one kind, want 1", inner.asked)
	}
	if _, err := m.RESTMapping(deployment); err != nil {
		t.Fatal(err)
	}
	if inner.asked != 2 {
		t.Errorf("asked without a version: the wrapped mapper was asked %d times in all, want 2", inner.asked)
	}

	at := schema.GroupKind{Group: cnat.Group, Kind: "At"}
	if _, err := m.RESTMapping(at, "v1alpha1"); !meta.IsNoMatchError(err) {
		t.Fatalf("a kind not served: error %v, want no match", err)
	}
	served.Add(cnat.WithKind("At"), meta.RESTScopeNamespace)
	got, err := m.RESTMapping(at, "v1alpha1")
	if err != nil {
		t.Fatalf("a kind served since the last question: %v", err)
	}
	if got.Resource != cnat.WithResource("ats") {
		t.Errorf("mapping %+v", got)
	}
}
