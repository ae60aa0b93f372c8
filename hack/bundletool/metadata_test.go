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
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestAddMetadata(t *testing.T) {
	const ann = "annotations:\n  # Core bundle annotations.\n  operators.operatorframework.io.bundle.package.v1: operator101\n"
	const df = "FROM scratch\n\nLABEL operators.operatorframework.io.bundle.package.v1=operator101\n\n# Copy files to locations specified by labels.\nCOPY bundle/manifests /manifests/\n"
	a, d, err := AddMetadata(ann, df, map[string]string{"com.redhat.openshift.versions": "v4.17"})
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Annotations map[string]string }
	if err := yaml.Unmarshal([]byte(a), &got); err != nil {
		t.Fatalf("annotations.yaml no longer parses: %v\n%s", err, a)
	}
	if got.Annotations["com.redhat.openshift.versions"] != "v4.17" || got.Annotations["operators.operatorframework.io.bundle.package.v1"] != "operator101" {
		t.Errorf("annotations %v", got.Annotations)
	}
	if !strings.Contains(d, "LABEL com.redhat.openshift.versions=v4.17\n\n# Copy files") {
		t.Errorf("Dockerfile:\n%s", d)
	}
	if _, _, err := AddMetadata(a, d, map[string]string{"com.redhat.openshift.versions": "v4.17"}); err == nil {
		t.Error("a second run added the annotation again")
	}
}
