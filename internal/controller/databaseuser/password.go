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

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
)

// Where a DatabaseUser's password comes from: its Secret, read at every check (see "How a changed password
// Secret is noticed" in databaseuser_controller.go).

// readPassword reads the DatabaseUser's password from its Secret, with a GET past the cache (no Secret is
// cached or watched). It returns the outcome, and no password, when the Secret or its key is missing or empty.
func (r *Reconciler) readPassword(ctx context.Context, dbu *mygroupv1alpha1.DatabaseUser) (string, *outcome) {
	ref := dbu.Spec.Password
	secret := &corev1.Secret{}
	err := r.Reader.Get(ctx, types.NamespacedName{Namespace: dbu.Namespace, Name: ref.Name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		return "", &outcome{reason: mygroupv1alpha1.ReasonSecretNotFound, message: fmt.Sprintf("Secret %q not found", ref.Name), retry: true}
	case err != nil:
		return "", &outcome{reason: mygroupv1alpha1.ReasonSecretNotFound, message: fmt.Sprintf("reading Secret %q: %v", ref.Name, err), retry: true}
	}
	password, ok := secret.Data[ref.Key]
	if !ok {
		return "", &outcome{reason: mygroupv1alpha1.ReasonKeyNotFound, message: fmt.Sprintf("Secret %q has no key %q", ref.Name, ref.Key), retry: true}
	}
	if len(password) == 0 {
		return "", &outcome{reason: mygroupv1alpha1.ReasonKeyNotFound, message: fmt.Sprintf("key %q of Secret %q is empty", ref.Key, ref.Name), retry: true}
	}
	return string(password), nil
}
