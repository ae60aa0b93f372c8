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
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/operator101/operator101/test/testenv"
)

// checks are the OLM v1 limits, each written from the upstream file its function's comment names.
var checks = []struct {
	name string
	run  func(*repo) []error
}{
	{"Layout", checkLayout},
	{"PackageName", checkPackageName},
	{"Deployments", checkDeployments},
	{"CRDs", checkCRDs},
	{"ObjectKinds", checkObjectKinds},
	{"NoAPIServices", checkNoAPIServices},
	{"InstallModes", checkInstallModes},
	{"Webhooks", checkWebhooks},
	{"ServiceAccounts", checkServiceAccounts},
	{"NoOperatorConditions", checkNoOperatorConditions},
	{"NoDependencies", checkNoDependencies},
	{"CatalogBundles", checkCatalogBundles},
	{"UpgradeGraph", checkUpgradeGraph},
	{"GraphMatchesCSV", checkGraphMatchesCSV},
	{"CRDUpgradeSafety", checkCRDUpgradeSafety},
	{"ClusterExtension", checkClusterExtension},
	{"ServiceAccountByVersion", checkServiceAccountByVersion},
	{"InstallerRBAC", checkInstallerRBAC},
}

func runCheck(r *repo, name string) []error {
	for _, c := range checks {
		if c.name == name {
			return c.run(r)
		}
	}
	panic("no check " + name)
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestOLMv1Limits runs every check on the committed bundle, catalog and config/olmv1. It reads files only,
// so it runs in -short mode too.
func TestOLMv1Limits(t *testing.T) {
	r, err := loadRepo(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			for _, err := range c.run(r) {
				t.Error(err)
			}
		})
	}
}

// TestRenderCoversTheBundle keeps the installer check honest: the objects it derives the installer's rights
// from are the bundle's (the CRDs, the fourteen ClusterRoles, the Service, the Deployment, the ServiceAccount
// and the (Cluster)Roles generated from the CSV), so that a grant missing for one of them is seen.
func TestRenderCoversTheBundle(t *testing.T) {
	r, err := loadRepo(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	count := func(objs []renderedObject) map[string]int {
		out := map[string]int{}
		for _, o := range objs {
			out[o.gvr.Resource]++
		}
		return out
	}
	s := r.bundle.csv.Spec.InstallStrategy.StrategySpec
	all, err := render(r.bundle, "operator101-system", "")
	if err != nil {
		t.Fatal(err)
	}
	own, err := render(r.bundle, "operator101-system", "operator101-system")
	if err != nil {
		t.Fatal(err)
	}
	clusterRolesInBundle := 0
	for _, o := range r.bundle.others {
		if o.GetKind() == "ClusterRole" {
			clusterRolesInBundle++
		}
	}
	for _, tc := range []struct {
		mode string
		objs []renderedObject
		want map[string]int
	}{
		{"AllNamespaces", all, map[string]int{
			"customresourcedefinitions": len(r.bundle.crds), "deployments": len(s.DeploymentSpecs), "serviceaccounts": 1,
			"services": 1, "clusterroles": clusterRolesInBundle + len(s.ClusterPermissions) + len(s.Permissions),
			"clusterrolebindings": len(s.ClusterPermissions) + len(s.Permissions),
		}},
		{"OwnNamespace", own, map[string]int{
			"customresourcedefinitions": len(r.bundle.crds), "deployments": len(s.DeploymentSpecs), "serviceaccounts": 1,
			"services": 1, "clusterroles": clusterRolesInBundle + len(s.ClusterPermissions),
			"clusterrolebindings": len(s.ClusterPermissions), "roles": len(s.Permissions), "rolebindings": len(s.Permissions),
		}},
	} {
		got := count(tc.objs)
		for _, k := range sortedKeys(tc.want) {
			if got[k] != tc.want[k] {
				t.Errorf("%s: %d %s rendered, want %d", tc.mode, got[k], k, tc.want[k])
			}
		}
		for _, k := range sortedKeys(got) {
			if _, ok := tc.want[k]; !ok {
				t.Errorf("%s: %d %s rendered, want none", tc.mode, got[k], k)
			}
		}
	}
}

// TestChecksCatchBrokenCopies breaks a copy of bundle/, catalog/ and config/olmv1/ in one way at a time and
// expects the check for that limit to fail with the given words: every check can fail.
func TestChecksCatchBrokenCopies(t *testing.T) {
	const csvFile = "bundle/manifests/operator101.clusterserviceversion.yaml"
	// bundle/'s upgrade edge as written, so the edits below hold whichever release is the newest.
	r, err := loadRepo(repoRoot(t))
	must(t, err)
	replaces, skipRange := r.bundle.csv.Spec.Replaces, r.bundle.csv.Annotations["olm.skipRange"]
	if replaces == "" || skipRange == "" {
		t.Fatalf("bundle/ replaces %q with skipRange %q: want the newest release and a range", replaces, skipRange)
	}
	broken := map[string]bool{}
	defer func() {
		for _, c := range checks {
			if !broken[c.name] {
				t.Errorf("check %s has no broken copy here: add one that makes it fail", c.name)
			}
		}
	}()
	for _, tc := range []struct {
		name    string
		check   string
		want    string
		breakIt func(t *testing.T, dir string)
	}{
		{"a subdirectory in manifests/", "Layout", "subdirectory", func(t *testing.T, dir string) {
			mkdir(t, filepath.Join(dir, "bundle/manifests/extra"))
		}},
		{"no package name", "PackageName", "names no package", func(t *testing.T, dir string) {
			replace(t, dir, "bundle/metadata/annotations.yaml", "package.v1: operator101", "package.v1: ''")
		}},
		{"two deployments of one name", "Deployments", "two deployments", func(t *testing.T, dir string) {
			editObject(t, dir, csvFile, func(u map[string]any) {
				deps, _, _ := unstructured.NestedSlice(u, "spec", "install", "spec", "deployments")
				must(t, unstructured.SetNestedSlice(u, append(deps, deps[0]), "spec", "install", "spec", "deployments"))
			})
		}},
		{"an owned CRD missing", "CRDs", "not in the bundle", func(t *testing.T, dir string) {
			must(t, os.Remove(filepath.Join(dir, "bundle/manifests/cnat.programming-kubernetes.info_ats.yaml")))
		}},
		{"an unsupported kind", "ObjectKinds", `Job "cleanup": kind not supported`, func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "bundle/manifests/cleanup_batch_v1_job.yaml"),
				"apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: cleanup\nspec:\n  template:\n    spec:\n      containers: []\n")
		}},
		{"an owned APIService", "NoAPIServices", "apiservicedefinitions are not supported", func(t *testing.T, dir string) {
			editObject(t, dir, csvFile, func(u map[string]any) {
				must(t, unstructured.SetNestedSlice(u, []any{map[string]any{
					"group": "metrics.operator101.io", "version": "v1", "kind": "Usage", "name": "usages",
					"displayName": "Usage", "deploymentName": "operator101-controller-manager",
				}}, "spec", "apiservicedefinitions", "owned"))
			})
		}},
		{"AllNamespaces not supported", "InstallModes", "does not support AllNamespaces", func(t *testing.T, dir string) {
			replace(t, dir, csvFile, "  - supported: true\n    type: AllNamespaces", "  - supported: false\n    type: AllNamespaces")
		}},
		{"a webhook rule on every API group", "Webhooks", `API group "*" is forbidden`, func(t *testing.T, dir string) {
			editObject(t, dir, csvFile, func(u map[string]any) {
				must(t, unstructured.SetNestedSlice(u, []any{map[string]any{
					"type": "ValidatingAdmissionWebhook", "generateName": "vall.operator101.io", "admissionReviewVersions": []any{"v1"},
					"deploymentName": "operator101-controller-manager", "sideEffects": "None", "containerPort": int64(443),
					"rules": []any{map[string]any{"apiGroups": []any{"*"}, "apiVersions": []any{"*"}, "operations": []any{"CREATE"}, "resources": []any{"*"}}},
				}}, "spec", "webhookdefinitions"))
			})
		}},
		{"a bundled ServiceAccount OLM v1 also generates", "ServiceAccounts", "also generates", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "bundle/manifests/operator101-controller-manager_v1_serviceaccount.yaml"),
				"apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: operator101-controller-manager\n")
		}},
		{"OPERATOR_CONDITION_NAME in the CSV", "NoOperatorConditions", "sets OPERATOR_CONDITION_NAME", func(t *testing.T, dir string) {
			replace(t, dir, csvFile, "                - name: POD_NAMESPACE\n",
				"                - name: OPERATOR_CONDITION_NAME\n                  value: operator101.v0.2.0\n                - name: POD_NAMESPACE\n")
		}},
		{"a package dependency in the catalog", "NoDependencies", "property olm.package.required", func(t *testing.T, dir string) {
			replace(t, dir, "catalog/operator101/index.yaml", "properties:\n- type: olm.gvk\n",
				"properties:\n- type: olm.package.required\n  value:\n    packageName: cert-manager\n    versionRange: '>=1.0.0'\n- type: olm.gvk\n")
		}},
		{"metadata/dependencies.yaml", "NoDependencies", "dependencies.yaml", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "bundle/metadata/dependencies.yaml"),
				"dependencies:\n- type: olm.gvk\n  value: {group: cert-manager.io, kind: Certificate, version: v1}\n")
		}},
		{"a catalog bundle without a version", "CatalogBundles", "no olm.package property", func(t *testing.T, dir string) {
			replace(t, dir, "catalog/operator101/index.yaml", "- type: olm.package\n  value:\n    packageName: operator101\n    version: 0.1.0\n", "")
		}},
		{"no edge from the newest release", "UpgradeGraph", replaces + " has no successor", func(t *testing.T, dir string) {
			replace(t, dir, csvFile, "    olm.skipRange: '"+skipRange+"'\n", "")
			replace(t, dir, csvFile, "  replaces: "+replaces+"\n", "")
		}},
		{"a skipRange that does not parse", "UpgradeGraph", "does not parse", func(t *testing.T, dir string) {
			replace(t, dir, csvFile, "  replaces: "+replaces+"\n", "")
			replace(t, dir, csvFile, "olm.skipRange: '"+skipRange+"'", "olm.skipRange: 'from 0.1.0'")
		}},
		{"a release's channel entry differs from its CSV", "GraphMatchesCSV", "the CSV's spec.replaces", func(t *testing.T, dir string) {
			replace(t, dir, "catalog/operator101/index.yaml", "- name: operator101.v0.1.0\n", "- name: operator101.v0.1.0\n  replaces: operator101.v0.0.9\n")
		}},
		{"a CRD field removed", "CRDUpgradeSafety", `field "nodePortNumber" removed`, func(t *testing.T, dir string) {
			editObject(t, dir, "bundle/manifests/operator.k8s-summit.org_mywebs.yaml", func(u map[string]any) {
				versions, _, _ := unstructured.NestedSlice(u, "spec", "versions")
				v := versions[0].(map[string]any)
				unstructured.RemoveNestedField(v, "schema", "openAPIV3Schema", "properties", "spec", "properties", "nodePortNumber")
				must(t, unstructured.SetNestedSlice(u, versions, "spec", "versions"))
			})
		}},
		{"a CRD enum loses a value", "CRDUpgradeSafety", "enum value", func(t *testing.T, dir string) {
			editObject(t, dir, "bundle/manifests/mygroup.handsomeguy.cn_databaseusers.yaml", func(u map[string]any) {
				versions, _, _ := unstructured.NestedSlice(u, "spec", "versions")
				v := versions[0].(map[string]any)
				must(t, unstructured.SetNestedSlice(v, []any{"Delete"}, "schema", "openAPIV3Schema", "properties", "spec", "properties", "cleanupPolicy", "enum"))
				must(t, unstructured.SetNestedSlice(u, versions, "spec", "versions"))
			})
		}},
		{"a watchNamespace the install modes refuse", "ClusterExtension", "does not support OwnNamespace", func(t *testing.T, dir string) {
			replace(t, dir, csvFile, "  - supported: true\n    type: OwnNamespace", "  - supported: false\n    type: OwnNamespace")
			replace(t, dir, "config/olmv1/clusterextension.yaml",
				"  # config:\n  #   configType: Inline\n  #   inline:\n  #     watchNamespace: operator101-system\n",
				"  config:\n    configType: Inline\n    inline:\n      watchNamespace: operator101-system\n")
		}},
		{"a channel the catalog lacks", "ClusterExtension", `channel "fast" is not in the catalog`, func(t *testing.T, dir string) {
			replace(t, dir, "config/olmv1/clusterextension.yaml", "channels: [stable]", "channels: [fast]")
		}},
		{"a channel the catalog lacks, pre-v1.11", "ClusterExtension", `config/olmv1/pre-v1.11/clusterextension.yaml: ClusterExtension channel "fast"`, func(t *testing.T, dir string) {
			replace(t, dir, "config/olmv1/pre-v1.11/clusterextension.yaml", "channels: [stable]", "channels: [fast]")
		}},
		{"no install namespace in pre-v1.11", "ClusterExtension", `config/olmv1/pre-v1.11 does not create the install namespace`, func(t *testing.T, dir string) {
			replace(t, dir, "config/olmv1/pre-v1.11/clusterextension.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: operator101-system\n---\n", "")
		}},
		{"a serviceAccount for v1.11+", "ServiceAccountByVersion", "config/olmv1/clusterextension.yaml sets spec.serviceAccount", func(t *testing.T, dir string) {
			replace(t, dir, "config/olmv1/clusterextension.yaml", "  namespace: operator101-system\n",
				"  namespace: operator101-system\n  serviceAccount:\n    name: operator101-installer\n")
		}},
		{"an empty serviceAccount for v1.11+", "ServiceAccountByVersion", "config/olmv1/clusterextension.yaml sets spec.serviceAccount", func(t *testing.T, dir string) {
			replace(t, dir, "config/olmv1/clusterextension.yaml", "  namespace: operator101-system\n",
				"  namespace: operator101-system\n  serviceAccount: {}\n")
		}},
		{"the installer RBAC beside the v1.11+ ClusterExtension", "ServiceAccountByVersion", "config/olmv1 holds installer RBAC (ServiceAccount operator101-installer", func(t *testing.T, dir string) {
			must(t, os.Rename(filepath.Join(dir, "config/olmv1/pre-v1.11/installer-rbac.yaml"), filepath.Join(dir, "config/olmv1/installer-rbac.yaml")))
		}},
		{"no serviceAccount for v1.0 to v1.10", "ServiceAccountByVersion", "config/olmv1/pre-v1.11/clusterextension.yaml names no spec.serviceAccount", func(t *testing.T, dir string) {
			replace(t, dir, "config/olmv1/pre-v1.11/clusterextension.yaml", "  serviceAccount:\n    name: operator101-installer\n", "")
		}},
		{"the two ClusterExtensions drift apart", "ServiceAccountByVersion", "differs from config/olmv1/clusterextension.yaml in more than spec.serviceAccount", func(t *testing.T, dir string) {
			replace(t, dir, "config/olmv1/pre-v1.11/clusterextension.yaml", "upgradeConstraintPolicy: CatalogProvided", "upgradeConstraintPolicy: SelfCertified")
		}},
		{"no serviceAccount for the installer RBAC", "InstallerRBAC", "config/olmv1/pre-v1.11/clusterextension.yaml names no serviceAccount", func(t *testing.T, dir string) {
			replace(t, dir, "config/olmv1/pre-v1.11/clusterextension.yaml", "  serviceAccount:\n    name: operator101-installer\n", "")
		}},
		{"the installer cannot grant secrets get", "InstallerRBAC", "may not get secrets cluster-wide", func(t *testing.T, dir string) {
			replace(t, dir, "config/olmv1/pre-v1.11/installer-rbac.yaml", "- apiGroups: [\"\"]\n  resources: [secrets]\n  verbs: [create, get, patch]\n", "")
		}},
		{"the installer cannot update one CRD", "InstallerRBAC", "may not update customresourcedefinitions.apiextensions.k8s.io ats.cnat", func(t *testing.T, dir string) {
			replace(t, dir, "config/olmv1/pre-v1.11/installer-rbac.yaml", "  - ats.cnat.programming-kubernetes.info\n", "")
		}},
		{"the installer cannot update the Deployment", "InstallerRBAC", "may not update deployments.apps operator101-controller-manager in operator101-system", func(t *testing.T, dir string) {
			replace(t, dir, "config/olmv1/pre-v1.11/installer-rbac.yaml", "  resourceNames: [operator101-controller-manager]\n# OwnNamespace", "  resourceNames: [someone-else]\n# OwnNamespace")
		}},
		{"the Role bound to another ServiceAccount", "InstallerRBAC", "OwnNamespace: ServiceAccount operator101-system/operator101-installer may not create roles", func(t *testing.T, dir string) {
			replace(t, dir, "config/olmv1/pre-v1.11/installer-rbac.yaml",
				"  kind: Role\n  name: operator101-installer\nsubjects:\n- kind: ServiceAccount\n  name: operator101-installer\n",
				"  kind: Role\n  name: operator101-installer\nsubjects:\n- kind: ServiceAccount\n  name: someone-else\n")
		}},
		{"the installer granted more than the bundle needs", "InstallerRBAC", "ClusterRole operator101-installer, rule 26 allows nothing the bundle needs", func(t *testing.T, dir string) {
			replace(t, dir, "config/olmv1/pre-v1.11/installer-rbac.yaml", "- nonResourceURLs: [/metrics]\n  verbs: [get]\n",
				"- nonResourceURLs: [/metrics]\n  verbs: [get]\n- apiGroups: [batch]\n  resources: [jobs]\n  verbs: [create]\n")
		}},
	} {
		broken[tc.check] = true
		t.Run(tc.name, func(t *testing.T) {
			dir := copyRepo(t, repoRoot(t))
			tc.breakIt(t, dir)
			r, err := loadRepo(dir)
			if err != nil {
				t.Fatal(err)
			}
			errs := runCheck(r, tc.check)
			for _, err := range errs {
				if strings.Contains(err.Error(), tc.want) {
					return
				}
			}
			t.Errorf("check %s on the broken copy: want an error containing %q, got %v", tc.check, tc.want, errs)
		})
	}
}

// copyRepo copies what the checks read into a temporary directory.
func copyRepo(t *testing.T, root string) string {
	t.Helper()
	dir := t.TempDir()
	for _, sub := range []string{"bundle", "catalog", "config/olmv1"} {
		src := filepath.Join(root, sub)
		err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if d.IsDir() {
				return os.MkdirAll(filepath.Join(dir, rel), 0o755)
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, rel), raw, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, path string) { t.Helper(); must(t, os.MkdirAll(path, 0o755)) }

func write(t *testing.T, path, content string) {
	t.Helper()
	must(t, os.WriteFile(path, []byte(content), 0o644))
}

// replace replaces the first occurrence of old in the file; old must be there.
func replace(t *testing.T, dir, file, old, nu string) {
	t.Helper()
	edit(t, dir, file, old, func(s string) string { return strings.Replace(s, old, nu, 1) })
}

func edit(t *testing.T, dir, file, old string, fn func(string) string) {
	t.Helper()
	path := filepath.Join(dir, file)
	raw, err := os.ReadFile(path)
	must(t, err)
	if !strings.Contains(string(raw), old) {
		t.Fatalf("%s does not contain %q: the test's edit is out of date", file, old)
	}
	write(t, path, fn(string(raw)))
}

// editObject rewrites a one-object YAML file through fn.
func editObject(t *testing.T, dir, file string, fn func(map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, file)
	raw, err := os.ReadFile(path)
	must(t, err)
	obj := map[string]any{}
	must(t, yaml.Unmarshal(raw, &obj))
	fn(obj)
	out, err := yaml.Marshal(obj)
	must(t, err)
	write(t, path, string(out))
}
