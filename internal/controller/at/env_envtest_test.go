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

package at_test

import (
	"context"
	"strings"
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	atctl "github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/test/testenv"
)

// The schema: an env entry has a variable's name and value or valueFrom (one Secret's or ConfigMap's key),
// resources are cpu, memory and ephemeral-storage with each request at most its limit.
func TestEnvAndResourcesValidation(t *testing.T) {
	ns := env.NewNamespace(t, "at")
	secret := &cnatv1alpha1.AtKeySelector{Name: "creds", Key: "token"}
	for _, c := range []struct {
		name   string
		mutate func(*cnatv1alpha1.AtSpec)
		want   string
	}{
		{"value and valueFrom", func(s *cnatv1alpha1.AtSpec) {
			s.Env = []cnatv1alpha1.AtEnvVar{{Name: "A", Value: "x", ValueFrom: &cnatv1alpha1.AtEnvVarSource{SecretKeyRef: secret}}}
		}, "value or valueFrom, not both"},
		{"both sources", func(s *cnatv1alpha1.AtSpec) {
			s.Env = []cnatv1alpha1.AtEnvVar{{Name: "A", ValueFrom: &cnatv1alpha1.AtEnvVarSource{SecretKeyRef: secret, ConfigMapKeyRef: secret}}}
		}, "exactly one of secretKeyRef and configMapKeyRef"},
		{"no source", func(s *cnatv1alpha1.AtSpec) {
			s.Env = []cnatv1alpha1.AtEnvVar{{Name: "A", ValueFrom: &cnatv1alpha1.AtEnvVarSource{}}}
		}, "exactly one of secretKeyRef and configMapKeyRef"},
		{"bad name", func(s *cnatv1alpha1.AtSpec) { s.Env = []cnatv1alpha1.AtEnvVar{{Name: "A=B", Value: "x"}} }, "spec.env[0].name"},
		{"twice the same name", func(s *cnatv1alpha1.AtSpec) {
			s.Env = []cnatv1alpha1.AtEnvVar{{Name: "A", Value: "x"}, {Name: "A", Value: "y"}}
		}, "Duplicate value"},
		{"bad Secret name", func(s *cnatv1alpha1.AtSpec) {
			s.Env = []cnatv1alpha1.AtEnvVar{{Name: "A", ValueFrom: &cnatv1alpha1.AtEnvVarSource{SecretKeyRef: &cnatv1alpha1.AtKeySelector{Name: "../x", Key: "k"}}}}
		}, "secretKeyRef.name"},
		{"a GPU", func(s *cnatv1alpha1.AtSpec) {
			s.Resources = &cnatv1alpha1.AtResources{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}
		}, "cpu, memory and ephemeral-storage only"},
		{"request over limit", func(s *cnatv1alpha1.AtSpec) {
			s.Resources = &cnatv1alpha1.AtResources{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
				Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}}
		}, "a request is at most its limit"},
	} {
		at := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "bad-"},
			Spec: cnatv1alpha1.AtSpec{Schedule: "2030-01-01T00:00:00Z", Command: "true"}}
		c.mutate(&at.Spec)
		t.Run(c.name, func(t *testing.T) { testenv.ExpectInvalid(t, env.Client, at, c.want) })
	}
	createAt(t, ns, "fits", "2030-01-01T00:00:00Z", "true", func(a *cnatv1alpha1.At) {
		a.Spec.Resources = &cnatv1alpha1.AtResources{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
			Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourceCPU: resource.MustParse("1")}}
	})
}

// What would let an At do more than its author could with a pod of their own is not in the API: another
// namespace's Secret, a ServiceAccount, a host path, privileges, a pod field of the env (fieldRef). The API
// server drops such fields (the schema does not know them), and the pod the operator builds has none.
func TestAtCannotAskForMoreThanAPod(t *testing.T) {
	g := gomega.NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t, "at")
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": cnatv1alpha1.GroupVersion.String(), "kind": "At",
		"metadata": map[string]any{"name": "greedy", "namespace": ns},
		"spec": map[string]any{
			"schedule": sched(t0), "command": "cat /host/etc/shadow",
			"serviceAccountName": "admin", "automountServiceAccountToken": true, "hostNetwork": true,
			"volumes":         []any{map[string]any{"name": "host", "hostPath": map[string]any{"path": "/"}}},
			"securityContext": map[string]any{"privileged": true, "runAsUser": int64(0)},
			"env": []any{
				map[string]any{"name": "OTHER", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "s", "key": "k", "namespace": "kube-system"}}},
				map[string]any{"name": "NODE", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "s", "key": "k"}, "fieldRef": map[string]any{"fieldPath": "spec.nodeName"}}},
			},
			"resources": map[string]any{"claims": []any{map[string]any{"name": "gpu"}}},
		},
	}}
	must(t, env.Client.Create(ctx, u))
	at := getAt(g, key(&cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "greedy"}}))
	r := atctl.NewReconciler(env.Client, events.NewFakeRecorder(100), reconciler.Options{Clock: newClock(), Reader: env.Client}, atctl.Config{})
	_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key(at)})
	must(t, err)
	pod, ok := getPod(t, key(at))
	g.Expect(ok).To(gomega.BeTrue())
	g.Expect(pod.Spec.ServiceAccountName).To(gomega.Or(gomega.BeEmpty(), gomega.Equal("default")))
	g.Expect(ptr.Deref(pod.Spec.AutomountServiceAccountToken, true)).To(gomega.BeFalse())
	g.Expect(pod.Spec.HostNetwork).To(gomega.BeFalse())
	g.Expect(pod.Spec.Volumes).To(gomega.BeEmpty())
	c := pod.Spec.Containers[0]
	g.Expect(ptr.Deref(c.SecurityContext.Privileged, false)).To(gomega.BeFalse())
	g.Expect(ptr.Deref(c.SecurityContext.AllowPrivilegeEscalation, true)).To(gomega.BeFalse())
	g.Expect(ptr.Deref(pod.Spec.SecurityContext.RunAsUser, 0)).To(gomega.Equal(atctl.NonRootUID))
	g.Expect(c.Resources.Claims).To(gomega.BeEmpty())
	g.Expect(c.Env).To(gomega.HaveLen(2))
	for _, e := range c.Env {
		g.Expect(e.ValueFrom.FieldRef).To(gomega.BeNil())
		g.Expect(e.ValueFrom.SecretKeyRef).NotTo(gomega.BeNil())
	}
}

// A command reads a Secret's value through env: the pod names the Secret's key, and the kubelet (not the
// operator) reads it. The value appears nowhere the operator writes: not the At's status, not its Events.
func TestCommandReadsASecretThroughEnv(t *testing.T) {
	g := gomega.NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t, "at")
	const value = "s3cr3t-value-never-logged"
	must(t, env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"},
		StringData: map[string]string{"token": value}}))
	startOperator(t, nil, ns, reconciler.Options{Clock: newClock()}, atctl.Config{})
	at := createAt(t, ns, "reader", sched(t0), `test -n "$TOKEN"`, func(a *cnatv1alpha1.At) {
		a.Spec.Env = []cnatv1alpha1.AtEnvVar{{Name: "TOKEN", ValueFrom: &cnatv1alpha1.AtEnvVarSource{
			SecretKeyRef: &cnatv1alpha1.AtKeySelector{Name: "creds", Key: "token"}}}}
	})
	cur := waitPhase(t, key(at), cnatv1alpha1.PhaseRunning)
	pod, ok := getPod(t, key(at))
	g.Expect(ok).To(gomega.BeTrue())
	ref := pod.Spec.Containers[0].Env[len(pod.Spec.Containers[0].Env)-1]
	g.Expect(ref.Name).To(gomega.Equal("TOKEN"))
	g.Expect(ref.Value).To(gomega.BeEmpty())
	g.Expect(ref.ValueFrom.SecretKeyRef.Name).To(gomega.Equal("creds"))
	g.Expect(ref.ValueFrom.SecretKeyRef.Key).To(gomega.Equal("token"))
	g.Expect(strings.Contains(cur.Status.Message, value)).To(gomega.BeFalse())
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		g.Expect(eventReasons(g, cur)).To(gomega.ContainElement("Started"))
	})
	g.Expect(eventNotes(g, cur)).NotTo(gomega.ContainElement(gomega.ContainSubstring(value)))
}
