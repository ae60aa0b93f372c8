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

// TestGenerateRendersWhatTheSchemaEnforces: from a CRD and an API package of testdata, every kind of fact the
// reference promises is rendered: printer columns, scale, required fields, defaults, enums, bounds, patterns
// (with a | escaped), CEL rules on a field and on the object, list and map types, and the condition constants
// with their comments, but neither typed (enum) constants nor other strings.
func TestGenerateRendersWhatTheSchemaEnforces(t *testing.T) {
	got, err := Generate(filepath.Join("testdata", "crds"), filepath.Join("testdata", "api"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Widget (example.com/v1)\n",
		"- [Widget (example.com/v1)](#widget-examplecomv1)",
		"short names `wd`",
		"`scale` (replicas `.spec.size`, status `.status.size`)",
		"| Reason | string | `.status.conditions[?(@.type==\"Ready\")].reason` | 1 |",
		"Rules on the whole object: rule `!self.metadata.name.contains('-')`: one word",
		"| `spec` | object |  | required | spec is the widget wanted. |",
		"| `spec.labels` | map[string]string |",
		"| `spec.mode` | string | `\"Fast\"` | one of `\"Fast\"`, `\"Slow\"` |",
		"maxLength 8; pattern `^[a-z\\|]+$`; rule `self == oldSelf`: name is immutable",
		"| `spec.ports` | []object |  | maxItems 3; list type atomic |",
		"| `spec.ports[].port` | integer |  | required |",
		"| `spec.size` | integer (int32) |  | required; minimum 1; maximum 10 |",
		"| `status.conditions` | []Condition |",
		"### `api/demo/v1` (Widget)",
		"| `ConditionReady` | `Ready` | ConditionReady says whether the widget works. |",
		"Reasons of the Ready condition.",
		"| `ReasonWorks` | `Works` | Ready=True. |",
		"| `ReasonBroken` | `Broken` | the widget broke |",
		"ReasonSecretMissing (another kind's) also applies.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the reference lacks %q; it reads:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"ModeFast", "NotAReason", "WidgetList", "status.conditions[].reason"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("the reference names %q", unwanted)
		}
	}
}

// TestGenerateRefusesWhatIsNotACRD: a YAML file of another kind, or no CRD at all, is an error, not an empty
// reference.
func TestGenerateRefusesWhatIsNotACRD(t *testing.T) {
	dir := t.TempDir()
	if _, err := Generate(dir, filepath.Join("testdata", "api")); err == nil {
		t.Error("no CRD: no error")
	}
	if err := os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(dir, filepath.Join("testdata", "api")); err == nil {
		t.Error("a ConfigMap: no error")
	}
}

// TestReferenceIsCurrent: docs/reference/api.md is what the generator writes from this tree (make docs), as
// make verify-generated also checks.
func TestReferenceIsCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	want, err := Generate(filepath.Join(root, "config", "crd", "bases"), filepath.Join(root, "api"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "docs", "reference", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Error("docs/reference/api.md is stale: run make docs, then commit it")
	}
	for _, kind := range []string{"MyWeb", "At", "DatabaseUser", "DatabaseTarget", "AppService"} {
		if !strings.Contains(want, "## "+kind+" (") {
			t.Errorf("the reference has no section for %s", kind)
		}
	}
	if !strings.Contains(want, "`AccountNotOwned`") || !strings.Contains(want, "`ChildNotOwned`") {
		t.Error("the reference lacks the reasons of api/")
	}
}
