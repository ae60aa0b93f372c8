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

package apply

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"errors"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/operator101/operator101/internal/controller/managed"
	"github.com/operator101/operator101/test/testenv"
)

// TestFirstApplyOnlyCreates: a child's first write (IfChanged with no observed object) is an apply naming
// createOnly, which the API server answers, for each kind of child, by creating the object with every field
// managed.FieldManager's apply (one write, as a plain apply), or, when the name is in use, with a Conflict that leaves
// the object as it is. Why not a create: the server records it as an Update by managed.FieldManager over every field
// after defaulting (a Deployment's strategy, never sent), so managed.FieldManager would hold nothing as an applier and
// need a second write to converge. This test fails if a server version changes either answer.
func TestFirstApplyOnlyCreates(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "apply-first")
	cfg, counter := testenv.Counting(env.Config)
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{managed.ByLabel: managed.By}
	deployment := func(name string) *appsv1ac.DeploymentApplyConfiguration {
		pod := map[string]string{"app": name}
		return appsv1ac.Deployment(name, ns).WithLabels(labels).
			WithSpec(appsv1ac.DeploymentSpec().WithSelector(metav1ac.LabelSelector().WithMatchLabels(pod)).
				WithTemplate(corev1ac.PodTemplateSpec().WithLabels(pod).
					WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("web").WithImage("nginx:1.27")))))
	}
	for _, tc := range []struct {
		kind    string
		obj     client.Object
		desired func(name string) runtime.ApplyConfiguration
		theirs  func(name string) client.Object
	}{
		{"ConfigMap", &corev1.ConfigMap{},
			func(n string) runtime.ApplyConfiguration {
				return corev1ac.ConfigMap(n, ns).WithLabels(labels).WithData(map[string]string{"index.html": "ours"})
			},
			func(n string) client.Object {
				return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n}, Data: map[string]string{"index.html": "theirs"}}
			}},
		{"Service", &corev1.Service{},
			func(n string) runtime.ApplyConfiguration {
				return corev1ac.Service(n, ns).WithLabels(labels).WithSpec(corev1ac.ServiceSpec().
					WithPorts(corev1ac.ServicePort().WithPort(80)).WithSelector(map[string]string{"app": n}))
			},
			func(n string) client.Object {
				return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n},
					Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 8080}}}}
			}},
		{"Deployment", &appsv1.Deployment{},
			func(n string) runtime.ApplyConfiguration { return deployment(n) },
			func(n string) client.Object {
				body, err := runtime.DefaultUnstructuredConverter.ToUnstructured(deployment(n).WithLabels(map[string]string{managed.ByLabel: "someone-else"}))
				if err != nil {
					t.Fatal(err)
				}
				return &unstructured.Unstructured{Object: body}
			}},
	} {
		name := strings.ToLower(tc.kind)
		// Absent: created in one write, every field managed.FieldManager's apply.
		counter.Reset()
		if _, err := IfChanged(ctx, Applier{Client: c, Live: c, Memory: tm}, client.Object(nil), tc.desired(name), extractAny); err != nil {
			t.Fatalf("%s: %v", tc.kind, err)
		}
		if n := counter.Total(); n != 1 {
			t.Errorf("%s: %d writes to create [%s], want 1", tc.kind, n, counter)
		}
		obj := tc.obj.DeepCopyObject().(client.Object)
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			t.Fatalf("%s: %v", tc.kind, err)
		}
		for _, f := range obj.GetManagedFields() {
			if f.Manager == managed.FieldManager && f.Operation != metav1.ManagedFieldsOperationApply {
				t.Errorf("%s: managed.FieldManager's entry is an %s: %+v", tc.kind, f.Operation, f)
			}
		}
		// Made by someone else: refused with a Conflict, and left as it is.
		theirs := tc.theirs(name + "-theirs")
		if err := env.Client.Create(ctx, theirs); err != nil {
			t.Fatalf("%s: %v", tc.kind, err)
		}
		_, err := IfChanged(ctx, Applier{Client: c, Live: c, Memory: tm}, client.Object(nil), tc.desired(name+"-theirs"), extractAny)
		if !apierrors.IsConflict(err) {
			t.Errorf("%s: the first apply to an object made by someone else: %v, want a Conflict", tc.kind, err)
		}
		now := tc.obj.DeepCopyObject().(client.Object)
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(theirs), now); err != nil {
			t.Fatalf("%s: %v", tc.kind, err)
		}
		if now.GetResourceVersion() != theirs.GetResourceVersion() {
			t.Errorf("%s: the object made by someone else was written", tc.kind)
		}
	}

	// Why not a create: an Update entry, over the defaulted fields too.
	body, err := runtime.DefaultUnstructuredConverter.ToUnstructured(deployment("created"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &unstructured.Unstructured{Object: body}, client.FieldOwner(managed.FieldManager)); err != nil {
		t.Fatal(err)
	}
	var created appsv1.Deployment
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "created"}, &created); err != nil {
		t.Fatal(err)
	}
	var entry *metav1.ManagedFieldsEntry
	for _, f := range created.ManagedFields {
		if f.Manager == managed.FieldManager {
			entry = &f
		}
	}
	if entry == nil || entry.Operation != metav1.ManagedFieldsOperationUpdate || !strings.Contains(entry.FieldsV1.GetRawString(), `"f:strategy"`) {
		t.Errorf("a create's managedFields entry: %+v; the reason for the createOnly apply has gone, reconsider it", entry)
	}
}

// extractAny stands for the Extractor IfChanged is given; with no observed object it is not called.
func extractAny(client.Object, string) (runtime.ApplyConfiguration, error) {
	return nil, errors.New("not called: there is no observed object")
}

// TestApplyChildNeverTakesOverInTheGap: an object someone else creates just before the operator's first write
// of a child the cache lacks is left as it is (data, labels, owners, managers) and reported ErrNotOwned, naming
// it: the first write only creates, and the lookup comes after its Conflict. With a plain forced apply as the
// first write it would be taken over. On a server that refuses the createOnly apply itself, the lookup comes
// first and the first write is the plain apply: the child is still created.
func TestApplyChildNeverTakesOverInTheGap(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "apply-gap")
	owner := &metav1.ObjectMeta{Namespace: ns, Name: "owner", UID: types.UID("3f1b0c43-2e25-4a4e-9d7e-6a4bb2f0a002")}
	desired := func(name string) *corev1ac.ConfigMapApplyConfiguration {
		return corev1ac.ConfigMap(name, ns).WithLabels(map[string]string{managed.ByLabel: managed.By}).
			WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion("v1").WithKind("ConfigMap").WithName(owner.Name).
				WithUID(owner.UID).WithController(true)).
			WithData(map[string]string{"index.html": "<h1>ours</h1>"})
	}
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "contested", Labels: map[string]string{"team": "shop"}},
		Data: map[string]string{"index.html": "<h1>theirs</h1>"}}
	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	// Someone else creates the name just before the operator's first write reaches the server.
	racer := interceptor.NewClient(base, interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch,
		obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		if cerr := c.Create(ctx, theirs.DeepCopy()); cerr != nil && !apierrors.IsAlreadyExists(cerr) {
			return cerr
		}
		return c.Patch(ctx, obj, patch, opts...)
	}})
	err = Child(ctx, Applier{Client: racer, Live: racer, Memory: tm}, owner, "ConfigMap", &corev1.ConfigMap{}, desired("contested"), corev1ac.ExtractConfigMap, false)
	if !errors.Is(err, ErrNotOwned) || !strings.HasPrefix(err.Error(), "ConfigMap "+ns+"/contested exists") {
		t.Errorf("err = %v, want ErrNotOwned naming the object", err)
	}
	var now corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "contested"}, &now); err != nil {
		t.Fatal(err)
	}
	if now.Data["index.html"] != "<h1>theirs</h1>" || now.Labels[managed.ByLabel] != "" || len(now.OwnerReferences) != 0 {
		t.Errorf("the object made in the gap was taken over: labels %v, owners %v, data %v", now.Labels, now.OwnerReferences, now.Data)
	}
	for _, f := range now.ManagedFields {
		if f.Manager == managed.FieldManager {
			t.Errorf("operator101 manages fields of the object made in the gap: %+v", now.ManagedFields)
		}
	}

	// Servers that refuse the createOnly apply of an absent object itself, each way one can.
	for name, refusal := range map[string]error{
		"old-storage": apierrors.NewInternalError(errors.New("resourceVersion should not be set on objects to be created")),
		"not-found":   apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "x"),
	} {
		applies := 0
		c := interceptor.NewClient(base, interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch,
			obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			applies++
			body, err := patch.Data(obj)
			if err != nil {
				return err
			}
			if bytes.Contains(body, []byte(`"resourceVersion"`)) {
				return refusal
			}
			return c.Patch(ctx, obj, patch, opts...)
		}})
		if err := Child(ctx, Applier{Client: c, Live: c, Memory: tm}, owner, "ConfigMap", &corev1.ConfigMap{}, desired(name), corev1ac.ExtractConfigMap, false); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &now); err != nil || applies != 2 {
			t.Errorf("%s: %d applies, the child: %v; want it created by the second", name, applies, err)
		}
	}
}
