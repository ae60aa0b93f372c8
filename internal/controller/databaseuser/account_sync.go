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

	"sigs.k8s.io/controller-runtime/pkg/log"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/mysqlaccount"
)

// The account step: a DatabaseUser's account is made to match its spec, with the password of its Secret (or
// the one generated for it), on the server of its DatabaseTarget, if the target's policy allows it; then its
// connection Secret is written (connection.go).

// syncAccount makes the account match the spec, if the target's policy allows it, and says how it went.
func (r *Reconciler) syncAccount(ctx context.Context, targets *targetReads, dbu *mygroupv1alpha1.DatabaseUser, name string) outcome {
	// The target, and its policy: nothing is sent to a server for a DatabaseUser the policy refuses.
	target, out := targets.get(ctx, name)
	if out != nil {
		return *out
	}
	allowed, refused := checkPolicy(target, dbu)
	if refused != nil {
		return outcome{reason: refused.reason, message: refused.message}
	}

	// The password, from its Secret, before any connection.
	password, out := r.readPassword(ctx, dbu)
	if out != nil {
		return *out
	}

	// On the target's server, the account is made to match: mysqlaccount reads what is there and changes only
	// what differs.
	account := desiredClaimedAccount(dbu, allowed, password)
	var changed int
	var server mysqlaccount.Server
	if out := r.onServer(ctx, targets, name, func(db *mysqlaccount.Client) error {
		server = db.Server()
		var err error
		changed, err = db.Ensure(ctx, account)
		return err
	}, password); out != nil {
		if out.reason == mygroupv1alpha1.ReasonPasswordTooLong && dbu.Spec.Password != nil {
			ref := dbu.Spec.Password
			return out.within(fmt.Sprintf("Secret %q, key %q: ", ref.Name, ref.Key), "")
		}
		return *out
	}
	if changed > 0 {
		log.FromContext(ctx).Info("account changed to match the spec", "statements", changed, "server", server.String())
	}

	// The Secret applications read, when the DatabaseUser asks for one (connection.go).
	if out := r.syncConnection(ctx, dbu, target, connection{flavor: server.Flavor, password: password,
		ca: targets.ca[name]}); out != nil {
		return *out
	}
	return outcome{reason: mygroupv1alpha1.ReasonReady, message: fmt.Sprintf("account %s@%s matches the spec in %s",
		account.User, account.Host, server)}
}
