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

// Command promrules writes the rule groups of a PrometheusRule (config/prometheus/base/rules.yaml) as a plain
// Prometheus rules file, which `promtool test rules` reads: the rules are kept once, in the object the
// Prometheus Operator loads, and tested as Prometheus sees them.
//
//	go run ./hack/promrules -in config/prometheus/base/rules.yaml -out bin/operator101.rules.yaml
package main

import (
	"flag"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

func main() {
	in := flag.String("in", "config/prometheus/base/rules.yaml", "the PrometheusRule")
	out := flag.String("out", "", "the rules file to write")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "promrules:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	rules, err := Rules(data)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	return os.WriteFile(out, rules, 0o644)
}

// Rules is the rules file of the PrometheusRule in data: its spec.groups under groups.
func Rules(data []byte) ([]byte, error) {
	var pr struct {
		Kind string
		Spec struct {
			Groups []any `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &pr); err != nil {
		return nil, err
	}
	if pr.Kind != "PrometheusRule" || len(pr.Spec.Groups) == 0 {
		return nil, fmt.Errorf("not a PrometheusRule with rule groups (kind %q)", pr.Kind)
	}
	return yaml.Marshal(map[string]any{"groups": pr.Spec.Groups})
}
