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

package myweb_test

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator101/operator101/api/conditions"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/test/testenv"
)

// TestMyWebEditorGetsWhatCreatingPodsGives: a user bound to myweb-editor-role alone, who may not create a pod
// in the namespace, makes the operator run pods there of the image they name, with the token of the
// namespace's default ServiceAccount when they ask for it (docs/admin/security.md, editor roles).
func TestMyWebEditorGetsWhatCreatingPodsGives(t *testing.T) {
	ns := env.NewNamespace(t, "web")
	freePortWhenDone(t, ns, "mine")
	startOperator(t, nil)
	editor, err := client.New(env.EditorOnly(t, ns, "myweb_editor_role.yaml"), client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	testenv.ExpectForbidden(t, editor, ns, "")

	w := newWeb(ns, "mine", 30190)
	w.Spec.Image = "registry.example/anything:1"
	w.Spec.AutomountServiceAccountToken = ptr.To(true)
	key := testenv.Create(t, editor, w)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		var dep appsv1.Deployment
		g.Expect(env.Client.Get(ctx, key, &dep)).To(gomega.Succeed())
		pod := dep.Spec.Template.Spec
		g.Expect(pod.Containers[0].Image).To(gomega.Equal("registry.example/anything:1"))
		g.Expect(pod.AutomountServiceAccountToken).To(gomega.HaveValue(gomega.BeTrue()))
		g.Expect(pod.ServiceAccountName).To(gomega.BeEmpty(), "the namespace's default ServiceAccount")
	})
}

// freePortWhenDone deletes the MyWeb ns/name and its Service once the operator has stopped (cleanups run last
// first), so that the next run (-count=N) finds its node port free: envtest runs no garbage collector.
func freePortWhenDone(t *testing.T, ns, name string) {
	t.Cleanup(func() {
		_ = env.Client.Delete(ctx, &operatorv1.MyWeb{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		_ = env.Client.Delete(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	})
}

// TestMyWebNodePortQuotaRefusal: in a namespace whose ResourceQuota allows no node port (services.nodeports:
// 0), the MyWeb's Service is refused by the API server's quota admission; the MyWeb reports it, Degraded with
// the quota's message and one Warning Event, retries with backoff (no hot loop), and heals once the quota
// allows the port.
func TestMyWebNodePortQuotaRefusal(t *testing.T) {
	cfg, counter := testenv.Counting(env.Config)
	ns := env.NewNamespace(t, "web")
	freePortWhenDone(t, ns, "quota")
	_, rec := startOperator(t, cfg)
	testenv.NodePortQuota(t, env.Client, ns, 0)
	key := testenv.Create(t, env.Client, newWeb(ns, "quota", 30191))
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		testenv.ExpectCondition(g, getWeb(g, key).Status.Conditions, conditions.Degraded, metav1.ConditionTrue,
			conditions.ReasonApplyFailed, "exceeded quota: nodeports, requested: services.nodeports=1")
		g.Expect(events(g, ns, "quota")).To(gomega.ContainElement("Warning " + conditions.ReasonApplyFailed))
		g.Expect(env.Client.Get(ctx, key, &appsv1.Deployment{})).To(gomega.Succeed(), "the other children are applied")
	})
	if err := env.Client.Get(ctx, key, &corev1.Service{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the Service: %v, want NotFound", err)
	}

	testenv.ExpectBackoffWhileServiceRefused(t, env.Client, rec, counter, key, conditions.ReasonApplyFailed)

	testenv.SetNodePortQuota(t, env.Client, ns, 1)
	gomega.NewWithT(t).Eventually(func(g gomega.Gomega) {
		w := getWeb(g, key)
		g.Expect(meta.IsStatusConditionFalse(w.Status.Conditions, conditions.Degraded)).To(gomega.BeTrue())
		expectFollows(g, w, getChildren(g, key))
	}).WithTimeout(90 * time.Second).WithPolling(100 * time.Millisecond).Should(gomega.Succeed())
}

// TestMyWebNodePortOfAnotherTenant: node ports are one range for the whole cluster; a node port a Service of
// another namespace holds makes the MyWeb Degraded, NodePortInUse, with the allocator's message.
func TestMyWebNodePortOfAnotherTenant(t *testing.T) {
	other, ns := env.NewNamespace(t, "other"), env.NewNamespace(t, "web")
	freePortWhenDone(t, ns, "second")
	squatter := testenv.NodePortSquatter(t, env.Client, other, 30192)
	// Deleted once the operator has stopped, so that the port is never the operator's: deleted before, the
	// next run (-count=3) found it allocated with no Service holding it.
	t.Cleanup(func() { _ = env.Client.Delete(ctx, squatter) })
	startOperator(t, nil)
	key := testenv.Create(t, env.Client, newWeb(ns, "second", 30192))
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		testenv.ExpectCondition(g, getWeb(g, key).Status.Conditions, conditions.Degraded, metav1.ConditionTrue,
			conditions.ReasonNodePortInUse, "provided port is already allocated")
		g.Expect(events(g, ns, "second")).To(gomega.ContainElement("Warning " + conditions.ReasonNodePortInUse))
	})
}
