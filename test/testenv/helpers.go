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

package testenv

// The helpers the controllers' integration suites share: objects in a fresh namespace, polling, patches, and
// the parts of the Deployment controller that envtest does not run.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator101/operator101/api/conditions"
)

// Polling is how often Eventually and WaitReconciled look again.
const Polling = 50 * time.Millisecond

// NewNamespace creates a namespace named prefix-<random> and returns its name.
func (e *Env) NewNamespace(t testing.TB, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := e.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// Eventually polls f until its assertions pass, and fails the test when they still fail after within.
func Eventually(t testing.TB, within time.Duration, f func(g gomega.Gomega), description ...any) {
	t.Helper()
	gomega.NewWithT(t).Eventually(f).WithTimeout(within).WithPolling(Polling).Should(gomega.Succeed(), description...)
}

// Create creates obj and returns its key.
func Create(t testing.TB, c client.Client, obj client.Object) types.NamespacedName {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	return client.ObjectKeyFromObject(obj)
}

// Patch reads the object at key into obj, lets mutate change it, and writes the change as a merge patch.
func Patch[T client.Object](t testing.TB, c client.Client, key types.NamespacedName, obj T, mutate func(T)) {
	t.Helper()
	ctx := context.Background()
	if err := c.Get(ctx, key, obj); err != nil {
		t.Fatal(err)
	}
	before := obj.DeepCopyObject().(client.Object)
	mutate(obj)
	if err := c.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

// Poke changes the "poke" annotation of the object at key (read into obj), which makes its controller
// reconcile it without changing its spec.
func Poke[T client.Object](t testing.TB, c client.Client, key types.NamespacedName, obj T) {
	t.Helper()
	Patch(t, c, key, obj, func(o T) {
		a := o.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a["poke"] += "x"
		o.SetAnnotations(a)
	})
}

// WaitReconciled calls trigger, then waits, up to within, until rec counts one more finished reconcile of key.
func WaitReconciled(t testing.TB, rec *Reconciles, key types.NamespacedName, within time.Duration, trigger func()) {
	t.Helper()
	before := rec.Get(key)
	trigger()
	Eventually(t, within, func(g gomega.Gomega) { g.Expect(rec.Get(key)).To(gomega.BeNumerically(">", before)) })
}

// ExpectInvalid creates obj and fails the test unless the API server refuses it as Invalid with an error
// that contains want.
func ExpectInvalid(t testing.TB, c client.Client, obj client.Object, want string) {
	t.Helper()
	err := c.Create(context.Background(), obj)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want an Invalid error containing %q", err, want)
	}
	t.Logf("%s", err)
}

// ExpectControlledBy fails the test unless each of objs has owner (of that kind and apiVersion) as its
// controller, blocking owner deletion, so that garbage collection deletes it with its owner.
func ExpectControlledBy(t testing.TB, owner client.Object, kind, apiVersion string, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		ref := metav1.GetControllerOf(o)
		if ref == nil || ref.UID != owner.GetUID() || ref.Kind != kind || ref.APIVersion != apiVersion ||
			ref.Name != owner.GetName() || !ptr.Deref(ref.BlockOwnerDeletion, false) {
			t.Errorf("%T %s: controller reference %+v, want the %s %s (uid %s) blocking owner deletion",
				o, o.GetName(), ref, kind, owner.GetName(), owner.GetUID())
		}
	}
}

// ExpectCondition checks that conds hold the condition typ with status and reason, and a message that
// contains message.
func ExpectCondition(g gomega.Gomega, conds []metav1.Condition, typ string, status metav1.ConditionStatus, reason, message string) {
	c := meta.FindStatusCondition(conds, typ)
	g.Expect(c).NotTo(gomega.BeNil())
	g.Expect(c.Status).To(gomega.Equal(status))
	g.Expect(c.Reason).To(gomega.Equal(reason))
	g.Expect(c.Message).To(gomega.ContainSubstring(message))
}

// NodePortSquatter creates a NodePort Service named "squatter" in ns that holds nodePort, so that an
// operator's Service cannot have it.
func NodePortSquatter(t testing.TB, c client.Client, ns string, nodePort int32) *corev1.Service {
	t.Helper()
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "squatter"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80, NodePort: nodePort}}},
	}
	if err := c.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// SetDeploymentStatus plays the Deployment controller, which envtest does not run: f sets the status of the
// Deployment at key, written through the status subresource.
func SetDeploymentStatus(t testing.TB, c client.Client, key types.NamespacedName, f func(*appsv1.DeploymentStatus, *appsv1.Deployment)) {
	t.Helper()
	ctx := context.Background()
	dep := &appsv1.Deployment{}
	if err := c.Get(ctx, key, dep); err != nil {
		t.Fatal(err)
	}
	f(&dep.Status, dep)
	if err := c.Status().Update(ctx, dep); err != nil {
		t.Fatal(err)
	}
}

// MarkDeploymentAvailable writes the status of the Deployment at key as if all its pods ran and were ready.
func MarkDeploymentAvailable(t testing.TB, c client.Client, key types.NamespacedName) {
	t.Helper()
	SetDeploymentStatus(t, c, key, func(s *appsv1.DeploymentStatus, d *appsv1.Deployment) {
		n := *d.Spec.Replicas
		*s = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
			}}
	})
}

// EventsAbout lists "type reason" of the Events in ns regarding the object of that kind and name.
func EventsAbout(g gomega.Gomega, c client.Client, ns, kind, name string) []string {
	list := &eventsv1.EventList{}
	g.Expect(c.List(context.Background(), list, client.InNamespace(ns))).To(gomega.Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name {
			out = append(out, e.Type+" "+e.Reason)
		}
	}
	return out
}

// EventsOfReason returns the Events in ns with that reason regarding an object of that name.
func EventsOfReason(t testing.TB, c client.Client, ns, name, reason string) []eventsv1.Event {
	t.Helper()
	list := &eventsv1.EventList{}
	if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// CollectGarbage plays the garbage collector, which envtest does not run, after the deletion of the object
// whose UID is owner: it deletes every object of the kinds of lists in ns that has an owner reference to it.
// It returns how many it deleted.
func CollectGarbage(t testing.TB, c client.Client, ns string, owner types.UID, lists ...client.ObjectList) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	for _, list := range lists {
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		objs, err := meta.ExtractList(list)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			obj := o.(client.Object)
			for _, ref := range obj.GetOwnerReferences() {
				if ref.UID == owner {
					if err := c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
						t.Fatal(err)
					}
					n++
					break
				}
			}
		}
	}
	return n
}

// EventsRegarding returns the Events in ns with that reason regarding the object whose UID is uid.
func EventsRegarding(g gomega.Gomega, c client.Client, ns string, uid types.UID, reason string) []eventsv1.Event {
	list := &eventsv1.EventList{}
	g.Expect(c.List(context.Background(), list, client.InNamespace(ns))).To(gomega.Succeed())
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.UID == uid && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// Kustomize renders the kustomization in dir (relative to the repository) with bin/kustomize, as make does.
func (e *Env) Kustomize(t testing.TB, dir string) []byte {
	t.Helper()
	out, err := exec.Command(filepath.Join(e.Root, "bin", "kustomize"), "build", filepath.Join(e.Root, dir)).Output()
	if err != nil {
		t.Fatalf("kustomize build %s: %v (run through make, which builds kustomize)", dir, err)
	}
	return out
}

// KustomizeObjects renders the kustomization in dir as Kustomize does and returns its objects.
func (e *Env) KustomizeObjects(t testing.TB, dir string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(e.Kustomize(t, dir)), 4096)
	for {
		o := &unstructured.Unstructured{}
		if err := d.Decode(&o.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("kustomize build %s: %v", dir, err)
		}
		if len(o.Object) > 0 {
			out = append(out, o)
		}
	}
}

// RestrictedNamespace creates a namespace that enforces the restricted Pod Security Standard and returns its
// name.
func (e *Env) RestrictedNamespace(t testing.TB, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Labels: map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	}}}
	if err := e.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// RefuseDeploymentPods plays the ReplicaSet controller, which envtest does not run, for the Deployment key: it
// creates a pod from the Deployment's template, as that controller would, and when the API server refuses it
// (PodSecurity admission, a quota), writes the Deployment's status as the Deployment controller then does
// (ReplicaFailure, FailedCreate, the refusal as its message) and returns the message. It fails the test when
// the pod is admitted.
func RefuseDeploymentPods(t testing.TB, c client.Client, key types.NamespacedName) string {
	t.Helper()
	dep := &appsv1.Deployment{}
	if err := c.Get(context.Background(), key, dep); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: key.Name + "-5d9c7b6f4-x2x2x", Namespace: key.Namespace,
		Labels: dep.Spec.Template.Labels}, Spec: dep.Spec.Template.Spec}
	err := c.Create(context.Background(), pod)
	if err == nil {
		t.Fatalf("the pod of Deployment %s was admitted", key)
	}
	msg := err.Error()
	SetDeploymentStatus(t, c, key, func(s *appsv1.DeploymentStatus, d *appsv1.Deployment) {
		*s = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, UnavailableReplicas: ptr.Deref(d.Spec.Replicas, 1),
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable",
					Message: "Deployment does not have minimum availability."},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated",
					Message: `ReplicaSet "` + key.Name + `-5d9c7b6f4" is progressing.`},
				{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: msg},
			}}
	})
	return msg
}

// ExpectPodsRefusedByPodSecurity creates obj, a MyWeb or an AppService whose image runs as root (no
// runAsNonRoot), in a namespace enforcing the restricted Pod Security Standard (prefix names it), waits until
// ready finds its children, and has its Deployment's pods refused (RefuseDeploymentPods, PodSecurity's
// message). Then the resource must report it as Degraded=True, ReplicaFailure, with that message, and one
// Warning Event naming the refusal, however often it is reconciled (three more reconciles, poked through obj).
// conds reads its conditions.
func ExpectPodsRefusedByPodSecurity[T client.Object, R any](t testing.TB, e *Env, rec *Reconciles, within time.Duration,
	prefix string, obj T, ready func(gomega.Gomega, types.NamespacedName) R, conds func(gomega.Gomega, types.NamespacedName) []metav1.Condition) {
	t.Helper()
	obj.SetNamespace(e.RestrictedNamespace(t, prefix))
	key := Create(t, e.Client, obj)
	Eventually(t, within, func(g gomega.Gomega) { ready(g, key) })
	msg := RefuseDeploymentPods(t, e.Client, key)
	if !gomega.NewWithT(t).Expect(msg).To(gomega.ContainSubstring(`violates PodSecurity "restricted:latest"`)) {
		return
	}
	expectReplicaFailureReportedOnce(t, e.Client, rec, key, within, msg, obj, func(g gomega.Gomega) []metav1.Condition { return conds(g, key) })
}

// expectReplicaFailureReportedOnce: after RefuseDeploymentPods gave msg for the Deployment of the custom
// resource key (a MyWeb or an AppService), the resource reports it as Degraded=True, ReplicaFailure, with msg,
// and one Warning Event naming the refusal, however often it is reconciled (three more reconciles, poked
// through obj, its kind). conds reads its conditions.
func expectReplicaFailureReportedOnce[T client.Object](t testing.TB, c client.Client, rec *Reconciles, key types.NamespacedName,
	within time.Duration, msg string, obj T, conds func(g gomega.Gomega) []metav1.Condition) {
	t.Helper()
	Eventually(t, within, func(g gomega.Gomega) {
		ExpectCondition(g, conds(g), conditions.Degraded, metav1.ConditionTrue, conditions.ReasonReplicaFailure, msg)
		g.Expect(EventsOfReason(t, c, key.Namespace, key.Name, conditions.ReasonReplicaFailure)).To(gomega.HaveLen(1))
	})
	for range 3 {
		WaitReconciled(t, rec, key, within, func() { Poke(t, c, key, obj) })
	}
	gomega.NewWithT(t).Consistently(func(g gomega.Gomega) {
		evs := EventsOfReason(t, c, key.Namespace, key.Name, conditions.ReasonReplicaFailure)
		g.Expect(evs).To(gomega.HaveLen(1))
		g.Expect(evs[0].Type).To(gomega.Equal("Warning"))
		g.Expect(evs[0].Series).To(gomega.BeNil(), "the Event was repeated")
		g.Expect(evs[0].Note).To(gomega.ContainSubstring("violates PodSecurity"))
	}, 300*time.Millisecond).Should(gomega.Succeed())
}

// CheckPodSecurity checks the securityContext podsecurity.Contexts gives the pods of a MyWeb or an AppService (spec,
// as its Deployment builder renders it) whose spec says runAsNonRoot: the RuntimeDefault seccomp profile and
// allowPrivilegeEscalation false always, no runAsUser; with runAsNonRoot true also runAsNonRoot and every
// capability dropped, and otherwise neither (an image running as root keeps its capabilities).
func CheckPodSecurity(t testing.TB, nonRoot *bool, spec *corev1ac.PodSpecApplyConfiguration) {
	t.Helper()
	psc, sc := spec.SecurityContext, spec.Containers[0].SecurityContext
	if psc == nil || psc.SeccompProfile == nil || *psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("runAsNonRoot %v: pod securityContext %+v: want the RuntimeDefault seccomp profile", nonRoot, psc)
		return
	}
	if sc == nil || !ptr.Equal(sc.AllowPrivilegeEscalation, ptr.To(false)) {
		t.Errorf("runAsNonRoot %v: container securityContext %+v: want allowPrivilegeEscalation false", nonRoot, sc)
		return
	}
	if psc.RunAsUser != nil || sc.RunAsUser != nil {
		t.Errorf("runAsNonRoot %v: a fixed runAsUser", nonRoot)
	}
	if ptr.Deref(nonRoot, false) {
		if !ptr.Deref(psc.RunAsNonRoot, false) || sc.Capabilities == nil ||
			!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
			t.Errorf("runAsNonRoot: pod %+v container %+v: want runAsNonRoot and every capability dropped", psc, sc)
		}
	} else if psc.RunAsNonRoot != nil || sc.Capabilities != nil {
		t.Errorf("runAsNonRoot %v: pod %+v container %+v: an image running as root must keep its capabilities", nonRoot, psc, sc)
	}
}
