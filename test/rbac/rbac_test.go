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

// Package rbac proves that the operator's identity, as OLM creates it from the bundle's CSV, holds only the
// permissions it should: the CSV's permissions and clusterPermissions, exactly as written in
// bundle/manifests, are created on a real API server for a ServiceAccount, in each of the ways OLM grants them
// (one namespace, several namespaces, all namespaces), and then SubjectAccessReviews and real requests made as
// that ServiceAccount (impersonation) show what it can and cannot do.
package rbac

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apiextensionsv1client "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/operator101/operator101/internal/controller"
	"github.com/operator101/operator101/test/olmrbac"
	"github.com/operator101/operator101/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

func strategy(t *testing.T) v1alpha1.StrategyDetailsDeployment {
	t.Helper()
	s, err := olmrbac.Strategy(env.Root)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func grant(ctx context.Context, t *testing.T, cs kubernetes.Interface, m olmrbac.Mode, s v1alpha1.StrategyDetailsDeployment) {
	t.Helper()
	if err := olmrbac.Grant(ctx, cs, m, s); err != nil {
		t.Fatal(err)
	}
}

// can asks the API server's authorizer whether the ServiceAccount may do verb on group/resource in ns ("" for
// the whole cluster).
func can(ctx context.Context, t *testing.T, cs kubernetes.Interface, user string, groups []string,
	verb, group, resource, ns string) bool {
	t.Helper()
	return canNamed(ctx, t, cs, user, groups, verb, group, resource, "", ns)
}

// canNamed is can for the object name ("": no name, as a list or a create is asked).
func canNamed(ctx context.Context, t *testing.T, cs kubernetes.Interface, user string, groups []string,
	verb, group, resource, name, ns string) bool {
	t.Helper()
	ok, err := review(ctx, cs, user, groups, authorizationv1.ResourceAttributes{
		Namespace: ns, Verb: verb, Group: group, Resource: resource, Name: name,
	})
	if err != nil {
		t.Fatalf("SubjectAccessReview: %v", err)
	}
	return ok
}

// review asks the authorizer whether user (in groups) may do ra.
func review(ctx context.Context, cs kubernetes.Interface, user string, groups []string,
	ra authorizationv1.ResourceAttributes) (bool, error) {
	r, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: &ra},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return r.Status.Allowed, nil
}

// forbidden is what the operator must never be able to do, whatever the install mode.
var forbidden = []struct{ group, resource string }{
	{"apiextensions.k8s.io", "customresourcedefinitions"},
	{"admissionregistration.k8s.io", "validatingwebhookconfigurations"},
	{"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
	{"admissionregistration.k8s.io", "validatingadmissionpolicies"},
	{"admissionregistration.k8s.io", "validatingadmissionpolicybindings"},
	{"rbac.authorization.k8s.io", "roles"},
	{"rbac.authorization.k8s.io", "rolebindings"},
	{"rbac.authorization.k8s.io", "clusterroles"},
	{"rbac.authorization.k8s.io", "clusterrolebindings"},
}

var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection", "escalate", "bind", "*"}

// modes are the install modes the CSV declares (TestDeclaredInstallModes keeps the two lists equal), each as
// an OperatorGroup would give it.
func modes() []olmrbac.Mode {
	return []olmrbac.Mode{
		{Name: "own", OperatorNS: "own-op", Targets: []string{}},
		{Name: "single", OperatorNS: "single-op", Targets: []string{"single-a"}},
		{Name: "all", OperatorNS: "all-op", Targets: nil},
	}
}

// clusterAllowlist is every rule the operator may hold cluster-wide in every install mode, with the reason;
// any other cluster rule in the CSV fails TestClusterPermissionsAllowlist.
var clusterAllowlist = map[[2]string]struct {
	verbs []string
	why   string
}{
	{"authentication.k8s.io", "tokenreviews"}:            {[]string{"create"}, "authenticate callers of the metrics endpoint"},
	{"authorization.k8s.io", "subjectaccessreviews"}:     {[]string{"create"}, "authorize callers of the metrics endpoint"},
	{"mygroup.handsomeguy.cn", "databasetargets"}:        {[]string{"get", "list", "watch"}, "read the cluster admin's DatabaseTargets (cluster-scoped)"},
	{"mygroup.handsomeguy.cn", "databasetargets/status"}: {[]string{"get", "patch"}, "report whether the operator can log in to a target"},
}

var allVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

func TestDeclaredInstallModes(t *testing.T) {
	csv, err := olmrbac.CSV(env.Root)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, m := range csv.Spec.InstallModes {
		if m.Supported {
			declared = append(declared, string(m.Type))
		}
	}
	want := []string{"OwnNamespace", "SingleNamespace", "AllNamespaces"}
	if strings.Join(declared, ",") != strings.Join(want, ",") {
		t.Errorf("the CSV declares %v; this test and the OLM e2e prove %v: declare only what is proven", declared, want)
	}
}

func TestClusterPermissionsAllowlist(t *testing.T) {
	s := strategy(t)
	for _, p := range s.ClusterPermissions {
		for _, r := range p.Rules {
			if len(r.NonResourceURLs) > 0 || len(r.ResourceNames) > 0 {
				t.Errorf("cluster rule %+v: not in the allowlist", r)
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					if a, ok := clusterAllowlist[[2]string{g, res}]; !ok || !slices.Equal(r.Verbs, a.verbs) {
						t.Errorf("cluster-wide %v on %s.%s is not in the allowlist (test/rbac, docs/admin/security.md)", r.Verbs, res, g)
					}
				}
			}
		}
	}
}

// TestLeastPrivilegeSubjectAccessReview asks the authorizer, for each install mode, every forbidden write, and
// cluster-wide list/watch of Secrets; and, so that the proof is not vacuous, every rule the CSV grants.
func TestLeastPrivilegeSubjectAccessReview(t *testing.T) {
	ctx := context.Background()
	s := strategy(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	for _, m := range modes() {
		t.Run(m.Name, func(t *testing.T) {
			grant(ctx, t, cs, m, s)
			sa := olmrbac.ServiceAccount(s)
			user, groups := olmrbac.User(m.OperatorNS, sa)
			scopes := append([]string{"", m.OperatorNS}, m.Targets...)
			for _, f := range forbidden {
				for _, verb := range writeVerbs {
					for _, ns := range scopes {
						if can(ctx, t, cs, user, groups, verb, f.group, f.resource, ns) {
							t.Errorf("%s may %s %s.%s in namespace %q", m.Name, verb, f.resource, f.group, ns)
						}
					}
				}
			}
			// Outside its namespaces (kube-system and a tenant's), a namespaced install touches none of the kinds
			// it manages, and none of them cluster-wide.
			if !m.All() {
				for _, ch := range olmrbac.TenantKinds {
					for _, verb := range allVerbs {
						for _, ns := range []string{"", "kube-system", "some-tenant"} {
							if can(ctx, t, cs, user, groups, verb, ch.Group, ch.Resource, ns) {
								t.Errorf("%s may %s %s.%s in namespace %q, outside its targets", m.Name, verb, ch.Resource, ch.Group, ns)
							}
						}
					}
				}
			}
			for _, verb := range []string{"list", "watch", "*"} {
				if can(ctx, t, cs, user, groups, verb, "", "secrets", "") {
					t.Errorf("%s may %s Secrets cluster-wide", m.Name, verb)
				}
				if can(ctx, t, cs, user, groups, verb, "", "secrets", "some-tenant") {
					t.Errorf("%s may %s Secrets in a namespace it does not run in", m.Name, verb)
				}
			}
			// The grants themselves are in force: each cluster rule cluster-wide, each namespaced rule in
			// every target namespace (or everywhere for all namespaces), on the objects it names if it names any.
			check := func(rules []rbacv1.PolicyRule, namespaces []string) {
				for _, r := range rules {
					names := r.ResourceNames
					if len(names) == 0 {
						names = []string{""}
					}
					for _, g := range r.APIGroups {
						for _, res := range r.Resources {
							for _, verb := range r.Verbs {
								for _, ns := range namespaces {
									for _, name := range names {
										if !canNamed(ctx, t, cs, user, groups, verb, g, res, name, ns) {
											t.Errorf("%s: granted %s %s.%s %q but denied in namespace %q", m.Name, verb, res, g, name, ns)
										}
									}
								}
							}
						}
					}
				}
			}
			for _, p := range s.ClusterPermissions {
				check(p.Rules, []string{""})
			}
			for _, p := range s.Permissions {
				if m.All() {
					check(p.Rules, []string{""})
				} else {
					check(p.Rules, append([]string{m.OperatorNS}, m.Targets...))
				}
			}
		})
	}
}

// TestLeastPrivilegeRequests makes real requests as the ServiceAccount (impersonation) and expects the API
// server to refuse each forbidden one with 403, while an allowed read succeeds.
func TestLeastPrivilegeRequests(t *testing.T) {
	ctx := context.Background()
	s := strategy(t)
	admin := kubernetes.NewForConfigOrDie(env.Config)
	for _, m := range modes() {
		t.Run(m.Name, func(t *testing.T) {
			grant(ctx, t, admin, m, s)
			sa := olmrbac.ServiceAccount(s)
			user, groups := olmrbac.User(m.OperatorNS, sa)
			cfg := rest.CopyConfig(env.Config)
			cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
			as := kubernetes.NewForConfigOrDie(cfg)
			crdClient := apiextensionsClient(t, cfg)

			expectForbidden := func(what string, err error) {
				t.Helper()
				if !apierrors.IsForbidden(err) {
					t.Errorf("%s: %s: want 403 Forbidden, got %v", m.Name, what, err)
				}
			}
			// CRDs: OLM owns them. Create, patch and delete are refused (the CRDs of operator101 exist here).
			crd := &apiextensionsv1.CustomResourceDefinition{
				ObjectMeta: metav1.ObjectMeta{Name: "widgets.evil.example.com"},
				Spec: apiextensionsv1.CustomResourceDefinitionSpec{
					Group: "evil.example.com", Scope: apiextensionsv1.NamespaceScoped,
					Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"},
					Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
						Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}}},
				},
			}
			_, err := crdClient.Create(ctx, crd, metav1.CreateOptions{})
			expectForbidden("create a CRD", err)
			existing, err := apiextensionsClient(t, env.Config).List(ctx, metav1.ListOptions{})
			if err != nil || len(existing.Items) == 0 {
				t.Fatalf("listing the installed CRDs as admin: %v (%d)", err, len(existing.Items))
			}
			name := existing.Items[0].Name
			_, err = crdClient.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
			expectForbidden("patch CRD "+name, err)
			expectForbidden("delete CRD "+name, crdClient.Delete(ctx, name, metav1.DeleteOptions{}))

			// Admission webhooks.
			_, err = as.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx,
				&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "evil"}}, metav1.CreateOptions{})
			expectForbidden("create a ValidatingWebhookConfiguration", err)
			_, err = as.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx,
				&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "evil"}}, metav1.CreateOptions{})
			expectForbidden("create a MutatingWebhookConfiguration", err)

			// RBAC: no way to grant itself more.
			_, err = as.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "evil"}}, metav1.CreateOptions{})
			expectForbidden("create a ClusterRole", err)
			_, err = as.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "evil"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
				Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: m.OperatorNS}},
			}, metav1.CreateOptions{})
			expectForbidden("bind cluster-admin", err)
			_, err = as.RbacV1().Roles(m.OperatorNS).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "evil"}}, metav1.CreateOptions{})
			expectForbidden("create a Role in its own namespace", err)
			_, err = as.RbacV1().RoleBindings(m.OperatorNS).Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "evil"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
				Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: m.OperatorNS}},
			}, metav1.CreateOptions{})
			expectForbidden("create a RoleBinding in its own namespace", err)

			// Secrets: never listed or watched across the cluster.
			_, err = as.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
			expectForbidden("list Secrets in all namespaces", err)
			w, err := as.CoreV1().Secrets("").Watch(ctx, metav1.ListOptions{})
			if err == nil {
				w.Stop()
			}
			expectForbidden("watch Secrets in all namespaces", err)

			// Namespaces: the At controller reads the UID range of the namespaces it serves, and only theirs: a
			// Role's get on namespaces reaches the namespace it is in alone.
			for _, ns := range append([]string{m.OperatorNS}, m.Targets...) {
				if _, err := as.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
					t.Errorf("%s: get namespace %s, which it serves: %v", m.Name, ns, err)
				}
			}
			if !m.All() {
				_, err = as.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
				expectForbidden("get namespace kube-system", err)
				_, err = as.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
				expectForbidden("list namespaces", err)
			}

			// Not vacuous: what the operator needs works as this identity (its Lease is not there yet: 404).
			for _, ns := range append([]string{m.OperatorNS}, m.Targets...) {
				if _, err := as.CoordinationV1().Leases(ns).Get(ctx, controller.LeaderElectionID, metav1.GetOptions{}); err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("%s: get its Lease in %s: %v", m.Name, ns, err)
				}
			}
		})
	}
}

func apiextensionsClient(t *testing.T, cfg *rest.Config) apiextensionsv1client.CustomResourceDefinitionInterface {
	t.Helper()
	c, err := apiextensionsclientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c.ApiextensionsV1().CustomResourceDefinitions()
}

// TestSecurityDocCoversEveryRule keeps docs/admin/security.md honest: its RBAC table has a row, with a reason, for
// every rule of the CSV (scope, API group, resource, the objects it names if any, every verb), and no row for
// anything not granted.
func TestSecurityDocCoversEveryRule(t *testing.T) {
	s := strategy(t)
	raw, err := os.ReadFile(filepath.Join(env.Root, "docs", "admin", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	// A rule that names its objects (resourceNames) has a row of its own: "`leases` named `<name>`".
	type key struct{ scope, group, resource, name string }
	doc := map[key]map[string]bool{}
	for _, line := range strings.Split(string(raw), "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 5 {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(strings.ReplaceAll(cells[i], "`", ""))
		}
		scope := cells[0]
		if scope != "cluster" && scope != "namespace" {
			continue
		}
		if cells[4] == "" {
			t.Errorf("docs/admin/security.md: the row for %s %s has no reason", cells[1], cells[2])
		}
		group := cells[1]
		if group == "core" {
			group = ""
		}
		for _, res := range strings.Split(cells[2], ",") {
			res, name, _ := strings.Cut(strings.TrimSpace(res), " named ")
			k := key{scope, group, strings.TrimSpace(res), strings.TrimSpace(name)}
			if doc[k] == nil {
				doc[k] = map[string]bool{}
			}
			for _, v := range strings.Split(cells[3], ",") {
				doc[k][strings.TrimSpace(v)] = true
			}
		}
	}
	granted := map[key]map[string]bool{}
	add := func(scope string, rules []rbacv1.PolicyRule) {
		for _, r := range rules {
			names := r.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, name := range names {
						k := key{scope, g, res, name}
						if granted[k] == nil {
							granted[k] = map[string]bool{}
						}
						for _, v := range r.Verbs {
							granted[k][v] = true
							if !doc[k][v] {
								t.Errorf("docs/admin/security.md has no %s row for %s %q %s named %q", scope, v, g, res, name)
							}
						}
					}
				}
			}
		}
	}
	for _, p := range s.ClusterPermissions {
		add("cluster", p.Rules)
	}
	for _, p := range s.Permissions {
		add("namespace", p.Rules)
	}
	for k, verbs := range doc {
		for v := range verbs {
			if !granted[k][v] {
				t.Errorf("docs/admin/security.md lists %s %s %q %s named %q, which the CSV does not grant", k.scope, v, k.group, k.resource, k.name)
			}
		}
	}
}
