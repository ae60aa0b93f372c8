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
)

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const steps3 = `"history":[{"created_by":"LABEL a=b","empty_layer":true},{"created_by":"COPY bundle/manifests /manifests/"},` +
	`{"created_by":"COPY bundle/metadata /metadata/"}]`

// TestDiffNamesTheLayerAndItsStep: a layer that differs is named with the step that made it; a configuration
// field that differs is named; identical images give nothing.
func TestDiffNamesTheLayerAndItsStep(t *testing.T) {
	recM := write(t, "rm", `{"config":{"digest":"sha256:c1"},"layers":[{"digest":"sha256:a"},{"digest":"sha256:b"}]}`)
	recC := write(t, "rc", `{"created":"2026-11-25T00:00:00Z","config":{"User":"65532"},`+steps3+`}`)
	newM := write(t, "nm", `{"config":{"digest":"sha256:c2"},"layers":[{"digest":"sha256:a"},{"digest":"sha256:x"}]}`)
	newC := write(t, "nc", `{"created":"2026-11-26T00:00:00Z","config":{"User":"65532"},`+steps3+`}`)
	var out strings.Builder
	n, err := diff(&out, recM, recC, newM, newC)
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if n != 2 || !strings.Contains(got, "layer 2 (COPY bundle/metadata /metadata/): released sha256:b, rebuilt sha256:x") ||
		!strings.Contains(got, "config created:") {
		t.Errorf("%d differences:\n%s", n, got)
	}
	out.Reset()
	if n, err := diff(&out, recM, recC, recM, recC); err != nil || n != 0 {
		t.Errorf("an image against itself: %d differences, %v:\n%s", n, err, out.String())
	}
}
