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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/mysqlaccount"
)

// What both controllers do with a DatabaseTarget: find it, decide whether this installation serves it, and log
// in to its server as its admin account. A DatabaseUser's steps do all three through onServer.

// targetReads are the DatabaseTargets one reconcile of a DatabaseUser has read: each is read at most once,
// whichever steps need it (the move step needs both the previous and the current target, the account step
// the current one again). Made afresh by each reconcile: nothing is kept from one to the next.
type targetReads struct {
	c                 client.Reader
	operatorNamespace string
	read              map[string]targetRead
	// ca is the ca.crt of each target's admin Secret that onServer logged in with: what a connection Secret
	// publishes as the CA certificate that verifies the server.
	ca map[string][]byte
}

// targetRead is what getTarget found: a target this installation serves, or the outcome that says why not.
type targetRead struct {
	target *mygroupv1alpha1.DatabaseTarget
	out    *outcome
}

// targetReads starts the reads of one reconcile.
func (r *Reconciler) targetReads() *targetReads {
	return &targetReads{c: r.Client, operatorNamespace: r.cfg.OperatorNamespace, read: map[string]targetRead{},
		ca: map[string][]byte{}}
}

// get is getTarget, read once per reconcile.
func (ts *targetReads) get(ctx context.Context, name string) (*mygroupv1alpha1.DatabaseTarget, *outcome) {
	got, ok := ts.read[name]
	if !ok {
		got.target, got.out = getTarget(ctx, ts.c, ts.operatorNamespace, name)
		ts.read[name] = got
	}
	if got.out != nil {
		out := *got.out // a step may change its copy
		return nil, &out
	}
	return got.target, nil
}

// onServer is how every step of a DatabaseUser reaches a database server: it takes the DatabaseTarget name
// from targets (read at most once per reconcile), logs in to its server as the admin account, runs do, and
// closes the connection. It returns nil when do succeeded, or else the outcome of what failed: the target
// (missing, served by another installation), its admin Secret, the login, or do's error (failure), with the
// admin password and secrets redacted.
func (r *Reconciler) onServer(ctx context.Context, targets *targetReads, name string,
	do func(*mysqlaccount.Client) error, secrets ...string) *outcome {
	t, out := targets.get(ctx, name)
	if out != nil {
		return out
	}
	db, failed, admin, ca := connect(ctx, r.Reader, &r.cfg, t)
	if db == nil {
		return &failed
	}
	targets.ca[name] = ca
	defer func() { _ = db.Close() }()
	if err := do(db); err != nil {
		out := failure(err, "", append(secrets, admin)...)
		return &out
	}
	return nil
}

// getTarget reads the DatabaseTarget name from the cache. It returns an outcome (and no target) when there is
// none, or when its admin Secret is in another namespace than this operator's: an installation reads Secrets
// only in its own namespace, so another installation serves that target.
func getTarget(ctx context.Context, c client.Reader, operatorNamespace, name string) (*mygroupv1alpha1.DatabaseTarget, *outcome) {
	t := &mygroupv1alpha1.DatabaseTarget{}
	if err := c.Get(ctx, types.NamespacedName{Name: name}, t); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &outcome{reason: mygroupv1alpha1.ReasonUnknownTarget, message: fmt.Sprintf(
				"DatabaseTarget %q does not exist: the cluster admin creates targets (kubectl get databasetargets)", name)}
		}
		return nil, &outcome{reason: mygroupv1alpha1.ReasonDatabaseError,
			message: fmt.Sprintf("reading DatabaseTarget %q: %v", name, err), retry: true}
	}
	if operatorNamespace == "" {
		return nil, &outcome{reason: mygroupv1alpha1.ReasonTargetNotServed, message: "the operator does not know its " +
			"namespace (POD_NAMESPACE or OPERATOR_NAMESPACE is unset), so it serves no DatabaseTarget"}
	}
	if !servedHere(t, operatorNamespace) {
		// Where the admin Secret lives and where the operator runs are the cluster admin's: the detail.
		return nil, &outcome{reason: mygroupv1alpha1.ReasonTargetNotServed, message: fmt.Sprintf(
			"DatabaseTarget %q is served by another installation of operator101, not by the one watching this "+
				"namespace%s", name, adminsPart),
			detail: fmt.Sprintf("DatabaseTarget %q keeps its admin Secret in namespace %q; the operator watching this "+
				"namespace runs in %q and reads Secrets only there", name, t.Spec.AdminSecretRef.Namespace, operatorNamespace)}
	}
	return t, nil
}

// servedHere: the target's admin Secret is in this operator's namespace.
func servedHere(t *mygroupv1alpha1.DatabaseTarget, operatorNamespace string) bool {
	return t.Spec.AdminSecretRef.Namespace == operatorNamespace
}

// connect logs in to the target's server as its admin account. On failure it returns nil and the outcome.
// The admin password is returned for redaction, and the Secret's ca.crt (for connection Secrets).
func connect(ctx context.Context, secrets client.Reader, cfg *Config, t *mygroupv1alpha1.DatabaseTarget) (*mysqlaccount.Client, outcome, string, []byte) {
	ref := t.Spec.AdminSecretRef
	s := &corev1.Secret{}
	// The Secret's name, and what is wrong with it, are the cluster admin's: the detail.
	unusable := fmt.Sprintf("the admin Secret of DatabaseTarget %q cannot be used%s", t.Name, adminsPart)
	if err := secrets.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, s); err != nil {
		return nil, outcome{reason: mygroupv1alpha1.ReasonTargetSecretInvalid, message: unusable, detail: fmt.Sprintf(
			"reading the admin Secret of DatabaseTarget %q: %v", t.Name, err), retry: true}, "", nil
	}
	target, err := targetFromSecret(&t.Spec, s)
	if err != nil {
		return nil, outcome{reason: mygroupv1alpha1.ReasonTargetSecretInvalid, message: unusable,
			detail: redact(fmt.Sprintf("DatabaseTarget %q: %v", t.Name, err), target.Password), retry: true}, target.Password, nil
	}
	db, err := mysqlaccount.Open(ctx, target, cfg.ConnectTimeout)
	if err != nil {
		return nil, failure(err, fmt.Sprintf("DatabaseTarget %q: ", t.Name), target.Password), target.Password, nil
	}
	return db, outcome{}, target.Password, s.Data["ca.crt"]
}
