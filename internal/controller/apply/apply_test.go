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
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/operator101/operator101/internal/controller/cachetrim"
	"github.com/operator101/operator101/internal/controller/digest"
	"github.com/operator101/operator101/internal/controller/managed"
	"github.com/operator101/operator101/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

// tm is the Memory of these tests, as a manager's is of its cache and controllers.
var tm = NewMemory(digest.New())

// obj is an object of the given fields, as a dynamic client reads it.
func obj(fields map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: fields}
}

// TestDigest: two spellings of one quantity, key order, a nil and an empty map or list, and what the server
// assigns do not change a Digest, as they do not count for equality.Semantic.
func TestDigest(t *testing.T) {
	rl := func(cpu string) *corev1ac.ResourceRequirementsApplyConfiguration {
		return corev1ac.ResourceRequirements().WithLimits(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)})
	}
	cases := []struct {
		name string
		a, b any
		want bool
	}{
		{"same quantity, other spelling", rl("0.5"), rl("500m"), true},
		{"other quantity", rl("0.5"), rl("1"), false},
		{"extra field", corev1ac.Container().WithName("a"), corev1ac.Container().WithName("a").WithImage("x"), false},
		{"nil and nil", nil, (*corev1ac.ContainerApplyConfiguration)(nil), true},
		{"no map and an empty one", obj(map[string]any{"a": map[string]any(nil)}), obj(map[string]any{"a": map[string]any{}}), true},
		{"no list and an empty one", obj(map[string]any{"a": []any(nil)}), obj(map[string]any{"a": []any{}}), true},
		{"an empty map and none at all", obj(map[string]any{"a": map[string]any{}}), obj(map[string]any{}), false},
		{"other order of keys", corev1ac.ConfigMap("a", "b").WithData(map[string]string{"x": "1", "y": "2"}),
			corev1ac.ConfigMap("a", "b").WithData(map[string]string{"y": "2", "x": "1"}), true},
		{"server-assigned metadata", corev1ac.ConfigMap("a", "b"), corev1ac.ConfigMap("a", "b").WithResourceVersion("7").WithUID("u"), true},
		{"server-assigned metadata, the rest differs", corev1ac.ConfigMap("a", "b").WithLabels(map[string]string{"x": "1"}),
			corev1ac.ConfigMap("a", "b").WithResourceVersion("7").WithGeneration(2), false},
		{"an apply configuration's empty map and none", corev1ac.ConfigMap("a", "b").WithData(map[string]string{}),
			corev1ac.ConfigMap("a", "b"), true},
		{"an owner reference's uid is not the server's", corev1ac.ConfigMap("a", "b").WithOwnerReferences(metav1ac.OwnerReference().WithUID("1")),
			corev1ac.ConfigMap("a", "b").WithOwnerReferences(metav1ac.OwnerReference().WithUID("2")), false},
	}
	for _, c := range cases {
		da, errA := tm.keys.Of(c.a)
		db, errB := tm.keys.Of(c.b)
		if got := da == db; errA != nil || errB != nil || got != c.want {
			t.Errorf("%s: same Digest = %v (%v, %v); want %v", c.name, got, errA, errB, c.want)
		}
	}
}

func TestTrimForCacheKeepsOnlyOurManagedFields(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		{Manager: "kubectl"}, {Manager: managed.FieldManager}, {Manager: "kube-controller-manager"},
	}}}
	out, err := cachetrim.Default(cm)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.ConfigMap).ManagedFields
	if len(got) != 1 || got[0].Manager != managed.FieldManager {
		t.Errorf("managedFields after trim = %+v, want only %s", got, managed.FieldManager)
	}
	applied := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"index.html":"a whole page"}}`, "team": "web"}}}
	out, err = cachetrim.Default(applied)
	if err != nil {
		t.Fatal(err)
	}
	if a := out.(*corev1.ConfigMap).Annotations; len(a) != 1 || a["team"] != "web" {
		t.Errorf("annotations after trim = %v, want only team=web", a)
	}
	if _, err := cachetrim.Default("not an object"); err != nil {
		t.Errorf("TrimForCache on a non-object: %v", err)
	}
}

// TestIfChanged runs against a real API server: a write only when the managed fields differ, drift taken back,
// fields others add left alone.
func TestIfChanged(t *testing.T) {
	ctx := context.Background()
	cfg, counter := testenv.Counting(env.Config)
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	desired := corev1ac.ConfigMap("page", "default").WithLabels(map[string]string{"app": "web"}).
		WithData(map[string]string{"index.html": "<h1>hi</h1>"})
	get := func() *corev1.ConfigMap {
		t.Helper()
		var cm corev1.ConfigMap
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "page"}, &cm); err != nil {
			t.Fatal(err)
		}
		return &cm
	}
	step := func(name string, observed *corev1.ConfigMap, wantWrite bool) {
		t.Helper()
		counter.Reset()
		wrote, err := IfChanged(ctx, Applier{Client: c, Live: c, Memory: tm}, observed, desired, corev1ac.ExtractConfigMap)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if wrote != wantWrite || counter.Total() != map[bool]int{true: 1, false: 0}[wantWrite] {
			t.Fatalf("%s: wrote=%v writes=[%s], want wrote=%v", name, wrote, counter, wantWrite)
		}
	}

	step("absent object is created", nil, true)
	step("converged object costs no write", get(), false)

	// Someone else adds a key: it is theirs, so nothing to take back.
	cm := get()
	cm.Data["extra"] = "theirs"
	if err := env.Client.Update(ctx, cm, client.FieldOwner("someone")); err != nil {
		t.Fatal(err)
	}
	step("a field another manager added is left alone", get(), false)

	// Someone else changes a key we set: it is drift, and it is reverted.
	cm = get()
	cm.Data["index.html"] = "defaced"
	if err := env.Client.Update(ctx, cm, client.FieldOwner("someone")); err != nil {
		t.Fatal(err)
	}
	step("drift of an owned field is reverted", get(), true)
	if got := get().Data; got["index.html"] != "<h1>hi</h1>" || got["extra"] != "theirs" {
		t.Errorf("after revert data = %v", got)
	}
	step("converged again", get(), false)

	// The cache keeps only our managedFields entries; the comparison still holds on the trimmed copy.
	trimmed, _ := cachetrim.Default(get())
	step("trimmed cached copy costs no write", trimmed.(*corev1.ConfigMap), false)

	// The cache keeps a child as its metadata and a digest of our fields; the comparison holds on it too.
	step("digest cached copy costs no write", cacheCopy(t, get()), false)
	cm = get()
	cm.Data["index.html"] = "defaced again"
	if err := env.Client.Update(ctx, cm, client.FieldOwner("someone")); err != nil {
		t.Fatal(err)
	}
	step("drift seen through the digest cached copy is reverted", cacheCopy(t, get()), true)
	step("converged once more", cacheCopy(t, get()), false)

	// Someone who may edit the child strips its managedFields and writes, where the cache's copy keeps its digest,
	// the digest of what operator101 applies as anyone can compute it (the algorithm is public, the key is not).
	cm = get()
	cm.Data["index.html"] = "defaced with a forged digest"
	cm.ManagedFields = []metav1.ManagedFieldsEntry{{}}
	want, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(desired)
	raw, _ := json.Marshal(want)
	sum := sha256.Sum256(raw)
	cm.SetSelfLink(base64.RawStdEncoding.EncodeToString(sum[:])) // where the cache's copy keeps its digest
	if err := env.Client.Update(ctx, cm, client.FieldOwner("someone")); err != nil {
		t.Fatal(err)
	}
	forged, err := ChildForCache(tm, corev1ac.ExtractConfigMap, dropData)(get())
	if err != nil {
		t.Fatal(err)
	}
	step("a forged digest annotation is no digest: the drift is reverted", forged.(*corev1.ConfigMap), true)
	if got := get().Data["index.html"]; got != "<h1>hi</h1>" {
		t.Errorf("after a forged digest, index.html = %q", got)
	}
}

// cacheCopy is what the manager's cache keeps of a ConfigMap operator101 applies.
func cacheCopy(t *testing.T, cm *corev1.ConfigMap) *corev1.ConfigMap {
	t.Helper()
	out, err := ChildForCache(tm, corev1ac.ExtractConfigMap, dropData)(cm)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.ConfigMap)
	if got.Data != nil || len(got.ManagedFields) != 0 || got.GetSelfLink() == "" {
		t.Fatalf("cached copy keeps data %v, managedFields %d, digest %q", got.Data, len(got.ManagedFields),
			got.GetSelfLink())
	}
	return got
}

func TestChildForCache(t *testing.T) {
	transform := ChildForCache(tm, corev1ac.ExtractConfigMap, dropData)
	ours := metav1.ManagedFieldsEntry{Manager: managed.FieldManager, Operation: metav1.ManagedFieldsOperationApply,
		APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:index.html":{}}}`)}
	web := metav1.OwnerReference{APIVersion: "operator.k8s-summit.org/v1", Kind: "MyWeb", Name: "web", UID: "web-1",
		Controller: ptr(true)}
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "other-1"}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "page", Namespace: "web",
			Labels:          map[string]string{"app": "web", managed.ByLabel: managed.By},
			Annotations:     map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}", "team": "web"},
			OwnerReferences: []metav1.OwnerReference{other, web}, Finalizers: []string{"example.com/keep"},
			ManagedFields: []metav1.ManagedFieldsEntry{ours, {Manager: "kubectl"}}},
		Data: map[string]string{"index.html": "<h1>hi</h1>", "extra": "theirs"},
	}
	out, err := transform(cm)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.ConfigMap)
	want, _ := tm.keys.Of(corev1ac.ConfigMap("page", "web").WithData(map[string]string{"index.html": "<h1>hi</h1>"}))
	if got.GetSelfLink() != want {
		t.Errorf("digest %q, want the digest of our one field, %q", got.GetSelfLink(), want)
	}
	// Of the metadata, only what the reconcilers read: operator101's label, the digest, the controller.
	if got.Data != nil || got.ManagedFields != nil || len(got.Labels) != 1 || got.Labels[managed.ByLabel] != managed.By ||
		got.Annotations != nil || len(got.OwnerReferences) != 1 || got.OwnerReferences[0].UID != web.UID ||
		got.Finalizers != nil {
		t.Errorf("cached copy: data %v, managedFields %v, labels %v, annotations %v, owners %v, finalizers %v", got.Data,
			got.ManagedFields, got.Labels, got.Annotations, got.OwnerReferences, got.Finalizers)
	}

	// client-go may hand the cached copy to the transform again: it keeps its digest.
	again, err := transform(got)
	if err != nil || again.(*corev1.ConfigMap).GetSelfLink() != want {
		t.Errorf("transformed twice: digest %q, %v; want %q", again.(*corev1.ConfigMap).GetSelfLink(), err, want)
	}

	// Owned fields that cannot be read: the copy keeps no digest and no managedFields (IfChanged applies).
	failing := ChildForCache(tm, func(*corev1.ConfigMap, string) (*corev1ac.ConfigMapApplyConfiguration, error) {
		return nil, errors.New("unreadable managedFields")
	}, dropData)
	whole := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "page", Namespace: "web",
		Annotations:   map[string]string{"team": "web"},
		ManagedFields: []metav1.ManagedFieldsEntry{ours, {Manager: "kubectl"}}}, Data: map[string]string{"index.html": "x"}}
	out, err = failing(whole)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*corev1.ConfigMap); got.Annotations != nil || got.GetSelfLink() != "" || got.Data != nil || got.ManagedFields != nil {
		t.Errorf("unreadable managed fields: cached copy %+v, want no digest, no data, no managedFields", got)
	}

	// An object that arrives with a selfLink and no managedFields (someone cleared them) is trimmed alike: the
	// selfLink is kept as its digest, nothing else the tenant wrote.
	forged := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "page", Namespace: "web",
		Labels:      map[string]string{managed.ByLabel: managed.By, "tenant": "x"},
		Annotations: map[string]string{"tenant.example/blob": "large"}},
		Data: map[string]string{"blob": "large"}}
	forged.SetSelfLink("forged")
	out, err = transform(forged)
	if got := out.(*corev1.ConfigMap); err != nil || got.Data != nil || len(got.Labels) != 1 || got.Annotations != nil ||
		got.GetSelfLink() != "forged" {
		t.Errorf("a copy with a digest annotation and no managedFields: %+v, %v; want it trimmed", got, err)
	}
	if out, err := transform("not an object"); err != nil || out != "not an object" {
		t.Errorf("transform of a non-object = %v, %v", out, err)
	}
}

func TestOnlyNotOwned(t *testing.T) {
	notOwned := NotOwned("Service", &metav1.ObjectMeta{Namespace: "ns", Name: "web"})
	other := errors.New("the node port is taken")
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"one", notOwned, true},
		{"wrapped", fmt.Errorf("reconciling: %w", notOwned), true},
		{"joined", errors.Join(notOwned, NotOwned("ConfigMap", &metav1.ObjectMeta{Namespace: "ns", Name: "web"})), true},
		{"another error", other, false},
		{"joined with another error", errors.Join(notOwned, other), false},
		{"wrapped join with another error", fmt.Errorf("x: %w", errors.Join(other, notOwned)), false},
	}
	for _, c := range cases {
		if got := OnlyNotOwned(c.err); got != c.want {
			t.Errorf("%s: OnlyNotOwned(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
	if got := notOwned.Error(); got != "Service ns/web exists and is not controlled by this resource; rename or delete it" {
		t.Errorf("NotOwned names the object as %q", got)
	}
}

// TestApplyChildNeverTakesOver runs against a real API server: an object of the child's name that the owner
// does not control is never written, whether the cache holds it (labelled) or not (unlabelled, found by the
// uncached lookup); the lookup is made only when the cache lacks the child, and a child of the owner that it
// finds is written only when it differs from what is wanted.
func TestApplyChildNeverTakesOver(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "apply")
	cfg, counter := testenv.Counting(env.Config)
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	owner := &metav1.ObjectMeta{Namespace: ns, Name: "owner", UID: types.UID("3f1b0c43-2e25-4a4e-9d7e-6a4bb2f0a001")}
	desired := func(name string) *corev1ac.ConfigMapApplyConfiguration {
		return corev1ac.ConfigMap(name, ns).WithLabels(map[string]string{managed.ByLabel: managed.By}).
			WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion("v1").WithKind("ConfigMap").WithName(owner.Name).
				WithUID(owner.UID).WithController(true)).
			WithData(map[string]string{"index.html": "<h1>ours</h1>"})
	}
	get := func(name string) *corev1.ConfigMap {
		t.Helper()
		var cm corev1.ConfigMap
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cm); err != nil {
			t.Fatal(err)
		}
		return &cm
	}
	// step applies name's desired child with observed as the cache's copy (nil: the cache lacks it), and checks
	// the outcome, the write requests (a refused createOnly apply is one) and the uncached GETs.
	step := func(what, name string, observed *corev1.ConfigMap, lookFirst, wantNotOwned bool, wantWrites, wantGets int) {
		t.Helper()
		if observed == nil {
			observed = &corev1.ConfigMap{}
		}
		counter.Reset()
		err := Child(ctx, Applier{Client: c, Live: c, Memory: tm}, owner, "ConfigMap", observed, desired(name), corev1ac.ExtractConfigMap, lookFirst)
		switch {
		case wantNotOwned && !errors.Is(err, ErrNotOwned):
			t.Errorf("%s: err = %v, want ErrNotOwned", what, err)
		case wantNotOwned && !strings.HasPrefix(err.Error(), "ConfigMap "+ns+"/"+name+" exists"):
			t.Errorf("%s: %q does not name the object", what, err)
		case !wantNotOwned && err != nil:
			t.Errorf("%s: %v", what, err)
		}
		if n, g := counter.Total(), counter.Gets()["GET configmaps"]; n != wantWrites || g != wantGets {
			t.Errorf("%s: %d writes [%s], %d GETs; want %d writes, %d GETs", what, n, counter, g, wantWrites, wantGets)
		}
	}

	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "theirs", Labels: map[string]string{"team": "shop"}},
		Data: map[string]string{"index.html": "<h1>theirs</h1>"}}
	if err := env.Client.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	// The first write only creates: refused, then the lookup names the object.
	step("unlabelled, not in the cache", "theirs", nil, false, true, 1, 1)
	// Found taken at the owner's last look (NameTaken): looked up first, no write request.
	step("unlabelled, not in the cache, taken last time", "theirs", nil, true, true, 0, 1)
	if now := get("theirs"); now.ResourceVersion != theirs.ResourceVersion || len(now.OwnerReferences) != 0 ||
		!equality.Semantic.DeepEqual(now.Data, theirs.Data) {
		t.Errorf("the other object was changed: %+v", now)
	}

	labelled := theirs.DeepCopy()
	labelled.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "labelled", Labels: map[string]string{managed.ByLabel: managed.By}}
	if err := env.Client.Create(ctx, labelled); err != nil {
		t.Fatal(err)
	}
	step("labelled, in the cache, another controller", "labelled", get("labelled"), false, true, 0, 0)

	step("absent: created, no lookup", "mine", nil, false, false, 1, 0)
	step("absent, taken last time: looked up, then created", "mine-later", nil, true, false, 1, 1)
	step("ours, the cache behind, converged", "mine", nil, false, false, 1, 1)
	step("ours, in the cache, converged", "mine", get("mine"), false, false, 0, 0)
	// Changed by someone while the cache is behind (or for good: without the label the cache never holds it).
	edited := get("mine")
	edited.Labels = nil
	edited.Data = map[string]string{"index.html": "<h1>edited</h1>"}
	if err := env.Client.Update(ctx, edited); err != nil {
		t.Fatal(err)
	}
	step("ours, the cache behind, edited", "mine", nil, false, false, 2, 1)
	if now := get("mine"); now.Labels[managed.ByLabel] != managed.By || now.Data["index.html"] != "<h1>ours</h1>" {
		t.Errorf("the edited child was not taken back: labels %v, data %v", now.Labels, now.Data)
	}
	if mine := get("mine"); !metav1.IsControlledBy(mine, owner) {
		t.Errorf("the created child's owner references: %+v", mine.OwnerReferences)
	}
}

// TestOwnerForCache: the cache's copy of an owner keeps no large field, none of the tenant's labels and
// annotations (a digest of them instead), and the digests of the children it would get; CachedConverged
// compares those with the children's; the transform is idempotent, and annotations of its names written by
// anyone else are recomputed, never trusted.
func TestOwnerForCache(t *testing.T) {
	// A Secret stands for a custom resource: its data is the large field, a ConfigMap its one child.
	desired := func(s *corev1.Secret) (map[string]runtime.ApplyConfiguration, error) {
		if _, bad := s.Data["bad"]; bad {
			return nil, errors.New("cannot render")
		}
		children := map[string]runtime.ApplyConfiguration{"ConfigMap": corev1ac.ConfigMap(s.Name, s.Namespace).
			WithData(map[string]string{"page": string(s.Data["page"])}), "Service": nil}
		return children, nil
	}
	transform := OwnerForCache(tm, desired, func(s *corev1.Secret) { s.Data = nil })
	owner := func() *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1", ResourceVersion: "7",
			Labels: map[string]string{"tenant": "x"}, Annotations: map[string]string{"blob": strings.Repeat("b", 1<<16)},
			Finalizers: []string{"f"}, OwnerReferences: []metav1.OwnerReference{{Name: "o"}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
			Data: map[string][]byte{"page": []byte(strings.Repeat("p", 1<<16))}}
	}
	out, err := transform(owner())
	if err != nil {
		t.Fatal(err)
	}
	cached := out.(*corev1.Secret)
	if cached.Data != nil || cached.Labels != nil || cached.Finalizers != nil || cached.OwnerReferences != nil ||
		cached.ManagedFields != nil || cached.Annotations != nil || cached.Name != "web" || cached.UID != "u1" || len(strings.Fields(cached.GetSelfLink())) != 3 {
		t.Errorf("cached copy keeps more than its identity and the digests: %+v", cached.ObjectMeta)
	}

	// A child the cache holds, controlled by the owner, with the digest of what desired builds.
	children, _ := desired(owner())
	want, _ := tm.keys.Of(children["ConfigMap"])
	child := func(digest string) *corev1.ConfigMap {
		c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "c1",
			OwnerReferences: []metav1.OwnerReference{{UID: "u1", Controller: ptr(true)}}}}
		c.SetSelfLink(digest)
		return c
	}
	none := &corev1.Service{}
	for _, tc := range []struct {
		what     string
		children map[string]client.Object
		want     bool
	}{
		{"converged", map[string]client.Object{"ConfigMap": child(want), "Service": none}, true},
		{"child differs", map[string]client.Object{"ConfigMap": child("other"), "Service": none}, false},
		{"child missing", map[string]client.Object{"ConfigMap": &corev1.ConfigMap{}, "Service": none}, false},
		{"child not controlled", map[string]client.Object{"ConfigMap": func() *corev1.ConfigMap {
			c := child(want)
			c.OwnerReferences = nil
			return c
		}(), "Service": none}, false},
		{"a child that must not exist does", map[string]client.Object{"ConfigMap": child(want), "Service": &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{UID: "s1", OwnerReferences: []metav1.OwnerReference{{UID: "u1", Controller: ptr(true)}}}}}, false},
		{"a kind not recorded", map[string]client.Object{"ConfigMap": child(want), "Deployment": none}, false},
		{"a child that must not exist does, its digest written as absent", map[string]client.Object{"ConfigMap": child(want),
			"Service": func() *corev1.Service {
				s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{UID: "s1",
					OwnerReferences: []metav1.OwnerReference{{UID: "u1", Controller: ptr(true)}}}}
				s.SetSelfLink(absent)
				return s
			}()}, false},
		{"a kind missing", map[string]client.Object{"ConfigMap": child(want)}, false},
	} {
		if got := CachedConverged(tm, cached, tc.children); got != tc.want {
			t.Errorf("%s: CachedConverged = %v, want %v", tc.what, got, tc.want)
		}
	}

	// Idempotent: its own output comes through unchanged.
	again, err := transform(cached.DeepCopy())
	if err != nil || !equality.Semantic.DeepEqual(again, cached) {
		t.Errorf("transformed twice: %+v, %v; want %+v", again, err, cached)
	}

	// Anyone may write annotations of these names on the object: without the key, their values are recomputed.
	forged := owner()
	forged.SetSelfLink(ownerCacheData{metadata: "m", desired: "x", seal: "s"}.String())
	out, err = transform(forged)
	if err != nil {
		t.Fatal(err)
	}
	if f := out.(*corev1.Secret); f.Data != nil || !CachedConverged(tm, f, map[string]client.Object{"ConfigMap": child(want), "Service": none}) {
		t.Errorf("a forged selfLink was trusted: %s", f.GetSelfLink())
	}

	// A change of labels or annotations changes the cache's copy (ChangedByOthers lets it through).
	relabelled := owner()
	relabelled.Labels["tenant"] = "y"
	out, _ = transform(relabelled)
	if out.(*corev1.Secret).GetSelfLink() == cached.GetSelfLink() {
		t.Error("a new label left the cache's copy as it was")
	}
	// A status write (a new resourceVersion) leaves it as it was (ChangedByOthers leaves it out).
	statusWritten := owner()
	statusWritten.ResourceVersion += "0"
	if out, _ = transform(statusWritten); out.(*corev1.Secret).GetSelfLink() != cached.GetSelfLink() {
		t.Errorf("a status write changed the cache's copy: %s, was %s", out.(*corev1.Secret).GetSelfLink(), cached.GetSelfLink())
	}

	// desired fails: nothing counts as converged, so the reconcile reads the object whole and reports it.
	bad := owner()
	bad.Data["bad"] = nil
	out, _ = transform(bad)
	if b := out.(*corev1.Secret); b.Data != nil || CachedConverged(tm, b, map[string]client.Object{"ConfigMap": child(want), "Service": none}) {
		t.Errorf("an owner whose children cannot be built: %+v", b.ObjectMeta)
	}
}

func ptr[T any](v T) *T { return &v }

// TestChildForCacheRemembersDeployments: an event of a Deployment that changed neither its spec (generation),
// nor its metadata, nor operator101's managedFields entries (its status, written by its controller several
// times per rollout) reuses the digest taken before without reading managedFields again; any of those changes
// reads them again, and so does a Deployment the informer saw deleted.
func TestChildForCacheRemembersDeployments(t *testing.T) {
	extracts := 0
	transform := ChildForCache(tm, func(d *appsv1.Deployment, m string) (*appsv1ac.DeploymentApplyConfiguration, error) {
		extracts++
		return appsv1ac.ExtractDeployment(d, m)
	}, tm.deploymentForCache)
	ours := metav1.ManagedFieldsEntry{Manager: managed.FieldManager, Operation: metav1.ManagedFieldsOperationApply,
		APIVersion: "apps/v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`)}
	dep := func(gen int64, replicas int32, mutate func(*appsv1.Deployment)) *appsv1.Deployment {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "web", UID: "d-1", Generation: gen,
			Labels: map[string]string{"app": "web"}, ManagedFields: []metav1.ManagedFieldsEntry{ours}},
			Spec: appsv1.DeploymentSpec{Replicas: &replicas}}
		if mutate != nil {
			mutate(d)
		}
		return d
	}
	digestOf := func(d *appsv1.Deployment) string {
		t.Helper()
		out, err := transform(d)
		if err != nil {
			t.Fatal(err)
		}
		return out.(metav1.Object).GetSelfLink()
	}
	steps := []struct {
		what        string
		d           *appsv1.Deployment
		wantExtract bool
	}{
		{"first seen", dep(1, 1, nil), true},
		{"its status changed", dep(1, 1, func(d *appsv1.Deployment) { d.Status.AvailableReplicas = 1 }), false},
		{"its spec changed (a new generation)", dep(2, 3, nil), true},
		{"a label changed", dep(2, 3, func(d *appsv1.Deployment) { d.Labels["team"] = "shop" }), true},
		{"an annotation changed", dep(2, 3, func(d *appsv1.Deployment) { d.Annotations = map[string]string{"a": "b"} }), true},
		{"another manager took a field", dep(2, 3, func(d *appsv1.Deployment) {
			d.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: managed.FieldManager, Operation: metav1.ManagedFieldsOperationApply,
				APIVersion: "apps/v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:app":{}}}}`)}}
		}), true},
	}
	var last string
	for _, s := range steps {
		before := extracts
		d := digestOf(s.d.DeepCopy())
		if got := extracts > before; got != s.wantExtract {
			t.Errorf("%s: read managedFields = %v, want %v", s.what, got, s.wantExtract)
		}
		want, _ := tm.keys.Of(must(appsv1ac.ExtractDeployment(s.d, managed.FieldManager)))
		if d != want {
			t.Errorf("%s: digest %q, want %q", s.what, d, want)
		}
		last = d
	}
	if last == "" {
		t.Fatal("no digest")
	}
	tm.Forget(dep(2, 3, nil).GetUID())
	before := extracts
	digestOf(steps[len(steps)-1].d)
	if extracts == before {
		t.Error("a Deployment seen deleted: its digest was remembered")
	}
	// A ConfigMap has no generation: never remembered.
	cms := ChildForCache(tm, corev1ac.ExtractConfigMap, dropData)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "page", Namespace: "web", UID: "c-1"}}
	if _, err := cms(cm.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if _, ok := tm.digests.Get("c-1", ""); ok {
		t.Error("a ConfigMap's digest was remembered")
	}
}

// dropData is how the tests' caches keep a ConfigMap: without its data.
func dropData(cm *corev1.ConfigMap) client.Object {
	cm.Data, cm.BinaryData = nil, nil
	return cm
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestOwnerForCacheRemembersDigests: an owner's event that changed neither its spec (generation) nor its
// labels and annotations (its own status write) reuses the digests of its children without building them;
// either change builds them again, and so does an owner the informer saw deleted.
func TestOwnerForCacheRemembersDigests(t *testing.T) {
	builds := 0
	transform := OwnerForCache(tm, func(s *corev1.Secret) (map[string]runtime.ApplyConfiguration, error) {
		builds++
		return map[string]runtime.ApplyConfiguration{"ConfigMap": corev1ac.ConfigMap(s.Name, s.Namespace).
			WithData(map[string]string{"page": string(s.Data["page"])})}, nil
	}, func(s *corev1.Secret) { s.Data = nil })
	// A Secret with a generation stands for a custom resource with a status subresource.
	owner := func(gen int64, rv, page string, labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "owner-memo", Generation: gen,
			ResourceVersion: rv, Labels: labels}, Data: map[string][]byte{"page": []byte(page)}}
	}
	var last string
	for _, s := range []struct {
		what      string
		o         *corev1.Secret
		wantBuild bool
	}{
		{"first seen", owner(1, "1", "a", nil), true},
		{"its status written", owner(1, "2", "a", nil), false},
		{"its spec changed", owner(2, "3", "b", nil), true},
		{"a label changed", owner(2, "4", "b", map[string]string{"x": "y"}), true},
		{"its status written again", owner(2, "5", "b", map[string]string{"x": "y"}), false},
	} {
		before := builds
		out, err := transform(s.o)
		if err != nil {
			t.Fatal(err)
		}
		if got := builds > before; got != s.wantBuild {
			t.Errorf("%s: built = %v, want %v", s.what, got, s.wantBuild)
		}
		d, _ := ownerCached(out.(*corev1.Secret))
		got := d.desired
		if !s.wantBuild && got != last {
			t.Errorf("%s: digests %s, want those of the last event, %s", s.what, got, last)
		}
		last = got
	}
	tm.Forget(owner(2, "5", "b", nil).GetUID())
	before := builds
	if _, err := transform(owner(2, "6", "b", map[string]string{"x": "y"})); err != nil || builds == before {
		t.Errorf("an owner seen deleted: built = %v (%v), want its children built again", builds > before, err)
	}
}

// TestApplyRemembersWhatItApplied: the watch event of operator101's own apply costs the cache transform no
// extraction from managedFields, for a child without a generation (a ConfigMap) and one with (a Deployment),
// and the digest it records is the one extraction would give; once someone else changes a field operator101
// manages, the transform reads managedFields again and sees the change.
func TestApplyRemembersWhatItApplied(t *testing.T) {
	ctx := context.Background()
	c, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := env.NewNamespace(t, "remember")
	extracts := 0
	cms := ChildForCache(tm, func(cm *corev1.ConfigMap, m string) (*corev1ac.ConfigMapApplyConfiguration, error) {
		extracts++
		return corev1ac.ExtractConfigMap(cm, m)
	}, dropData)
	deps := ChildForCache(tm, func(d *appsv1.Deployment, m string) (*appsv1ac.DeploymentApplyConfiguration, error) {
		extracts++
		return appsv1ac.ExtractDeployment(d, m)
	}, tm.deploymentForCache)
	// event is what the cache makes of the object as the API server holds it now, and whether that read
	// managedFields; it checks the digest against extraction's.
	event := func(what string, obj client.Object, transform toolscache.TransformFunc, truth func() (string, error)) bool {
		t.Helper()
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
		want, err := truth()
		if err != nil {
			t.Fatal(err)
		}
		before := extracts
		out, err := transform(obj.DeepCopyObject())
		if err != nil {
			t.Fatal(err)
		}
		if got := out.(metav1.Object).GetSelfLink(); got != want {
			t.Errorf("%s: digest %q, want extraction's %q", what, got, want)
		}
		return extracts > before
	}

	page := corev1ac.ConfigMap("page", ns).WithLabels(map[string]string{"app": "web"}).
		WithData(map[string]string{"index.html": "<h1>hi</h1>"})
	if _, err := IfChanged(ctx, Applier{Client: c, Live: c, Memory: tm}, nil, page, corev1ac.ExtractConfigMap); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "page"}}
	cmTruth := func() (string, error) { return tm.keys.Of(must(corev1ac.ExtractConfigMap(cm, managed.FieldManager))) }
	if event("the ConfigMap's create", cm, cms, cmTruth) {
		t.Error("the event of operator101's create of a ConfigMap read managedFields")
	}

	web := appsv1ac.Deployment("web", ns).WithLabels(map[string]string{"app": "web"}).
		WithSpec(appsv1ac.DeploymentSpec().WithReplicas(1).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": "web"})).
			WithTemplate(corev1ac.PodTemplateSpec().WithLabels(map[string]string{"app": "web"}).
				WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("web").WithImage("nginx")))))
	if _, err := IfChanged(ctx, Applier{Client: c, Live: c, Memory: tm}, nil, web, appsv1ac.ExtractDeployment); err != nil {
		t.Fatal(err)
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	depTruth := func() (string, error) { return tm.keys.Of(must(appsv1ac.ExtractDeployment(dep, managed.FieldManager))) }
	if event("the Deployment's create", dep, deps, depTruth) {
		t.Error("the event of operator101's create of a Deployment read managedFields")
	}
	if event("a status write of the Deployment", dep, deps, depTruth) {
		t.Error("a Deployment event that changed nothing of the key read managedFields")
	}

	// Someone else changes a field operator101 manages: the transform sees it.
	testenv.Patch(t, env.Client, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}, func(cm *corev1.ConfigMap) {
		cm.Data["index.html"] = "defaced"
	})
	applied, _ := tm.keys.Of(page)
	if !event("the ConfigMap defaced", cm, cms, cmTruth) || cm.Data["index.html"] != "defaced" {
		t.Error("a ConfigMap someone else changed: the transform did not read managedFields")
	}
	testenv.Patch(t, env.Client, client.ObjectKeyFromObject(dep), &appsv1.Deployment{}, func(d *appsv1.Deployment) {
		d.Spec.Replicas = ptr[int32](3)
	})
	if !event("the Deployment scaled", dep, deps, depTruth) {
		t.Error("a Deployment someone else scaled: the transform did not read managedFields")
	}
	if d, _ := cmTruth(); d == applied {
		t.Error("the defaced ConfigMap's extraction equals what was applied: the test proves nothing")
	}

	// What an apply remembered goes when the informer sees the child deleted (reconciler.Memory.Hook puts
	// Forget on the informer of every kind in Memory.Kinds).
	for _, o := range []client.Object{cm, dep} {
		tm.Forget(o.GetUID())
		if tm.digests.Has(o.GetUID()) {
			t.Errorf("%T %s seen deleted: its digest is still remembered", o, o.GetName())
		}
	}
}

// TestApplyRemembersWhatItAppliedForAnEarlyEvent: the watch event of operator101's apply transformed before
// the apply's answer is read (on two cores, usually) reads no managedFields either, and its copy has the digest
// of what was applied once the answer is in: the owner's children count as converged, and IfChanged writes
// nothing. A copy made meanwhile of someone else's write has no digest: IfChanged applies again.
// TestUncachedApplyRemembersNothing: an apply through an Uncached Applier (a Secret, which no informer holds)
// leaves nothing in the Memory, which nothing would ever forget; the same apply through a cached one does.
func TestUncachedApplyRemembersNothing(t *testing.T) {
	ctx := context.Background()
	c, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := env.NewNamespace(t, "uncached")
	for _, uncached := range []bool{true, false} {
		name := fmt.Sprintf("s-%v", uncached)
		s := corev1ac.Secret(name, ns).WithData(map[string][]byte{"k": []byte("v")})
		if _, err := IfChanged(ctx, Applier{Client: c, Live: c, Memory: tm, Uncached: uncached}, nil, s, corev1ac.ExtractSecret); err != nil {
			t.Fatal(err)
		}
		got := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, got); err != nil {
			t.Fatal(err)
		}
		if remembered := tm.digests.Has(got.UID); remembered == uncached {
			t.Errorf("Uncached %v: remembered %v", uncached, remembered)
		}
		tm.Forget(got.UID)
	}
}

func TestApplyRemembersWhatItAppliedForAnEarlyEvent(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "early")
	extracts := 0
	transform := ChildForCache(tm, func(cm *corev1.ConfigMap, m string) (*corev1ac.ConfigMapApplyConfiguration, error) {
		extracts++
		return corev1ac.ExtractConfigMap(cm, m)
	}, dropData)
	var cached *corev1.ConfigMap
	var meanwhile func(*corev1.ConfigMap) // someone else's write between the apply and its answer
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	early := interceptor.NewClient(c, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := c.Patch(ctx, obj, patch, opts...); err != nil {
				return err
			}
			if meanwhile != nil {
				testenv.Patch(t, env.Client, client.ObjectKeyFromObject(obj), &corev1.ConfigMap{}, meanwhile)
			}
			var live corev1.ConfigMap
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), &live); err != nil {
				return err
			}
			out, err := transform(&live) // the watch event, before apply reads the answer
			if err != nil {
				return err
			}
			cached = out.(*corev1.ConfigMap)
			return nil
		},
	})
	page := corev1ac.ConfigMap("page", ns).WithLabels(map[string]string{"app": "web"}).
		WithData(map[string]string{"index.html": "<h1>hi</h1>"})
	want, _ := tm.keys.Of(page)
	if _, err := IfChanged(ctx, Applier{Client: early, Live: early, Memory: tm}, nil, page, corev1ac.ExtractConfigMap); err != nil {
		t.Fatal(err)
	}
	if extracts != 0 {
		t.Errorf("the early event of operator101's create read managedFields %d times", extracts)
	}
	if d, ok := tm.cachedDigest(cached); !ok || d != want {
		t.Errorf("the early event's copy: digest %q (%v), want what was applied, %q", d, ok, want)
	}
	owner := &corev1.Secret{}
	owner.SetSelfLink(ownerCacheData{metadata: "m", seal: "s",
		desired: childrenDigest(tm.keys, map[string]string{"ConfigMap": want})}.String())
	cached.OwnerReferences = []metav1.OwnerReference{{UID: "owner", Controller: ptr(true)}}
	owner.UID = "owner"
	if !CachedConverged(tm, owner, map[string]client.Object{"ConfigMap": cached}) {
		t.Error("the early event's copy does not count as converged")
	}
	if wrote, err := IfChanged(ctx, Applier{Client: early, Live: early, Memory: tm}, cached, page, corev1ac.ExtractConfigMap); err != nil || wrote {
		t.Errorf("the early event's copy: IfChanged wrote=%v, %v; want no write", wrote, err)
	}

	// Someone else changes the page between operator101's apply and its answer.
	testenv.Patch(t, env.Client, client.ObjectKey{Namespace: ns, Name: "page"}, &corev1.ConfigMap{}, func(cm *corev1.ConfigMap) {
		cm.Data["index.html"] = "defaced"
	})
	meanwhile = func(cm *corev1.ConfigMap) { cm.Data["index.html"] = "defaced again" }
	if wrote, err := IfChanged(ctx, Applier{Client: early, Live: early, Memory: tm}, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "page"}},
		page, func(*corev1.ConfigMap, string) (*corev1ac.ConfigMapApplyConfiguration, error) {
			return corev1ac.ConfigMap("page", ns), nil // drifted: the first apply below is needed
		}); err != nil || !wrote {
		t.Fatalf("reverting the drift: wrote=%v, %v", wrote, err)
	}
	if d, ok := tm.cachedDigest(cached); ok {
		t.Errorf("a copy of someone else's write made during the apply has the digest %q", d)
	}
	meanwhile = nil
	if wrote, err := IfChanged(ctx, Applier{Client: early, Live: early, Memory: tm}, cached, page, corev1ac.ExtractConfigMap); err != nil || !wrote {
		t.Errorf("a copy of someone else's write: IfChanged wrote=%v, %v; want a write", wrote, err)
	}
	var live corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "page"}, &live); err != nil || live.Data["index.html"] != "<h1>hi</h1>" {
		t.Errorf("after the second apply the page is %q (%v)", live.Data["index.html"], err)
	}
}
