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

// The shape of the manager's cache, in one place beside the code that reads it. The cache holds only objects
// labelled as operator101's (managed.ByLabel), which anyone who may write such an object can do. Of the children
// MyWeb and AppService apply, it keeps their identity, their controller reference, their status
// (rollout.Conditions reads a Deployment's) and a digest of the fields FieldManager manages, because IfChanged
// needs to know whether those fields still equal what it would apply, not what they are; the fields themselves,
// every other label and annotation and every managedFields entry are dropped, so that the copy of an object a
// tenant labelled is as small as that of a child (docs/contributing/performance.md measures what that saves). No
// library offers this: controller-runtime's metadata-only cache keeps no value to compare. The At controller
// declares the shape of its pods itself (at.PodCache), and internal/controller puts the two together.
package apply

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	"k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1ac "sigs.k8s.io/gateway-api/applyconfiguration/apis/v1"

	"github.com/operator101/operator101/api/conditions"
	"github.com/operator101/operator101/internal/controller/cachetrim"
	"github.com/operator101/operator101/internal/controller/digest"
	"github.com/operator101/operator101/internal/controller/managed"
)

// AppliedChildren is how the cache holds each kind of child that MyWeb and AppService apply: only those
// labelled as operator101's, as ChildForCache leaves them. A ConfigMap stays a ConfigMap without its data; the
// others become small types of our own (cachedcopy.go) that keep only what the reconcilers read besides the
// metadata: a Deployment's status, a Service's node ports (the ones the cluster chose) and load balancers, an
// Ingress's status; a PodDisruptionBudget's spec and status are read by nobody once their digest is taken.
// m remembers their digests.
func AppliedChildren(m *Memory) map[client.Object]ctrlcache.ByObject {
	selector := managed.Selector()
	return map[client.Object]ctrlcache.ByObject{
		&corev1.ConfigMap{}: {Label: selector, Transform: ChildForCache(m, corev1ac.ExtractConfigMap, func(cm *corev1.ConfigMap) client.Object {
			cm.Data, cm.BinaryData = nil, nil
			return cm
		})},
		&corev1.Service{}: {Label: selector, Transform: ChildForCache(m, corev1ac.ExtractService, func(svc *corev1.Service) client.Object {
			// The node ports the cluster chose stay: a status tells where the pods are reached.
			c := &cachedService{cachedMeta: cachedMeta{svc.ObjectMeta}, LoadBalancer: svc.Status.LoadBalancer}
			if len(svc.Spec.Ports) > 0 {
				c.NodePorts = make([]int32, len(svc.Spec.Ports))
			}
			for i, p := range svc.Spec.Ports {
				c.NodePorts[i] = p.NodePort
			}
			return c
		})},
		&appsv1.Deployment{}: {Label: selector, Transform: ChildForCache(m, appsv1ac.ExtractDeployment, m.deploymentForCache)},
		&networkingv1.Ingress{}: {Label: selector, Transform: ChildForCache(m, networkingv1ac.ExtractIngress, func(ing *networkingv1.Ingress) client.Object {
			return &cachedIngress{cachedMeta: cachedMeta{ing.ObjectMeta}, Status: ing.Status} // whether a controller admitted it
		})},
		&policyv1.PodDisruptionBudget{}: {Label: selector, Transform: ChildForCache(m, policyv1ac.ExtractPodDisruptionBudget, func(pdb *policyv1.PodDisruptionBudget) client.Object {
			return &cachedPodDisruptionBudget{cachedMeta: cachedMeta{pdb.ObjectMeta}}
		})},
	}
}

// deploymentForCache is the cache's copy of dep: its metadata and its status, with the conditions as
// rollout.Conditions reads them.
func (m *Memory) deploymentForCache(dep *appsv1.Deployment) client.Object {
	c := &cachedDeployment{cachedMeta: cachedMeta{dep.ObjectMeta}, Status: dep.Status}
	c.Status.Conditions = deploymentConditionsForCache(m.strings, dep.Status.Conditions)
	return c
}

// deploymentConditionsForCache is what rollout.Conditions reads of a Deployment's conditions: each one's type,
// status and reason, and the message only of a rollout that is stuck (Progressing, ProgressDeadlineExceeded) and
// of a ReplicaFailure, which the MyWeb's or AppService's status quotes. The other messages and the times go:
// nothing reads them from the cache. The slice is a new one of the exact length.
func deploymentConditionsForCache(in *cachetrim.Interner, conds []appsv1.DeploymentCondition) []appsv1.DeploymentCondition {
	if len(conds) == 0 {
		return nil
	}
	out := make([]appsv1.DeploymentCondition, len(conds))
	for i, c := range conds {
		out[i] = appsv1.DeploymentCondition{Type: interned(in, c.Type), Status: interned(in, c.Status), Reason: interned(in, c.Reason)}
		if c.Type == appsv1.DeploymentReplicaFailure || (c.Type == appsv1.DeploymentProgressing && c.Reason == conditions.ReasonDeadlineExceeded) {
			out[i].Message = c.Message
		}
	}
	return out
}

// interned is the one copy of s that every cached copy shares (in): a Deployment's condition types, statuses
// and reasons are a handful of values, decoded anew from every event.
func interned[S ~string](in *cachetrim.Interner, s S) S { return S(in.Intern(string(s))) }

// HTTPRouteForCache is how the cache holds HTTPRoutes (on a cluster that serves them: route.Discover), as
// AppliedChildren holds the other children: labelled as operator101's, without their spec (cachedHTTPRoute);
// their status stays, since it says whether the Gateways accepted them.
func HTTPRouteForCache(m *Memory) (client.Object, ctrlcache.ByObject) {
	return &gatewayv1.HTTPRoute{}, ctrlcache.ByObject{Label: managed.Selector(), Transform: ChildForCache(m, gatewayv1ac.ExtractHTTPRoute, func(hr *gatewayv1.HTTPRoute) client.Object {
		return &cachedHTTPRoute{cachedMeta: cachedMeta{hr.ObjectMeta}, Status: hr.Status}
	})}
}

// The cache's copy of a child holds the Digest of the fields FieldManager manages in its selfLink, a string
// the API server has not filled since Kubernetes 1.20 and nothing in operator101 reads otherwise: an annotation
// would cost a map of its own in every copy (more than 300 bytes; docs/contributing/performance.md). Nothing
// writes it: no object is written back from the cache whole. childDigest reads it.
func childDigest(o metav1.Object) (string, bool) {
	d := o.GetSelfLink()
	return d, d != ""
}

// managedDigest is the Digest of the fields FieldManager manages in observed: the one the cache recorded
// (cachedDigest), or, for an object read past the cache, the Digest of what extract finds. A cache's copy whose
// Digest is pending and unknown has no managedFields left: extract finds no field, and IfChanged applies.
func managedDigest[O client.Object, A runtime.ApplyConfiguration](m *Memory, observed O, extract Extractor[O, A]) (string, error) {
	if d, ok := m.cachedDigest(observed); ok {
		return d, nil
	}
	current, err := extract(observed, managed.FieldManager)
	if err != nil {
		return "", fmt.Errorf("reading the fields %s manages: %w", managed.FieldManager, err)
	}
	return m.keys.Of(current)
}

// ChildForCache is the cache transform of a kind of child operator101 applies: it records the Digest of the
// fields FieldManager manages (read by extract from managedFields), keeps of the metadata only what the
// reconcilers read (childMetadataForCache), and returns keep's copy of what is left: the object itself with what
// nobody reads dropped, or a small type of ours (cachedDeployment) that holds what the reconcilers read and is
// read back as an O. keep must keep what the reconcilers read of the rest (a Deployment's status). The Digest
// comes from Memory.digests when it holds one for the object's key (apply remembers what it wrote), or is
// pending (pendingDigest) while operator101's apply of the object is on its way, and is extracted otherwise. An
// object whose managed fields cannot be read keeps no Digest and no managedFields: IfChanged finds no field
// operator101 manages in it, and applies (its answer is remembered, so the event of that write needs no
// extraction). The transform may see its own output again (client-go asks transforms to be idempotent): a small
// copy is returned as it is, and an O that arrives with a selfLink and no managedFields keeps that value as its
// Digest (childDigest); a value someone else wrote matches no Digest (the Memory's key). Every object is trimmed
// alike, whoever labelled it as operator101's: the cache's copy has a bound size, whatever a tenant writes into
// the object.
func ChildForCache[O client.Object, A runtime.ApplyConfiguration](m *Memory, extract Extractor[O, A], keep func(O) client.Object) cache.TransformFunc {
	kind := kindName[O]()
	rememberKind[O](m)
	return func(obj any) (any, error) {
		if _, done := obj.(cachedCopy); done {
			return obj, nil
		}
		o, ok := obj.(O)
		if !ok {
			return cachetrim.Default(obj)
		}
		if d, done := childDigest(o); done && len(o.GetManagedFields()) == 0 {
			// Transformed already (client-go may hand an object to the transform twice), or written so by
			// someone else: trimmed alike.
			m.childMetadataForCache(o, &d)
			return keep(o), nil
		}
		key := m.childKey(o)
		d, ok := m.digests.Get(o.GetUID(), key)
		if !ok && m.applying.has(kind, o.GetNamespace(), o.GetName()) {
			// Most likely the event of operator101's own apply, which came before its answer: the Digest apply
			// remembers under this key is looked up when the copy is read (cachedDigest).
			d, ok = pendingDigest+key, true
		}
		if !ok {
			if current, err := extract(o, managed.FieldManager); err == nil {
				var derr error
				d, derr = m.keys.Of(current)
				ok = derr == nil
			}
			if ok && o.GetGeneration() != 0 {
				m.digests.Put(o.GetUID(), key, d)
			}
		}
		if !ok {
			m.childMetadataForCache(o, nil)
		} else {
			m.childMetadataForCache(o, &d)
		}
		return keep(o), nil
	}
}

// childMetadataForCache keeps of a child's metadata what the reconcilers read: its identity, resourceVersion,
// generation and deletion timestamp, operator101's label (the cache's selector), its controller reference (whose
// owner it is: Controlled, Child, and the owner's watch), and sum, when not nil, as its selfLink (childDigest).
// Every other label, every annotation, the other owner references, the finalizers and managedFields go: nothing
// reads them from the cache, and no object is written back from the cache whole (a child is applied from its
// builder).
func (m *Memory) childMetadataForCache(o metav1.Object, sum *string) {
	var kept map[string]string
	if v, ok := o.GetLabels()[managed.ByLabel]; ok {
		kept = managedLabels
		if v != managed.By {
			kept = map[string]string{managed.ByLabel: v}
		}
	}
	o.SetLabels(kept)
	o.SetAnnotations(nil)
	selfLink := ""
	if sum != nil {
		selfLink = *sum
	}
	o.SetSelfLink(selfLink)
	o.SetOwnerReferences(m.strings.OwnerReferences(cachetrim.ControllerOnly(o.GetOwnerReferences())))
	o.SetFinalizers(nil)
	o.SetManagedFields(nil)
	o.SetGenerateName("")
}

// managedLabels is the labels of the cache's copy of every child labelled as operator101's (the cache's selector
// asks for exactly that label): one map that every copy shares, since a map of one entry costs more than 300 bytes.
// Nothing writes into a cached object's labels: reads from the cache are deep copies, and a transform replaces
// the map rather than change it.
var managedLabels = map[string]string{managed.ByLabel: managed.By}

// pendingDigest starts the Digest (childDigest) of a cache's copy made while operator101's own apply of the
// object was on its way (applying): the rest is the object's specKey, under which rememberApplied puts the
// Digest of what was applied once the answer is in. On two cores the watch event of a create is usually
// transformed before the reconcile that sent it has read the answer; without this, it would cost an extraction
// from managedFields as if someone else had written the object.
const pendingDigest = "pending:"

// cachedDigest is the Digest the cache recorded for a child (ChildForCache): the value of its selfLink or, for a
// copy made while operator101's apply was on its way, the Digest that apply remembered under the copy's key.
// There is none when the copy is of another version than the apply's answer (someone else wrote in between).
func (m *Memory) cachedDigest(o metav1.Object) (string, bool) {
	d, ok := childDigest(o)
	if !ok {
		return "", false
	}
	if key, pending := strings.CutPrefix(d, pendingDigest); pending {
		return m.digests.Get(o.GetUID(), key)
	}
	return d, true
}

// inFlight counts, by kind, namespace and name, the applies on their way to the API server (apply).
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

// specKey is the key under which Memory.digests remembers a value of o: a MAC of its UID, its generation (the API
// server raises the generation with every change of the spec) and rest, what else the value depends on. An
// object without a generation (a ConfigMap, a Service) may change its data or spec without one: its key names
// its resourceVersion instead, which only that version of it has.
func (m *Memory) specKey(o client.Object, rest []byte) string {
	version, v := "generation", strconv.FormatInt(o.GetGeneration(), 10)
	if o.GetGeneration() == 0 {
		version, v = "resourceVersion", o.GetResourceVersion()
	}
	if o.GetUID() == "" || v == "" {
		return ""
	}
	bp := m.keys.Buffer()
	defer m.keys.PutBuffer(bp)
	b := digest.AppendPart(digest.AppendPart(digest.AppendPart(digest.AppendPart((*bp)[:0], string(o.GetUID())), version), v), rest)
	*bp = b
	return m.keys.Sum(b)
}

// childKey is the specKey of a child's Digest under FieldManager: besides its spec, that depends on its labels,
// annotations, owner references and finalizers, and FieldManager's managedFields entries but their time.
func (m *Memory) childKey(o client.Object) string {
	bp := m.keys.Buffer()
	defer m.keys.PutBuffer(bp)
	b := digest.AppendMetadata((*bp)[:0], o)
	refs := o.GetOwnerReferences()
	b = digest.AppendCount(b, len(refs))
	for _, r := range refs {
		b = digest.AppendPart(digest.AppendPart(digest.AppendPart(digest.AppendPart(b, r.APIVersion), r.Kind), r.Name), string(r.UID))
		b = digest.AppendBool(digest.AppendBool(b, r.Controller), r.BlockOwnerDeletion)
	}
	finalizers := o.GetFinalizers()
	b = digest.AppendCount(b, len(finalizers))
	for _, f := range finalizers {
		b = digest.AppendPart(b, f)
	}
	for _, f := range o.GetManagedFields() {
		if f.Manager != managed.FieldManager {
			continue
		}
		b = digest.AppendPart(digest.AppendPart(digest.AppendPart(digest.AppendPart(b, string(f.Operation)), f.APIVersion), f.FieldsType), f.Subresource)
		b = digest.AppendPart(b, f.FieldsV1.GetRawBytes()) // nil-safe; not a copy
	}
	*bp = b
	return m.specKey(o, b)
}

// The cache's copy of a custom resource whose reconciler applies children (MyWeb, AppService) is as small
// whatever its owner writes into it: OwnerForCache keeps what the reconciler reads of it without building a
// child, and records what it would build instead, in the copy's selfLink (ownerCacheData), as a child's copy
// keeps its Digest there (childDigest): annotations would cost a map in every copy (more than 300 bytes).
const absent = "absent"

// ownerCacheData is what the cache's copy of an owner records in its selfLink, separated by spaces:
//   - metadata: a digest of the labels and annotations the object has (all dropped from the copy), so that a
//     change of them still shows as a change of the copy (reconciler.ChangedByOthers compares selfLinks);
//   - desired: one digest of the Digests of the children the reconciler would apply, by the child's kind
//     (childrenDigest; absent stands for a child that must not exist), or "-" when they cannot be built. One
//     digest, not one per kind: CachedConverged compares them all at once, and a MyWeb has up to six kinds;
//   - seal: a keyed digest of the two and of the object's UID, by which the transform knows its own output (a
//     value anyone else wrote there matches nothing). Not of its resourceVersion: the selfLink changes only
//     when the labels, annotations or children do, not with a status write.
type ownerCacheData struct{ metadata, desired, seal string }

const noDesired = "-"

func (d ownerCacheData) String() string {
	desired := d.desired
	if desired == "" {
		desired = noDesired
	}
	return d.metadata + " " + desired + " " + d.seal
}

// ownerCached reads the ownerCacheData of a cache's copy; false when its selfLink holds none.
func ownerCached(o metav1.Object) (ownerCacheData, bool) {
	parts := strings.Split(o.GetSelfLink(), " ")
	if len(parts) != 3 {
		return ownerCacheData{}, false
	}
	d := ownerCacheData{metadata: parts[0], desired: parts[1], seal: parts[2]}
	if d.desired == noDesired {
		d.desired = ""
	}
	return d, true
}

func (m *Memory) seal(o metav1.Object, desired, metadata string) string {
	return m.keys.MAC(string(o.GetUID()), desired, metadata)
}

// OwnerForCache is the cache transform of a custom resource O whose reconciler applies children: desired
// builds them (by kind; a nil configuration for a child that must not exist), as the reconciler would. It
// records the Digest of each, so that CachedConverged can tell, without building anything, that the children
// the cache holds are already what the reconciler would apply; then strip drops the fields only the builders
// read (a MyWeb's page, an AppService's environment), and the labels, annotations, owner references,
// finalizers and managedFields are dropped for a Digest of the first two (ownerCacheData). What is left is the
// object's identity, its generation, its deletion timestamp, its status and the spec fields the status is
// derived from: the cache's copy has a bound size, however large the object is. A reconcile that finds a child
// not converged reads the whole object from the API server (its builders need the fields dropped here). When
// desired fails, no child counts as converged and each reconcile reads the whole object, which reports the
// error.
func OwnerForCache[O client.Object](m *Memory, desired func(O) (map[string]runtime.ApplyConfiguration, error), strip func(O)) cache.TransformFunc {
	rememberKind[O](m)
	return func(obj any) (any, error) {
		o, ok := obj.(O)
		if !ok {
			return cachetrim.Default(obj)
		}
		if d, done := ownerCached(o); done && len(o.GetManagedFields()) == 0 && d.seal == m.seal(o, d.desired, d.metadata) {
			return o, nil // the transform's own output (client-go may hand an object to the transform twice)
		}
		bp := m.keys.Buffer()
		meta := digest.AppendMetadata((*bp)[:0], o)
		// The children depend on the spec (the generation) and the metadata: an event of neither (a status
		// write) reuses the digests of the last event (Memory.digests).
		key := m.specKey(o, meta)
		metadata := m.keys.Sum(meta)
		*bp = meta
		m.keys.PutBuffer(bp)
		want, known := m.digests.Get(o.GetUID(), key)
		if !known {
			var err error
			if want, err = desiredDigests(m.keys, o, desired); err != nil {
				return nil, err
			}
			if want != "" {
				m.digests.Put(o.GetUID(), key, want)
			}
		}
		strip(o)
		o.SetLabels(nil)
		o.SetAnnotations(nil)
		o.SetOwnerReferences(nil)
		o.SetFinalizers(nil)
		o.SetManagedFields(nil)
		o.SetGenerateName("")
		o.SetSelfLink(ownerCacheData{metadata: metadata, desired: want, seal: m.seal(o, want, metadata)}.String())
		return o, nil
	}
}

// desiredDigests is the childrenDigest of the Digest of each child desired builds for o, by kind (absent for a
// child that must not exist); "" when desired fails.
func desiredDigests[O client.Object](keys *digest.Keyed, o O, desired func(O) (map[string]runtime.ApplyConfiguration, error)) (string, error) {
	children, err := desired(o)
	if err != nil {
		return "", nil
	}
	digests := make(map[string]string, len(children))
	for kind, c := range children {
		if digest.IsNil(c) {
			digests[kind] = absent
			continue
		}
		if digests[kind], err = keys.Of(c); err != nil {
			return "", nil
		}
	}
	return childrenDigest(keys, digests), nil
}

// childrenDigest is one digest of digests, a Digest (or absent) by kind of child: the same exactly when both
// name the same kinds with the same values.
func childrenDigest(keys *digest.Keyed, digests map[string]string) string {
	bp := keys.Buffer()
	defer keys.PutBuffer(bp)
	b := digest.AppendCount(digest.AppendPart((*bp)[:0], "children"), len(digests))
	for _, kind := range slices.Sorted(maps.Keys(digests)) {
		b = digest.AppendPart(digest.AppendPart(b, kind), digests[kind])
	}
	*bp = b
	return keys.Sum(b)
}

// CachedConverged tells whether the children the cache holds (children, by kind, as ReadChildren filled them)
// are already what owner's reconciler would apply, by the digests the cache recorded (OwnerForCache for owner,
// ChildForCache for each child): then no child needs to be built or written, and owner need not be read whole.
// owner must come from the cache. A child that must not exist is converged when owner controls no child of
// that name.
func CachedConverged(m *Memory, owner client.Object, children map[string]client.Object) bool {
	d, ok := ownerCached(owner)
	if !ok || d.desired == "" {
		return false
	}
	want := d.desired
	got := make(map[string]string, len(children))
	for kind, child := range children {
		if child.GetUID() == "" || !metav1.IsControlledBy(child, owner) {
			got[kind] = absent
			continue
		}
		d, ok := m.cachedDigest(child)
		if !ok || d == absent {
			return false
		}
		got[kind] = d
	}
	return childrenDigest(m.keys, got) == want
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
