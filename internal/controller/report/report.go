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

// Package report ends a reconcile: it writes the status derived from what was observed when it changed, with
// the object's resourceVersion, and records an Event for each transition a person may act on.
package report

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// ErrStale: a status write met a newer version of the object (the cache was behind). reconciler.Complete turns
// it into a new look in ConflictRetry.
var ErrStale = errors.New("the object changed since it was read")

// ConflictRetry is how soon a reconcile whose status write met a newer version of the object runs again. The
// newer version may differ only in its status, which reconciler.ChangedByOthers does not let through.
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
//
// A status write of a version this process already wrote the status of is sure to be refused: Report returns
// ErrStale without sending it (Statuses). That is the common case of a reconcile that runs just after the one
// that wrote, before the cache has the written version (a Deployment's progress is put ahead in the queue). So is
// a write of a version the cache has moved past while the reconcile ran (movedPast).
func (s *Statuses) Report(ctx context.Context, c client.Client, rec recorder.EventRecorder, before, obj client.Object, events ...Event) error {
	if equality.Semantic.DeepEqual(before, obj) {
		return nil
	}
	if s.has(before) || movedPast(ctx, c, before) {
		return fmt.Errorf("writing the status of %s: %w", client.ObjectKeyFromObject(obj), ErrStale)
	}
	// Remembered before the write: the write's watch event, which makes Seen forget it, may come before the
	// answer, and an entry put after it would stay until the object's next event.
	s.put(before)
	if err := patchStatus(ctx, c, before, obj); err != nil {
		s.drop(before) // before's status was not replaced
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

// movedPast tells whether c (the manager's cache) already holds a newer version than before: the reconcile read
// before, then looked at the world (a database login, say) while the cache moved on, and the write would be
// refused. One cached read, only when a status is about to be written.
func movedPast(ctx context.Context, c client.Client, before client.Object) bool {
	latest, ok := before.DeepCopyObject().(client.Object)
	if !ok {
		return false
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(before), latest); err != nil {
		return false // the write tells: deleted meanwhile (ignored) or refused
	}
	return latest.GetResourceVersion() != before.GetResourceVersion()
}

// patchStatus writes obj's status as a merge patch from before, with before's resourceVersion, and reads back
// only the metadata (no reconcile reads the answer; the API server encodes less): obj gets the new
// resourceVersion.
func patchStatus(ctx context.Context, c client.Client, before, obj client.Object) error {
	data, err := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}).Data(obj)
	if err != nil {
		return fmt.Errorf("computing the status patch of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return err
	}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(gvk)
	meta.SetNamespace(obj.GetNamespace())
	meta.SetName(obj.GetName())
	if err := c.Status().Patch(ctx, meta, client.RawPatch(types.MergePatchType, data)); err != nil {
		return err
	}
	obj.SetResourceVersion(meta.GetResourceVersion())
	return nil
}

// Statuses remembers, by UID, the resourceVersion whose status Report last replaced, until the cache holds a
// newer version of the object (Seen) or the object is gone (Forget): one per manager, told of every event of
// the kinds whose status it writes. Its own code because controller-runtime keeps no record of a controller's
// writes for its cache to catch up with.
type Statuses struct {
	mu sync.Mutex
	m  map[types.UID]string
}

// NewStatuses returns a Statuses that remembers nothing yet. A nil *Statuses remembers nothing ever: every
// status write it is asked for is sent.
func NewStatuses() *Statuses { return &Statuses{m: map[types.UID]string{}} }

func (v *Statuses) has(o client.Object) bool {
	if v == nil {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	rv, ok := v.m[o.GetUID()]
	return ok && rv == o.GetResourceVersion()
}

func (v *Statuses) put(o client.Object) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.m[o.GetUID()] = o.GetResourceVersion()
}

// drop drops the entry of o's UID if it names o's resourceVersion.
func (v *Statuses) drop(o client.Object) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if rv, ok := v.m[o.GetUID()]; ok && rv == o.GetResourceVersion() {
		delete(v.m, o.GetUID())
	}
}

// Seen drops the entry of o's UID unless it names o's resourceVersion: the cache has moved past it.
func (v *Statuses) Seen(o metav1.Object) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if rv, ok := v.m[o.GetUID()]; ok && rv != o.GetResourceVersion() {
		delete(v.m, o.GetUID())
	}
}

// Forget drops the entry of o's UID: the object is gone.
func (v *Statuses) Forget(o metav1.Object) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.m, o.GetUID())
}

// eventNote shortens a note to the API server's limit.
func eventNote(note string) string {
	if len(note) > maxNote {
		return note[:maxNote-3] + "..."
	}
	return note
}
