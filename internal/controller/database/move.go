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
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/mysqlaccount"
)

// leavePreviousTarget: a Database whose `target` label changed since its last check (status.target) leaves
// its former target. A move never drops data, whatever the cleanupPolicy: the database stays there, and its
// claim is removed, so that it is no longer recorded as this Database's (the server's admin decides what
// becomes of it). Until the former server answers, the move is retried with backoff.
func (r *Reconciler) leavePreviousTarget(ctx context.Context, d *mygroupv1alpha1.Database, name string) error {
	prevName := d.Status.Target
	if prevName == "" || prevName == name {
		return nil
	}
	prev, gone := r.readTarget(ctx, prevName)
	if gone != nil && !gone.retry {
		return nil // nothing this installation can reach: no claim of ours to remove there
	}
	if gone == nil {
		if cur, _ := r.readTarget(ctx, name); cur != nil && cur.Spec.AdminSecretRef == prev.Spec.AdminSecretRef {
			return nil // the same server under another name: the claim stays
		}
	}
	var out *outcome
	if gone != nil {
		out = gone
	} else {
		out = r.onServer(ctx, prev, func(db *mysqlaccount.Client) error {
			released, err := db.ReleaseDatabase(ctx, d.Spec.Name, claimant(d))
			if err == nil && released {
				r.Recorder.Eventf(d, nil, corev1.EventTypeNormal, "DatabaseLeft", "Move",
					"database %q stays in previous target %q, no longer recorded as this Database's", d.Spec.Name, prevName)
			}
			return err
		})
	}
	if out == nil {
		return nil
	}
	*out = out.within(fmt.Sprintf("cannot leave previous target %q yet: ", prevName), "")
	if err := r.report(ctx, d, prevName, *out); err != nil {
		return err
	}
	return errors.New(out.reason + ": " + out.logged())
}
