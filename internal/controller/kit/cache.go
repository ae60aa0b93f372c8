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
// labelled as operator101's (ManagedByLabel), which anyone who may write such an object can do. Of the children
// MyWeb and AppService apply, it keeps their identity, their controller reference, their status
// (RolloutConditions reads a Deployment's) and a digest of the fields FieldManager manages, because IfChanged
// needs to know whether those fields still equal what it would apply, not what they are; the fields themselves,
// every other label and annotation and every managedFields entry are dropped, so that the copy of an object a
// tenant labelled is as small as that of a child (docs/contributing/performance.md measures what that saves). No
// library offers this: controller-runtime's metadata-only cache keeps no value to compare. The At controller
// declares the shape of its pods itself (at.PodCache), and internal/controller puts the two together.
package kit

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
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

// AppliedChildren is how the cache holds each kind of child that MyWeb and AppService apply: only those
// labelled as operator101's, as ChildForCache leaves them (a ConfigMap's data and a Service's or Deployment's
// spec are read by nobody once their digest is taken).
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
//
// An apply configuration (what the builders return and Extract gives back) is encoded as it is, its type's
// fields in their order, map keys sorted, empty ones left out (every field is omitempty), quantities in their
// canonical form, and the metadata the server assigns taken out first: about a tenth of the CPU and memory of
// the general path, which converts to an unstructured map first. Its Digest is of a different encoding than
// that of the same content as an unstructured object, so only Digests of one kind of value compare: the
// reconcilers and the cache transforms compare apply configurations of one type with each other.
func Digest(v any) (string, error) {
	var b []byte
	var err error
	if ac, ok := v.(runtime.ApplyConfiguration); ok && !isNil(ac) {
		b, err = json.Marshal(withoutServerAssigned(ac))
	} else {
		var m map[string]any
		if m, err = toMap(v); err != nil {
			return "", err
		}
		b, err = json.Marshal(canonical(m)) // encoding/json writes map keys sorted
	}
	if err != nil {
		return "", fmt.Errorf("encoding %T for its digest: %w", v, err)
	}
	return sum(b), nil
}

// withoutServerAssigned is ac, or a shallow copy of it whose metadata has none of the fields the server assigns
// (serverAssigned), when it has some.
func withoutServerAssigned(ac runtime.ApplyConfiguration) any {
	return withMetadata(ac, nil)
}

// withMetadata is ac, or a shallow copy of it whose metadata has none of the fields the server assigns
// (serverAssigned) and resourceVersion as its resourceVersion (none when nil), when ac's differs.
func withMetadata(ac runtime.ApplyConfiguration, resourceVersion *string) any {
	v := reflect.ValueOf(ac)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return ac
	}
	f := v.Elem().FieldByName("ObjectMetaApplyConfiguration")
	if !f.IsValid() || f.Kind() != reflect.Pointer {
		return ac
	}
	var meta metav1ac.ObjectMetaApplyConfiguration
	if !f.IsNil() {
		m, ok := f.Interface().(*metav1ac.ObjectMetaApplyConfiguration)
		if !ok {
			return ac
		}
		if m.UID == nil && m.Generation == nil && m.CreationTimestamp == nil &&
			((m.ResourceVersion == nil && resourceVersion == nil) ||
				(m.ResourceVersion != nil && resourceVersion != nil && *m.ResourceVersion == *resourceVersion)) {
			return ac
		}
		meta = *m
	}
	meta.UID, meta.Generation, meta.CreationTimestamp, meta.ResourceVersion = nil, nil, nil, resourceVersion
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	cp.Elem().FieldByName("ObjectMetaApplyConfiguration").Set(reflect.ValueOf(&meta))
	return cp.Interface()
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
// (cachedDigest), or, for an object read past the cache, the Digest of what extract finds. A cache's copy whose
// Digest is pending and unknown has no managedFields left: extract finds no field, and IfChanged applies.
func managedDigest[O client.Object, A runtime.ApplyConfiguration](observed O, extract Extractor[O, A]) (string, error) {
	if d, ok := cachedDigest(observed); ok {
		return d, nil
	}
	current, err := extract(observed, FieldManager)
	if err != nil {
		return "", fmt.Errorf("reading the fields %s manages: %w", FieldManager, err)
	}
	return Digest(current)
}

// ChildForCache is the cache transform of a kind of child operator101 applies: it records the Digest of the
// fields FieldManager manages (read by extract from managedFields), then drops them with strip, and keeps of the
// metadata only what the reconcilers read (childMetadataForCache). strip must keep what the reconcilers read of
// the rest (a Deployment's status). The Digest comes from specDigests when it holds one for the object's key
// (apply remembers what it wrote), or is pending (pendingDigest) while operator101's apply of the object is on
// its way, and is extracted otherwise. An object whose managed fields cannot be read keeps no Digest and no
// managedFields: IfChanged finds no field operator101 manages in it, and applies (its answer is remembered, so
// the event of that write needs no extraction). An object that arrives with an annotation of
// digestAnnotation's name and no managedFields keeps that annotation's value: the transform may see its own
// output again (client-go asks transforms to be idempotent), and a value someone else wrote matches no Digest
// (digestKey). Every object is trimmed alike, whoever labelled it as operator101's: the cache's copy has a
// bound size, whatever a tenant writes into the object.
func ChildForCache[O client.Object, A runtime.ApplyConfiguration](extract Extractor[O, A], strip func(O)) cache.TransformFunc {
	kind := kindName[O]()
	return func(obj any) (any, error) {
		o, ok := obj.(O)
		if !ok {
			return TrimForCache(obj)
		}
		if d, done := o.GetAnnotations()[digestAnnotation]; done && len(o.GetManagedFields()) == 0 {
			// Transformed already (client-go may hand an object to the transform twice), or written so by
			// someone else: trimmed alike.
			strip(o)
			childMetadataForCache(o, &d)
			return o, nil
		}
		key := childKey(o)
		d, ok := specDigests.get(o.GetUID(), key)
		if !ok && applying.has(kind, o.GetNamespace(), o.GetName()) {
			// Most likely the event of operator101's own apply, which came before its answer: the Digest apply
			// remembers under this key is looked up when the copy is read (cachedDigest).
			d, ok = pendingDigest+key, true
		}
		if !ok {
			if current, err := extract(o, FieldManager); err == nil {
				var derr error
				d, derr = Digest(current)
				ok = derr == nil
			}
			if ok && o.GetGeneration() != 0 {
				specDigests.put(o.GetUID(), key, d)
			}
		}
		strip(o)
		if !ok {
			childMetadataForCache(o, nil)
		} else {
			childMetadataForCache(o, &d)
		}
		return o, nil
	}
}

// childMetadataForCache keeps of a child's metadata what the reconcilers read: its identity, resourceVersion,
// generation and deletion timestamp, operator101's label (the cache's selector), its controller reference (whose
// owner it is: Controlled, ApplyChild, and the owner's watch), and digest, when not nil, as digestAnnotation.
// Every other label and annotation, the other owner references, the finalizers and managedFields go: nothing
// reads them from the cache, and no object is written back from the cache whole (a child is applied from its
// builder).
func childMetadataForCache(o metav1.Object, digest *string) {
	var kept map[string]string
	if v, ok := o.GetLabels()[ManagedByLabel]; ok {
		kept = map[string]string{ManagedByLabel: v}
	}
	o.SetLabels(kept)
	var a map[string]string
	if digest != nil {
		a = map[string]string{digestAnnotation: *digest}
	}
	o.SetAnnotations(a)
	o.SetOwnerReferences(ControllerOnly(o.GetOwnerReferences()))
	o.SetFinalizers(nil)
	o.SetManagedFields(nil)
	o.SetGenerateName("")
}

// ControllerOnly is refs without every reference but the controller's (the API server admits at most one):
// all that metav1.IsControlledBy, metav1.GetControllerOf and the owner watches of controller-runtime read.
func ControllerOnly(refs []metav1.OwnerReference) []metav1.OwnerReference {
	for _, r := range refs {
		if r.Controller != nil && *r.Controller {
			return []metav1.OwnerReference{r}
		}
	}
	return nil
}

// pendingDigest starts the value of digestAnnotation in a cache's copy made while operator101's own apply of the
// object was on its way (applying): the rest is the object's specKey, under which rememberApplied puts the
// Digest of what was applied once the answer is in. On two cores the watch event of a create is usually
// transformed before the reconcile that sent it has read the answer; without this, it would cost an extraction
// from managedFields as if someone else had written the object.
const pendingDigest = "pending:"

// cachedDigest is the Digest the cache recorded for a child (ChildForCache): its annotation's value or, for a
// copy made while operator101's apply was on its way, the Digest that apply remembered under the copy's key.
// There is none when the copy is of another version than the apply's answer (someone else wrote in between).
func cachedDigest(o metav1.Object) (string, bool) {
	d, ok := o.GetAnnotations()[digestAnnotation]
	if !ok {
		return "", false
	}
	if key, pending := strings.CutPrefix(d, pendingDigest); pending {
		return specDigests.get(o.GetUID(), key)
	}
	return d, true
}

// applying counts, by kind, namespace and name, the applies on their way to the API server (apply).
var applying = &inFlight{m: map[string]int{}}

type inFlight struct {
	mu sync.Mutex
	m  map[string]int
}

func inFlightKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

func (f *inFlight) start(kind, namespace, name string) (done func()) {
	k := inFlightKey(kind, namespace, name)
	f.mu.Lock()
	f.m[k]++
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.m[k]--; f.m[k] <= 0 {
			delete(f.m, k)
		}
	}
}

func (f *inFlight) has(kind, namespace, name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m[inFlightKey(kind, namespace, name)] > 0
}

// kindName is the kind of the API objects of Go type O (*corev1.Service: Service), as apply names it.
func kindName[O client.Object]() string {
	t := reflect.TypeFor[O]()
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// specDigests remembers, by UID, the last Digest ChildForCache took of each child that has a generation (a
// Deployment), under a key of everything else that Digest depends on, so that an event that changed none of it
// costs no extraction from managedFields, the most expensive step of the transform: a Deployment's status,
// which its controller writes several times per rollout. apply remembers the Digest of what it applied under
// the key of the object the API server answered with (rememberApplied), so the watch event of operator101's own
// write costs none either. OwnerForCache remembers the digests of an owner's children the same way, so that its
// status writes cost no build. Entries go when the informer sees the object deleted (CacheHandler). Its own
// code because no library keeps such a memo for a cache transform.
var specDigests = &digestMemo{m: map[types.UID]memoEntry{}}

type digestMemo struct {
	mu sync.Mutex
	m  map[types.UID]memoEntry
}

type memoEntry struct{ key, digest string }

// specKey is the key under which specDigests remembers a value of o: a MAC of its UID, its generation (the API
// server raises the generation with every change of the spec) and rest, what else the value depends on. An
// object without a generation (a ConfigMap, a Service) may change its data or spec without one: its key names
// its resourceVersion instead, which only that version of it has.
func specKey(o client.Object, rest []byte) string {
	version, v := "generation", strconv.FormatInt(o.GetGeneration(), 10)
	if o.GetGeneration() == 0 {
		version, v = "resourceVersion", o.GetResourceVersion()
	}
	if o.GetUID() == "" || v == "" {
		return ""
	}
	bp := buffers.Get().(*[]byte)
	defer buffers.Put(bp)
	b := appendPart(appendPart(appendPart(appendPart((*bp)[:0], string(o.GetUID())), version), v), rest)
	*bp = b
	return sum(b)
}

// childKey is the specKey of a child's Digest under FieldManager: besides its spec, that depends on its labels,
// annotations, owner references and finalizers, and FieldManager's managedFields entries but their time.
func childKey(o client.Object) string {
	bp := buffers.Get().(*[]byte)
	defer buffers.Put(bp)
	b := appendMetadata((*bp)[:0], o)
	refs := o.GetOwnerReferences()
	b = appendCount(b, len(refs))
	for _, r := range refs {
		b = appendPart(appendPart(appendPart(appendPart(b, r.APIVersion), r.Kind), r.Name), string(r.UID))
		b = appendBool(appendBool(b, r.Controller), r.BlockOwnerDeletion)
	}
	finalizers := o.GetFinalizers()
	b = appendCount(b, len(finalizers))
	for _, f := range finalizers {
		b = appendPart(b, f)
	}
	for _, f := range o.GetManagedFields() {
		if f.Manager != FieldManager {
			continue
		}
		b = appendPart(appendPart(appendPart(appendPart(b, string(f.Operation)), f.APIVersion), f.FieldsType), f.Subresource)
		b = appendPart(b, f.FieldsV1.GetRawBytes()) // nil-safe; not a copy
	}
	*bp = b
	return specKey(o, b)
}

// buffers keeps the byte slices keys are built in, for reuse.
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// macs keeps HMAC-SHA256 states under digestKey for reuse: a new one costs the key's two SHA-256 blocks and
// four allocations.
var macs = sync.Pool{New: func() any { return hmac.New(sha256.New, digestKey) }}

// sum is the HMAC-SHA256 under digestKey of b, in base64.
func sum(b []byte) string {
	m := macs.Get().(hash.Hash)
	defer macs.Put(m)
	m.Reset()
	m.Write(b)
	var out [sha256.Size]byte
	return base64.RawStdEncoding.EncodeToString(m.Sum(out[:0]))
}

// appendPart appends s, prefixed with its length, so that no two lists of parts append the same bytes.
func appendPart[S ~string | ~[]byte](b []byte, s S) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	return append(append(b, ':'), s...)
}

func appendCount(b []byte, n int) []byte { return append(strconv.AppendInt(b, int64(n), 10), ';') }

func appendBool(b []byte, v *bool) []byte {
	switch {
	case v == nil:
		return append(b, 'n')
	case *v:
		return append(b, 't')
	}
	return append(b, 'f')
}

// appendMetadata appends o's labels and annotations, each map in the order of its keys.
func appendMetadata(b []byte, o metav1.Object) []byte {
	for _, m := range []map[string]string{o.GetLabels(), o.GetAnnotations()} {
		b = appendCount(b, len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			b = appendPart(appendPart(b, k), m[k])
		}
	}
	return b
}

// get is the value remembered for uid under key; none for the key "".
func (m *digestMemo) get(uid types.UID, key string) (string, bool) {
	if key == "" {
		return "", false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[uid]
	return e.digest, ok && e.key == key
}

// put remembers digest for uid under key; nothing for the key "".
func (m *digestMemo) put(uid types.UID, key, digest string) {
	if key == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m[uid] = memoEntry{key: key, digest: digest}
}

func (m *digestMemo) forget(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, uid)
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

// The cache's copy of a custom resource whose reconciler applies children (MyWeb, AppService) is as small
// whatever its owner writes into it: OwnerForCache keeps what the reconciler reads of it without building a
// child, and records what it would build instead.
const (
	// desiredAnnotation holds the Digest of each child the reconciler would apply, by the child's kind, as
	// JSON; absent stands for a child that must not exist.
	desiredAnnotation = "operator101.io/cache-desired-children"
	// metadataAnnotation holds a Digest of the labels and annotations the object has, so that a change of them
	// still shows as a change of the cache's copy (ChangedByOthers lets it through).
	metadataAnnotation = "operator101.io/cache-metadata-digest"
	// sealAnnotation is a keyed digest of the two above and of the object's identity: an object that carries
	// it, with the right value, is the transform's own output (transforms must be idempotent), and anyone else
	// who writes these annotations on an object writes a value that matches nothing.
	sealAnnotation = "operator101.io/cache-seal"
	absent         = "absent"
)

// mac is the HMAC-SHA256 under digestKey of parts, each length-prefixed.
func mac(parts ...string) string {
	bp := buffers.Get().(*[]byte)
	defer buffers.Put(bp)
	b := (*bp)[:0]
	for _, p := range parts {
		b = appendPart(b, p)
	}
	*bp = b
	return sum(b)
}

func seal(o metav1.Object, desired, metadata string) string {
	return mac(string(o.GetUID()), o.GetResourceVersion(), desired, metadata)
}

// OwnerForCache is the cache transform of a custom resource O whose reconciler applies children: desired
// builds them (by kind; a nil configuration for a child that must not exist), as the reconciler would. It
// records the Digest of each, so that CachedConverged can tell, without building anything, that the children
// the cache holds are already what the reconciler would apply; then strip drops the fields only the builders
// read (a MyWeb's page, an AppService's environment), and the labels, annotations, owner references,
// finalizers and managedFields are dropped for a Digest of the first two. What is left is the object's identity,
// its generation, its deletion timestamp, its status and the spec fields the status is derived from: the cache's
// copy has a bound size, however large the object is. A reconcile that finds a child not converged reads the
// whole object from the API server (its builders need the fields dropped here). When desired fails, no child
// counts as converged and each reconcile reads the whole object, which reports the error.
func OwnerForCache[O client.Object](desired func(O) (map[string]runtime.ApplyConfiguration, error), strip func(O)) cache.TransformFunc {
	return func(obj any) (any, error) {
		o, ok := obj.(O)
		if !ok {
			return TrimForCache(obj)
		}
		a := o.GetAnnotations()
		if s, done := a[sealAnnotation]; done && s == seal(o, a[desiredAnnotation], a[metadataAnnotation]) {
			return o, nil // the transform's own output (client-go may hand an object to the transform twice)
		}
		bp := buffers.Get().(*[]byte)
		meta := appendMetadata((*bp)[:0], o)
		// The children depend on the spec (the generation) and the metadata: an event of neither (a status
		// write) reuses the digests of the last event (specDigests).
		key := specKey(o, meta)
		metadata := sum(meta)
		*bp = meta
		buffers.Put(bp)
		want, known := specDigests.get(o.GetUID(), key)
		if !known {
			var err error
			if want, err = desiredDigests(o, desired); err != nil {
				return nil, err
			}
			if want != "" {
				specDigests.put(o.GetUID(), key, want)
			}
		}
		strip(o)
		o.SetLabels(nil)
		o.SetOwnerReferences(nil)
		o.SetFinalizers(nil)
		o.SetManagedFields(nil)
		o.SetGenerateName("")
		kept := map[string]string{metadataAnnotation: metadata, sealAnnotation: seal(o, want, metadata)}
		if want != "" {
			kept[desiredAnnotation] = want
		}
		o.SetAnnotations(kept)
		return o, nil
	}
}

// MetadataForCache is the cache transform of a custom resource whose reconciler reads of its labels only those
// named in keep, and none of its annotations, but whose predicate (ChangedByOthers) must still see a change of
// any label or annotation (a DatabaseUser: `kubectl annotate` checks it at once). The labels in keep stay; every
// other label and every annotation gives way to a Digest of all of them (metadataAnnotation) and a seal of it
// (sealAnnotation), which change exactly when one of them changes, not with a status write; the owner
// references and managedFields go. The finalizers stay: a merge patch of them (controllerutil.AddFinalizer on a
// copy) sends the whole list, so a copy without someone else's would remove them. Nothing else in the metadata
// has a size its owner chooses. A copy that carries exactly the two annotations, sealed, is the transform's own
// output and keeps its Digest (transforms must be idempotent); any other is recomputed from the object.
func MetadataForCache(keep ...string) cache.TransformFunc {
	return func(obj any) (any, error) {
		o, ok := obj.(metav1.Object)
		if !ok {
			return obj, nil
		}
		a := o.GetAnnotations()
		metadata := a[metadataAnnotation]
		if s, sealed := a[sealAnnotation]; !sealed || len(a) != 2 || s != metadataSeal(o, metadata) {
			bp := buffers.Get().(*[]byte)
			meta := appendMetadata((*bp)[:0], o)
			metadata = sum(meta)
			*bp = meta
			buffers.Put(bp)
		}
		var labels map[string]string
		for _, k := range keep {
			if v, ok := o.GetLabels()[k]; ok {
				if labels == nil {
					labels = map[string]string{}
				}
				labels[k] = v
			}
		}
		o.SetLabels(labels)
		o.SetAnnotations(map[string]string{metadataAnnotation: metadata, sealAnnotation: metadataSeal(o, metadata)})
		o.SetOwnerReferences(nil)
		o.SetManagedFields(nil)
		o.SetGenerateName("")
		return o, nil
	}
}

// metadataSeal is MetadataForCache's seal of o's metadata Digest: unlike OwnerForCache's, it does not name the
// resourceVersion, so that a status write leaves the copy's annotations as they were.
func metadataSeal(o metav1.Object, metadata string) string {
	return mac("metadata", string(o.GetUID()), metadata)
}

// desiredDigests is the JSON of the Digest of each child desired builds for o, by kind (absent for a child that
// must not exist); "" when desired fails.
func desiredDigests[O client.Object](o O, desired func(O) (map[string]runtime.ApplyConfiguration, error)) (string, error) {
	children, err := desired(o)
	if err != nil {
		return "", nil
	}
	digests := make(map[string]string, len(children))
	for kind, c := range children {
		if isNil(c) {
			digests[kind] = absent
			continue
		}
		if digests[kind], err = Digest(c); err != nil {
			return "", nil
		}
	}
	b, err := json.Marshal(digests)
	if err != nil {
		return "", fmt.Errorf("encoding the digests of the children of %s: %w", o.GetName(), err)
	}
	return string(b), nil
}

// CachedConverged tells whether the children the cache holds (children, by kind, as ReadChildren filled them)
// are already what owner's reconciler would apply, by the digests the cache recorded (OwnerForCache for owner,
// ChildForCache for each child): then no child needs to be built or written, and owner need not be read whole.
// owner must come from the cache. A child that must not exist is converged when owner controls no child of
// that name.
func CachedConverged(owner client.Object, children map[string]client.Object) bool {
	var want map[string]string
	if err := json.Unmarshal([]byte(owner.GetAnnotations()[desiredAnnotation]), &want); err != nil || len(want) != len(children) {
		return false
	}
	for kind, child := range children {
		d, ok := want[kind]
		if !ok {
			return false
		}
		controlled := child.GetUID() != "" && metav1.IsControlledBy(child, owner)
		if d == absent {
			if controlled {
				return false
			}
			continue
		}
		if got, ok := cachedDigest(child); !ok || !controlled || got != d {
			return false
		}
	}
	return true
}

// ReadWhole reads owner's object whole from the API server into whole: the cache's copy lacks what the
// builders read (OwnerForCache). It reports false, and no error, when the object is gone.
//
// The read asks for a version not older than the cache's (owner's resourceVersion), which the API server
// answers from its watch cache instead of reading etcd: the builders need the spec the cache has seen or a
// newer one, not the newest. An API server whose watch cache is behind that version (another member of an HA
// control plane) holds the read up to 3 s and then says so; client-go retries it, and then it is made past
// the watch cache.
func ReadWhole(ctx context.Context, live client.Reader, owner client.Object, whole client.Object) (bool, error) {
	key := client.ObjectKeyFromObject(owner)
	err := live.Get(ctx, key, whole, &client.GetOptions{Raw: &metav1.GetOptions{ResourceVersion: owner.GetResourceVersion()}})
	if apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		err = live.Get(ctx, key, whole)
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading %s whole: %w", key, err)
	}
	return true, nil
}
