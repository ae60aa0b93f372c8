/*
Copyright 2026 The operator101 Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"os"
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

func TestHumanize(t *testing.T) {
	for in, want := range map[string]string{
		"readyReplicas":      "Ready Replicas",
		"observedGeneration": "Observed Generation",
		"user":               "User",
		"lastPodUID":         "Last Pod UID",
		"URLPath":            "URL Path",
	} {
		if got := humanize(in); got != want {
			t.Errorf("humanize(%q) = %q, want %q", in, got, want)
		}
	}
}

func schema(t *testing.T, y string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	s := &apiextensionsv1.JSONSchemaProps{}
	if err := yaml.Unmarshal([]byte(y), s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDescriptors(t *testing.T) {
	spec := schema(t, `
type: object
properties:
  replicas: {type: integer}
  image: {type: string}
  policy: {type: string, enum: [Delete, Skip]}
  enabled: {type: boolean}
  resources: {type: object, properties: {limits: {type: object}}}
  password: {type: object, properties: {name: {type: string}, key: {type: string}}}
  ports: {type: array, items: {type: object, properties: {port: {type: integer}}}}
`)
	got := map[string][]string{}
	for _, d := range Descriptors(spec, specField) {
		got[d.Path] = d.XDescriptors
	}
	want := map[string][]string{
		"replicas":      {ui + "podCount"},
		"image":         {ui + "text"},
		"policy":        {ui + "select:Delete", ui + "select:Skip"},
		"enabled":       {ui + "booleanSwitch"},
		"resources":     {ui + "resourceRequirements"},
		"password":      {ui + "fieldGroup:password"},
		"password.name": {ui + "fieldGroup:password", "urn:alm:descriptor:io.kubernetes:Secret"},
		"password.key":  {ui + "fieldGroup:password", ui + "text"},
		"ports":         {ui + "arrayFieldGroup:ports"},
		"ports[0].port": {ui + "arrayFieldGroup:ports", ui + "number"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("spec descriptors:\n got %v\nwant %v", got, want)
	}

	status := schema(t, `
type: object
properties:
  conditions: {type: array, items: {type: object, properties: {type: {type: string}}}}
  phase: {type: string}
  url: {type: string}
  readyReplicas: {type: integer}
  startTime: {type: string, format: date-time}
  message: {type: string}
`)
	got = map[string][]string{}
	for _, d := range Descriptors(status, statusField) {
		got[d.Path] = d.XDescriptors
	}
	want = map[string][]string{
		"conditions":    {"urn:alm:descriptor:io.kubernetes.conditions"},
		"phase":         {"urn:alm:descriptor:io.kubernetes.phase"},
		"url":           {"urn:alm:descriptor:org.w3:link"},
		"readyReplicas": {"urn:alm:descriptor:com.tectonic.ui:podCount"},
		"startTime":     {"urn:alm:descriptor:timestamp"},
		"message":       {"urn:alm:descriptor:text"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("status descriptors:\n got %v\nwant %v", got, want)
	}
}

func TestFinalize(t *testing.T) {
	csv := map[string]any{}
	if err := yaml.Unmarshal([]byte(`
metadata:
  name: operator101.v0.0.1
  annotations: {createdAt: "2026-01-01T00:00:00Z", containerImage: old}
spec:
  version: 0.0.1
  relatedImages: [{name: operator101, image: old}, {name: busybox, image: busybox:1}]
  install:
    spec:
      deployments:
      - spec: {template: {spec: {containers: [{name: manager, image: old}]}}}
`), &csv); err != nil {
		t.Fatal(err)
	}
	if err := Finalize(csv, "0.1.0", "reg/op:v0.1.0", nil); err != nil {
		t.Fatal(err)
	}
	out, _ := yaml.Marshal(csv)
	want := `metadata:
  annotations:
    containerImage: reg/op:v0.1.0
  name: operator101.v0.1.0
spec:
  install:
    spec:
      deployments:
      - spec:
          template:
            spec:
              containers:
              - image: reg/op:v0.1.0
                name: manager
  relatedImages:
  - image: reg/op:v0.1.0
    name: operator101
  - image: busybox:1
    name: busybox
  version: 0.1.0
`
	if string(out) != want {
		t.Errorf("finalized CSV:\n%s\nwant:\n%s", out, want)
	}
}

func TestUpgradeEdge(t *testing.T) {
	for _, tc := range []struct {
		csv  string
		want Edge
	}{
		{"operator101.v0.1.0", Edge{}},
		{"operator101.v0.2.0", Edge{Replaces: "operator101.v0.1.0", SkipRange: ">=0.1.0 <0.2.0"}},
		{"operator101.v9.9.9", Edge{}},
	} {
		got, err := UpgradeEdge("../../config/catalog/operator101.yaml", tc.csv)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s: edge %+v, want %+v", tc.csv, got, tc.want)
		}
		csv := map[string]any{"spec": map[string]any{"replaces": "stale"}, "metadata": map[string]any{}}
		SetUpgradeEdge(csv, got)
		if r, ok := csv["spec"].(map[string]any)["replaces"]; (tc.want.Replaces == "") == ok || (ok && r != tc.want.Replaces) {
			t.Errorf("%s: spec.replaces %v", tc.csv, r)
		}
	}
	bad := t.TempDir() + "/catalog.yaml"
	if err := os.WriteFile(bad, []byte("schema: olm.channel\nname: a\nentries:\n- name: x.v2\n  replaces: x.v1\n---\n"+
		"schema: olm.channel\nname: b\nentries:\n- name: x.v2\n  replaces: x.v0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := UpgradeEdge(bad, "x.v2"); err == nil {
		t.Error("channels that disagree were accepted")
	}
}
