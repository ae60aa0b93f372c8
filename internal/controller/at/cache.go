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

package at

import (
	"sigs.k8s.io/controller-runtime/pkg/cache"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
)

// ForCache is how the manager's cache holds Ats: as trimAt leaves them.
func ForCache() cache.ByObject {
	return cache.ByObject{Transform: trimAt}
}

// trimAt is the cache transform of Ats: the At controller and the Upgradeable gate read an At's identity,
// resourceVersion, generation, spec (a command of at most 4 KiB; not its env, read from the API server when a
// pod is built) and status, and nothing of its metadata
// beside: its labels, annotations (up to 256 KiB, the tenant's), owner references, finalizers and
// managedFields are dropped. Both see every event of an At (no predicate compares its metadata), and an At is
// never written from the cache whole: its status goes as a merge patch of what changed (reconciler.Base.Report). The
// transform is idempotent, as client-go asks.
func trimAt(obj any) (any, error) {
	at, ok := obj.(*cnatv1alpha1.At)
	if !ok {
		return obj, nil
	}
	at.Labels, at.Annotations, at.OwnerReferences, at.Finalizers, at.ManagedFields = nil, nil, nil, nil, nil
	// The command's environment (up to 32 values of 4 KiB): a pod is built only from the At read past the
	// cache, right before its create.
	at.Spec.Env = nil
	at.GenerateName = ""
	return at, nil
}
