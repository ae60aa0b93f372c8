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

package main

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// -tenant-junk-kinds takes the kinds in any case, and refuses others; every kind's object carries operator101's
// label, the annotations and the forged controller reference.
func TestTenantJunkKinds(t *testing.T) {
	got, err := parseKinds("configmap, Pod,,SERVICE,Deployment")
	if want := []string{"ConfigMap", "Pod", "Service", "Deployment"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("parseKinds = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"", "Secret", "ConfigMap,Secret"} {
		if _, err := parseKinds(bad); err == nil {
			t.Errorf("parseKinds(%q) accepted", bad)
		}
	}
	owner := metav1.OwnerReference{APIVersion: "operator.k8s-summit.org/v1", Kind: "MyWeb", Name: "web", UID: "u"}
	for _, kind := range junkKinds {
		obj := junkObject(kind, "ns", 7, owner)
		if obj.GetLabels()["app.kubernetes.io/managed-by"] != "operator101" ||
			len(obj.GetAnnotations()["tenant.example/junk"]) != junkAnnotationBytes ||
			len(obj.GetOwnerReferences()) != 1 || !strings.HasSuffix(obj.GetName(), "00007") {
			t.Errorf("%s: %s labels %v, %d owner references", kind, obj.GetName(), obj.GetLabels(), len(obj.GetOwnerReferences()))
		}
	}
}
