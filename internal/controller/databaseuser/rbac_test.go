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
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/test/mariadbtest"
	"github.com/operator101/operator101/test/testenv"
)

// TestLeastPrivilege runs the controllers as a user bound only to the generated rules (config/rbac/role.yaml:
// the ClusterRole for DatabaseTargets and the Role, granted cluster-wide here as in AllNamespaces mode): it
// creates, checks and drops an account with `get` on Secrets and no list or
// watch of them, which would fail (the cache would never sync) if the controller tried.
func TestLeastPrivilege(t *testing.T) {
	mariadbtest.Require(t, server)
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join(env.Root, "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var doc rbacv1.ClusterRole // a Role's rules read the same
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		role.Rules = append(role.Rules, doc.Rules...)
	}
	for _, r := range role.Rules {
		if slices.Contains(r.Resources, "secrets") && !slices.Equal(r.Verbs, []string{"create", "get", "patch"}) {
			t.Errorf("Secrets rule %v: want get, create and patch only (no list, watch, update or delete)", r.Verbs)
		}
	}
	role.ObjectMeta = metav1.ObjectMeta{Name: "dbu-least-privilege"}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "dbu-least-privilege"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "dbu-operator"}},
	}
	for _, obj := range []client.Object{role, binding} {
		testenv.Create(t, env.Client, obj)
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) }) // cluster-scoped: -count=N makes them again
	}
	cfg, err := env.AddUser("dbu-operator")
	if err != nil {
		t.Fatal(err)
	}
	o := startOperator(t, cfg, randomPassword(t, "badadmin"))
	ns := env.NewNamespace(t, "dbu")
	user, pw := uniqueUser("rbac"), randomPassword(t, "rbac")
	dbu, key := readyUser(t, ns, "rbac", user, pw)
	if err := login(user, pw); err != nil {
		t.Fatal(err)
	}
	// A generated password and a connection Secret, written with create and patch alone.
	mkTarget(t, "rbac-apps", o.ns, "mariadb-target", func(s *mygroupv1alpha1.DatabaseTargetSpec) {
		s.Applications = &mygroupv1alpha1.ApplicationEndpoint{Host: "db.example"}
	})
	gen := &mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gen",
		Labels: map[string]string{mygroupv1alpha1.TargetLabel: "rbac-apps"}},
		Spec: mygroupv1alpha1.DatabaseUserSpec{User: uniqueUser("rbac"), ConnectionSecret: &mygroupv1alpha1.ConnectionSecret{Name: "gen-conn"}}}
	genKey := testenv.Create(t, env.Client, gen)
	waitReady(t, genKey, metav1.ConditionTrue, mygroupv1alpha1.ReasonReady)
	conn, err := getSecret(t, ns, "gen-conn")
	if err != nil {
		t.Fatal(err)
	}
	plant(t, string(conn.Data["password"]))
	if err := login(gen.Spec.User, string(conn.Data["password"])); err != nil {
		t.Errorf("login with the connection Secret's password: %v", err)
	}
	deleteUser(t, genKey)

	if err := env.Client.Delete(ctx, dbu); err != nil {
		t.Fatal(err)
	}
	waitGone(t, key)
	if accountExists(t, user) {
		t.Error("account not dropped")
	}
	assertNoSecrets(t, o, ns, pw)
}
