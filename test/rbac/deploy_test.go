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

package rbac

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/operator101/operator101/test/olmrbac"
)

// TestMakeDeployGrantsTheManagerRoleClusterWide: without OLM nobody copies the manager's Role into the
// namespaces it serves, so `make deploy` (config/deploy) must lift it to a ClusterRole bound to the manager's
// ServiceAccount. The RBAC objects it renders are created on the API server, and the authorizer must allow
// every rule of config/rbac/role.yaml in a namespace the manager does not run in.
func TestMakeDeployGrantsTheManagerRoleClusterWide(t *testing.T) {
	ctx := context.Background()
	k, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const ns = "operator101-system"
	if err := k.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	sa := ""
	for _, u := range env.KustomizeObjects(t, "config/deploy") {
		switch u.GetKind() {
		case "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding", "ServiceAccount":
			if u.GetName() == "operator101-manager-role" && u.GetKind() != "ClusterRole" {
				t.Errorf("config/deploy renders the manager's rules as a %s, want a ClusterRole", u.GetKind())
			}
			if u.GetKind() == "ServiceAccount" {
				sa = u.GetName()
			}
			if err := k.Create(ctx, u); err != nil {
				t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
			}
		}
	}
	raw, err := os.ReadFile(filepath.Join(env.Root, "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The manager's Role and its ClusterRole (DatabaseTargets), as make manifests writes them.
	var role rbacv1.Role
	kinds := map[string]bool{}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var r rbacv1.Role
		if err := yaml.Unmarshal([]byte(doc), &r); err != nil {
			t.Fatal(err)
		}
		kinds[r.Kind] = true
		role.Rules = append(role.Rules, r.Rules...)
	}
	if !kinds["Role"] || !kinds["ClusterRole"] || len(role.Rules) == 0 {
		t.Fatalf("config/rbac/role.yaml: want the manager's Role and ClusterRole (make manifests): %v, %d rules", kinds, len(role.Rules))
	}
	cs := kubernetes.NewForConfigOrDie(env.Config)
	user, groups := olmrbac.User(ns, sa)
	n := 0
	for _, r := range role.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, verb := range r.Verbs {
					n++
					if !can(ctx, t, cs, user, groups, verb, g, res, "a-tenant") {
						t.Errorf("after make deploy the manager may not %s %s.%s in another namespace", verb, res, g)
					}
				}
			}
		}
	}
	t.Logf("make deploy: %d rules of the manager's Role allowed cluster-wide for %s", n, user)
}
