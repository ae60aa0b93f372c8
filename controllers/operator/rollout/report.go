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

package rollout

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// ConflictRetry is how soon a reconcile whose status write met a newer version of the object runs again. The
// newer version may differ only in its status, which ChangedByOthers does not let through.
const ConflictRetry = 250 * time.Millisecond

// ReadChildren fills each child from the cache under the owner's name; a child that does not exist stays empty
// (Found tells it apart).
func ReadChildren(ctx context.Context, c client.Reader, kind string, owner client.Object, children ...client.Object) error {
	key := client.ObjectKeyFromObject(owner)
	for _, obj := range children {
		if err := c.Get(ctx, key, obj); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading the children of %s %s: %w", kind, key, err)
		}
	}
	return nil
}

// Report ends a reconcile: obj holds the status just derived from what was observed, before is obj as it was
// read. The status is written (a patch with the object's resourceVersion) only when it changed, with one Event
// per transition worth telling; applyErr, the error of writing the children, is returned so that
// controller-runtime retries with exponential backoff (a node port may be freed, a conflicting object deleted).
func Report(ctx context.Context, c client.Client, rec recorder.EventRecorder, kind string, before, obj client.Object,
	oldConds, newConds []metav1.Condition, applyErr error) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	if !equality.Semantic.DeepEqual(before, obj) {
		if err := c.Status().Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsConflict(err) {
				// The cache was behind; look again once it has the newer object.
				logger.V(1).Info("status not written, the object changed meanwhile", "kind", kind)
				return ctrl.Result{RequeueAfter: ConflictRetry}, nil
			}
			return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("writing the status of %s %s: %w", kind,
				client.ObjectKeyFromObject(obj), err))
		}
		for _, t := range Transitions(oldConds, newConds) {
			rec.Eventf(obj, nil, t.EventType, t.Reason, "Reconcile", "%s", t.Note)
		}
	}
	if applyErr != nil {
		logger.Info("children not applied", "error", applyErr.Error())
		return ctrl.Result{}, applyErr
	}
	return ctrl.Result{}, nil
}
