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

// Applying children: server-side apply, and only when they differ from what is wanted.
//
// Every object operator101 renders is applied under one field manager, FieldManager. To decide whether a write
// is needed, the fields FieldManager manages are extracted from the observed object (client-go's Extract<Kind>
// functions read them from managedFields) and compared with the desired apply configuration; the manager's cache
// keeps only their Digest, taken when the object arrives (ChildForCache). This matches
// server-side apply's own semantics: a field someone else changed (kubectl scale, an edit) is no longer owned
// by FieldManager, so it shows as a difference and is taken back; a field someone else added, which FieldManager
// never set, is left alone and costs no write.
package kit

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldManager is the field manager of every write operator101 makes with server-side apply.
const FieldManager = "operator101"

// Extractor returns the fields of observed that fieldManager manages, as an apply configuration
// (for example appsv1ac.ExtractDeployment).
type Extractor[O client.Object, A runtime.ApplyConfiguration] func(observed O, fieldManager string) (A, error)

// ErrNotOwned: a child's name is taken by an object the custom resource does not control.
var ErrNotOwned = errors.New("exists and is not controlled by this resource; rename or delete it")

// NotOwned is the ErrNotOwned error of obj, an object of kind; it names the object (kind namespace/name).
func NotOwned(kind string, obj metav1.Object) error {
	return fmt.Errorf("%s %s/%s %w", kind, obj.GetNamespace(), obj.GetName(), ErrNotOwned)
}

// OnlyNotOwned tells whether err is made of ErrNotOwned alone: every error joined in it (errors.Join) is one.
func OnlyNotOwned(err error) bool {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, e := range joined.Unwrap() {
			if !OnlyNotOwned(e) {
				return false
			}
		}
		return true
	}
	return errors.Is(err, ErrNotOwned)
}

// ReadChildren fills each child from the cache under the owner's name; a child that does not exist stays
// empty (Found tells it apart). kind names the owner's kind in the error.
func ReadChildren(ctx context.Context, c client.Reader, kind string, owner client.Object, children ...client.Object) error {
	key := client.ObjectKeyFromObject(owner)
	for _, obj := range children {
		if err := c.Get(ctx, key, obj); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading the children of %s %s: %w", kind, key, err)
		}
	}
	return nil
}

// Found is obj when the cache had it (the API server gave it a UID), nil otherwise.
func Found[O client.Object](obj O) O {
	var zero O
	if obj.GetUID() == "" {
		return zero
	}
	return obj
}

// Controlled is obj when the cache had it and owner controls it, nil otherwise: a status is derived only from
// children the owner controls. An object of the child's name that someone else controls (another kind's child,
// or a tenant's object labelled as the operator's, both of which the cache holds) says nothing of the owner.
func Controlled[O client.Object](obj O, owner metav1.Object) O {
	var zero O
	if obj.GetUID() == "" || !metav1.IsControlledBy(obj, owner) {
		return zero
	}
	return obj
}

// ApplyChild applies desired unless observed already matches it. observed is what the cache holds (empty
// when the cache has no such child). The operator never takes over an object it did not create: a child the
// cache holds must be controlled by owner, and a child the cache lacks is first read from the API server
// through live (the uncached reader, Options.Reader) into observed. An object of that name that owner does not
// control is ErrNotOwned (NotOwned names it), and nothing is written. One that owner controls (the cache has not
// seen it yet: a reconcile soon after the child's create) is compared like a cached one, so it costs no write
// when it already matches. kind names the child's kind in the error.
func ApplyChild[O client.Object, A runtime.ApplyConfiguration](ctx context.Context, c client.Client, live client.Reader,
	owner metav1.Object, kind string, observed O, desired A, extract Extractor[O, A]) error {
	if observed.GetUID() == "" {
		if err := readPast(ctx, live, kind, observed, desired); err != nil {
			return err
		}
	}
	if observed.GetUID() != "" && !metav1.IsControlledBy(observed, owner) {
		return NotOwned(kind, observed)
	}
	_, err := IfChanged(ctx, c, Found(observed), desired, extract)
	if observed.GetUID() == "" && apierrors.IsConflict(err) {
		// Created by someone since the lookup (IfChanged's first write applies only to an absent object): look
		// again, and leave it if it is not owner's.
		if err := readPast(ctx, live, kind, observed, desired); err != nil {
			return err
		}
		if observed.GetUID() != "" && !metav1.IsControlledBy(observed, owner) {
			return NotOwned(kind, observed)
		}
	}
	return err
}

// readPast reads the object of desired's name from the API server into observed, which stays empty when there
// is none.
//
// Why past the cache: the cache holds only objects labelled ManagedByLabel, so someone else's unlabelled object
// of the child's name is not in it, and a forced apply would take it over. The check is one GET, made only for a
// child the cache lacks (its first write, a reconcile that runs before the cache has seen the create, or while
// its name is taken), never for a converged one. An object someone else creates between this GET and the first
// apply is not taken over either: that apply names createOnly.
func readPast[O client.Object](ctx context.Context, live client.Reader, kind string, observed O, desired runtime.ApplyConfiguration) error {
	body, err := toMap(desired)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: body}
	key := client.ObjectKey{Namespace: u.GetNamespace(), Name: u.GetName()}
	// On an error the client decodes nothing, so observed stays empty.
	if err := live.Get(ctx, key, observed); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("looking up %s %s before writing it: %w", kind, key, err)
	}
	return nil
}

// createOnly is the resourceVersion a first apply names (IfChanged with a nil observed). The API server ignores
// a resourceVersion in an apply that creates, and refuses with a Conflict one that names a resourceVersion the
// existing object does not have; no object has this one (resourceVersions are etcd revisions, int64). So the
// apply creates the object and never changes one made by someone else in the meantime: server-side apply has
// no create-only option of its own, and a create would record the fields as an Update, defaults included
// (TestFirstWriteHasNoCreateOnlyForm), costing a second write to own them as an applier.
const createOnly = "18446744073709551615"

// IfChanged applies desired unless observed already carries exactly desired under FieldManager (their Digests
// are the same). Pass a nil observed when the object does not exist: the apply then only creates (createOnly),
// and is refused with a Conflict if the object exists by then. It reports whether it wrote.
func IfChanged[O client.Object, A runtime.ApplyConfiguration](ctx context.Context, c client.Client, observed O,
	desired A, extract Extractor[O, A]) (bool, error) {
	if !isNil(observed) {
		current, err := managedDigest(observed, extract)
		if err != nil {
			return false, err
		}
		want, err := Digest(desired)
		if err != nil {
			return false, err
		}
		if current == want {
			return false, nil
		}
	}
	// Apply a copy: controller-runtime writes the server's answer (resourceVersion included) back into what it
	// applies, and a resourceVersion left in desired would turn the next apply into a conditional one.
	body, err := toMap(desired)
	if err != nil {
		return false, err
	}
	u := &unstructured.Unstructured{Object: body}
	if isNil(observed) {
		u.SetResourceVersion(createOnly)
	}
	err = c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership)
	if err != nil && u.GetResourceVersion() != "" && createOnlyRefused(err) {
		// A server that will not create with a resourceVersion named: the first write as before, with the
		// gap of one round trip since the lookup left open there (docs/security.md).
		u.SetResourceVersion("")
		err = c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership)
	}
	if err != nil {
		return false, fmt.Errorf("applying %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return true, nil
}

// createOnlyRefused tells whether err is a server's refusal of the createOnly apply of an absent object itself
// rather than of the object: the storage layer's "resourceVersion should not be set on objects to be created"
// (some servers' create paths, for some kinds), or NotFound (a server that reads the resourceVersion as a
// precondition on an object that does not exist). A Conflict is the answer createOnly asks for: the object
// exists by now.
func createOnlyRefused(err error) bool {
	return apierrors.IsNotFound(err) || strings.Contains(err.Error(), "resourceVersion should not be set on objects to be created")
}

func toMap(v any) (map[string]any, error) {
	if isNil(v) {
		return nil, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
	if err != nil {
		return nil, fmt.Errorf("converting %T for comparison: %w", v, err)
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		for _, k := range serverAssigned {
			delete(md, k)
		}
	}
	return m, nil
}

var serverAssigned = []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return rv.IsNil()
	}
	return false
}
