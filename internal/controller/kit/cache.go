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

// The shape of the manager's cache, in one place beside the code that reads it. The cache holds only objects
// operator101 created (ManagedByLabel). Of the children MyWeb and AppService apply, it keeps their metadata,
// their status (RolloutConditions reads a Deployment's) and a digest of the fields FieldManager manages, because
// IfChanged needs to know whether those fields still equal what it would apply, not what they are; the fields
// themselves and every managedFields entry are dropped (docs/performance.md measures what that saves). No
// library offers this: controller-runtime's metadata-only cache keeps no value to compare. The At controller
// declares the shape of its pods itself (at.PodCache), and internal/controller puts the two together.
package kit

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The label every object operator101 creates carries (children and pods); the manager's cache holds only
// objects with it.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "operator101"
)

// ManagedBySelector selects the objects operator101 created.
func ManagedBySelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{ManagedByLabel: ManagedBy})
}

// AppliedChildren is how the cache holds each kind of child that MyWeb and AppService apply: only
// operator101's, as ChildForCache leaves them (a ConfigMap's data and a Service's or Deployment's spec are
// read by nobody once their digest is taken).
func AppliedChildren() map[client.Object]ctrlcache.ByObject {
	managed := ManagedBySelector()
	return map[client.Object]ctrlcache.ByObject{
		&corev1.ConfigMap{}: {Label: managed, Transform: ChildForCache(corev1ac.ExtractConfigMap, func(cm *corev1.ConfigMap) {
			cm.Data, cm.BinaryData = nil, nil
		})},
		&corev1.Service{}: {Label: managed, Transform: ChildForCache(corev1ac.ExtractService, func(svc *corev1.Service) {
			svc.Spec = corev1.ServiceSpec{}
		})},
		&appsv1.Deployment{}: {Label: managed, Transform: ChildForCache(appsv1ac.ExtractDeployment, func(dep *appsv1.Deployment) {
			dep.Spec = appsv1.DeploymentSpec{}
		})},
	}
}

// digestAnnotation holds, in the cache's copy of a child only, the Digest of the fields FieldManager manages.
// Nothing writes it: no object is written back from the cache whole.
const digestAnnotation = "operator101.io/cache-owned-fields-digest"

// digestKey keys every Digest of this process. Anyone who may edit a child can give it an annotation of
// digestAnnotation's name and strip its managedFields; without the key, no value they write matches a Digest, so
// such an object still counts as drifted and is applied again.
var digestKey = func() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // crypto/rand's Read never returns an error
	return k
}()

// Digest is a digest of the fields and values of an apply configuration (or any API object): two have the same
// Digest exactly when equality.Semantic finds them equal, with the metadata the server assigns left out
// (controller-runtime writes the server's answer back into an applied configuration, and Extract never returns
// it). So quantities count by value ("0.5" is "500m"), and an empty map or list is the same as none. It is an
// HMAC-SHA256 under digestKey, so it means something only inside this process.
func Digest(v any) (string, error) {
	m, err := toMap(v)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(canonical(m)) // encoding/json writes map keys sorted
	if err != nil {
		return "", fmt.Errorf("encoding %T for its digest: %w", v, err)
	}
	mac := hmac.New(sha256.New, digestKey)
	mac.Write(b)
	return base64.RawStdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// canonical gives nil and empty maps and lists one spelling, as equality.Semantic does.
func canonical(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = canonical(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = canonical(e)
		}
		return out
	}
	return v
}

// managedDigest is the Digest of the fields FieldManager manages in observed: the one the cache recorded
// (ChildForCache), or, for an object read past the cache, the Digest of what extract finds.
func managedDigest[O client.Object, A runtime.ApplyConfiguration](observed O, extract Extractor[O, A]) (string, error) {
	if d, ok := observed.GetAnnotations()[digestAnnotation]; ok {
		return d, nil
	}
	current, err := extract(observed, FieldManager)
	if err != nil {
		return "", fmt.Errorf("reading the fields %s manages: %w", FieldManager, err)
	}
	return Digest(current)
}

// ChildForCache is the cache transform of a kind of child operator101 applies: it records the Digest of the
// fields FieldManager manages (read by extract from managedFields), then drops them with strip, drops every
// managedFields entry, and does what TrimForCache does. strip must keep what the reconcilers read of the child
// (its metadata and status). An object whose managed fields cannot be read is only trimmed: IfChanged then reads
// them again, and reports the error. An object that arrives with an annotation of digestAnnotation's name and no
// managedFields is kept as it is: the transform may see its own output again (client-go asks transforms to be
// idempotent), and a value someone else wrote matches no Digest (digestKey).
func ChildForCache[O client.Object, A runtime.ApplyConfiguration](extract Extractor[O, A], strip func(O)) cache.TransformFunc {
	return func(obj any) (any, error) {
		o, ok := obj.(O)
		if !ok {
			return TrimForCache(obj)
		}
		if _, done := o.GetAnnotations()[digestAnnotation]; done && len(o.GetManagedFields()) == 0 {
			return o, nil // transformed already (client-go may hand an object to the transform twice)
		}
		current, err := extract(o, FieldManager)
		if err != nil {
			return TrimForCache(obj)
		}
		d, err := Digest(current)
		if err != nil {
			return TrimForCache(obj)
		}
		if _, err := TrimForCache(obj); err != nil {
			return nil, err
		}
		strip(o)
		o.SetManagedFields(nil)
		a := o.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[digestAnnotation] = d
		o.SetAnnotations(a)
		return o, nil
	}
}

// lastApplied is the annotation `kubectl apply` keeps a whole copy of the object in (a MyWeb's page included).
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// TrimForCache is a cache transform: it drops the managedFields entries of every manager but FieldManager, and
// the copy of the object `kubectl apply` keeps in an annotation. IfChanged needs only FieldManager's entries, and
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
		if f.Manager == FieldManager {
			kept = append(kept, f)
		}
	}
	accessor.SetManagedFields(kept)
	return obj, nil
}
