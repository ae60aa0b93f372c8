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

package bundle

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestPlatformsAgree: the platforms the operator image is built for (the Makefile's PLATFORMS), the CSV's
// operatorframework.io/arch.* and os.* labels (what OLM and OperatorHub show) and the Deployment's required node
// affinity (where the pod may land) name the same architectures and operating systems: a pod never lands on a
// node its image has no binary for, and the CSV claims no architecture the image lacks.
func TestPlatformsAgree(t *testing.T) {
	root := repoRoot(t)
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^PLATFORMS \?= (.+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile sets no PLATFORMS ?= default")
	}
	var arches, oses []string
	for _, p := range strings.Split(strings.TrimSpace(string(m[1])), ",") {
		os, arch, ok := strings.Cut(p, "/")
		if !ok {
			t.Fatalf("PLATFORMS: %q is not OS/ARCH", p)
		}
		arches = append(arches, arch)
		if !slices.Contains(oses, os) {
			oses = append(oses, os)
		}
	}
	slices.Sort(arches)
	slices.Sort(oses)
	if !slices.Contains(arches, "amd64") || !slices.Contains(arches, "arm64") {
		t.Errorf("PLATFORMS %s: want linux/amd64 and linux/arm64", m[1])
	}

	csv := loadBundle(t).CSV
	var labelArches, labelOSes []string
	for k, v := range csv.GetLabels() {
		if a, ok := strings.CutPrefix(k, "operatorframework.io/arch."); ok && v == "supported" {
			labelArches = append(labelArches, a)
		}
		if o, ok := strings.CutPrefix(k, "operatorframework.io/os."); ok && v == "supported" {
			labelOSes = append(labelOSes, o)
		}
	}
	slices.Sort(labelArches)
	slices.Sort(labelOSes)
	if !slices.Equal(labelArches, arches) || !slices.Equal(labelOSes, oses) {
		t.Errorf("the CSV's labels say arch %v, os %v; the image is built for arch %v, os %v (PLATFORMS)", labelArches, labelOSes, arches, oses)
	}

	deps := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
	if len(deps) != 1 {
		t.Fatalf("the CSV has %d deployments, want 1", len(deps))
	}
	spec := deps[0].Spec.Template.Spec
	if spec.Affinity == nil || spec.Affinity.NodeAffinity == nil || spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		t.Fatalf("the CSV's Deployment has no required node affinity: on a mixed cluster its pod may land where its image cannot run")
	}
	terms := spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 {
		t.Fatalf("%d node selector terms, want 1 (terms are ORed: each would have to name the platforms)", len(terms))
	}
	got := map[string][]string{}
	for _, e := range terms[0].MatchExpressions {
		if e.Operator != corev1.NodeSelectorOpIn {
			t.Errorf("node affinity on %s: operator %s, want In", e.Key, e.Operator)
		}
		v := slices.Clone(e.Values)
		slices.Sort(v)
		got[e.Key] = v
	}
	if !slices.Equal(got["kubernetes.io/arch"], arches) || !slices.Equal(got["kubernetes.io/os"], oses) {
		t.Errorf("node affinity %v: want kubernetes.io/arch In %v and kubernetes.io/os In %v", got, arches, oses)
	}
}
