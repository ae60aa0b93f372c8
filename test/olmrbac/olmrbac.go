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

// Package olmrbac creates, on an API server, the RBAC objects OLM would create from a bundle's CSV for the
// operator's ServiceAccount, in each install mode, and computes the permission tables docs/admin/security.md shows.
// The least-privilege proof (test/rbac), `make scorecard` (which runs the manager with exactly that identity)
// and the OLM e2e (which reads the tables back from a real cluster) use it.
package olmrbac

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// CSV reads the bundle's CSV under the repository root.
func CSV(root string) (*v1alpha1.ClusterServiceVersion, error) {
	raw, err := os.ReadFile(filepath.Join(root, "bundle", "manifests", "operator101.clusterserviceversion.yaml"))
	if err != nil {
		return nil, fmt.Errorf("reading the bundle's CSV (run make bundle): %w", err)
	}
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := yaml.UnmarshalStrict(raw, csv); err != nil {
		return nil, fmt.Errorf("parsing the CSV: %w", err)
	}
	return csv, nil
}

// Strategy reads the install strategy of the bundle's CSV under the repository root.
func Strategy(root string) (v1alpha1.StrategyDetailsDeployment, error) {
	csv, err := CSV(root)
	if err != nil {
		return v1alpha1.StrategyDetailsDeployment{}, err
	}
	s := csv.Spec.InstallStrategy.StrategySpec
	if len(s.DeploymentSpecs) != 1 {
		return s, fmt.Errorf("the CSV has %d deployments, want 1", len(s.DeploymentSpecs))
	}
	return s, nil
}

// TenantKinds are the kinds the operator writes or reads in tenant namespaces: outside its target namespaces an
// install must not touch them at all (test/rbac and the OLM e2e check it).
var TenantKinds = []schema.GroupResource{
	{Resource: "pods"}, {Group: "apps", Resource: "deployments"}, {Resource: "services"}, {Resource: "configmaps"},
	{Resource: "secrets"},
}

// ServiceAccount is the operator's ServiceAccount name in the strategy.
func ServiceAccount(s v1alpha1.StrategyDetailsDeployment) string {
	return s.DeploymentSpecs[0].Spec.Template.Spec.ServiceAccountName
}

// User is the user name and groups the API server gives a ServiceAccount's token.
func User(ns, sa string) (string, []string) {
	return "system:serviceaccount:" + ns + ":" + sa,
		[]string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
}

// Mode is how OLM turns the CSV's permissions into RBAC objects for one OperatorGroup.
type Mode struct {
	// Name prefixes the RBAC objects' names.
	Name string
	// operatorNS is where the operator runs; targets are the OperatorGroup's other namespaces (nil: all
	// namespaces, empty: only the operator's own).
	OperatorNS string
	Targets    []string
}

// All tells whether the OperatorGroup targets all namespaces.
func (m Mode) All() bool { return m.Targets == nil }

// Grant creates what OLM creates for the operator's ServiceAccount: each clusterPermissions entry as a
// ClusterRole + ClusterRoleBinding; each permissions entry as a Role + RoleBinding in the operator's namespace
// and a copy in every other target namespace; or, for an all-namespaces OperatorGroup, lifted to a ClusterRole
// + ClusterRoleBinding with read access to namespaces added (OLM's ensureSingletonRBAC).
// Existing objects are left as they are, so Grant may run twice.
func Grant(ctx context.Context, cs kubernetes.Interface, m Mode, s v1alpha1.StrategyDetailsDeployment) error {
	var errs []error
	must := func(err error) {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			errs = append(errs, err)
		}
	}
	nss := append([]string{m.OperatorNS}, m.Targets...)
	for _, ns := range nss {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		must(err)
	}
	sas := map[string]bool{}
	clusterRule := func(name string, rules []rbacv1.PolicyRule, sa string) {
		_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{})
		must(err)
		_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: m.OperatorNS}},
		}, metav1.CreateOptions{})
		must(err)
	}
	for i, p := range s.ClusterPermissions {
		sas[p.ServiceAccountName] = true
		clusterRule(fmt.Sprintf("%s-cluster-%d", m.Name, i), p.Rules, p.ServiceAccountName)
	}
	for i, p := range s.Permissions {
		sas[p.ServiceAccountName] = true
		if m.All() {
			rules := append(append([]rbacv1.PolicyRule{}, p.Rules...), rbacv1.PolicyRule{
				APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}})
			clusterRule(fmt.Sprintf("%s-lifted-%d", m.Name, i), rules, p.ServiceAccountName)
			continue
		}
		for _, ns := range nss {
			name := fmt.Sprintf("%s-ns-%d", m.Name, i)
			_, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: p.Rules}, metav1.CreateOptions{})
			must(err)
			_, err = cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
				Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: p.ServiceAccountName, Namespace: m.OperatorNS}},
			}, metav1.CreateOptions{})
			must(err)
		}
	}
	for sa := range sas {
		_, err := cs.CoreV1().ServiceAccounts(m.OperatorNS).Create(ctx, &corev1.ServiceAccount{
			ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: m.OperatorNS}}, metav1.CreateOptions{})
		must(err)
	}
	return errors.Join(errs...)
}
