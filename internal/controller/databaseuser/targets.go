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
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/mysqlaccount"
)

// What the Database controller (package database) shares with DatabaseUser's: the DatabaseTarget a `target`
// label picks, whether this installation serves it, the login to its server, and the target's policy for a
// namespace. One answer for both kinds.

// Outcome is why a target could not be used: a Ready reason, the tenant's message, the cluster admin's
// detail, and whether to retry with backoff (Retry) or at the next resync (Recheck).
type Outcome struct {
	Reason, Message, Detail string
	Retry, Recheck          bool
}

func exported(o outcome) *Outcome {
	return &Outcome{Reason: o.reason, Message: o.message, Detail: o.detail, Retry: o.retry, Recheck: o.recheck}
}

// TargetOf is the DatabaseTarget obj's `target` label names, defaultTarget without one.
func TargetOf(obj client.Object, defaultTarget string) string {
	if t := obj.GetLabels()[mygroupv1alpha1.TargetLabel]; t != "" {
		return t
	}
	return defaultTarget
}

// ReadTarget reads the DatabaseTarget name from c (the cache), as a DatabaseUser's reconcile does: an
// Outcome when there is none, it cannot be read, or another installation serves it.
func ReadTarget(ctx context.Context, c client.Reader, operatorNamespace, name string) (*mygroupv1alpha1.DatabaseTarget, *Outcome) {
	t, out := getTarget(ctx, c, operatorNamespace, name)
	if out != nil {
		return nil, exported(*out)
	}
	return t, nil
}

// Login logs in to t's server as its admin account, reading its admin Secret with secrets (past the cache).
// The caller closes the client. On failure it returns the Outcome, the admin password redacted.
func Login(ctx context.Context, secrets client.Reader, t *mygroupv1alpha1.DatabaseTarget, connectTimeout time.Duration) (*mysqlaccount.Client, *Outcome) {
	db, failed, _, _ := connect(ctx, secrets, &Config{ConnectTimeout: connectTimeout}, t)
	if db == nil {
		return nil, exported(failed)
	}
	return db, nil
}

// NamespaceAllowed: t's allowedNamespaces include ns.
func NamespaceAllowed(t *mygroupv1alpha1.DatabaseTarget, ns string) bool {
	return namespaceAllowed(t.Spec.AllowedNamespaces, ns)
}

// DatabasePolicy is the databases t allows namespace ns (its `databases`, ${namespace} replaced).
func DatabasePolicy(t *mygroupv1alpha1.DatabaseTarget, ns string) mysqlaccount.Policy {
	return databasePolicy(&t.Spec, ns)
}
