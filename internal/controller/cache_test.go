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

package controller_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/operator101/operator101/api/app/v1"
	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/controller"
	"github.com/operator101/operator101/internal/controller/appservice"
	"github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/internal/controller/managed"
	"github.com/operator101/operator101/internal/controller/myweb"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/internal/proxyenv"
	"github.com/operator101/operator101/test/testenv"
)

// tenantBlob is what a tenant writes into an object's annotations: 250 KiB, under the API server's 256 KiB.
var tenantBlob = strings.Repeat("b", 250<<10)

// maxCachedBytes bounds the JSON of the cache's copy of any object, whatever its owner wrote into it.
const maxCachedBytes = 4096

// startCachingManager starts a manager with the real cache options and controllers.
func startCachingManager(t *testing.T) *testenv.Manager {
	t.Helper()
	memory := reconciler.NewMemory()
	return env.StartManager(t, nil, func(mgr ctrl.Manager) error {
		return controller.SetupWithManager(mgr, controller.Options{}, memory)
	}, func(o *ctrl.Options) { o.Cache = controller.CacheOptions(controller.Options{}, memory) })
}

// cachedSize waits until the manager's cache holds obj's object (read into obj) and returns the size of its
// JSON.
func cachedSize(t *testing.T, c client.Reader, obj client.Object) int {
	t.Helper()
	key := client.ObjectKeyFromObject(obj)
	testenv.Eventually(t, 30*time.Second, func(g gomega.Gomega) {
		g.Expect(c.Get(context.Background(), key, obj)).To(gomega.Succeed())
	}, "the cache holds %T %s", obj, key)
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// tenantMeta is the metadata of an object a tenant labels as operator101's, with 250 KiB of annotations and,
// when owner is not nil, a controller reference to it (a MyWeb the tenant owns).
func tenantMeta(ns, name string, owner *operatorv1.MyWeb) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels:      map[string]string{managed.ByLabel: managed.By, "tenant.example/junk": "true"},
		Annotations: map[string]string{"tenant.example/blob": tenantBlob}, Finalizers: []string{"tenant.example/keep"}}
	if owner != nil {
		m.OwnerReferences = []metav1.OwnerReference{
			{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "other-uid"},
			{APIVersion: operatorv1.GroupVersion.String(), Kind: "MyWeb", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)},
		}
	}
	return m
}

// dropFinalizers lets the namespace's deletion remove a tenant's object.
func dropFinalizers(t *testing.T, obj client.Object) {
	t.Cleanup(func() {
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`))
		if err := env.Client.Patch(context.Background(), obj, patch); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("dropping the finalizers of %s: %v", obj.GetName(), err)
		}
	})
}

// TestCacheHoldsTenantObjectsSmall: objects a tenant labels as operator101's children, each with 250 KiB of
// annotations and a forged controller reference to the tenant's own MyWeb, are cached in a few KiB each, keeping
// what the reconcilers read (the label the cache selects on, the controller reference); a ConfigMap's data, a
// Service's or Deployment's spec and a pod's spec are not kept either.
func TestCacheHoldsTenantObjectsSmall(t *testing.T) {
	m := startCachingManager(t)
	ns := env.NewNamespace(t, "tenant")
	web := &operatorv1.MyWeb{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
		Spec: operatorv1.MyWebSpec{Image: "nginx:1.27", NodePortNumber: 30170, PageContentHtml: "<h1>hi</h1>", Replicas: ptr.To[int32](1)}}
	testenv.Create(t, env.Client, web)
	labels := map[string]string{"tenant.example/app": "junk"}
	container := corev1.Container{Name: "junk", Image: "nginx:1.27"}
	objects := []client.Object{
		&corev1.ConfigMap{ObjectMeta: tenantMeta(ns, "junk", web), Data: map[string]string{"blob": strings.Repeat("d", 200<<10)}},
		&corev1.Service{ObjectMeta: tenantMeta(ns, "junk", web), Spec: corev1.ServiceSpec{Selector: labels,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}},
		&appsv1.Deployment{ObjectMeta: tenantMeta(ns, "junk", web), Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels,
				Annotations: map[string]string{"tenant.example/blob": tenantBlob}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{container}}}}},
		&corev1.Pod{ObjectMeta: tenantMeta(ns, "junk", web), Spec: corev1.PodSpec{AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{container}}},
	}
	for _, obj := range objects {
		testenv.Create(t, env.Client, obj)
		dropFinalizers(t, obj)
	}
	for _, obj := range objects {
		n := cachedSize(t, m.GetClient(), obj)
		t.Logf("the cache's copy of a %T with 250 KiB of annotations: %d bytes", obj, n)
		if n > maxCachedBytes {
			t.Errorf("the cache holds %d bytes of %T %s, want at most %d", n, obj, obj.GetName(), maxCachedBytes)
		}
		if got := obj.GetLabels(); len(got) != 1 || got[managed.ByLabel] != managed.By {
			t.Errorf("%T: cached labels %v, want operator101's alone", obj, got)
		}
		if ref := metav1.GetControllerOf(obj); ref == nil || ref.UID != web.UID || len(obj.GetOwnerReferences()) != 1 {
			t.Errorf("%T: cached owner references %v, want the controller's alone", obj, obj.GetOwnerReferences())
		}
		if len(obj.GetFinalizers()) != 0 || len(obj.GetManagedFields()) != 0 {
			t.Errorf("%T: cached finalizers %v, %d managedFields entries", obj, obj.GetFinalizers(), len(obj.GetManagedFields()))
		}
	}
}

// TestPodCacheHoldsAtPodsOnly: the pods of MyWebs' and AppServices' Deployments, labelled as operator101's,
// are not cached at all; an At's pod is, whether its At's name fits a label (labelled with it) or not (only
// operator101's label, as every release labelled it), small whatever its annotations.
func TestPodCacheHoldsAtPodsOnly(t *testing.T) {
	m := startCachingManager(t)
	ns := env.NewNamespace(t, "pods")
	webLabels := myweb.Deployment(&operatorv1.MyWeb{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, proxyenv.Env{}).
		Spec.Template.Labels
	appDep, err := appservice.Deployment(&appv1.AppService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
		Spec: appv1.AppServiceSpec{Application: appv1.Application{Image: "nginx:1.27"}}}, proxyenv.Env{})
	if err != nil {
		t.Fatal(err)
	}
	appLabels := appDep.Spec.Template.Labels
	container := corev1.Container{Name: "app", Image: "nginx:1.27"}
	workload := func(name string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: corev1.PodSpec{AutomountServiceAccountToken: ptr.To(false), Containers: []corev1.Container{container}}}
	}
	for _, l := range []map[string]string{webLabels, appLabels} {
		if l[managed.ByLabel] != managed.By {
			t.Fatalf("a workload's pods are labelled %v: no longer operator101's, this test shows nothing", l)
		}
	}
	webPod, appPod := workload("web-pod", webLabels), workload("app-pod", appLabels)
	testenv.Create(t, env.Client, webPod)
	testenv.Create(t, env.Client, appPod)

	// At pods, created after the workloads' pods: once the cache holds them, it has seen the others.
	short := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "short", UID: "short-uid"},
		Spec: cnatv1alpha1.AtSpec{Command: "true"}}
	long := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: strings.Repeat("l", 70), UID: "long-uid"},
		Spec: cnatv1alpha1.AtSpec{Command: "true"}}
	var atPods []*corev1.Pod
	for _, a := range []*cnatv1alpha1.At{short, long} {
		pod := at.Pod(a, at.PodDefaults{})
		pod.Annotations = map[string]string{"tenant.example/blob": tenantBlob}
		testenv.Create(t, env.Client, pod)
		atPods = append(atPods, pod)
	}
	if len(atPods[1].Labels) != 1 {
		t.Fatalf("the pod of an At whose name fits no label carries labels %v, want operator101's alone", atPods[1].Labels)
	}
	for _, pod := range atPods {
		n := cachedSize(t, m.GetClient(), pod)
		t.Logf("the cache's copy of an At's pod with 250 KiB of annotations: %d bytes", n)
		if n > maxCachedBytes || metav1.GetControllerOf(pod) == nil || pod.Spec.ActiveDeadlineSeconds == nil {
			t.Errorf("the cache holds %d bytes of At pod %s (controller %v, deadline %v), want at most %d with both",
				n, pod.Name, metav1.GetControllerOf(pod), pod.Spec.ActiveDeadlineSeconds, maxCachedBytes)
		}
	}
	for _, pod := range []*corev1.Pod{webPod, appPod} {
		err := m.GetClient().Get(context.Background(), client.ObjectKeyFromObject(pod), &corev1.Pod{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("pod %s labelled %v: the cache answers %v, want NotFound (not cached)", pod.Name, pod.Labels, err)
		}
	}
}

// TestCacheHoldsAtsAndDatabaseUsersSmall: an At and a DatabaseUser with 250 KiB of annotations are cached in a
// few KiB; the DatabaseUser keeps its target label, by which the target index finds it, and a change of its
// annotations still changes its cached copy (so reconciler.ChangedByOthers lets it through), while a status write does
// not.
func TestCacheHoldsAtsAndDatabaseUsersSmall(t *testing.T) {
	m := startCachingManager(t)
	ns := env.NewNamespace(t, "small")
	a := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "later",
		Labels:      map[string]string{"tenant": "x"},
		Annotations: map[string]string{"tenant.example/blob": tenantBlob}},
		Spec: cnatv1alpha1.AtSpec{Schedule: "2099-01-01T00:00:00Z", Command: "echo " + strings.Repeat("c", 4000)}}
	testenv.Create(t, env.Client, a)
	n := cachedSize(t, m.GetClient(), a)
	t.Logf("the cache's copy of an At with a 4 KiB command and 250 KiB of annotations: %d bytes", n)
	if n > maxCachedBytes+4096 || a.Spec.Command == "" || len(a.Annotations) != 0 || len(a.Labels) != 0 {
		t.Errorf("the cache holds %d bytes of the At (labels %v, %d annotations, command of %d bytes), want at most "+
			"%d with its command and no metadata beside", n, a.Labels, len(a.Annotations), len(a.Spec.Command), maxCachedBytes+4096)
	}

	dbu := &mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app",
		Labels:      map[string]string{mygroupv1alpha1.TargetLabel: "cache-target", "tenant": "x"},
		Annotations: map[string]string{"tenant.example/blob": tenantBlob}, Finalizers: []string{"tenant.example/keep"}},
		Spec: mygroupv1alpha1.DatabaseUserSpec{User: "app", Password: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "app-password"}, Key: "password"}}}
	testenv.Create(t, env.Client, dbu)
	dropFinalizers(t, dbu)
	n = cachedSize(t, m.GetClient(), dbu)
	t.Logf("the cache's copy of a DatabaseUser with 250 KiB of annotations: %d bytes", n)
	if n > maxCachedBytes || len(dbu.Labels) != 1 || dbu.Labels[mygroupv1alpha1.TargetLabel] != "cache-target" {
		t.Errorf("the cache holds %d bytes of the DatabaseUser, labels %v; want at most %d, the target label alone",
			n, dbu.Labels, maxCachedBytes)
	}
	// The target index (databaseuser.Setup) reads the cached copy's label.
	users := &mygroupv1alpha1.DatabaseUserList{}
	if err := m.GetClient().List(context.Background(), users, client.MatchingFields{"databaseuser.target": "cache-target"}); err != nil ||
		len(users.Items) != 1 || users.Items[0].Name != dbu.Name {
		t.Errorf("the DatabaseUsers of target cache-target: %v, %v; want %s", users.Items, err, dbu.Name)
	}

	// The reconciler adds its finalizer with a merge patch computed from the object read past the cache: the
	// tenant's annotations, labels and finalizer are left as they are. The cached copy holds operator101's
	// finalizer alone.
	testenv.Eventually(t, 30*time.Second, func(g gomega.Gomega) {
		live := &mygroupv1alpha1.DatabaseUser{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(dbu), live)).To(gomega.Succeed())
		g.Expect(live.Finalizers).To(gomega.ConsistOf("tenant.example/keep", mygroupv1alpha1.Finalizer))
		g.Expect(live.Annotations).To(gomega.HaveKeyWithValue("tenant.example/blob", tenantBlob))
		g.Expect(live.Labels).To(gomega.HaveKeyWithValue("tenant", "x"))
		cached := &mygroupv1alpha1.DatabaseUser{}
		g.Expect(m.GetClient().Get(context.Background(), client.ObjectKeyFromObject(dbu), cached)).To(gomega.Succeed())
		g.Expect(cached.Finalizers).To(gomega.ConsistOf(mygroupv1alpha1.Finalizer))
	})

	// `kubectl annotate dbu app rotate=1`: the cached copy changes.
	before := dbu.DeepCopy()
	testenv.Patch(t, env.Client, client.ObjectKeyFromObject(dbu), &mygroupv1alpha1.DatabaseUser{}, func(d *mygroupv1alpha1.DatabaseUser) {
		d.Annotations["rotate"] = "1"
	})
	testenv.Eventually(t, 30*time.Second, func(g gomega.Gomega) {
		g.Expect(m.GetClient().Get(context.Background(), client.ObjectKeyFromObject(dbu), dbu)).To(gomega.Succeed())
		g.Expect(dbu.Annotations).NotTo(gomega.HaveKey("rotate"))
		g.Expect(dbu.Annotations).NotTo(gomega.Equal(before.Annotations), "a new annotation left the cached copy's as they were")
	})
	// A status write (the reconciler's own, which ChangedByOthers leaves out) leaves them as they were.
	annotated := dbu.DeepCopy()
	status := dbu.DeepCopy()
	status.Status.ObservedGeneration = 99
	if err := env.Client.Status().Patch(context.Background(), status, client.MergeFrom(dbu)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func(g gomega.Gomega) {
		g.Expect(m.GetClient().Get(context.Background(), client.ObjectKeyFromObject(dbu), dbu)).To(gomega.Succeed())
		g.Expect(dbu.ResourceVersion).NotTo(gomega.Equal(annotated.ResourceVersion))
	})
	if !equalMaps(dbu.Annotations, annotated.Annotations) || !equalMaps(dbu.Labels, annotated.Labels) {
		t.Errorf("a status write changed the cached copy's metadata: %v %v, was %v %v", dbu.Labels, dbu.Annotations,
			annotated.Labels, annotated.Annotations)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
