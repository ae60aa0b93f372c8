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

package descriptors

import (
	"path/filepath"
	"strings"
	"testing"

	scapiv1alpha3 "github.com/operator-framework/api/pkg/apis/scorecard/v1alpha3"
	apimanifests "github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The committed bundle passes, and so does every example in it: both AppService APIs included.
func TestTheBundlePasses(t *testing.T) {
	b, err := apimanifests.GetBundleFromDir(filepath.Join("..", "..", "..", "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	if r := Check(b.CSV); r.State != scapiv1alpha3.PassState || len(r.Errors) != 0 {
		t.Errorf("the bundle: %s %v", r.State, r.Errors)
	}
}

// Two owned CRDs of kind AppService: each example is checked against its own group's descriptors only, so a
// descriptor of the other group (size here, replicas there) never stands in for a missing one.
func TestMatchesByGroupAndVersion(t *testing.T) {
	csv := func(examples string, owned ...v1alpha1.CRDDescription) *v1alpha1.ClusterServiceVersion {
		c := &v1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Name: "x.v1",
			Annotations: map[string]string{"alm-examples": examples}}}
		c.Spec.CustomResourceDefinitions.Owned = owned
		return c
	}
	crd := func(name, version, kind string, paths ...string) v1alpha1.CRDDescription {
		d := v1alpha1.CRDDescription{Name: name, Version: version, Kind: kind}
		for _, p := range paths {
			d.SpecDescriptors = append(d.SpecDescriptors, v1alpha1.SpecDescriptor{Path: p})
		}
		return d
	}
	app := crd("appservices.app.example.com", "v1", "AppService", "size", "image")
	batch := crd("appservices.batch.schwarzeni.github.com", "v1alpha1", "AppService", "replicas", "image")
	const appEx = `{"apiVersion":"app.example.com/v1","kind":"AppService","metadata":{"name":"a"},"spec":{"size":1,"image":"x"}}`
	const batchEx = `{"apiVersion":"batch.schwarzeni.github.com/v1alpha1","kind":"AppService","metadata":{"name":"b"},"spec":{"replicas":1,"image":"x"}}`

	for _, tc := range []struct {
		name     string
		csv      *v1alpha1.ClusterServiceVersion
		failures []string
	}{
		{"each example against its own group, either order", csv("["+appEx+","+batchEx+"]", app, batch), nil},
		{"the other order of owned CRDs", csv("["+batchEx+","+appEx+"]", batch, app), nil},
		{"the other group's descriptor does not count",
			csv("["+batchEx+"]", app, crd("appservices.batch.schwarzeni.github.com", "v1alpha1", "AppService", "image")),
			[]string{`spec.replicas does not have a spec descriptor in appservices.batch.schwarzeni.github.com`}},
		{"no CRD of the example's group", csv("["+batchEx+"]", app),
			[]string{"owns no CRD of that group, version and kind"}},
		{"no CRD of the example's version", csv("["+batchEx+"]", app, crd("appservices.batch.schwarzeni.github.com", "v1", "AppService", "replicas", "image")),
			[]string{"owns no CRD of that group, version and kind"}},
		{"an example without spec", csv(`[{"apiVersion":"app.example.com/v1","kind":"AppService","metadata":{"name":"a"}}]`, app),
			[]string{"no spec"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(tc.csv)
			if len(tc.failures) == 0 {
				if r.State != scapiv1alpha3.PassState || len(r.Errors) != 0 {
					t.Errorf("%s %v, want a pass", r.State, r.Errors)
				}
				return
			}
			if r.State != scapiv1alpha3.FailState || len(r.Errors) != len(tc.failures) {
				t.Fatalf("%s %v, want failures %v", r.State, r.Errors, tc.failures)
			}
			for i, want := range tc.failures {
				if !strings.Contains(r.Errors[i], want) {
					t.Errorf("error %q, want it to contain %q", r.Errors[i], want)
				}
			}
		})
	}
	if r := Check(csv("not json")); r.State != scapiv1alpha3.ErrorState {
		t.Errorf("unreadable alm-examples: %s, want error", r.State)
	}
}
