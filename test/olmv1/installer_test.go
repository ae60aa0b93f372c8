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

package olmv1

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// generatedName stands for the name of an object operator-controller names itself (<CSV name>-<service
// account>-<hash of the rules>): it can match no resourceNames.
const generatedName = "<generated>"

// renderedObject is one object operator-controller creates for the bundle, as its installer sees it.
type renderedObject struct {
	gvr       schema.GroupVersionResource
	namespace string // "" for a cluster-scoped object
	name      string
	// rules are the rules of a Role or ClusterRole, which its creator must hold where they apply
	// (rulesNamespace; "" is cluster-wide).
	rules          []rbacv1.PolicyRule
	rulesNamespace string
}

// kindResource maps the kinds a registry+v1 bundle may ship (supportedKinds) to their resource and scope.
var kindResource = map[string]struct {
	resource   string
	namespaced bool
}{
	"Secret": {"secrets", true}, "ConfigMap": {"configmaps", true}, "ServiceAccount": {"serviceaccounts", true},
	"Service": {"services", true}, "Role": {"roles", true}, "RoleBinding": {"rolebindings", true},
	"ClusterRole": {"clusterroles", false}, "ClusterRoleBinding": {"clusterrolebindings", false},
	"PrometheusRule": {"prometheusrules", true}, "ServiceMonitor": {"servicemonitors", true},
	"PodMonitor": {"podmonitors", true}, "PodDisruptionBudget": {"poddisruptionbudgets", true},
	"PriorityClass": {"priorityclasses", false}, "VerticalPodAutoscaler": {"verticalpodautoscalers", true},
	"NetworkPolicy": {"networkpolicies", true}, "ConsoleYAMLSample": {"consoleyamlsamples", false},
	"ConsoleQuickStart": {"consolequickstarts", false}, "ConsoleCLIDownload": {"consoleclidownloads", false},
	"ConsoleLink": {"consolelinks", false}, "ConsolePlugin": {"consoleplugins", false},
}

var (
	gvrServiceAccounts     = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	gvrDeployments         = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	gvrCRDs                = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	gvrClusterRoles        = rbacv1.SchemeGroupVersion.WithResource("clusterroles")
	gvrClusterRoleBindings = rbacv1.SchemeGroupVersion.WithResource("clusterrolebindings")
	gvrRoles               = rbacv1.SchemeGroupVersion.WithResource("roles")
	gvrRoleBindings        = rbacv1.SchemeGroupVersion.WithResource("rolebindings")
	namespacesReadRule     = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}}
)

// render lists what operator-controller creates for the bundle in installNS, watching watchNS ("": all
// namespaces). Mirrors internal/operator-controller/rukpak/render/registryv1/generators/generators.go:
// BundleCSVServiceAccountGenerator, BundleCSVPermissionsGenerator (Roles in the watched namespace only),
// BundleCSVClusterPermissionsGenerator (AllNamespaces lifts the permissions to ClusterRoles and adds
// get/list/watch on namespaces), BundleCRDGenerator, BundleAdditionalResourcesGenerator (namespaced objects
// into the install namespace) and BundleCSVDeploymentGenerator.
func render(b *registryV1, installNS, watchNS string) ([]renderedObject, error) {
	s := b.csv.Spec.InstallStrategy.StrategySpec
	var out []renderedObject
	sas := map[string]bool{}
	for _, p := range append(append([]v1alpha1.StrategyDeploymentPermissions{}, s.Permissions...), s.ClusterPermissions...) {
		if p.ServiceAccountName != "" && p.ServiceAccountName != "default" && !sas[p.ServiceAccountName] {
			sas[p.ServiceAccountName] = true
			out = append(out, renderedObject{gvr: gvrServiceAccounts, namespace: installNS, name: p.ServiceAccountName})
		}
	}
	clusterRole := func(rules []rbacv1.PolicyRule) {
		out = append(out,
			renderedObject{gvr: gvrClusterRoles, name: generatedName, rules: rules},
			renderedObject{gvr: gvrClusterRoleBindings, name: generatedName})
	}
	for _, p := range s.ClusterPermissions {
		clusterRole(p.Rules)
	}
	for _, p := range s.Permissions {
		if watchNS == "" {
			clusterRole(append(slices.Clone(p.Rules), namespacesReadRule))
			continue
		}
		out = append(out,
			renderedObject{gvr: gvrRoles, namespace: watchNS, name: generatedName, rules: p.Rules, rulesNamespace: watchNS},
			renderedObject{gvr: gvrRoleBindings, namespace: watchNS, name: generatedName})
	}
	for _, crd := range b.crds {
		out = append(out, renderedObject{gvr: gvrCRDs, name: crd.Name})
	}
	for _, o := range b.others {
		kr, ok := kindResource[o.GetKind()]
		if !ok {
			return nil, fmt.Errorf("bundle object %s %s: no resource known for the kind", o.GetKind(), o.GetName())
		}
		gv, err := schema.ParseGroupVersion(o.GetAPIVersion())
		if err != nil {
			return nil, err
		}
		ro := renderedObject{gvr: gv.WithResource(kr.resource), name: o.GetName()}
		if kr.namespaced {
			ro.namespace = installNS
			ro.rulesNamespace = installNS
		}
		if o.GetKind() == "ClusterRole" || o.GetKind() == "Role" {
			var role rbacv1.ClusterRole // a Role's rules read the same
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
				return nil, err
			}
			ro.rules = role.Rules
		}
		out = append(out, ro)
	}
	for _, d := range s.DeploymentSpecs {
		out = append(out, renderedObject{gvr: gvrDeployments, namespace: installNS, name: d.Name})
	}
	return out, nil
}

// request is one thing the installer is asked to do: a resource request, or a non-resource URL.
type request struct {
	namespace, verb, group, resource, name string
	url                                    string
}

func (r request) String() string {
	if r.url != "" {
		return fmt.Sprintf("%s %s", r.verb, r.url)
	}
	where := "cluster-wide"
	if r.namespace != "" {
		where = "in " + r.namespace
	}
	res := r.resource
	if r.group != "" {
		res += "." + r.group
	}
	if r.name != "" {
		res += " " + r.name
	}
	return fmt.Sprintf("%s %s %s", r.verb, res, where)
}

// installerRequests lists what the installer must be allowed, for the objects operator-controller renders.
// Derived as operator-controller's docs/howto/derive-service-account.md (v1.10.0) derives it, with the
// verbs of its pre-authorization check, internal/operator-controller/authorization/rbac.go (v1.10.0): get,
// update, patch and delete on each object by name, create in its namespace, list and watch cluster-wide
// (its content cache watches each kind), update on the ClusterExtension's finalizers; and every rule of
// every Role and ClusterRole it creates, where it applies (Kubernetes' privilege escalation prevention).
func installerRequests(objs []renderedObject, extension string) []request {
	var out []request
	out = append(out, request{verb: "update", group: "olm.operatorframework.io", resource: "clusterextensions/finalizers", name: extension})
	for _, o := range objs {
		g, res := o.gvr.Group, o.gvr.Resource
		out = append(out, request{namespace: o.namespace, verb: "create", group: g, resource: res})
		for _, v := range []string{"get", "update", "patch", "delete"} {
			out = append(out, request{namespace: o.namespace, verb: v, group: g, resource: res, name: o.name})
		}
		for _, v := range []string{"list", "watch"} {
			out = append(out, request{verb: v, group: g, resource: res})
		}
		for _, rule := range o.rules {
			out = append(out, ruleRequests(rule, o.rulesNamespace)...)
		}
	}
	return out
}

// ruleRequests expands a rule into the requests it allows, so that holding all of them covers the rule.
func ruleRequests(rule rbacv1.PolicyRule, ns string) []request {
	var out []request
	for _, v := range rule.Verbs {
		for _, u := range rule.NonResourceURLs {
			out = append(out, request{verb: v, url: u})
		}
		names := rule.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				for _, n := range names {
					out = append(out, request{namespace: ns, verb: v, group: g, resource: res, name: n})
				}
			}
		}
	}
	return out
}

// authorizer answers requests with RBAC's rules, for one ServiceAccount, from one olmv1Config's objects, and
// remembers which rules allowed something.
type authorizer struct {
	cluster    []sourcedRule
	namespaced map[string][]sourcedRule
	used       map[string]bool
}

// sourcedRule is a rule and where it is written ("ClusterRole x, rule 3").
type sourcedRule struct {
	rbacv1.PolicyRule
	origin string
}

func sourced(kind, name string, rules []rbacv1.PolicyRule) []sourcedRule {
	out := make([]sourcedRule, 0, len(rules))
	for i, r := range rules {
		out = append(out, sourcedRule{r, fmt.Sprintf("%s %s, rule %d", kind, name, i+1)})
	}
	return out
}

func newAuthorizer(c *olmv1Config, saNamespace, sa string) *authorizer {
	a := &authorizer{namespaced: map[string][]sourcedRule{}, used: map[string]bool{}}
	bound := func(subjects []rbacv1.Subject) bool {
		return slices.ContainsFunc(subjects, func(s rbacv1.Subject) bool {
			return s.Kind == "ServiceAccount" && s.Name == sa && s.Namespace == saNamespace
		})
	}
	for _, b := range c.crbs {
		if b.RoleRef.Kind == "ClusterRole" && bound(b.Subjects) {
			a.cluster = append(a.cluster, sourced("ClusterRole", b.RoleRef.Name, c.clusterRoles[b.RoleRef.Name])...)
		}
	}
	for _, b := range c.rbs {
		if !bound(b.Subjects) {
			continue
		}
		switch b.RoleRef.Kind {
		case "Role":
			name := b.Namespace + "/" + b.RoleRef.Name
			a.namespaced[b.Namespace] = append(a.namespaced[b.Namespace], sourced("Role", name, c.roles[name])...)
		case "ClusterRole":
			a.namespaced[b.Namespace] = append(a.namespaced[b.Namespace], sourced("ClusterRole", b.RoleRef.Name, c.clusterRoles[b.RoleRef.Name])...)
		}
	}
	return a
}

// allows answers r, and marks every rule that allows it as used.
func (a *authorizer) allows(r request) bool {
	rules := a.cluster
	if r.namespace != "" && r.url == "" {
		rules = append(slices.Clone(rules), a.namespaced[r.namespace]...)
	}
	ok := false
	for _, rule := range rules {
		if rule.matches(r) {
			a.used[rule.origin] = true
			ok = true
		}
	}
	return ok
}

func (rule sourcedRule) matches(r request) bool {
	if !has(rule.Verbs, r.verb) {
		return false
	}
	if r.url != "" {
		return slices.ContainsFunc(rule.NonResourceURLs, func(u string) bool {
			return u == "*" || u == r.url || (strings.HasSuffix(u, "*") && strings.HasPrefix(r.url, strings.TrimSuffix(u, "*")))
		})
	}
	return has(rule.APIGroups, r.group) && has(rule.Resources, r.resource) &&
		(len(rule.ResourceNames) == 0 || (r.name != "" && slices.Contains(rule.ResourceNames, r.name)))
}

// unused lists the rules bound to the ServiceAccount that allowed nothing asked so far.
func (a *authorizer) unused() []string {
	var out []string
	seen := map[string]bool{}
	for _, rules := range append([][]sourcedRule{a.cluster}, mapValues(a.namespaced)...) {
		for _, r := range rules {
			if !a.used[r.origin] && !seen[r.origin] {
				seen[r.origin] = true
				out = append(out, r.origin)
			}
		}
	}
	slices.Sort(out)
	return out
}

func mapValues[V any](m map[string]V) []V {
	out := make([]V, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, m[k])
	}
	return out
}

// has matches an RBAC list: the value itself or "*".
func has(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }

// checkInstallerRBAC: config/olmv1/pre-v1.11/installer-rbac.yaml lets the ServiceAccount of
// config/olmv1/pre-v1.11/clusterextension.yaml install and upgrade operator101 in AllNamespaces and in
// OwnNamespace mode: the ServiceAccount exists in the install namespace, and everything installerRequests
// lists is allowed. The other way round, every rule of the directory must allow something the bundle needs,
// so that it does not grow beyond the bundle. Mirrors docs/howto/derive-service-account.md and
// internal/operator-controller/authorization/rbac.go, both at v1.10.0 (the last release that installs with
// that ServiceAccount).
func checkInstallerRBAC(r *repo) []error {
	c := r.olmv1Pre111
	ext := c.extension
	if ext.Spec.ServiceAccount == nil || ext.Spec.ServiceAccount.Name == "" {
		return []error{fmt.Errorf("%s names no serviceAccount (operator-controller v1.0 to v1.10 require one)", c.extensionFile)}
	}
	ns, sa := ext.Spec.Namespace, ext.Spec.ServiceAccount.Name
	var errs []error
	if !slices.ContainsFunc(c.installerSA, func(u unstructured.Unstructured) bool { return u.GetName() == sa && u.GetNamespace() == ns }) {
		errs = append(errs, fmt.Errorf("%s creates no ServiceAccount %s/%s", c.dir, ns, sa))
	}
	a := newAuthorizer(c, ns, sa)
	for _, mode := range []struct{ name, watch string }{{"AllNamespaces", ""}, {"OwnNamespace", ns}} {
		objs, err := render(r.bundle, ns, mode.watch)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		seen := map[request]bool{}
		for _, req := range installerRequests(objs, ext.Metadata.Name) {
			if seen[req] {
				continue
			}
			seen[req] = true
			if !a.allows(req) {
				errs = append(errs, fmt.Errorf("%s: ServiceAccount %s/%s may not %s", mode.name, ns, sa, req))
			}
		}
	}
	for _, origin := range a.unused() {
		errs = append(errs, fmt.Errorf("%s: %s allows nothing the bundle needs", c.dir, origin))
	}
	return errs
}

// checkServiceAccountByVersion: each ClusterExtension is what its operator-controller versions need.
// config/olmv1/clusterextension.yaml (v1.11 and later) has no spec.serviceAccount, not even an empty one:
// v1.11.0 deprecates and ignores it, warns about it (ValidatingAdmissionPolicy
// clusterextension-serviceaccount-deprecated) and will remove it, and installs with operator-controller's
// own cluster-admin ServiceAccount (api/v1/clusterextension_types.go,
// helm/olmv1/templates/validatingadmissionpolicy-clusterextension-serviceaccount-deprecated.yml,
// helm/olmv1/templates/rbac/clusterrolebinding-operator-controller-manager-rolebinding.yml, all v1.11.0);
// so config/olmv1/ holds no installer RBAC either. config/olmv1/pre-v1.11/clusterextension.yaml (v1.0 to
// v1.10) names one (api/v1/clusterextension_types.go, v1.0.0 to v1.10.0: required), and is otherwise the
// same ClusterExtension, so that the two do not drift apart.
func checkServiceAccountByVersion(r *repo) []error {
	var errs []error
	cur, pre := r.olmv1, r.olmv1Pre111
	if cur.extension.Spec.ServiceAccount != nil {
		errs = append(errs, fmt.Errorf("%s sets spec.serviceAccount, which operator-controller v1.11+ ignores and will remove: leave it to %s",
			cur.extensionFile, pre.extensionFile))
	}
	var rbac []string
	for _, u := range cur.installerSA {
		rbac = append(rbac, "ServiceAccount "+u.GetName())
	}
	for _, name := range sortedKeys(cur.clusterRoles) {
		rbac = append(rbac, "ClusterRole "+name)
	}
	for _, name := range sortedKeys(cur.roles) {
		rbac = append(rbac, "Role "+name)
	}
	for _, b := range cur.crbs {
		rbac = append(rbac, "ClusterRoleBinding "+b.Name)
	}
	for _, b := range cur.rbs {
		rbac = append(rbac, "RoleBinding "+b.Namespace+"/"+b.Name)
	}
	if len(rbac) > 0 {
		errs = append(errs, fmt.Errorf("%s holds installer RBAC (%s), which operator-controller v1.11+ does not use: it belongs in %s",
			cur.dir, strings.Join(rbac, ", "), pre.dir))
	}
	if pre.extension.Spec.ServiceAccount == nil || pre.extension.Spec.ServiceAccount.Name == "" {
		errs = append(errs, fmt.Errorf("%s names no spec.serviceAccount, which operator-controller v1.0 to v1.10 require", pre.extensionFile))
	}
	a, b := cur.extension, pre.extension
	a.Spec.ServiceAccount, b.Spec.ServiceAccount = nil, nil
	if !reflect.DeepEqual(a, b) {
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		errs = append(errs, fmt.Errorf("%s differs from %s in more than spec.serviceAccount:\n%s\n%s",
			pre.extensionFile, cur.extensionFile, jb, ja))
	}
	return errs
}
