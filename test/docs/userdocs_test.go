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

package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// userSections are the parts of the docs written for users and admins, whose commands must run as written:
// README.md and docs/install, docs/guides, docs/admin. docs/contributing (the lab) and the generated
// docs/reference are not.
var userSections = []string{"README.md", "docs/install/", "docs/guides/", "docs/admin/"}

func isUserDoc(path string) bool {
	for _, s := range userSections {
		if path == s || strings.HasPrefix(path, s) {
			return true
		}
	}
	return false
}

// block is one fenced block of a doc: its language, its body, the e2e marker right before it ("" if none), and
// the line it starts at.
type block struct {
	lang, body, marker string
	line               int
}

var markerLine = regexp.MustCompile(`^<!-- e2e:([a-z]+) -->$`)

func blocks(text string) []block {
	var out []block
	var cur *block
	prev, indent := "", ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			cur = &block{lang: strings.TrimPrefix(trimmed, "```"), line: i + 1}
			indent = line[:len(line)-len(strings.TrimLeft(line, " "))]
			if m := markerLine.FindStringSubmatch(strings.TrimSpace(prev)); m != nil {
				cur.marker = m[1]
			}
		case cur != nil && trimmed == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			// A block indented under a list item: drop the fence's indentation.
			cur.body += strings.TrimPrefix(line, indent) + "\n"
		}
		prev = line
	}
	return out
}

// heredoc is a here-document of a shell block: `<<'YAML'` ... `YAML`.
var heredoc = regexp.MustCompile(`(?s)<<-?'?([A-Z]+)'?\n(.*?)\n([A-Z]+)\n`)

// applied is `kubectl apply` of a file or a kustomization in the tree: -f PATH or -k PATH.
var applied = regexp.MustCompile(`kubectl\b[^\n|;&]*\bapply\b[^\n|;&]*\s-(f|k)\s+([^\s|;&-][^\s|;&]*)`)

// manifests splits YAML text into its documents, each decoded; a document that does not parse is an error.
func manifests(text string) ([]map[string]any, error) {
	var out []map[string]any
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(text, -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		// As the API server decodes JSON: integers as int64, which the CEL rules need.
		raw, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, err
		}
		obj := map[string]any{}
		if err := utiljson.Unmarshal(raw, &obj); err != nil {
			return nil, err
		}
		if len(obj) > 0 {
			out = append(out, obj)
		}
	}
	return out, nil
}

// appliedFiles are the YAML files `kubectl apply -f path` or `-k dir` reads, from the repository's root.
func appliedFiles(t *testing.T, flag, path string) []string {
	t.Helper()
	full := filepath.Join(root, path)
	if flag == "f" {
		return []string{full}
	}
	raw, err := os.ReadFile(filepath.Join(full, "kustomization.yaml"))
	if err != nil {
		t.Errorf("kubectl apply -k %s: %v", path, err)
		return nil
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(raw, &k); err != nil {
		t.Errorf("%s/kustomization.yaml: %v", path, err)
		return nil
	}
	var files []string
	for _, r := range k.Resources {
		f := filepath.Join(full, r)
		if st, err := os.Stat(f); err == nil && st.IsDir() {
			// A base or another overlay: its own kustomization's resources.
			rel, _ := filepath.Rel(root, f)
			files = append(files, appliedFiles(t, flag, rel)...)
			continue
		}
		files = append(files, f)
	}
	return files
}

// TestDocManifestsValidate: every Kubernetes object the user docs show or apply, of a kind operator101 serves,
// is one its CRD admits as written (config/crd/bases: no unknown field, then defaults, the OpenAPI validation
// and the CEL rules, as the API server checks a create): ```yaml blocks, here-documents of shell blocks, and the
// files `kubectl apply -f` and `-k` read. Every other YAML block must parse.
func TestDocManifestsValidate(t *testing.T) {
	schemas, err := LoadSchemas(filepath.Join(root, "config", "crd", "bases"))
	if err != nil {
		t.Fatal(err)
	}
	ours := func(apiVersion string) bool {
		for _, g := range schemas.Groups() {
			if strings.HasPrefix(apiVersion, g+"/") {
				return true
			}
		}
		return false
	}
	checked := 0
	check := func(where, text string) {
		objs, err := manifests(text)
		if err != nil {
			t.Errorf("%s: the YAML does not parse: %v", where, err)
			return
		}
		for _, obj := range objs {
			apiVersion, _ := obj["apiVersion"].(string)
			kind, _ := obj["kind"].(string)
			if apiVersion == "" || kind == "" || !ours(apiVersion) {
				continue
			}
			checked++
			if err := schemas.Validate(obj); err != nil {
				t.Errorf("%s: %v", where, err)
			}
		}
	}
	for _, d := range readDocs(t) {
		if !isUserDoc(d.path) {
			continue
		}
		for _, b := range blocks(d.text) {
			where := d.path + ":" + itoa(b.line)
			switch b.lang {
			case "yaml":
				check(where, b.body)
			case "sh":
				for _, m := range heredoc.FindAllStringSubmatch(b.body, -1) {
					check(where+" (here-document)", m[2])
				}
				for _, m := range applied.FindAllStringSubmatch(b.body, -1) {
					for _, f := range appliedFiles(t, m[1], m[2]) {
						raw, err := os.ReadFile(f)
						if err != nil {
							t.Errorf("%s applies %s: %v", where, m[2], err)
							continue
						}
						rel, _ := filepath.Rel(root, f)
						check(where+" ("+rel+")", string(raw))
					}
				}
			}
		}
	}
	t.Logf("%d objects of operator101's kinds validated against their CRDs", checked)
	if checked < 10 {
		t.Errorf("only %d objects of operator101's kinds validated in the user docs: the blocks are no longer found", checked)
	}
}

// TestSchemasRefuseWhatTheAPIServerRefuses: the validation TestDocManifestsValidate relies on is not vacuous:
// the samples pass, and each kind of mistake the API server refuses is refused here too.
func TestSchemasRefuseWhatTheAPIServerRefuses(t *testing.T) {
	schemas, err := LoadSchemas(filepath.Join(root, "config", "crd", "bases"))
	if err != nil {
		t.Fatal(err)
	}
	web := func(mutate func(spec map[string]any, obj map[string]any)) map[string]any {
		spec := map[string]any{"image": "nginx", "nodePortNumber": int64(30080), "pageContentHtml": "<h1>hi</h1>"}
		obj := map[string]any{"apiVersion": "operator.k8s-summit.org/v1", "kind": "MyWeb",
			"metadata": map[string]any{"name": "web"}, "spec": spec}
		mutate(spec, obj)
		return obj
	}
	if err := schemas.Validate(web(func(map[string]any, map[string]any) {})); err != nil {
		t.Errorf("a valid MyWeb: %v", err)
	}
	for name, obj := range map[string]map[string]any{
		"an unknown field":        web(func(s, _ map[string]any) { s["pageContent"] = "x" }),
		"a missing required one":  web(func(s, _ map[string]any) { delete(s, "image") }),
		"a number over its bound": web(func(s, _ map[string]any) { s["nodePortNumber"] = int64(70000) }),
		"a wrong type":            web(func(s, _ map[string]any) { s["replicas"] = "two" }),
		"a CEL rule (the name)": web(func(_, o map[string]any) {
			o["metadata"] = map[string]any{"name": "Web_1"}
		}),
		"an enum": {"apiVersion": "mygroup.handsomeguy.cn/v1alpha1", "kind": "DatabaseUser",
			"metadata": map[string]any{"name": "u"},
			"spec":     map[string]any{"user": "u", "password": map[string]any{"name": "s", "key": "k"}, "cleanupPolicy": "Never"}},
		"a pattern": {"apiVersion": "cnat.programming-kubernetes.info/v1alpha1", "kind": "At",
			"metadata": map[string]any{"name": "a"}, "spec": map[string]any{"schedule": "tomorrow", "command": "true"}},
		"a version that is not served": {"apiVersion": "operator.k8s-summit.org/v2", "kind": "MyWeb",
			"metadata": map[string]any{"name": "web"}},
	} {
		if err := schemas.Validate(obj); err == nil {
			t.Errorf("%s: admitted", name)
		}
	}
	for _, f := range []string{"operator_v1_myweb.yaml", "cnat_v1alpha1_at.yaml", "mygroup_v1alpha1_databaseuser.yaml",
		"mygroup_v1alpha1_databasetarget.yaml", "mygroup_v1alpha1_database.yaml", "app_v1_appservice.yaml",
		"batch_v1alpha1_appservice.yaml"} {
		raw, err := os.ReadFile(filepath.Join(root, "config", "samples", f))
		if err != nil {
			t.Fatal(err)
		}
		objs, err := manifests(string(raw))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if schemas.Knows(o["apiVersion"].(string), o["kind"].(string)) {
				if err := schemas.Validate(o); err != nil {
					t.Errorf("sample %s: %v", f, err)
				}
			}
		}
	}
}

// builtinResources are the resource names, other than operator101's, that the user docs give kubectl.
var builtinResources = map[string]bool{
	"namespace": true, "namespaces": true, "ns": true, "secret": true, "secrets": true, "pod": true, "pods": true,
	"deploy": true, "deployment": true, "deployments": true, "service": true, "services": true, "svc": true,
	"configmap": true, "configmaps": true, "crd": true, "crds": true, "customresourcedefinitions": true,
	"clusterrole": true, "clusterroles": true, "clusterrolebinding": true, "clusterrolebindings": true,
	"subscription": true, "subscriptions": true, "installplan": true, "installplans": true, "csv": true,
	"clusterserviceversions": true, "catalogsource": true, "catalogsources": true, "operatorgroup": true,
	"operatorcondition": true, "operatorconditions": true, "clusterextension": true, "clusterextensions": true,
	"clustercatalog": true, "clustercatalogs": true, "nodes": true, "node": true, "events": true,
}

// booleanFlags are the kubectl flags the docs give that take no value.
var booleanFlags = map[string]bool{"--all": true, "-A": true, "--all-namespaces": true, "--wait": true,
	"--ignore-not-found": true, "--overwrite": true}

// kubectlVerb is kubectl with a verb that takes resource types, then the rest of the line.
var kubectlVerb = regexp.MustCompile(`kubectl\s+((?:-n\s+\S+\s+|--namespace[= ]\S+\s+|-A\s+)*)(get|describe|delete|patch|annotate|label|scale|wait|edit)\s+([^\n|;&]*)`)

// TestUserShellBlocks: every shell block of the user docs is valid bash, and every resource type it gives
// kubectl is one the cluster serves: one of operator101's CRDs (plural, singular, short name or kind, with or
// without its group) or a Kubernetes or OLM resource the docs name. Run as written: the blocks marked
// <!-- e2e:NAME --> (TestRunBlocks, and the e2e runs them); checked here: every other one.
func TestUserShellBlocks(t *testing.T) {
	known := map[string]bool{}
	for k := range builtinResources {
		known[k] = true
	}
	paths, _ := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(raw, crd); err != nil {
			t.Fatal(err)
		}
		n := crd.Spec.Names
		for _, name := range append([]string{n.Plural, n.Singular, strings.ToLower(n.Kind)}, n.ShortNames...) {
			known[name] = true
			known[name+"."+crd.Spec.Group] = true
		}
	}
	shell, types := 0, 0
	for _, d := range readDocs(t) {
		if !isUserDoc(d.path) {
			continue
		}
		for _, b := range blocks(d.text) {
			if b.lang != "sh" {
				continue
			}
			shell++
			where := d.path + ":" + itoa(b.line)
			cmd := exec.Command("bash", "-n")
			cmd.Stdin = strings.NewReader(b.body)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s: not valid bash: %v\n%s", where, err, out)
			}
			for _, m := range kubectlVerb.FindAllStringSubmatch(strings.ReplaceAll(b.body, "\\\n", " "), -1) {
				var first string
				words := strings.Fields(m[3])
				for i := 0; i < len(words); i++ {
					w := words[i]
					if strings.HasPrefix(w, "#") {
						break // a comment
					}
					if strings.HasPrefix(w, "-") {
						if !strings.Contains(w, "=") && !booleanFlags[w] {
							i++ // the flag's value
						}
						continue
					}
					first = w
					break
				}
				if first == "" {
					continue
				}
				for _, typ := range strings.Split(first, ",") {
					typ, _, _ = strings.Cut(typ, "/")
					types++
					if !known[typ] {
						t.Errorf("%s: kubectl %s %s: no resource %q (not one of operator101's CRDs nor a known kind)", where, m[2], first, typ)
					}
				}
			}
		}
	}
	t.Logf("%d shell blocks, %d resource types given to kubectl", shell, types)
	if shell < 10 || types < 10 {
		t.Errorf("only %d shell blocks and %d resource types in the user docs: the blocks are no longer found", shell, types)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
