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

package kit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// ErrStale: a status write met a newer version of the object (the cache was behind). Complete turns it into
// a new look in ConflictRetry.
var ErrStale = errors.New("the object changed since it was read")

// ConflictRetry is how soon a reconcile whose status write met a newer version of the object runs again. The
// newer version may differ only in its status, which ChangedByOthers does not let through.
const ConflictRetry = 250 * time.Millisecond

// maxNote keeps an Event's note under the API server's limit of 1kB.
const maxNote = 1000

// Event is one Event to record on the object whose status changed.
type Event struct {
	// Type is corev1.EventTypeNormal or corev1.EventTypeWarning.
	Type string
	// Reason is the condition's (or phase's) reason, Action what the controller was doing.
	Reason, Action string
	// Note is the message; Report shortens it to the API server's limit.
	Note string
}

// Report ends a reconcile: obj holds the status just derived from what was observed, before is obj as it was
// read. When the two differ, the status is written as a patch carrying before's resourceVersion (ErrStale when
// the object changed meanwhile, so that a stale status never overwrites a newer one), and then each event is
// recorded: an Event tells of a status that is stored. When they do not differ, nothing is written and no
// Event is recorded. An object deleted meanwhile is not an error.
func Report(ctx context.Context, c client.Client, rec recorder.EventRecorder, before, obj client.Object, events ...Event) error {
	if equality.Semantic.DeepEqual(before, obj) {
		return nil
	}
	if err := c.Status().Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		switch {
		case apierrors.IsConflict(err):
			return fmt.Errorf("writing the status of %s: %w", client.ObjectKeyFromObject(obj), ErrStale)
		case apierrors.IsNotFound(err):
			return nil
		}
		return fmt.Errorf("writing the status of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	for _, e := range events {
		rec.Eventf(obj, nil, e.Type, e.Reason, e.Action, "%s", eventNote(e.Note))
	}
	return nil
}

// eventNote shortens a note to the API server's limit.
func eventNote(note string) string {
	if len(note) > maxNote {
		return note[:maxNote-3] + "..."
	}
	return note
}
