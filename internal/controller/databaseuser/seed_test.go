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

package databaseuser_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Seed 002's three DatabaseUser manifests, as its reader types them (the blog prints them without indentation;
// the reader indents them as YAML). docs/guides/seeds.md says what each gives and what to change.
const (
	seedPlainPassword = `apiVersion: handsomeguy.cn/v1alpha1
kind: DatabaseUser
metadata:
  name: cnhandsomeguy
spec:
  user: cnhandsomeguy
  password: changeit
`
	seedSecretPassword = `apiVersion: handsomeguy.cn/v1alpha1
kind: DatabaseUser
metadata:
  name: cnhandsomeguy
spec:
  user: cnhandsomeguy
  password:
    name: my-secret
    key: my-key
`
	seedTargetLabel = `apiVersion: handsomeguy.cn/v1alpha1
kind: DatabaseUser
metadata:
  label:
    target: that-database
  name: cnhandsomeguy
spec:
  user: cnhandsomeguy
  password:
    name: my-secret
    key: my-key
`
)

// TestSeed002AsWritten: each of the seed's manifests is refused as written, for the reason docs/guides/seeds.md gives,
// with kubectl apply's default field validation (strict); with the group fixed, the first is still refused (a
// password is a Secret reference, not a string), the second is accepted, and the third is refused until
// metadata.label is metadata.labels, then accepted with its target label.
func TestSeed002AsWritten(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "seed002")
	create := func(manifest string) (*unstructured.Unstructured, error) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
			t.Fatal(err)
		}
		u.SetNamespace(ns)
		err := env.Client.Create(ctx, u, client.FieldValidation("Strict"))
		if err == nil {
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), u) })
		}
		return u, err
	}
	fixGroup := func(m string) string {
		return strings.Replace(m, "apiVersion: handsomeguy.cn/v1alpha1", "apiVersion: mygroup.handsomeguy.cn/v1alpha1", 1)
	}
	expectRefused := func(what, manifest, because string) {
		t.Helper()
		_, err := create(manifest)
		if err == nil || !strings.Contains(err.Error(), because) {
			t.Errorf("%s: %v, want an error containing %q", what, err, because)
			return
		}
		t.Logf("%s: refused: %v", what, err)
	}

	for name, m := range map[string]string{"plain password": seedPlainPassword, "Secret password": seedSecretPassword,
		"target label": seedTargetLabel} {
		expectRefused(name+", as written", m, `no matches for kind "DatabaseUser" in version "handsomeguy.cn/v1alpha1"`)
	}
	expectRefused("plain password, group fixed", fixGroup(seedPlainPassword), `spec.password: Invalid value: "string"`)
	expectRefused("target label, group fixed", fixGroup(seedTargetLabel), `unknown field "metadata.label"`)

	if _, err := create(fixGroup(seedSecretPassword)); err != nil {
		t.Errorf("Secret password, group fixed: %v", err)
	}
	fixed := strings.Replace(fixGroup(seedTargetLabel), "name: cnhandsomeguy\nspec", "name: cnhandsomeguy-target\nspec", 1)
	fixed = strings.Replace(fixed, "  label:\n", "  labels:\n", 1)
	u, err := create(fixed)
	if err != nil {
		t.Fatalf("target label, group and labels fixed: %v", err)
	}
	if u.GetLabels()["target"] != "that-database" {
		t.Errorf("labels %v, want target=that-database", u.GetLabels())
	}
}
