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

package testenv

import "testing"

// TestCounterOnly: once told its scope, a Counter counts the requests of objects in its namespaces and of its
// cluster-scoped objects, and no others.
func TestCounterOnly(t *testing.T) {
	c := &Counter{counts: map[string]int{}, gets: map[string]int{}}
	c.Only(Scope{Namespaces: []string{"mine"}, Objects: []string{"databasetargets/default"}})
	for path, want := range map[string]bool{
		"/apis/mygroup.handsomeguy.cn/v1alpha1/namespaces/mine/databaseusers/x/status": true,
		"/apis/events.k8s.io/v1/namespaces/mine/events":                                true,
		"/apis/mygroup.handsomeguy.cn/v1alpha1/databasetargets/default/status":         true,
		"/apis/mygroup.handsomeguy.cn/v1alpha1/databasetargets/badpw/status":           false,
		"/api/v1/namespaces/mine": false,
		"/apis/mygroup.handsomeguy.cn/v1alpha1/namespaces/theirs/databaseusers/x/status": false,
		"/api/v1/namespaces/theirs/secrets/s":                                            false,
	} {
		if got := c.counted(path); got != want {
			t.Errorf("counted(%s) = %v, want %v", path, got, want)
		}
	}
	if !(&Counter{}).counted("/api/v1/namespaces/theirs/secrets/s") {
		t.Error("a Counter not told of namespaces leaves a request out")
	}
}
