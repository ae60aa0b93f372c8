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
	"testing"

	"sigs.k8s.io/yaml"
)

func TestAddRelatedImages(t *testing.T) {
	csv := map[string]any{}
	// What operator-sdk generate bundle writes: relatedImages from the RELATED_IMAGE_ variables only.
	if err := yaml.Unmarshal([]byte(`
metadata:
  annotations:
    alm-examples: '[{"apiVersion":"operator.k8s-summit.org/v1","kind":"MyWeb","spec":{"image":"nginx"}},
      {"apiVersion":"app.example.com/v1","kind":"AppService","spec":{"image":"nginx:1.7.9"}},
      {"apiVersion":"batch.schwarzeni.github.com/v1alpha1","kind":"AppService","spec":{"image":"nginx:1.7.9"}},
      {"apiVersion":"cnat.programming-kubernetes.info/v1alpha1","kind":"At","spec":{"command":"true"}}]'
spec:
  relatedImages: [{name: busybox, image: "docker.io/library/busybox:1.36"}]
  install:
    spec:
      deployments:
      - spec: {template: {spec: {containers: [{name: manager, image: "reg/op:v0.1.0",
          env: [{name: RELATED_IMAGE_BUSYBOX, value: "docker.io/library/busybox:1.36"}]}]}}}
`), &csv); err != nil {
		t.Fatal(err)
	}
	if err := AddRelatedImages(csv, []RelatedImage{{"extra", "quay.io/x/y@sha256:00"}, {"dup", "reg/op:v0.1.0"}}); err != nil {
		t.Fatal(err)
	}
	out, _ := yaml.Marshal(mapAt(csv, "spec")["relatedImages"])
	want := `- image: reg/op:v0.1.0
  name: operator101
- image: docker.io/library/busybox:1.36
  name: busybox
- image: docker.io/library/nginx:latest
  name: myweb-operator
- image: docker.io/library/nginx:1.7.9
  name: appservice-app
- image: quay.io/x/y@sha256:00
  name: extra
`
	if string(out) != want {
		t.Errorf("relatedImages:\n%s\nwant:\n%s", out, want)
	}
	if err := AddRelatedImages(map[string]any{}, nil); err == nil {
		t.Error("a CSV without a manager container was accepted")
	}
}

func TestParseRelated(t *testing.T) {
	got, err := parseRelated(" a=r/a:1 , ,b=r/b@sha256:00")
	if err != nil || len(got) != 2 || got[0] != (RelatedImage{"a", "r/a:1"}) || got[1] != (RelatedImage{"b", "r/b@sha256:00"}) {
		t.Errorf("parseRelated = %v, %v", got, err)
	}
	for _, bad := range []string{"a", "=r/a", "a="} {
		if _, err := parseRelated(bad); err == nil {
			t.Errorf("parseRelated(%q) took it", bad)
		}
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

func TestSetCreatedAt(t *testing.T) {
	csv := map[string]any{}
	if err := SetCreatedAt(csv, "2026-11-24T01:44:47Z"); err != nil {
		t.Fatal(err)
	}
	ann := mapAt(mapAt(csv, "metadata"), "annotations")
	if got := ann["createdAt"]; got != "2026-11-24T01:44:47Z" {
		t.Errorf("createdAt = %v", got)
	}
	// operator-sdk's wall-clock time goes: a development bundle has no createdAt.
	if err := SetCreatedAt(csv, ""); err != nil {
		t.Fatal(err)
	}
	if _, ok := ann["createdAt"]; ok {
		t.Error("createdAt kept")
	}
	for _, bad := range []string{"2026-11-24", "2026-11-24T01:44:47+01:00", "yesterday"} {
		if err := SetCreatedAt(map[string]any{}, bad); err == nil {
			t.Errorf("SetCreatedAt(%q) took it", bad)
		}
	}
}

func TestSetUpgradeEdge(t *testing.T) {
	csv := map[string]any{}
	SetUpgradeEdge(csv, Edge{Replaces: "p.v0.1.0", SkipRange: ">=0.1.0 <0.2.0"})
	if mapAt(csv, "spec")["replaces"] != "p.v0.1.0" || mapAt(mapAt(csv, "metadata"), "annotations")["olm.skipRange"] != ">=0.1.0 <0.2.0" {
		t.Errorf("edge not written: %v", csv)
	}
	SetUpgradeEdge(csv, Edge{})
	if _, ok := mapAt(csv, "spec")["replaces"]; ok {
		t.Error("replaces kept for a first release")
	}
	if _, ok := mapAt(mapAt(csv, "metadata"), "annotations")["olm.skipRange"]; ok {
		t.Error("olm.skipRange kept for a first release")
	}
}
