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
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	appv1 "github.com/operator101/operator101/api/app/v1"
	"github.com/operator101/operator101/test/testenv"
	"github.com/operator101/operator101/test/webkindtest"
)

// TestAppServiceEditorGetsWhatCreatingPodsGives: a user bound to appservice-editor-role alone, who may neither
// create a pod in the namespace nor read its Secrets, makes the operator run pods there of the image they
// name, with a Secret of the namespace in their environment (envs.valueFrom) and the token of the namespace's
// default ServiceAccount when they ask for it (docs/admin/security.md, editor roles).
func TestAppServiceEditorGetsWhatCreatingPodsGives(t *testing.T) {
	ns := env.NewNamespace(t, "appservice")
	testenv.Create(t, env.Client, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		StringData: map[string]string{"password": "not the editor's"}})
	fromSecret := &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}
	a := newApp(ns, "mine", 30310)
	a.Spec.Image = webkindtest.AnyImage
	a.Spec.Envs = []appv1.EnvVar{{Name: "STOLEN", ValueFrom: fromSecret}}
	a.Spec.AutomountServiceAccountToken = ptr.To(true)
	app().ExpectEditorGetsWhatCreatingPodsGives(t, "appservice_editor_role.yaml", "db", a, func(g gomega.Gomega, pod corev1.PodSpec) {
		g.Expect(pod.Containers[0].Env).To(gomega.ContainElement(corev1.EnvVar{Name: "STOLEN", ValueFrom: fromSecret}))
	}, timeout)
}

// TestAppServiceNodePortQuotaRefusal: in a namespace whose ResourceQuota allows no node port
// (services.nodeports: 0), the AppService's Service is refused by the API server's quota admission, a port
// without a nodePort too (the cluster would choose one); the AppService reports it, Degraded with the quota's
// message and one Warning Event, retries with backoff (no hot loop), and heals once the quota allows the ports.
func TestAppServiceNodePortQuotaRefusal(t *testing.T) {
	withPortsOfBothKinds := func(ns string) *appv1.AppService {
		a := newApp(ns, "quota", 30311)
		a.Spec.Ports = append(a.Spec.Ports, appv1.ServicePort{Name: "any", Port: 81})
		a.Spec.Ports[0].Name = "fixed"
		return a
	}
	app().ExpectNodePortQuotaRefusal(t, "appservice", withPortsOfBothKinds, 2,
		func(g gomega.Gomega, key types.NamespacedName) { expectFollows(g, getApp(g, key)) }, timeout)
}

// TestAppServiceNodePortOfAnotherTenant: node ports are one range for the whole cluster; a node port a Service
// of another namespace holds makes the AppService Degraded, NodePortInUse, with the allocator's message.
func TestAppServiceNodePortOfAnotherTenant(t *testing.T) {
	app().ExpectNodePortOfAnotherTenant(t, "appservice", func(ns string) *appv1.AppService { return newApp(ns, "second", 30312) }, 30312, timeout)
}
