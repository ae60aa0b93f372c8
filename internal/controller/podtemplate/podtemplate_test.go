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

package podtemplate

import (
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"
)

// roundTrip decodes what ac encodes to into into, as the API server reads an apply.
func roundTrip(t *testing.T, ac, into any) {
	t.Helper()
	b, err := json.Marshal(ac)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatal(err)
	}
}

// A tenant's probe reaches the container as written, whatever its handler, and replaces the default.
func TestProbeIsTheTenants(t *testing.T) {
	probes := map[string]*corev1.Probe{
		"http": {ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080),
			Host: "localhost", Scheme: corev1.URISchemeHTTPS, HTTPHeaders: []corev1.HTTPHeader{{Name: "X-Probe", Value: "1"}}}},
			InitialDelaySeconds: 3, TimeoutSeconds: 2, PeriodSeconds: 7, SuccessThreshold: 1, FailureThreshold: 9,
			TerminationGracePeriodSeconds: ptr.To[int64](30)},
		"tcp":  {ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("db"), Host: "h"}}},
		"exec": {ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/ok"}}}, PeriodSeconds: 1},
		"grpc": {ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9000, Service: ptr.To("health")}}},
	}
	for name, p := range probes {
		t.Run(name, func(t *testing.T) {
			var got corev1.Probe
			roundTrip(t, Probe(p, HTTPReadiness("/", "http")), &got)
			if !equality.Semantic.DeepEqual(&got, p) {
				t.Errorf("probe %+v, want the tenant's %+v", got, *p)
			}
		})
	}
	if Probe(nil, nil) != nil {
		t.Error("no probe and no default gave a probe")
	}
	var def corev1.Probe
	roundTrip(t, Probe(nil, TCPReadiness(5432)), &def)
	if def.TCPSocket == nil || def.TCPSocket.Port != intstr.FromInt32(5432) || def.PeriodSeconds != readinessPeriod {
		t.Errorf("default probe %+v, want a TCP check of 5432", def)
	}
}

func TestStrategy(t *testing.T) {
	quarter, one := intstr.FromString("25%"), intstr.FromInt32(1)
	rolling := func(unavailable, surge intstr.IntOrString) appsv1.DeploymentStrategy {
		return appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &unavailable, MaxSurge: &surge}}
	}
	cases := []struct {
		name string
		in   *appsv1.DeploymentStrategy
		want appsv1.DeploymentStrategy
	}{
		{"unset: the API server's default, owned", nil, rolling(quarter, quarter)},
		{"no type", &appsv1.DeploymentStrategy{}, rolling(quarter, quarter)},
		{"recreate", &appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}, appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}},
		{"rolling, surge only", &appsv1.DeploymentStrategy{RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &one}}, rolling(quarter, one)},
		{"rolling, both", ptr.To(rolling(one, quarter)), rolling(one, quarter)},
	}
	for _, tc := range cases {
		var got appsv1.DeploymentStrategy
		roundTrip(t, Strategy(tc.in), &got)
		if !equality.Semantic.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestResources(t *testing.T) {
	if Resources(corev1.ResourceRequirements{}) != nil {
		t.Error("no resources gave some")
	}
	r := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}
	var got corev1.ResourceRequirements
	roundTrip(t, Resources(r), &got)
	if !equality.Semantic.DeepEqual(got, r) {
		t.Errorf("%+v, want %+v", got, r)
	}
}

func TestDisruptionBudget(t *testing.T) {
	labels := map[string]string{"app.kubernetes.io/instance": "w"}
	for _, n := range []int32{0, 1} {
		if b := DisruptionBudget("w", "ns", labels, nil, n); b != nil {
			t.Errorf("%d replicas gave a budget: %+v", n, b)
		}
	}
	var pdb policyv1.PodDisruptionBudget
	roundTrip(t, DisruptionBudget("w", "ns", labels, metav1ac.OwnerReference().WithName("w").WithUID("u"), 2), &pdb)
	if pdb.Name != "w" || pdb.Namespace != "ns" || pdb.Spec.MaxUnavailable == nil || *pdb.Spec.MaxUnavailable != intstr.FromInt32(1) ||
		pdb.Spec.MinAvailable != nil || !equality.Semantic.DeepEqual(pdb.Spec.Selector.MatchLabels, labels) ||
		pdb.Spec.UnhealthyPodEvictionPolicy == nil || *pdb.Spec.UnhealthyPodEvictionPolicy != policyv1.AlwaysAllow ||
		len(pdb.OwnerReferences) != 1 || pdb.OwnerReferences[0].UID != "u" {
		t.Errorf("budget %+v, want one pod unavailable at most, of the pods labelled %v, unhealthy ones always evictable", pdb, labels)
	}
}
