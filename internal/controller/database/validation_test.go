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

package database_test

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/test/testenv"
)

// TestDatabaseSchema: the API server refuses what the server could not take or the operator must not change
// (the schema first, before any reconcile), and defaults cleanupPolicy to Skip: deleting a Database keeps its
// data unless the tenant asked otherwise.
func TestDatabaseSchema(t *testing.T) {
	ns := env.NewNamespace(t, "schema")
	for _, tc := range []struct {
		name   string
		mutate func(*mygroupv1alpha1.Database)
		want   string
	}{
		{"empty name", func(d *mygroupv1alpha1.Database) { d.Spec.Name = "" }, "spec.name"},
		{"name of 65", func(d *mygroupv1alpha1.Database) { d.Spec.Name = strings.Repeat("d", 65) }, "spec.name"},
		{"trailing space", func(d *mygroupv1alpha1.Database) { d.Spec.Name = "app " }, "must not end with a space"},
		{"NUL", func(d *mygroupv1alpha1.Database) { d.Spec.Name = "a\x00b" }, "must not contain NUL"},
		{"character set with a quote", func(d *mygroupv1alpha1.Database) { d.Spec.CharacterSet = "utf8'" }, "spec.characterSet"},
		{"collation with a space", func(d *mygroupv1alpha1.Database) { d.Spec.Collation = "utf8mb4 bin" }, "spec.collation"},
		{"unknown cleanup policy", func(d *mygroupv1alpha1.Database) { d.Spec.CleanupPolicy = "Drop" }, "spec.cleanupPolicy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDatabase(ns, "invalid", "app", "default")
			tc.mutate(d)
			testenv.ExpectInvalid(t, env.Client, d, tc.want)
		})
	}

	key := testenv.Create(t, env.Client, newDatabase(ns, "valid", strings.Repeat("d", 64), "default"))
	if got := mustGet(t, key).Spec.CleanupPolicy; got != mygroupv1alpha1.CleanupSkip {
		t.Errorf("cleanupPolicy defaults to %q, want Skip", got)
	}
	d := mustGet(t, key)
	d.Spec.Name = "renamed"
	if err := env.Client.Update(context.Background(), d); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "name is immutable") {
		t.Errorf("renaming: %v, want name is immutable", err)
	}
	d = mustGet(t, key)
	d.Spec.Collation = "utf8mb4_bin"
	if err := env.Client.Update(context.Background(), d); err != nil {
		t.Errorf("changing the collation: %v", err)
	}
}
