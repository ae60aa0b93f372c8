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
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/apply"
	"github.com/operator101/operator101/internal/controller/managed"
)

// Where a DatabaseUser's password comes from: its Secret, read at every check (see "How a changed password
// Secret is noticed" in databaseuser_controller.go); or, when spec.password is unset, the Secret
// `<name>-password` the operator generated for it.

// readPassword reads the DatabaseUser's password from its Secret, with a GET past the cache (no Secret is
// cached or watched). It returns the outcome, and no password, when the Secret or its key is missing or empty.
func (r *Reconciler) readPassword(ctx context.Context, dbu *mygroupv1alpha1.DatabaseUser) (string, *outcome) {
	if dbu.Spec.Password == nil {
		return r.generatedPassword(ctx, dbu)
	}
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

// generatedPasswordLength is how long a generated password is: 32 characters of 62, about 190 bits. Letters
// and digits only, so that every form of the connection Secret (URI, DSN, JDBC URL) carries it unescaped, and
// well below MySQL's caching_sha2_password limit.
const generatedPasswordLength = 32

const passwordAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// GeneratePassword returns a new random password from crypto/rand: generatedPasswordLength characters of
// passwordAlphabet, each uniformly drawn (bytes past the largest multiple of the alphabet's size are dropped).
func GeneratePassword() (string, error) {
	const limit = 256 - 256%len(passwordAlphabet)
	out := make([]byte, 0, generatedPasswordLength)
	buf := make([]byte, 64)
	for len(out) < generatedPasswordLength {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("reading random bytes: %w", err)
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < generatedPasswordLength {
				out = append(out, passwordAlphabet[int(b)%len(passwordAlphabet)])
			}
		}
	}
	return string(out), nil
}

// GeneratedPasswordSecretName is the name of the Secret the operator generates dbu's password into.
func GeneratedPasswordSecretName(dbu *mygroupv1alpha1.DatabaseUser) string {
	return dbu.Name + mygroupv1alpha1.GeneratedPasswordSuffix
}

// PasswordSecret is the Secret holding a password generated for dbu, labelled as operator101's and controlled
// by dbu.
func PasswordSecret(dbu *mygroupv1alpha1.DatabaseUser, password string) *corev1ac.SecretApplyConfiguration {
	return corev1ac.Secret(GeneratedPasswordSecretName(dbu), dbu.Namespace).
		WithLabels(map[string]string{managed.ByLabel: managed.By}).
		WithOwnerReferences(ownerRef(dbu)).
		WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{mygroupv1alpha1.GeneratedPasswordKey: []byte(password)})
}

// generatedPassword is the password in dbu's generated Secret, read past the cache: a Secret dbu controls that
// holds one is used as it is; with none, a new password is generated and the Secret created (an apply that
// only creates, so that a Secret made meanwhile is never overwritten); one whose key is empty gets a new one.
// A Secret of that name that dbu does not control is left as it is (ChildNotOwned). Deleting the Secret
// rotates the password at the next check.
func (r *Reconciler) generatedPassword(ctx context.Context, dbu *mygroupv1alpha1.DatabaseUser) (string, *outcome) {
	name := GeneratedPasswordSecretName(dbu)
	secret := &corev1.Secret{}
	err := r.Reader.Get(ctx, types.NamespacedName{Namespace: dbu.Namespace, Name: name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		secret = nil
	case err != nil:
		return "", &outcome{reason: mygroupv1alpha1.ReasonSecretNotFound, message: fmt.Sprintf("reading Secret %q: %v", name, err), retry: true}
	case !metav1.IsControlledBy(secret, dbu):
		if a := r.secretApplier(); a.Refused != nil {
			a.Refused("Secret")
		}
		return "", &outcome{reason: mygroupv1alpha1.ReasonChildNotOwned, recheck: true, message: fmt.Sprintf(
			"Secret %q, where the operator keeps the password it generates when spec.password is unset, exists and "+
				"is not controlled by this DatabaseUser: delete it, or name a password Secret in spec.password", name)}
	case len(secret.Data[mygroupv1alpha1.GeneratedPasswordKey]) > 0:
		return string(secret.Data[mygroupv1alpha1.GeneratedPasswordKey]), nil
	}
	password, err := GeneratePassword()
	if err != nil {
		return "", &outcome{reason: mygroupv1alpha1.ReasonSecretWriteFailed, message: err.Error(), retry: true}
	}
	if _, err := apply.IfChanged(withoutBodies(ctx), r.secretApplier(), secret, PasswordSecret(dbu, password), corev1ac.ExtractSecret); err != nil {
		return "", &outcome{reason: mygroupv1alpha1.ReasonSecretWriteFailed, retry: true,
			message: redact(fmt.Sprintf("writing the generated password's Secret %q: %v", name, err), password)}
	}
	return password, nil
}
