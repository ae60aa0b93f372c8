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

package database

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
)

// TestCheckPolicy: the target's policy for a Database, as a pure function: the same answers a DatabaseUser's
// grant gets for the same name.
func TestCheckPolicy(t *testing.T) {
	target := &mygroupv1alpha1.DatabaseTarget{ObjectMeta: metav1.ObjectMeta{Name: "shared"},
		Spec: mygroupv1alpha1.DatabaseTargetSpec{AllowedNamespaces: []string{"team-a"},
			Databases: []string{"${namespace}", "${namespace}_*", "common"}}}
	everything := target.DeepCopy()
	everything.Spec.AllowedNamespaces, everything.Spec.Databases = []string{"*"}, []string{"*"}
	for _, tc := range []struct {
		target   *mygroupv1alpha1.DatabaseTarget
		ns, name string
		want     string // the refusal's reason, "" when allowed
	}{
		{target, "team-a", "team-a", ""},
		{target, "team-a", "team-a_orders", ""},
		{target, "team-a", "common", ""},
		{target, "team-a", "team-b_orders", mygroupv1alpha1.ReasonDatabaseNotAllowed},
		{target, "team-a", "team-a%", mygroupv1alpha1.ReasonDatabaseNotAllowed},
		{target, "team-a", "team-ax", mygroupv1alpha1.ReasonDatabaseNotAllowed},
		{target, "team-b", "team-b", mygroupv1alpha1.ReasonTargetNotAllowed},
		{everything, "anyone", "anything", ""},
		{everything, "anyone", "mysql", mygroupv1alpha1.ReasonDatabaseNotAllowed},
		{everything, "anyone", "MySQL", mygroupv1alpha1.ReasonDatabaseNotAllowed},
		{everything, "anyone", "operator101", mygroupv1alpha1.ReasonDatabaseNotAllowed},
		{everything, "anyone", "information_schema", mygroupv1alpha1.ReasonDatabaseNotAllowed},
		{everything, "anyone", "Performance_Schema", mygroupv1alpha1.ReasonDatabaseNotAllowed},
		{everything, "anyone", "sys", mygroupv1alpha1.ReasonDatabaseNotAllowed},
	} {
		d := &mygroupv1alpha1.Database{ObjectMeta: metav1.ObjectMeta{Namespace: tc.ns, Name: "d"},
			Spec: mygroupv1alpha1.DatabaseSpec{Name: tc.name}}
		got := ""
		if r := checkPolicy(tc.target, d); r != nil {
			got = r.reason
		}
		if got != tc.want {
			t.Errorf("%s: %q in namespace %q: refused %q, want %q", tc.target.Name, tc.name, tc.ns, got, tc.want)
		}
	}
}
