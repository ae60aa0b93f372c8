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
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/databaseuser"
	"github.com/operator101/operator101/internal/mysqlaccount"
)

// targetOf is the DatabaseTarget d's `target` label names, as a DatabaseUser's.
func targetOf(d *mygroupv1alpha1.Database, defaultTarget string) string {
	return databaseuser.TargetOf(d, defaultTarget)
}

// claimant is what the server records a database as made for.
func claimant(d *mygroupv1alpha1.Database) mysqlaccount.Claimant {
	return mysqlaccount.Claimant{UID: string(d.UID), Namespace: d.Namespace, Name: d.Name}
}

// desired is the database d asks for.
func desired(d *mygroupv1alpha1.Database) mysqlaccount.Database {
	return mysqlaccount.Database{Name: d.Spec.Name, CharacterSet: d.Spec.CharacterSet, Collation: d.Spec.Collation,
		Claimant: claimant(d)}
}

// readTarget reads the DatabaseTarget name from the cache (package databaseuser's rules: it must exist and be
// this installation's).
func (r *Reconciler) readTarget(ctx context.Context, name string) (*mygroupv1alpha1.DatabaseTarget, *outcome) {
	t, out := databaseuser.ReadTarget(ctx, r.Client, r.cfg.OperatorNamespace, name)
	if out != nil {
		o := shared(out)
		return nil, &o
	}
	return t, nil
}

// onServer logs in to t's server as its admin account, runs do, and closes the connection. It returns nil
// when do succeeded, or else the outcome of what failed.
func (r *Reconciler) onServer(ctx context.Context, t *mygroupv1alpha1.DatabaseTarget, do func(*mysqlaccount.Client) error) *outcome {
	db, out := databaseuser.Login(ctx, r.Reader, t, r.cfg.ConnectTimeout)
	if out != nil {
		o := shared(out)
		return &o
	}
	defer func() { _ = db.Close() }()
	if err := do(db); err != nil {
		o := failure(err)
		return &o
	}
	return nil
}

// syncDatabase makes d's database match its spec on the target name's server, when the target's policy
// allows it: mysqlaccount reads what is there and writes only what differs (nothing when it matches).
func (r *Reconciler) syncDatabase(ctx context.Context, d *mygroupv1alpha1.Database, name string) outcome {
	t, out := r.readTarget(ctx, name)
	if out != nil {
		return *out
	}
	if refused := checkPolicy(t, d); refused != nil {
		return outcome{reason: refused.reason, message: refused.message}
	}
	var changed int
	var server mysqlaccount.Server
	if out := r.onServer(ctx, t, func(db *mysqlaccount.Client) error {
		server = db.Server()
		var err error
		changed, err = db.EnsureDatabase(ctx, desired(d))
		return err
	}); out != nil {
		return *out
	}
	if changed > 0 {
		log.FromContext(ctx).Info("database changed to match the spec", "statements", changed, "server", server.String())
	}
	return outcome{reason: mygroupv1alpha1.ReasonReady, message: fmt.Sprintf("database %q matches the spec in %s",
		d.Spec.Name, server)}
}

// key is d's name for patches.
func key(d *mygroupv1alpha1.Database) client.ObjectKey { return client.ObjectKeyFromObject(d) }
