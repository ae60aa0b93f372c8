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

// Package descriptors is operator101's spec-descriptors scorecard test: every spec field an alm-examples
// object sets has a spec descriptor in the CSV's owned CRD of that object's group, version and kind, as
// scorecard's olm-spec-descriptors asks. It replaces olm-spec-descriptors, which finds an example's CRD by kind
// alone (operator-sdk v1.33, operator-framework/operator-sdk#6781): with two kinds named AppService, it checks
// seed 004's example (replicas) against app.example.com's descriptors (size) and always fails.
package descriptors

import (
	"fmt"
	"sort"
	"strings"

	scapiv1alpha3 "github.com/operator-framework/api/pkg/apis/scorecard/v1alpha3"
	apimanifests "github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/operator101/operator101/test/scorecard/almready"
)

// TestName is the scorecard test's name (its entrypoint argument).
const TestName = "spec-descriptors"

// Run is the test's status for the bundle in dir (scorecard untars it at /bundle in the test's pod).
func Run(dir string) scapiv1alpha3.TestStatus {
	b, err := apimanifests.GetBundleFromDir(dir)
	if err != nil {
		return scapiv1alpha3.TestStatus{Results: []scapiv1alpha3.TestResult{{Name: TestName,
			State: scapiv1alpha3.ErrorState, Errors: []string{fmt.Sprintf("loading the bundle: %v", err)}}}}
	}
	return scapiv1alpha3.TestStatus{Results: []scapiv1alpha3.TestResult{Check(b.CSV)}}
}

// Check is the test's result for csv.
func Check(csv *v1alpha1.ClusterServiceVersion) scapiv1alpha3.TestResult {
	r := scapiv1alpha3.TestResult{Name: TestName, State: scapiv1alpha3.PassState, Errors: []string{}, Suggestions: []string{}}
	fail := func(suggestion, format string, args ...any) {
		r.State = scapiv1alpha3.FailState
		r.Errors = append(r.Errors, fmt.Sprintf(format, args...))
		if suggestion != "" {
			r.Suggestions = append(r.Suggestions, suggestion)
		}
	}
	examples, err := almready.ExamplesOf(csv)
	if err != nil {
		r.State = scapiv1alpha3.ErrorState
		r.Errors = append(r.Errors, err.Error())
		return r
	}
	r.Log = fmt.Sprintf("Loaded ClusterServiceVersion: %s\nLoaded %d Custom Resources from alm-examples\n", csv.GetName(), len(examples))
	for _, ex := range examples {
		gvk := ex.GroupVersionKind()
		what := fmt.Sprintf("%s %s %q", ex.GetAPIVersion(), gvk.Kind, ex.GetName())
		crd := owned(csv, gvk)
		if crd == nil {
			fail("", "%s: the CSV owns no CRD of that group, version and kind", what)
			continue
		}
		spec, ok := ex.Object["spec"].(map[string]any)
		if !ok {
			fail("", "%s: no spec", what)
			continue
		}
		paths := map[string]bool{}
		for _, d := range crd.SpecDescriptors {
			paths[d.Path] = true
		}
		fields := make([]string, 0, len(spec))
		for field := range spec {
			fields = append(fields, field)
		}
		sort.Strings(fields)
		for _, field := range fields {
			if !paths[field] {
				fail(fmt.Sprintf("add a spec descriptor for %s to %s (a +operator-sdk:csv:customresourcedefinitions marker)", field, crd.Name),
					"%s: spec.%s does not have a spec descriptor in %s", what, field, crd.Name)
			}
		}
	}
	return r
}

// owned is the CSV's owned CRD of gvk; the CRD's name is <plural>.<group>.
func owned(csv *v1alpha1.ClusterServiceVersion, gvk schema.GroupVersionKind) *v1alpha1.CRDDescription {
	for i, d := range csv.Spec.CustomResourceDefinitions.Owned {
		_, group, _ := strings.Cut(d.Name, ".")
		if d.Kind == gvk.Kind && d.Version == gvk.Version && group == gvk.Group {
			return &csv.Spec.CustomResourceDefinitions.Owned[i]
		}
	}
	return nil
}
