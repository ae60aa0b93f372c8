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

package appservice_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/onsi/gomega"

	appv1 "github.com/operator101/operator101/api/app/v1"
	batchv1alpha1 "github.com/operator101/operator101/api/batch/v1alpha1"
	"github.com/operator101/operator101/api/conditions"
	"github.com/operator101/operator101/internal/controller/appservice"
	"github.com/operator101/operator101/test/testenv"
)

// TestKubebuilderAppService: the sample of seed 004's API (batch.schwarzeni.github.com/v1alpha1, the kubebuilder
// tutorial's field names) applies unchanged and is served by the same controller as app.example.com's: the
// Deployment runs replicas pods of the image and is controlled by the batch AppService, the Service opens the
// node port, `kubectl scale` works through the scale subresource, and the status carries the conditions and
// the Deployment's counts.
func TestKubebuilderAppService(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(env.Root, "config/samples/batch_v1alpha1_appservice.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	a := &batchv1alpha1.AppService{}
	if err := yaml.UnmarshalStrict(data, a); err != nil {
		t.Fatal(err)
	}
	cfg, counter := testenv.Counting(env.Config)
	_, rec := app().Start(t, cfg)
	a.Namespace = env.NewNamespace(t, "kubebuilder")
	key := testenv.Create(t, env.Client, a)
	get := func(g gomega.Gomega) *batchv1alpha1.AppService {
		got := &batchv1alpha1.AppService{}
		g.Expect(env.Client.Get(ctx, key, got)).To(gomega.Succeed())
		return got
	}
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		a := get(g)
		g.Expect(a.Status.ObservedGeneration).To(gomega.Equal(a.Generation))
		d := getDeployment(g, key)
		g.Expect(d.Spec.Replicas).To(gomega.HaveValue(gomega.Equal(int32(3))))
		g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(gomega.Equal("nginx:alpine"))
		owner := metav1.GetControllerOf(d)
		g.Expect(owner).NotTo(gomega.BeNil())
		g.Expect(owner.APIVersion).To(gomega.Equal("batch.schwarzeni.github.com/v1alpha1"))
		g.Expect(owner.UID).To(gomega.Equal(a.UID))
		g.Expect(meta.IsStatusConditionFalse(a.Status.Conditions, conditions.Degraded)).To(gomega.BeTrue(), "%+v", a.Status.Conditions)
		svc := getService(g, key)
		g.Expect(svc.Spec.Ports).To(gomega.HaveLen(1))
		g.Expect(svc.Spec.Type).To(gomega.Equal(corev1.ServiceTypeNodePort))
		g.Expect(svc.Spec.Ports[0].NodePort).NotTo(gomega.BeZero()) // the cluster's choice
		g.Expect(metav1.IsControlledBy(svc, a)).To(gomega.BeTrue())
		g.Expect(a.Status.Selector).To(gomega.Equal(appservice.Selector("nginx-app-v1alpha1")))
	})

	// kubectl scale appservices.batch.schwarzeni.github.com nginx-app-v1alpha1 --replicas 5
	scale := &autoscalingv1.Scale{}
	if err := env.Client.SubResource("scale").Patch(ctx, a, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":5}}`)),
		client.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("patching /scale: %v", err)
	}
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		g.Expect(get(g).Spec.Replicas).To(gomega.HaveValue(gomega.Equal(int32(5))))
		g.Expect(getDeployment(g, key).Spec.Replicas).To(gomega.HaveValue(gomega.Equal(int32(5))))
	})
	testenv.MarkDeploymentAvailable(t, env.Client, key)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		a := get(g)
		g.Expect(meta.IsStatusConditionTrue(a.Status.Conditions, conditions.Available)).To(gomega.BeTrue())
		g.Expect(a.Status.Ready).To(gomega.Equal("5/5"))
		g.Expect(a.Status.AvailableReplicas).To(gomega.Equal(int32(5)))
		g.Expect(a.Status.UpdatedReplicas).To(gomega.Equal(int32(5)))
		s := &autoscalingv1.Scale{}
		g.Expect(env.Client.SubResource("scale").Get(ctx, a, s)).To(gomega.Succeed())
		g.Expect(s.Status.Replicas).To(gomega.Equal(int32(5)))
		g.Expect(events(g, a.Namespace, a.Name)).To(gomega.ContainElement("Normal MinimumReplicasAvailable"))
	})

	// At rest, as for app.example.com's: a change that is not the spec's (a label) costs no write.
	counter.Reset()
	testenv.WaitReconciled(t, rec, key, timeout, func() {
		p := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"unrelated":"label"}}}`))
		if err := env.Client.Patch(ctx, &batchv1alpha1.AppService{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}, p); err != nil {
			t.Fatal(err)
		}
	})
	if n := counter.Total(); n != 0 {
		t.Errorf("a label on a converged AppService caused %d writes: %s", n, counter)
	}

	// Drift is reverted as for app.example.com's: a Deployment scaled by hand comes back to replicas.
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := env.Client.Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":1}}`)),
		client.FieldOwner("someone")); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		g.Expect(getDeployment(g, key).Spec.Replicas).To(gomega.HaveValue(gomega.Equal(int32(5))))
	})
}

// TestKubebuilderAppServiceInvalidRejected: the same limits as app.example.com's, replicas for size.
func TestKubebuilderAppServiceInvalidRejected(t *testing.T) {
	ns := env.NewNamespace(t, "kubebuilder")
	for _, tc := range []struct {
		name, spec, want string
	}{
		{"replicas too large", `{"replicas":101,"image":"nginx"}`, "spec.replicas"},
		{"negative replicas", `{"replicas":-1,"image":"nginx"}`, "spec.replicas"},
		{"empty image", `{"image":""}`, "spec.image"},
		{"node port above 65535", `{"image":"nginx","ports":[{"port":80,"nodePort":65536}]}`, "spec.ports[0].nodePort"},
		{"named target port", `{"image":"nginx","ports":[{"port":80,"targetPort":"http"}]}`, "spec.ports[0].targetPort"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON([]byte(`{"apiVersion":"batch.schwarzeni.github.com/v1alpha1","kind":"AppService",` +
				`"metadata":{"name":"bad","namespace":"` + ns + `"},"spec":` + tc.spec + `}`)); err != nil {
				t.Fatal(err)
			}
			err := env.Client.Create(ctx, u)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create: %v, want a refusal naming %s", err, tc.want)
			}
		})
	}
}

// TestAppServiceStatusOnlyFromItsOwnDeployment: an AppService of each group with the same name in one namespace
// (the chaos upgrade made them): the first takes the name, its Deployment serves; the second is Degraded
// (ChildNotOwned) and, since the Deployment is not its own, not Available and counting no pods, though the
// cache holds that Deployment (it carries operator101's labels).
func TestAppServiceStatusOnlyFromItsOwnDeployment(t *testing.T) {
	app().Start(t, nil)
	ns := env.NewNamespace(t, "samename")
	first := newApp(ns, "shop", 30290)
	key := testenv.Create(t, env.Client, first)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		g.Expect(metav1.IsControlledBy(getDeployment(g, key), getApp(g, key))).To(gomega.BeTrue())
	})
	testenv.MarkDeploymentAvailable(t, env.Client, key)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		g.Expect(meta.IsStatusConditionTrue(getApp(g, key).Status.Conditions, conditions.Available)).To(gomega.BeTrue())
	})

	second := &batchv1alpha1.AppService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"},
		Spec: batchv1alpha1.AppServiceSpec{Replicas: ptr.To[int32](2), Application: appv1.Application{Image: "nginx:1.27",
			Ports: []appv1.ServicePort{{Port: 80, NodePort: 30291}}}}}
	testenv.Create(t, env.Client, second)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		got := &batchv1alpha1.AppService{}
		g.Expect(env.Client.Get(ctx, key, got)).To(gomega.Succeed())
		s := got.Status
		g.Expect(s.ObservedGeneration).To(gomega.Equal(got.Generation))
		degraded := meta.FindStatusCondition(s.Conditions, conditions.Degraded)
		g.Expect(degraded).NotTo(gomega.BeNil())
		g.Expect(degraded.Reason).To(gomega.Equal(conditions.ReasonNotOwned))
		g.Expect(meta.IsStatusConditionFalse(s.Conditions, conditions.Available)).To(gomega.BeTrue(), "%+v", s.Conditions)
		g.Expect([]int32{s.Replicas, s.ReadyReplicas, s.AvailableReplicas, s.UpdatedReplicas}).To(gomega.Equal([]int32{0, 0, 0, 0}))
		g.Expect(s.Ready).To(gomega.Equal("0/2"))
	})
	// The first is untouched and still serves.
	g := gomega.NewWithT(t)
	g.Expect(meta.IsStatusConditionTrue(getApp(g, key).Status.Conditions, conditions.Available)).To(gomega.BeTrue())
	g.Expect(metav1.IsControlledBy(getDeployment(g, key), getApp(g, key))).To(gomega.BeTrue())
}
