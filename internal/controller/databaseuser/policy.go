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
// policy refuses. Which databases are allowed (the system schemas, the `*` glob) is mysqlaccount.Policy's to
// decide: the same answer for a grant asked here and an account adopted there. Table-tested in policy_test.go.

// refusal is why the policy refuses a DatabaseUser: a Ready reason and a message a person can act on.
type refusal struct{ reason, message string }

// allowance is what the target's policy gives a DatabaseUser: the databases its namespace may be granted,
// whether its account may be adopted (existingAccounts: Adopt, with its user listed for its namespace), and
// whether the account must require TLS (requireTLS).
type allowance struct {
	databases  mysqlaccount.Policy
	adopt      bool
	requireTLS bool
}

// checkPolicy returns what the target's policy gives dbu, and a refusal unless it allows everything dbu asks
// for. The allowance is computed either way; a refused DatabaseUser may use none of it.
func checkPolicy(target *mygroupv1alpha1.DatabaseTarget, dbu *mygroupv1alpha1.DatabaseUser) (allowance, *refusal) {
	spec, ns := &target.Spec, dbu.Namespace
	allowed := allowance{databases: databasePolicy(spec, ns), adopt: adoptable(spec, ns, dbu.Spec.User),
		requireTLS: spec.RequireTLS}
	if !namespaceAllowed(spec.AllowedNamespaces, ns) {
		return allowed, &refusal{mygroupv1alpha1.ReasonTargetNotAllowed, fmt.Sprintf(
			"DatabaseTarget %q does not allow namespace %q (its allowedNamespaces are set by the cluster admin)",
			target.Name, ns)}
	}
	if prefix := expandNamespace(spec.UserPrefix, ns); !strings.HasPrefix(dbu.Spec.User, prefix) {
		return allowed, &refusal{mygroupv1alpha1.ReasonUserNotAllowed, fmt.Sprintf(
			"DatabaseTarget %q requires user names in namespace %q to begin with %q", target.Name, ns, prefix)}
	}
	for _, g := range dbu.Spec.Grants {
		if mysqlaccount.SystemSchema(g.Database) {
			return allowed, &refusal{mygroupv1alpha1.ReasonGrantNotAllowed, fmt.Sprintf(
				"database %q is a system schema: it is never granted through a DatabaseUser", g.Database)}
		}
		if !allowed.databases.AllowsDatabase(g.Database) {
			return allowed, &refusal{mygroupv1alpha1.ReasonGrantNotAllowed, fmt.Sprintf(
				"DatabaseTarget %q allows namespace %q grants on %s only, not on database %q",
				target.Name, ns, allowed.databases, g.Database)}
		}
	}
	return allowed, nil
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

// databasePolicy is the databases the target allows namespace ns, with ${namespace} replaced by ns.
func databasePolicy(spec *mygroupv1alpha1.DatabaseTargetSpec, ns string) mysqlaccount.Policy {
	var p mysqlaccount.Policy
	for _, d := range spec.Databases {
		p.Databases = append(p.Databases, expandNamespace(d, ns))
	}
	return p
}

func expandNamespace(s, ns string) string {
	return strings.ReplaceAll(s, mygroupv1alpha1.NamespacePlaceholder, ns)
}
