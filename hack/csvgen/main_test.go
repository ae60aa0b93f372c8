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
  annotations:
    createdAt: "2026-01-01T00:00:00Z"
    containerImage: old
    alm-examples: '[{"apiVersion":"operator.k8s-summit.org/v1","kind":"MyWeb","spec":{"image":"nginx"}},
      {"apiVersion":"app.example.com/v1","kind":"AppService","spec":{"image":"nginx:1.7.9"}},
      {"apiVersion":"batch.schwarzeni.github.com/v1alpha1","kind":"AppService","spec":{"image":"nginx:1.7.9"}},
      {"apiVersion":"cnat.programming-kubernetes.info/v1alpha1","kind":"At","spec":{"command":"true"}}]'
spec:
  version: 0.0.1
  relatedImages: [{name: operator101, image: old}, {name: busybox, image: "docker.io/library/busybox:1.36"}]
  install:
    spec:
      deployments:
      - spec: {template: {spec: {containers: [{name: manager, image: old,
          env: [{name: WATCH_NAMESPACE}, {name: RELATED_IMAGE_BUSYBOX, value: "docker.io/library/busybox:1.36"}]}]}}}
`), &csv); err != nil {
		t.Fatal(err)
	}
	if err := Finalize(csv, "0.1.0", "reg/op:v0.1.0", []RelatedImage{{"extra", "quay.io/x/y@sha256:00"}}); err != nil {
		t.Fatal(err)
	}
	delete(mapAt(mapAt(csv, "metadata"), "annotations"), "alm-examples")
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
              - env:
                - name: WATCH_NAMESPACE
                - name: RELATED_IMAGE_BUSYBOX
                  value: docker.io/library/busybox:1.36
                image: reg/op:v0.1.0
                name: manager
  relatedImages:
  - image: reg/op:v0.1.0
    name: operator101
  - image: docker.io/library/busybox:1.36
    name: busybox
  - image: docker.io/library/nginx:latest
    name: myweb-operator
  - image: docker.io/library/nginx:1.7.9
    name: appservice-app
  - image: quay.io/x/y@sha256:00
    name: extra
  version: 0.1.0
`
	if string(out) != want {
		t.Errorf("finalized CSV:\n%s\nwant:\n%s", out, want)
	}
}

func TestQualifiedImage(t *testing.T) {
	for in, want := range map[string]string{
		"nginx":                        "docker.io/library/nginx:latest",
		"nginx:alpine":                 "docker.io/library/nginx:alpine",
		"bitnami/nginx":                "docker.io/bitnami/nginx:latest",
		"quay.io/org/app:v1":           "quay.io/org/app:v1",
		"localhost:5000/x/app":         "localhost:5000/x/app:latest",
		"localhost/app@sha256:abc":     "localhost/app@sha256:abc",
		"registry.example:5000/app:v2": "registry.example:5000/app:v2",
	} {
		if got := qualifiedImage(in); got != want {
			t.Errorf("qualifiedImage(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStamp(t *testing.T) {
	csv := map[string]any{}
	if err := Stamp(csv, "2026-11-24T01:44:47Z"); err != nil {
		t.Fatal(err)
	}
	if got := mapAt(mapAt(csv, "metadata"), "annotations")["createdAt"]; got != "2026-11-24T01:44:47Z" {
		t.Errorf("createdAt = %v", got)
	}
	for _, bad := range []string{"", "2026-11-24", "2026-11-24T01:44:47+01:00", "yesterday"} {
		if err := Stamp(map[string]any{}, bad); err == nil {
			t.Errorf("Stamp(%q) took it", bad)
		}
	}
}
