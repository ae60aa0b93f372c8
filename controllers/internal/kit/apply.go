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
// Every object operator101 renders is applied under one field manager, FieldOwner. To decide whether a write
// is needed, the fields FieldOwner manages are extracted from the observed object (client-go's Extract<Kind>
// functions read them from managedFields) and compared with the desired apply configuration. This matches
// server-side apply's own semantics: a field someone else changed (kubectl scale, an edit) is no longer owned
// by FieldOwner, so it shows as a difference and is taken back; a field someone else added, which FieldOwner
// never set, is left alone and costs no write.
package kit

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldOwner is the field manager of every write operator101 makes with server-side apply.
const FieldOwner = "operator101"

// Extractor returns the fields of observed that fieldManager manages, as an apply configuration
// (for example appsv1ac.ExtractDeployment).
type Extractor[O client.Object, A runtime.ApplyConfiguration] func(observed O, fieldManager string) (A, error)

// ErrNotOwned: a child's name is taken by an object the custom resource does not control.
var ErrNotOwned = errors.New("exists and is not controlled by this resource; rename or delete it")

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

// ApplyChild applies desired unless observed already matches it. observed is what the cache holds (empty
// when the child does not exist). An existing child must be controlled by owner: the operator does not take
// over objects it did not create. kind names the child's kind in the error.
func ApplyChild[O client.Object, A runtime.ApplyConfiguration](ctx context.Context, c client.Client, owner metav1.Object,
	kind string, observed O, desired A, extract Extractor[O, A]) error {
	if observed.GetUID() != "" && !metav1.IsControlledBy(observed, owner) {
		return fmt.Errorf("%s %s/%s %w", kind, observed.GetNamespace(), observed.GetName(), ErrNotOwned)
	}
	if _, err := IfChanged(ctx, c, Found(observed), desired, extract); err != nil {
		return err
	}
	return nil
}

// IfChanged applies desired unless observed already carries exactly desired under FieldOwner. Pass a nil
// observed when the object does not exist. It reports whether it wrote.
func IfChanged[O client.Object, A runtime.ApplyConfiguration](ctx context.Context, c client.Client, observed O,
	desired A, extract Extractor[O, A]) (bool, error) {
	if !isNil(observed) {
		current, err := extract(observed, FieldOwner)
		if err != nil {
			return false, fmt.Errorf("reading the fields %s manages: %w", FieldOwner, err)
		}
		same, err := Equal(current, desired)
		if err != nil {
			return false, err
		}
		if same {
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
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return false, fmt.Errorf("applying %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return true, nil
}

// Equal reports whether two apply configurations (or any API objects) hold the same fields and values.
// Quantities compare by value, so "0.5" equals "500m". Metadata the server assigns (uid, resourceVersion,
// creationTimestamp, generation, managedFields) is not compared: controller-runtime writes the server's answer
// back into an applied configuration, and Extract never returns those fields.
func Equal(a, b any) (bool, error) {
	ua, err := toMap(a)
	if err != nil {
		return false, err
	}
	ub, err := toMap(b)
	if err != nil {
		return false, err
	}
	return equality.Semantic.DeepEqual(ua, ub), nil
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

// lastApplied is the annotation `kubectl apply` keeps a whole copy of the object in (a MyWeb's page included).
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// TrimForCache is a cache transform: it drops the managedFields entries of every manager but FieldOwner, and
// the copy of the object `kubectl apply` keeps in an annotation. IfChanged needs only FieldOwner's entries, and
// the others are most of an object's metadata; nothing in operator101 reads the kubectl annotation, and no
// object is written back from the cache whole (status and finalizers go as patches of what changed).
func TrimForCache(obj any) (any, error) {
	accessor, ok := obj.(metav1.Object)
	if !ok {
		return obj, nil
	}
	if a := accessor.GetAnnotations(); a[lastApplied] != "" {
		delete(a, lastApplied)
		accessor.SetAnnotations(a)
	}
	fields := accessor.GetManagedFields()
	if len(fields) == 0 {
		return obj, nil
	}
	kept := fields[:0:0]
	for _, f := range fields {
		if f.Manager == FieldOwner {
			kept = append(kept, f)
		}
	}
	accessor.SetManagedFields(kept)
	return obj, nil
}
