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

package olmrbac

import (
	"fmt"
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	authorizationv1 "k8s.io/api/authorization/v1"
)

// TableVerbs are the verbs the permission table reports.
var TableVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// Row is one row of the permission table: a resource the CSV names, and the object name its rule names ("":
// none, the rule covers every object).
type Row struct{ Group, Resource, Name string }

// Rows are the table's rows for csv: every (API group, resource) of its permissions and clusterPermissions, once
// per object name a rule restricts it to (resourceNames) and once for the rules that name none, sorted.
func Rows(csv *v1alpha1.ClusterServiceVersion) []Row {
	var rows []Row
	s := csv.Spec.InstallStrategy.StrategySpec
	for _, p := range append(slices.Clone(s.ClusterPermissions), s.Permissions...) {
		for _, r := range p.Rules {
			names := r.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, n := range names {
						if !slices.Contains(rows, Row{g, res, n}) {
							rows = append(rows, Row{g, res, n})
						}
					}
				}
			}
		}
	}
	slices.SortFunc(rows, func(a, b Row) int {
		if c := strings.Compare(a.Group+"/"+a.Resource, b.Group+"/"+b.Resource); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return rows
}

// PermissionTable is the table docs/admin/security.md shows for an install mode: for every row of csv, the verbs of
// TableVerbs that allowed answers yes to, in the operator's namespace ns, the namespace it serves (target),
// kube-system and cluster-wide. A row with a name is asked about that object (SubjectAccessReview's name).
func PermissionTable(csv *v1alpha1.ClusterServiceVersion, ns, target string,
	allowed func(authorizationv1.ResourceAttributes) (bool, error)) (string, error) {
	var b strings.Builder
	b.WriteString("| API group | resource | its namespace | target namespace | kube-system | cluster-wide |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, r := range Rows(csv) {
		group := r.Group
		if group == "" {
			group = "core"
		}
		fmt.Fprintf(&b, "| `%s` | `%s`", group, r.Resource)
		if r.Name != "" {
			fmt.Fprintf(&b, " named `%s`", r.Name)
		}
		b.WriteString(" |")
		for _, where := range []string{ns, target, "kube-system", ""} {
			var verbs []string
			for _, v := range TableVerbs {
				res, sub, _ := strings.Cut(r.Resource, "/")
				ok, err := allowed(authorizationv1.ResourceAttributes{Verb: v, Group: r.Group, Resource: res,
					Subresource: sub, Name: r.Name, Namespace: where})
				if err != nil {
					return "", err
				}
				if ok {
					verbs = append(verbs, v)
				}
			}
			cell := strings.Join(verbs, ", ")
			if cell == "" {
				cell = "—"
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

// DocTable is the permission table docs/admin/security.md (doc) shows for mode, between its `<!-- e2e:rbac MODE -->`
// and `<!-- /e2e:rbac -->` markers; ok is false when there is none.
func DocTable(doc, mode string) (table string, ok bool) {
	begin, end := "<!-- e2e:rbac "+mode+" -->\n", "<!-- /e2e:rbac -->"
	i := strings.Index(doc, begin)
	if i < 0 {
		return "", false
	}
	j := strings.Index(doc[i:], end)
	if j < 0 {
		return "", false
	}
	return doc[i+len(begin) : i+j], true
}
