/*
Copyright 2026 The operator101 Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package databaseuser

import (
	"fmt"
	"slices"
	"strings"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/mysqlaccount"
)

// The target's policy, as a pure function of the DatabaseTarget's spec and the DatabaseUser: what the cluster
// admin allows a namespace to ask of a database server. Nothing is sent to the server for a DatabaseUser the
// policy refuses. Table-tested in policy_test.go.

// refusal is why the policy refuses a DatabaseUser: a Ready reason and a message a person can act on.
type refusal struct{ reason, message string }

// checkPolicy returns nil when the target's policy allows everything dbu asks for.
func checkPolicy(target *mygroupv1alpha1.DatabaseTarget, dbu *mygroupv1alpha1.DatabaseUser) *refusal {
	spec, ns := &target.Spec, dbu.Namespace
	if !namespaceAllowed(spec.AllowedNamespaces, ns) {
		return &refusal{mygroupv1alpha1.ReasonTargetNotAllowed, fmt.Sprintf(
			"DatabaseTarget %q does not allow namespace %q (its allowedNamespaces are set by the cluster admin)",
			target.Name, ns)}
	}
	if prefix := expandNamespace(spec.UserPrefix, ns); !strings.HasPrefix(dbu.Spec.User, prefix) {
		return &refusal{mygroupv1alpha1.ReasonUserNotAllowed, fmt.Sprintf(
			"DatabaseTarget %q requires user names in namespace %q to begin with %q", target.Name, ns, prefix)}
	}
	for _, g := range dbu.Spec.Grants {
		if system(g.Database) {
			return &refusal{mygroupv1alpha1.ReasonGrantNotAllowed, fmt.Sprintf(
				"database %q is a system schema: it is never granted through a DatabaseUser", g.Database)}
		}
		if !databaseAllowed(spec.Databases, ns, g.Database) {
			return &refusal{mygroupv1alpha1.ReasonGrantNotAllowed, fmt.Sprintf(
				"DatabaseTarget %q allows namespace %q grants on %s only, not on database %q",
				target.Name, ns, describePatterns(spec.Databases, ns), g.Database)}
		}
	}
	return nil
}

// adoptable: the target adopts existing accounts, and lists user for namespace ns and for no other namespace
// (a name the admin gave two namespaces belongs to neither).
func adoptable(spec *mygroupv1alpha1.DatabaseTargetSpec, ns, user string) bool {
	if spec.ExistingAccounts != mygroupv1alpha1.ExistingAccountsAdopt {
		return false
	}
	found := false
	for _, a := range spec.AdoptableAccounts {
		if slices.Contains(a.Users, user) {
			if a.Namespace != ns {
				return false
			}
			found = true
		}
	}
	return found
}

// namespaceAllowed: ns is listed, or "*" is.
func namespaceAllowed(allowed []string, ns string) bool {
	return slices.Contains(allowed, "*") || slices.Contains(allowed, ns)
}

// system reports whether db is one of the server's own schemas or operator101's. The server compares
// database names case-insensitively on some systems (lower_case_table_names), so this does too.
func system(db string) bool {
	return slices.ContainsFunc(mysqlaccount.SystemSchemas, func(s string) bool { return strings.EqualFold(s, db) })
}

// databaseAllowed: db matches one of the patterns, with ${namespace} replaced by ns.
func databaseAllowed(patterns []string, ns, db string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return matchPattern(expandNamespace(p, ns), db) })
}

func expandNamespace(s, ns string) string {
	return strings.ReplaceAll(s, mygroupv1alpha1.NamespacePlaceholder, ns)
}

func describePatterns(patterns []string, ns string) string {
	if len(patterns) == 0 {
		return "no database"
	}
	q := make([]string, len(patterns))
	for i, p := range patterns {
		q[i] = fmt.Sprintf("%q", expandNamespace(p, ns))
	}
	return strings.Join(q, ", ")
}

// matchPattern matches name against pattern, where only `*` is special (any run of characters, also none).
// Written here because path.Match and filepath.Match also give `?`, `[` and `\` meaning, and database names
// may contain those.
func matchPattern(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(name, mid)
		if i < 0 {
			return false
		}
		name = name[i+len(mid):]
	}
	return strings.HasSuffix(name, last)
}
