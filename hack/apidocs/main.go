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

// Command apidocs writes the API reference (docs/reference/api.md) from the CRDs the bundle ships
// (config/crd/bases/*.yaml: fields, types, defaults, validation, printer columns) and from the condition types
// and reasons declared as Go constants in api/. It is home-made because no served generator reads both: the
// CRDs say what the API server enforces, and the reasons exist only as constants.
//
// It also writes the metrics reference (docs/reference/metrics.md) from internal/metrics' definitions.
//
//	go run ./hack/apidocs -crds config/crd/bases -api api -out docs/reference/api.md -metrics-out docs/reference/metrics.md
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	crds := flag.String("crds", "config/crd/bases", "directory of the CRDs (*.yaml)")
	api := flag.String("api", "api", "directory of the API's Go packages, for the condition types and reasons")
	out := flag.String("out", "", "file to write (default: standard output)")
	metricsOut := flag.String("metrics-out", "", "file to write the metrics reference to (internal/metrics' definitions)")
	flag.Parse()
	if *metricsOut != "" {
		if err := os.WriteFile(*metricsOut, []byte(Metrics()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "apidocs:", err)
			os.Exit(1)
		}
	}
	text, err := Generate(*crds, *api)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apidocs:", err)
		os.Exit(1)
	}
	if *out == "" {
		_, err = os.Stdout.WriteString(text)
	} else {
		err = os.WriteFile(*out, []byte(text), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "apidocs:", err)
		os.Exit(1)
	}
}
