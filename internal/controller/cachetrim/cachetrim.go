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

// Package cachetrim holds the cache transforms that keep the manager's copy of an object small: what nobody
// reads from the cache goes, whatever size its owner gave it.
package cachetrim

import (
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/operator101/operator101/internal/controller/digest"
	"github.com/operator101/operator101/internal/controller/managed"
)

// The annotations a trimmed copy holds in place of the labels and annotations it lost.
const (
	// MetadataAnnotation holds a digest of the labels and annotations the object has, so that a change of them
	// still shows as a change of the cache's copy (reconciler.ChangedByOthers lets it through).
	MetadataAnnotation = "operator101.io/cache-metadata-digest"
	// SealAnnotation is a keyed digest of the annotations a transform wrote and of the object's identity: an
	// object that carries it, with the right value, is the transform's own output (transforms must be
	// idempotent), and anyone else who writes these annotations on an object writes a value that matches
	// nothing.
	SealAnnotation = "operator101.io/cache-seal"
)

// lastApplied is the annotation `kubectl apply` keeps a whole copy of the object in (a MyWeb's page included).
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Default is a cache transform: it drops the managedFields entries of every manager but managed.FieldManager, and
// the copy of the object `kubectl apply` keeps in an annotation. apply.IfChanged needs only managed.FieldManager's entries, and
// the others are most of an object's metadata; nothing in operator101 reads the kubectl annotation, and no
// object is written back from the cache whole (status and finalizers go as patches of what changed).
func Default(obj any) (any, error) {
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
		if f.Manager == managed.FieldManager {
			kept = append(kept, f)
		}
	}
	accessor.SetManagedFields(kept)
	return obj, nil
}

// Metadata is the cache transform of a custom resource whose reconciler reads of its labels only those
// named in keep, and none of its annotations, but whose predicate (reconciler.ChangedByOthers) must still see a change of
// any label or annotation (a DatabaseUser: `kubectl annotate` checks it at once). The labels in keep stay; every
// other label and every annotation gives way to a Digest of all of them (MetadataAnnotation) and a seal of it
// (SealAnnotation), which change exactly when one of them changes, not with a status write; the owner
// references and managedFields go. The finalizers stay: a merge patch of them (controllerutil.AddFinalizer on a
// copy) sends the whole list, so a copy without someone else's would remove them. Nothing else in the metadata
// has a size its owner chooses. A copy that carries exactly the two annotations, sealed, is the transform's own
// output and keeps its Digest (transforms must be idempotent); any other is recomputed from the object.
func Metadata(keep ...string) cache.TransformFunc {
	// The digests are compared only with this transform's own: a key of its own.
	keys := digest.New()
	return func(obj any) (any, error) {
		o, ok := obj.(metav1.Object)
		if !ok {
			return obj, nil
		}
		a := o.GetAnnotations()
		metadata := a[MetadataAnnotation]
		if s, sealed := a[SealAnnotation]; !sealed || len(a) != 2 || s != metadataSeal(keys, o, metadata) {
			bp := keys.Buffer()
			meta := digest.AppendMetadata((*bp)[:0], o)
			metadata = keys.Sum(meta)
			*bp = meta
			keys.PutBuffer(bp)
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
		o.SetAnnotations(map[string]string{MetadataAnnotation: metadata, SealAnnotation: metadataSeal(keys, o, metadata)})
		o.SetOwnerReferences(nil)
		o.SetManagedFields(nil)
		o.SetGenerateName("")
		return o, nil
	}
}

// metadataSeal is Metadata's seal of o's metadata digest: unlike apply.OwnerForCache's, it does not name the
// resourceVersion, so that a status write leaves the copy's annotations as they were.
func metadataSeal(keys *digest.Keyed, o metav1.Object, metadata string) string {
	return keys.MAC("metadata", string(o.GetUID()), metadata)
}

// ControllerOnly is refs without every reference but the controller's (the API server admits at most one):
// all that metav1.IsControlledBy, metav1.GetControllerOf and the owner watches of controller-runtime read.
// refs itself when it holds the controller's reference alone (a child's usual metadata): no copy.
func ControllerOnly(refs []metav1.OwnerReference) []metav1.OwnerReference {
	if len(refs) == 1 && refs[0].Controller != nil && *refs[0].Controller {
		return refs[:1:1]
	}
	for _, r := range refs {
		if r.Controller != nil && *r.Controller {
			return []metav1.OwnerReference{r}
		}
	}
	return nil
}

// Interner keeps one copy of each short string the cache's copies hold that many of them hold alike (a
// condition's type, reason and message, an owner reference's kind), up to a bound: one per manager, made with
// its cache (apply.Memory). Its own code because Go's unique package forgets a value once no Handle holds it:
// a copy made after that would share nothing with the copies made before.
type Interner struct {
	mu  sync.Mutex
	m   map[string]string
	max int
	// yes and no are the flags every owner reference it keeps points at: nothing writes into a cached object.
	yes, no bool
}

const (
	// maxInterned bounds what an Interner keeps: the strings are written by operator101 (conditions) and by the
	// API server, few and short, but a cluster's objects could say many different things.
	maxInterned    = 4096
	maxInternedLen = 256
)

// NewInterner returns an Interner that keeps nothing yet.
func NewInterner() *Interner { return newInterner(maxInterned) }

func newInterner(max int) *Interner { return &Interner{m: map[string]string{}, max: max, yes: true} }

// Intern returns the one copy of s in keeps, for a string of at most maxInternedLen bytes while it keeps fewer
// than its bound, and s itself otherwise.
func (in *Interner) Intern(s string) string {
	if s == "" || len(s) > maxInternedLen {
		return s
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if v, ok := in.m[s]; ok {
		return v
	}
	if len(in.m) >= in.max {
		return s
	}
	s = strings.Clone(s) // not a part of a larger string
	in.m[s] = s
	return s
}

// Conditions is conds as a cache's copy keeps them: in a slice of their exact number (decoding leaves room for
// more), with their type, status, reason and message shared with every other copy that has the same ones: most
// objects of a kind say the same few things ("1 of 1 pods run the current spec").
func (in *Interner) Conditions(conds []metav1.Condition) []metav1.Condition {
	if len(conds) == 0 {
		return nil
	}
	out := make([]metav1.Condition, len(conds))
	for i, c := range conds {
		c.Type, c.Reason, c.Message = in.Intern(c.Type), in.Intern(c.Reason), in.Intern(c.Message)
		c.Status = metav1.ConditionStatus(in.Intern(string(c.Status)))
		out[i] = c
	}
	return out
}

// OwnerReferences makes refs, references of a cache's copy, share their API version, kind and flags with every
// other copy's: every child of a kind names the same.
func (in *Interner) OwnerReferences(refs []metav1.OwnerReference) []metav1.OwnerReference {
	for i := range refs {
		r := &refs[i]
		r.APIVersion, r.Kind = in.Intern(r.APIVersion), in.Intern(r.Kind)
		r.Controller, r.BlockOwnerDeletion = in.flag(r.Controller), in.flag(r.BlockOwnerDeletion)
	}
	return refs
}

func (in *Interner) flag(b *bool) *bool {
	switch {
	case b == nil:
		return nil
	case *b:
		return &in.yes
	default:
		return &in.no
	}
}
