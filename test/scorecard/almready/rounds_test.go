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

package almready

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The two AppService seeds' examples share a name and node port 30002: they run in separate rounds, while an
// example that conflicts with neither joins the first.
func TestRounds(t *testing.T) {
	ex := func(name string, spec map[string]any) unstructured.Unstructured {
		u := unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		u.SetName(name)
		return u
	}
	examples := []unstructured.Unstructured{
		ex("nginx-app", map[string]any{"ports": []any{map[string]any{"port": int64(80), "nodePort": int64(30002)}}}),
		ex("myweb", map[string]any{"nodePortNumber": int64(30100)}),
		ex("nginx-app", map[string]any{"ports": []any{map[string]any{"port": int64(80), "nodePort": int64(30002)}}}),
		ex("other-app", map[string]any{"ports": []any{map[string]any{"port": int64(80), "nodePort": int64(30100)}}}),
		ex("example-at", map[string]any{"command": "echo YAY"}),
	}
	want := [][]int{{0, 1, 4}, {2, 3}}
	if got := rounds(examples); !reflect.DeepEqual(got, want) {
		t.Errorf("rounds = %v, want %v", got, want)
	}
}
