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

package appservice_test

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/operator101/operator101/api/app/v1"
	"github.com/operator101/operator101/api/conditions"
	"github.com/operator101/operator101/test/testenv"
)

// freePortWhenDone deletes the AppService ns/name and its Service once the operator has stopped (cleanups run
// last first), so that the next run (-count=N) finds its node port free: envtest runs no garbage collector.
func freePortWhenDone(t *testing.T, ns, name string) {
	t.Cleanup(func() {
		_ = env.Client.Delete(ctx, &appv1.AppService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		_ = env.Client.Delete(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	})
}

// TestAppServiceEditorGetsWhatCreatingPodsGives: a user bound to appservice-editor-role alone, who may neither
// create a pod in the namespace nor read its Secrets, makes the operator run pods there of the image they
// name, with a Secret of the namespace in their environment (envs.valueFrom) and the token of the namespace's
// default ServiceAccount when they ask for it (docs/admin/security.md, editor roles).
func TestAppServiceEditorGetsWhatCreatingPodsGives(t *testing.T) {
	ns := env.NewNamespace(t, "appservice")
	freePortWhenDone(t, ns, "mine")
	startOperator(t, nil)
	testenv.Create(t, env.Client, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		StringData: map[string]string{"password": "not the editor's"}})
	editor, err := client.New(env.EditorOnly(t, ns, "appservice_editor_role.yaml"), client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	testenv.ExpectForbidden(t, editor, ns, "db")

	fromSecret := &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}
	a := newApp(ns, "mine", 30310)
	a.Spec.Image = "registry.example/anything:1"
	a.Spec.Envs = []appv1.EnvVar{{Name: "STOLEN", ValueFrom: fromSecret}}
	a.Spec.AutomountServiceAccountToken = ptr.To(true)
	key := testenv.Create(t, editor, a)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		pod := getDeployment(g, key).Spec.Template.Spec
		g.Expect(pod.Containers[0].Image).To(gomega.Equal("registry.example/anything:1"))
		g.Expect(pod.Containers[0].Env).To(gomega.ContainElement(corev1.EnvVar{Name: "STOLEN", ValueFrom: fromSecret}))
		g.Expect(pod.AutomountServiceAccountToken).To(gomega.HaveValue(gomega.BeTrue()))
		g.Expect(pod.ServiceAccountName).To(gomega.BeEmpty(), "the namespace's default ServiceAccount")
	})
}

// TestAppServiceNodePortQuotaRefusal: in a namespace whose ResourceQuota allows no node port
// (services.nodeports: 0), the AppService's Service is refused by the API server's quota admission, a port
// without a nodePort too (the cluster would choose one); the AppService reports it, Degraded with the quota's
// message and one Warning Event, retries with backoff (no hot loop), and heals once the quota allows the ports.
func TestAppServiceNodePortQuotaRefusal(t *testing.T) {
	cfg, counter := testenv.Counting(env.Config)
	ns := env.NewNamespace(t, "appservice")
	freePortWhenDone(t, ns, "quota")
	_, rec := startOperator(t, cfg)
	testenv.NodePortQuota(t, env.Client, ns, 0)
	a := newApp(ns, "quota", 30311)
	a.Spec.Ports = append(a.Spec.Ports, appv1.ServicePort{Name: "any", Port: 81})
	a.Spec.Ports[0].Name = "fixed"
	key := testenv.Create(t, env.Client, a)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		testenv.ExpectCondition(g, getApp(g, key).Status.Conditions, conditions.Degraded, metav1.ConditionTrue,
			conditions.ReasonApplyFailed, "exceeded quota: nodeports, requested: services.nodeports=2")
		g.Expect(events(g, ns, "quota")).To(gomega.ContainElement("Warning " + conditions.ReasonApplyFailed))
		getDeployment(g, key) // the rest of the AppService is applied
	})
	if err := env.Client.Get(ctx, key, &corev1.Service{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the Service: %v, want NotFound", err)
	}

	testenv.ExpectBackoffWhileServiceRefused(t, env.Client, rec, counter, key, conditions.ReasonApplyFailed)

	testenv.SetNodePortQuota(t, env.Client, ns, 2)
	gomega.NewWithT(t).Eventually(func(g gomega.Gomega) {
		a := getApp(g, key)
		g.Expect(meta.IsStatusConditionFalse(a.Status.Conditions, conditions.Degraded)).To(gomega.BeTrue())
		expectFollows(g, a)
	}).WithTimeout(90 * time.Second).WithPolling(100 * time.Millisecond).Should(gomega.Succeed())
}

// TestAppServiceNodePortOfAnotherTenant: node ports are one range for the whole cluster; a node port a Service
// of another namespace holds makes the AppService Degraded, NodePortInUse, with the allocator's message.
func TestAppServiceNodePortOfAnotherTenant(t *testing.T) {
	other, ns := env.NewNamespace(t, "other"), env.NewNamespace(t, "appservice")
	freePortWhenDone(t, ns, "second")
	squatter := testenv.NodePortSquatter(t, env.Client, other, 30312)
	// Deleted once the operator has stopped, so that the port is never the operator's: deleted before, the
	// next run (-count=3) found it allocated with no Service holding it.
	t.Cleanup(func() { _ = env.Client.Delete(ctx, squatter) })
	startOperator(t, nil)
	key := testenv.Create(t, env.Client, newApp(ns, "second", 30312))
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		testenv.ExpectCondition(g, getApp(g, key).Status.Conditions, conditions.Degraded, metav1.ConditionTrue,
			conditions.ReasonNodePortInUse, "provided port is already allocated")
		g.Expect(events(g, ns, "second")).To(gomega.ContainElement("Warning " + conditions.ReasonNodePortInUse))
	})
}
