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

// Applying children: server-side apply, and only when they differ from what is wanted.
//
// Every object operator101 renders is applied under one field manager, FieldManager. To decide whether a write
// is needed, the fields FieldManager manages are extracted from the observed object (client-go's Extract<Kind>
// functions read them from managedFields) and compared with the desired apply configuration; the manager's cache
// keeps only their Digest, taken when the object arrives (ChildForCache). This matches
// server-side apply's own semantics: a field someone else changed (kubectl scale, an edit) is no longer owned
// by FieldManager, so it shows as a difference and is taken back; a field someone else added, which FieldManager
// never set, is left alone and costs no write.
package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator101/operator101/api/conditions"
	"github.com/operator101/operator101/internal/controller/digest"
	"github.com/operator101/operator101/internal/controller/managed"
)

// Extractor returns the fields of observed that fieldManager manages, as an apply configuration
// (for example appsv1ac.ExtractDeployment).
type Extractor[O client.Object, A runtime.ApplyConfiguration] func(observed O, fieldManager string) (A, error)

// Applier is what applying a child takes: the manager's cached client, the uncached reader (the manager's API
// reader), and the Memory the manager's cache transforms share.
type Applier struct {
	Client client.Client
	Live   client.Reader
	Memory *Memory
	// Refused, when set, is told the kind of each child refused as not owned (metrics).
	Refused func(kind string)
	// Uncached: the children applied are of a kind the manager's cache does not hold (Secrets, read past the
	// cache at every look), so nothing is remembered of what was applied: no cache transform would read it, and
	// no informer would tell Memory.Forget that the object is gone.
	Uncached bool
}

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

// Child applies desired unless observed already matches it. observed is what the cache holds (empty
// when the cache has no such child). The operator never takes over an object it did not create: a child the
// cache holds must be controlled by owner, and for a child the cache lacks the first write only creates
// (IfChanged with no observed object, createOnly), which the API server refuses with a Conflict, leaving the
// object as it is, when the name is in use. Only then is the object read from the API server through live (the
// uncached reader, Options.Reader) into observed: one that owner does not control is ErrNotOwned (NotOwned names
// it), and nothing is written; one that owner controls (the cache has not seen it yet: a reconcile soon after
// the child's create) is compared like a cached one, so it costs no further write when it already matches. On a
// server that refuses the createOnly apply itself, the lookup comes first and the first write is a plain apply
// (docs/admin/security.md). So does it when lookFirst (NameTaken: the owner found a child's name taken at its last
// look), so that a name that stays taken costs a read per look and no write request. kind names the child's
// kind in the error.
func Child[O client.Object, A runtime.ApplyConfiguration](ctx context.Context, a Applier,
	owner metav1.Object, kind string, observed O, desired A, extract Extractor[O, A], lookFirst bool) error {
	looked := observed.GetUID() == "" && lookFirst
	if looked {
		if err := readPast(ctx, a.Live, kind, observed, desired); err != nil {
			return err
		}
	}
	if observed.GetUID() == "" {
		var none O
		_, err := IfChanged(ctx, a, none, desired, extract)
		refused := errors.Is(err, errCreateOnlyRefused)
		if err == nil || (!refused && !apierrors.IsConflict(err)) {
			return err
		}
		// The name is in use (Conflict), or the server does not take createOnly: look the object up, unless
		// that was done just before.
		if !looked {
			if err := readPast(ctx, a.Live, kind, observed, desired); err != nil {
				return err
			}
		}
		if observed.GetUID() == "" {
			if !refused {
				return err // created or deleted since the lookup: the next reconcile looks again
			}
			// The first write as before createOnly, with the gap of one round trip since the lookup left open.
			return applyPlain(ctx, a, desired)
		}
	}
	if !metav1.IsControlledBy(observed, owner) {
		if a.Refused != nil {
			a.Refused(kind)
		}
		return NotOwned(kind, observed)
	}
	_, err := IfChanged(ctx, a, observed, desired, extract)
	return err
}

// Optional is Child for a child that exists only when owner's spec asks for it: desired nil means none may
// exist, and a child owner controls is then deleted (with its UID as precondition, so that nothing of the same
// name made since is); an object of that name owner does not control is left alone.
func Optional[O client.Object, A runtime.ApplyConfiguration](ctx context.Context, a Applier,
	owner metav1.Object, kind string, observed O, desired A, extract Extractor[O, A], lookFirst bool) error {
	if !digest.IsNil(desired) {
		return Child(ctx, a, owner, kind, observed, desired, extract, lookFirst)
	}
	if observed.GetUID() == "" || !metav1.IsControlledBy(observed, owner) {
		return nil
	}
	uid := observed.GetUID()
	if err := a.Client.Delete(ctx, observed, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s %s/%s, which the spec no longer asks for: %w", kind, observed.GetNamespace(), observed.GetName(), err)
	}
	return nil
}

// readPast reads the object of desired's name from the API server into observed, which stays empty when there
// is none.
//
// Why past the cache: the cache holds only objects labelled managed.ByLabel, so someone else's unlabelled object
// of the child's name is not in it, and a forced apply would take it over. The check is one GET, made only when
// the first write (createOnly) found the name in use (a reconcile that runs before the cache has seen the
// create, or while the name is taken) or on a server that refuses createOnly, never for a converged child.
func readPast[O client.Object](ctx context.Context, live client.Reader, kind string, observed O, desired runtime.ApplyConfiguration) error {
	id, err := identityOf(desired)
	if err != nil {
		return err
	}
	key := client.ObjectKey{Namespace: id.namespace, Name: id.name}
	// On an error the client decodes nothing, so observed stays empty.
	if err := live.Get(ctx, key, observed); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("looking up %s %s past the cache: %w", kind, key, err)
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

// NameTaken tells whether an owner's conditions say that a child's name was taken at its last look (Degraded,
// reason ChildNotOwned): Child's lookFirst.
func NameTaken(conds []metav1.Condition) bool {
	c := meta.FindStatusCondition(conds, conditions.Degraded)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == conditions.ReasonNotOwned
}

// errCreateOnlyRefused: the server refused the createOnly apply of an absent object itself (createOnlyRefused).
var errCreateOnlyRefused = errors.New("the server does not create with a resourceVersion named")

// IfChanged applies desired unless observed already carries exactly desired under FieldManager (their Digests
// are the same). Pass a nil observed when the object does not exist: the apply then only creates (createOnly),
// and is refused with a Conflict if the object exists by then; a server that refuses such an apply of an absent
// object itself gets nothing written, and the error wraps errCreateOnlyRefused. It reports whether it wrote.
func IfChanged[O client.Object, A runtime.ApplyConfiguration](ctx context.Context, a Applier, observed O,
	desired A, extract Extractor[O, A]) (bool, error) {
	want, err := a.Memory.keys.Of(desired)
	if err != nil {
		return false, err
	}
	if !digest.IsNil(observed) {
		current, err := managedDigest(a.Memory, observed, extract)
		if err != nil {
			return false, err
		}
		if current == want {
			return false, nil
		}
	}
	rv := ""
	if digest.IsNil(observed) {
		rv = createOnly
	}
	err = apply(ctx, a, desired, want, rv)
	if err != nil && rv != "" && createOnlyRefused(err) {
		err = fmt.Errorf("%w: %w", errCreateOnlyRefused, err)
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// applyPlain applies desired with no resourceVersion: the first write on a server that refuses createOnly.
func applyPlain(ctx context.Context, a Applier, desired runtime.ApplyConfiguration) error {
	want, err := a.Memory.keys.Of(desired)
	if err != nil {
		return err
	}
	return apply(ctx, a, desired, want, "")
}

// apply sends desired as a server-side apply by FieldManager, forced, naming resourceVersion when it is not
// empty, and reads back only the object's metadata: no reconcile reads the answer, and the API server encodes
// a PartialObjectMetadata instead of the whole object. The body is desired's JSON, with none of the metadata
// the server assigns; desired is not changed. digest is desired's digest, which rememberApplied records.
func apply(ctx context.Context, a Applier, desired runtime.ApplyConfiguration, sum, resourceVersion string) error {
	var rv *string
	if resourceVersion != "" {
		rv = &resourceVersion
	}
	id, err := identityOf(desired)
	if err != nil {
		return err
	}
	body, err := json.Marshal(digest.WithMetadata(desired, rv))
	if err != nil {
		return fmt.Errorf("encoding %T to apply it: %w", desired, err)
	}
	obj := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: id.apiVersion, Kind: id.kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: id.namespace, Name: id.name}}
	defer a.Memory.applying.start(id.kind, id.namespace, id.name)()
	if err := a.Client.Patch(ctx, obj, client.RawPatch(types.ApplyPatchType, body), client.FieldOwner(managed.FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying %s %s/%s: %w", id.kind, id.namespace, id.name, err)
	}
	if !a.Uncached {
		a.Memory.rememberApplied(obj, sum)
	}
	return nil
}

// rememberApplied remembers (Memory.digests), under the key of answer, the object as the API server answered an
// apply, that the fields FieldManager manages in it have digest, the digest of what was sent: an apply leaves its
// manager owning exactly the fields it sent, with the values it sent. So the cache transform reads no managedFields for the
// watch event of this write, or for a later one that changed none of the key (ChildForCache; an event
// transformed before this answer was read looks it up later, cachedDigest). Values the
// server changes on the way (a mutating webhook) are found when the transform next reads managedFields: on a
// change of the key, and on every start.
func (m *Memory) rememberApplied(answer client.Object, sum string) {
	m.digests.Put(answer.GetUID(), m.childKey(answer), sum)
}

// identity is the kind and name of an object an apply configuration describes.
type identity struct{ apiVersion, kind, namespace, name string }

// identityOf reads desired's identity through the getters every client-go apply configuration has (the ones
// controller-runtime's client reads too).
func identityOf(desired runtime.ApplyConfiguration) (identity, error) {
	ac, ok := desired.(interface {
		GetAPIVersion() *string
		GetKind() *string
		GetNamespace() *string
		GetName() *string
	})
	if !ok || digest.IsNil(desired) {
		return identity{}, fmt.Errorf("%T does not tell its kind and name", desired)
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	return identity{apiVersion: str(ac.GetAPIVersion()), kind: str(ac.GetKind()), namespace: str(ac.GetNamespace()),
		name: str(ac.GetName())}, nil
}

// createOnlyRefused tells whether err is a server's refusal of the createOnly apply of an absent object itself
// rather than of the object: the storage layer's "resourceVersion should not be set on objects to be created"
// (some servers' create paths, for some kinds), or NotFound (a server that reads the resourceVersion as a
// precondition on an object that does not exist). A Conflict is the answer createOnly asks for: the object
// exists by now.
func createOnlyRefused(err error) bool {
	return apierrors.IsNotFound(err) || strings.Contains(err.Error(), "resourceVersion should not be set on objects to be created")
}
