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
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/cachetrim"
)

// ForCache is how the manager's cache holds DatabaseUsers: with the one label the reconciler and the target
// index read (mygroupv1alpha1.TargetLabel), a digest of all labels and annotations in place of the others (a
// `kubectl annotate` still brings a check at once, through reconciler.ChangedByOthers; cachetrim.Metadata), and of
// the finalizers only operator101's, whether it is there: the reconciler patches the list on the object it
// reads past the cache (patchFinalizer). The spec and status are bounded by the schema and kept.
func ForCache() ctrlcache.ByObject {
	trim := cachetrim.Metadata(mygroupv1alpha1.TargetLabel)
	return ctrlcache.ByObject{Transform: func(obj any) (any, error) {
		if d, ok := obj.(*mygroupv1alpha1.DatabaseUser); ok && len(d.Finalizers) > 0 {
			if controllerutil.ContainsFinalizer(d, mygroupv1alpha1.Finalizer) {
				d.Finalizers = []string{mygroupv1alpha1.Finalizer}
			} else {
				d.Finalizers = nil
			}
		}
		return trim(obj)
	}}
}
