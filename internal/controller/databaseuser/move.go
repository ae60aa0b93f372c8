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
	"errors"
	"fmt"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/mysqlaccount"
)

// The move step: a DatabaseUser whose `target` label changed leaves the target it lived in before.

// leavePreviousTarget drops the account from the target it lived in before the `target` label changed
// (status.target remembers it), unless cleanupPolicy is Skip, both targets are the same server, or the
// previous target is gone or served elsewhere. Until that works, status.target keeps the previous target, so
// that the move is retried with backoff.
func (r *Reconciler) leavePreviousTarget(ctx context.Context, targets *targetReads, dbu *mygroupv1alpha1.DatabaseUser, name string) error {
	prevName := dbu.Status.Target
	if prevName == "" || prevName == name || dbu.Spec.CleanupPolicy == mygroupv1alpha1.CleanupSkip {
		return nil
	}

	// The previous target: nothing to drop where this installation cannot reach, or where the new target
	// is the same server under another name.
	prev, gone := targets.get(ctx, prevName)
	if gone != nil && !gone.retry {
		return nil // nothing this installation can reach: no account of ours to drop there
	}
	if gone == nil {
		if cur, _ := targets.get(ctx, name); cur != nil && cur.Spec.AdminSecretRef == prev.Spec.AdminSecretRef {
			return nil // the same server under another name
		}
	}

	// Drop it there.
	out := r.onServer(ctx, targets, prevName, func(db *mysqlaccount.Client) error {
		res, err := db.Drop(ctx, dbu.Spec.User, accountHost(dbu), claimant(dbu))
		if err == nil {
			r.droppedEvent(ctx, dbu, prevName, res, "AccountMoved", "dropped from previous target")
		}
		return err
	})
	if out == nil {
		return nil
	}

	// Not yet: the status says so under the previous target, and the move is retried with backoff.
	*out = out.within(fmt.Sprintf("cannot drop the account from previous target %q yet: ", prevName), "")
	if err := r.report(ctx, dbu, prevName, *out); err != nil {
		return err
	}
	return errors.New(out.reason + ": " + out.logged())
}
