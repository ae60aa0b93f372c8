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

package database

import (
	"fmt"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/databaseuser"
	"github.com/operator101/operator101/internal/mysqlaccount"
)

// The target's policy for a Database, a pure function of the DatabaseTarget and the Database, with the same
// answers as a DatabaseUser's grant gets (package databaseuser's checkPolicy): the namespace must be allowed,
// and the name allowed by the target's databases for it (mysqlaccount.Policy), never a system schema. Nothing
// is sent to the server for a Database the policy refuses. A target's existingAccounts (Adopt) concerns
// accounts only: a database is never adopted.

// refusal is why the policy refuses a Database: a Ready reason and a message a person can act on.
type refusal struct{ reason, message string }

// checkPolicy returns nil when t allows d, else why not.
func checkPolicy(t *mygroupv1alpha1.DatabaseTarget, d *mygroupv1alpha1.Database) *refusal {
	ns, name := d.Namespace, d.Spec.Name
	if !databaseuser.NamespaceAllowed(t, ns) {
		return &refusal{mygroupv1alpha1.ReasonTargetNotAllowed, fmt.Sprintf(
			"DatabaseTarget %q does not allow namespace %q (its allowedNamespaces are set by the cluster admin)",
			t.Name, ns)}
	}
	if mysqlaccount.SystemSchema(name) {
		return &refusal{mygroupv1alpha1.ReasonDatabaseNotAllowed, fmt.Sprintf(
			"database %q is a system schema: it is never managed through a Database", name)}
	}
	if p := databaseuser.DatabasePolicy(t, ns); !p.AllowsDatabase(name) {
		return &refusal{mygroupv1alpha1.ReasonDatabaseNotAllowed, fmt.Sprintf(
			"DatabaseTarget %q allows namespace %q the databases %s only, not %q", t.Name, ns, p, name)}
	}
	return nil
}
