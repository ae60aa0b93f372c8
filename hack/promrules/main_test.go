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
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The shipped PrometheusRule becomes a rules file with its groups, and every alert has a runbook in
// docs/admin/monitoring.md, under a heading named after it.
func TestShippedRules(t *testing.T) {
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, "config", "prometheus", "base", "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Rules(data)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `json:"alert"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(out, &file); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "admin", "monitoring.md"))
	if err != nil {
		t.Fatal(err)
	}
	alerts := 0
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			alerts++
			anchor := "docs/admin/monitoring.md#" + strings.ToLower(r.Alert)
			if !strings.HasSuffix(r.Annotations["runbook_url"], anchor) {
				t.Errorf("%s: runbook_url %q, want one ending in %s", r.Alert, r.Annotations["runbook_url"], anchor)
			}
			if !strings.Contains(string(doc), "\n### "+r.Alert+"\n") {
				t.Errorf("%s: no runbook heading in docs/admin/monitoring.md", r.Alert)
			}
		}
	}
	if alerts == 0 {
		t.Error("no alert")
	}
}

func TestRulesRefusesOtherKinds(t *testing.T) {
	if _, err := Rules([]byte("kind: ConfigMap\ndata: {}\n")); err == nil {
		t.Error("a ConfigMap passed for a PrometheusRule")
	}
}
