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
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/operator101/operator101/api/conditions"
)

func TestIngress(t *testing.T) {
	owner := metav1ac.OwnerReference().WithName("shop").WithUID("u")
	cases := []struct {
		name      string
		spec      Spec
		wantPath  string
		wantClass bool
		wantTLS   bool
		wantURL   string
	}{
		{"plain, default path and class", Spec{Host: "shop.example"}, "/", false, false, "http://shop.example/"},
		{"class, TLS and a path", Spec{Host: "shop.example", Path: "/app", ClassName: "web", TLSSecretName: "tls"}, "/app", true, true, "https://shop.example/app"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(Ingress("shop", "ns", map[string]string{"k": "v"}, owner, tc.spec, 8000))
			if err != nil {
				t.Fatal(err)
			}
			var ing networkingv1.Ingress
			if err := json.Unmarshal(b, &ing); err != nil {
				t.Fatal(err)
			}
			p := ing.Spec.Rules[0].HTTP.Paths[0]
			if ing.Spec.Rules[0].Host != tc.spec.Host || p.Path != tc.wantPath || *p.PathType != networkingv1.PathTypePrefix ||
				p.Backend.Service.Name != "shop" || p.Backend.Service.Port.Number != 8000 {
				t.Errorf("rule %+v", ing.Spec.Rules[0])
			}
			if (ing.Spec.IngressClassName != nil) != tc.wantClass || (len(ing.Spec.TLS) == 1) != tc.wantTLS {
				t.Errorf("class %v, TLS %+v", ing.Spec.IngressClassName, ing.Spec.TLS)
			}
			if tc.wantTLS && (ing.Spec.TLS[0].SecretName != "tls" || ing.Spec.TLS[0].Hosts[0] != "shop.example") {
				t.Errorf("TLS %+v", ing.Spec.TLS)
			}
			if len(ing.OwnerReferences) != 1 || ing.OwnerReferences[0].UID != "u" || ing.Labels["k"] != "v" {
				t.Errorf("owner references %+v, labels %v", ing.OwnerReferences, ing.Labels)
			}
			if got := URL(tc.spec); got != tc.wantURL {
				t.Errorf("URL %s, want %s", got, tc.wantURL)
			}
		})
	}
}

func TestAdmitted(t *testing.T) {
	now := metav1.Now()
	spec := Spec{Host: "shop.example", ClassName: "missing"}
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}
	conds := Admitted(nil, true, ing, spec, 3, now)
	c := meta.FindStatusCondition(conds, conditions.IngressAdmitted)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != conditions.ReasonIngressNotAdmitted || c.ObservedGeneration != 3 {
		t.Fatalf("without an address: %+v, want False, %s", c, conditions.ReasonIngressNotAdmitted)
	}
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{Hostname: "lb.example"}}
	conds = Admitted(conds, true, ing, spec, 3, now)
	if c := meta.FindStatusCondition(conds, conditions.IngressAdmitted); c == nil || c.Status != metav1.ConditionTrue ||
		c.Reason != conditions.ReasonIngressAdmitted {
		t.Fatalf("with an address: %+v, want True", c)
	}
	if conds = Admitted(conds, false, nil, Spec{}, 4, now); meta.FindStatusCondition(conds, conditions.IngressAdmitted) != nil {
		t.Errorf("no Ingress asked, the condition stays: %+v", conds)
	}
}
