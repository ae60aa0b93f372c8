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

package route

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/operator101/operator101/api/conditions"
)

func TestHTTPRoute(t *testing.T) {
	owner := metav1ac.OwnerReference().WithName("shop").WithUID("u")
	spec := RouteSpec{Parents: []Parent{{Name: "public"}, {Name: "edge", Namespace: "infra", SectionName: "https"}},
		Hostnames: []string{"shop.example", "www.shop.example"}}
	b, err := json.Marshal(HTTPRoute("shop", "ns", map[string]string{"k": "v"}, owner, spec, 8000))
	if err != nil {
		t.Fatal(err)
	}
	var hr gatewayv1.HTTPRoute
	if err := json.Unmarshal(b, &hr); err != nil {
		t.Fatal(err)
	}
	if hr.APIVersion != "gateway.networking.k8s.io/v1" || hr.Kind != "HTTPRoute" || hr.Name != "shop" || hr.Namespace != "ns" {
		t.Errorf("identity %s %s %s/%s", hr.APIVersion, hr.Kind, hr.Namespace, hr.Name)
	}
	refs := hr.Spec.ParentRefs
	if len(refs) != 2 || refs[0].Name != "public" || refs[0].Namespace != nil || refs[0].SectionName != nil ||
		*refs[0].Group != "gateway.networking.k8s.io" || *refs[0].Kind != "Gateway" ||
		refs[1].Name != "edge" || *refs[1].Namespace != "infra" || *refs[1].SectionName != "https" {
		t.Errorf("parentRefs %+v", refs)
	}
	if len(hr.Spec.Hostnames) != 2 || hr.Spec.Hostnames[0] != "shop.example" || hr.Spec.Hostnames[1] != "www.shop.example" {
		t.Errorf("hostnames %v", hr.Spec.Hostnames)
	}
	if len(hr.Spec.Rules) != 1 || len(hr.Spec.Rules[0].Matches) != 1 || len(hr.Spec.Rules[0].BackendRefs) != 1 {
		t.Fatalf("rules %+v", hr.Spec.Rules)
	}
	path := hr.Spec.Rules[0].Matches[0].Path
	if path == nil || *path.Type != gatewayv1.PathMatchPathPrefix || *path.Value != "/" {
		t.Errorf("every path: %+v", path)
	}
	be := hr.Spec.Rules[0].BackendRefs[0]
	if be.Name != "shop" || be.Port == nil || *be.Port != 8000 || *be.Kind != "Service" || *be.Group != "" || be.Namespace != nil ||
		*be.Weight != 1 {
		t.Errorf("the Service's port: %+v", be.BackendObjectReference)
	}
	if len(hr.OwnerReferences) != 1 || hr.OwnerReferences[0].UID != "u" || hr.Labels["k"] != "v" {
		t.Errorf("owner references %+v, labels %v", hr.OwnerReferences, hr.Labels)
	}
}

// parentStatus is what a Gateway's controller writes for one parent of an HTTPRoute.
func parentStatus(name, ns string, section string, status metav1.ConditionStatus, reason string, gen int64) gatewayv1.RouteParentStatus {
	ref := gatewayv1.ParentReference{Name: gatewayv1.ObjectName(name)}
	if ns != "" {
		n := gatewayv1.Namespace(ns)
		ref.Namespace = &n
	}
	if section != "" {
		s := gatewayv1.SectionName(section)
		ref.SectionName = &s
	}
	return gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: "example.com/gateway",
		Conditions: []metav1.Condition{{Type: "Accepted", Status: status, Reason: reason, Message: reason + " says the controller",
			ObservedGeneration: gen}}}
}

func TestHTTPRouteAdmitted(t *testing.T) {
	now := metav1.Now()
	spec := RouteSpec{Parents: []Parent{{Name: "public"}, {Name: "edge", Namespace: "infra", SectionName: "https"}}}
	route := func(parents ...gatewayv1.RouteParentStatus) *gatewayv1.HTTPRoute {
		hr := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "ns", Generation: 2}}
		hr.Status.Parents = parents
		return hr
	}
	cases := []struct {
		name       string
		st         HTTPRouteState
		wantStatus metav1.ConditionStatus
		wantReason string
		inMessage  string
	}{
		{"not served", HTTPRouteState{Wanted: true, Spec: spec}, metav1.ConditionFalse, conditions.ReasonHTTPRouteNotServed, RestartHint},
		{"no route yet", HTTPRouteState{Wanted: true, Served: true, Spec: spec}, metav1.ConditionUnknown, conditions.ReasonHTTPRoutePending, "does not exist yet"},
		{"no parent answered", HTTPRouteState{Wanted: true, Served: true, Spec: spec, Route: route()}, metav1.ConditionUnknown,
			conditions.ReasonHTTPRoutePending, "Gateway ns/public, Gateway infra/edge (listener https)"},
		{"one of two accepted", HTTPRouteState{Wanted: true, Served: true, Spec: spec,
			Route: route(parentStatus("public", "", "", metav1.ConditionTrue, "Accepted", 2))}, metav1.ConditionUnknown,
			conditions.ReasonHTTPRoutePending, "Gateway infra/edge (listener https)"},
		{"an answer about an older generation", HTTPRouteState{Wanted: true, Served: true, Spec: spec,
			Route: route(parentStatus("public", "", "", metav1.ConditionTrue, "Accepted", 1),
				parentStatus("edge", "infra", "https", metav1.ConditionTrue, "Accepted", 2))}, metav1.ConditionUnknown,
			conditions.ReasonHTTPRoutePending, "Gateway ns/public"},
		{"another listener's answer", HTTPRouteState{Wanted: true, Served: true, Spec: spec,
			Route: route(parentStatus("public", "ns", "", metav1.ConditionTrue, "Accepted", 2),
				parentStatus("edge", "infra", "http", metav1.ConditionTrue, "Accepted", 2))}, metav1.ConditionUnknown,
			conditions.ReasonHTTPRoutePending, "Gateway infra/edge (listener https)"},
		{"one refused", HTTPRouteState{Wanted: true, Served: true, Spec: spec,
			Route: route(parentStatus("public", "", "", metav1.ConditionTrue, "Accepted", 2),
				parentStatus("edge", "infra", "https", metav1.ConditionFalse, "NotAllowedByListeners", 2))}, metav1.ConditionFalse,
			conditions.ReasonHTTPRouteNotAccepted, "Gateway infra/edge (listener https) did not accept HTTPRoute shop: NotAllowedByListeners: NotAllowedByListeners says the controller"},
		{"all accepted", HTTPRouteState{Wanted: true, Served: true, Spec: spec,
			Route: route(parentStatus("public", "", "", metav1.ConditionTrue, "Accepted", 2),
				parentStatus("edge", "infra", "https", metav1.ConditionTrue, "Accepted", 2))}, metav1.ConditionTrue,
			conditions.ReasonHTTPRouteAccepted, "accepted by Gateway ns/public, Gateway infra/edge (listener https)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conds := HTTPRouteAdmitted(nil, tc.st, 5, now)
			c := meta.FindStatusCondition(conds, conditions.HTTPRouteAdmitted)
			if c == nil || c.Status != tc.wantStatus || c.Reason != tc.wantReason || c.ObservedGeneration != 5 ||
				!strings.Contains(c.Message, tc.inMessage) {
				t.Fatalf("%+v, want %s, %s, a message with %q", c, tc.wantStatus, tc.wantReason, tc.inMessage)
			}
			if conds = HTTPRouteAdmitted(conds, HTTPRouteState{Served: true}, 6, now); meta.FindStatusCondition(conds, conditions.HTTPRouteAdmitted) != nil {
				t.Errorf("no HTTPRoute asked, the condition stays: %+v", conds)
			}
		})
	}
}

func TestDiscover(t *testing.T) {
	served := func(resources ...metav1.APIResourceList) Served {
		t.Helper()
		dc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: make([]*metav1.APIResourceList, 0, len(resources))}}
		for i := range resources {
			dc.Resources = append(dc.Resources, &resources[i])
		}
		s, err := Discover(dc)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := served(metav1.APIResourceList{GroupVersion: "gateway.networking.k8s.io/v1",
		APIResources: []metav1.APIResource{{Name: "gateways"}, {Name: "httproutes"}}}); !s.HTTPRoute {
		t.Error("httproutes served, not found")
	}
	if s := served(metav1.APIResourceList{GroupVersion: "gateway.networking.k8s.io/v1",
		APIResources: []metav1.APIResource{{Name: "gateways"}}}); s.HTTPRoute {
		t.Error("only gateways served, httproutes found")
	}
	if s := served(metav1.APIResourceList{GroupVersion: "networking.k8s.io/v1",
		APIResources: []metav1.APIResource{{Name: "ingresses"}}}); s.HTTPRoute {
		t.Error("no Gateway API, httproutes found")
	}
	if s, err := Discover(nil); err != nil || s.HTTPRoute {
		t.Errorf("no discovery: %+v, %v", s, err)
	}
}
