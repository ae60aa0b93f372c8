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

package operator

import (
	"testing"

	"github.com/operator-framework/operator-lib/proxy"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorv1 "github.com/operator101/operator101/api/operator/v1"
)

func web(mutate func(*operatorv1.MyWeb)) *operatorv1.MyWeb {
	w := &operatorv1.MyWeb{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "site", UID: "uid-1"},
		Spec:       operatorv1.MyWebSpec{Image: "nginx", NodePortNumber: 30100, PageContentHtml: "<h1>hi</h1>"},
	}
	if mutate != nil {
		mutate(w)
	}
	return w
}

func TestConfigMapHoldsThePage(t *testing.T) {
	cm := ConfigMap(web(nil))
	if got := cm.Data[PageKey]; got != "<h1>hi</h1>" {
		t.Errorf("index.html = %q", got)
	}
	checkOwner(t, cm.OwnerReferences[0].Controller, cm.OwnerReferences[0].BlockOwnerDeletion, *cm.OwnerReferences[0].UID)
	if *cm.Name != "site" || *cm.Namespace != "ns" {
		t.Errorf("name %s/%s", *cm.Namespace, *cm.Name)
	}
}

func checkOwner(t *testing.T, controller, block *bool, uid any) {
	t.Helper()
	if !*controller || !*block || uid != any(web(nil).UID) {
		t.Errorf("owner reference: controller=%v blockOwnerDeletion=%v uid=%v", *controller, *block, uid)
	}
}

func TestDeployment(t *testing.T) {
	tests := []struct {
		name         string
		web          *operatorv1.MyWeb
		wantReplicas int32
		wantImage    string
	}{
		{"replicas default to 1", web(nil), 1, "nginx"},
		{"replicas as set", web(func(w *operatorv1.MyWeb) { w.Spec.Replicas = ptr.To[int32](3) }), 3, "nginx"},
		{"zero replicas", web(func(w *operatorv1.MyWeb) { w.Spec.Replicas = ptr.To[int32](0) }), 0, "nginx"},
		{"image as set", web(func(w *operatorv1.MyWeb) { w.Spec.Image = "nginx:1.27-alpine" }), 1, "nginx:1.27-alpine"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Deployment(tc.web, nil)
			if *d.Spec.Replicas != tc.wantReplicas {
				t.Errorf("replicas = %d, want %d", *d.Spec.Replicas, tc.wantReplicas)
			}
			c := d.Spec.Template.Spec.Containers[0]
			if *c.Image != tc.wantImage {
				t.Errorf("image = %s, want %s", *c.Image, tc.wantImage)
			}
			if m := c.VolumeMounts[0]; *m.MountPath != HTMLDir || *m.Name != *d.Spec.Template.Spec.Volumes[0].Name {
				t.Errorf("page mounted at %s from volume %s", *m.MountPath, *m.Name)
			}
			if v := d.Spec.Template.Spec.Volumes[0]; *v.ConfigMap.Name != "site" {
				t.Errorf("volume from ConfigMap %s", *v.ConfigMap.Name)
			}
			for k, v := range d.Spec.Selector.MatchLabels {
				if d.Spec.Template.Labels[k] != v {
					t.Errorf("the selector %s=%s does not select the pod template", k, v)
				}
			}
			checkOwner(t, d.OwnerReferences[0].Controller, d.OwnerReferences[0].BlockOwnerDeletion, *d.OwnerReferences[0].UID)
		})
	}
}

// A new page changes the pod template (so the pods roll); the same page does not.
func TestPageHashRollsPods(t *testing.T) {
	a := Deployment(web(nil), nil).Spec.Template.Annotations[PageHashAnnotation]
	same := Deployment(web(nil), nil).Spec.Template.Annotations[PageHashAnnotation]
	b := Deployment(web(func(w *operatorv1.MyWeb) { w.Spec.PageContentHtml = "<h1>new</h1>" }), nil).Spec.Template.Annotations[PageHashAnnotation]
	if a == "" || a != same || a == b {
		t.Errorf("page hashes: %q, same page %q, new page %q", a, same, b)
	}
	if a != PageHash("<h1>hi</h1>") {
		t.Errorf("hash %q is not the page's", a)
	}
}

// The operator's proxy settings (OLM sets them on its Deployment) reach the web servers.
func TestDeploymentCarriesProxyEnv(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://proxy.example:3128")
	t.Setenv("NO_PROXY", ".cluster.local")
	d := Deployment(web(nil), proxy.ReadProxyVarsFromEnv())
	got := map[string]string{}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		got[*e.Name] = *e.Value
	}
	want := map[string]string{"HTTP_PROXY": "http://proxy.example:3128", "http_proxy": "http://proxy.example:3128",
		"NO_PROXY": ".cluster.local", "no_proxy": ".cluster.local"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("env %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if len(Deployment(web(nil), nil).Spec.Template.Spec.Containers[0].Env) != 0 {
		t.Errorf("env without a proxy should be empty")
	}
}

func TestService(t *testing.T) {
	for _, port := range []int32{30000, 30100, 32767} {
		s := Service(web(func(w *operatorv1.MyWeb) { w.Spec.NodePortNumber = port }))
		if *s.Spec.Type != corev1.ServiceTypeNodePort {
			t.Errorf("type %s", *s.Spec.Type)
		}
		p := s.Spec.Ports[0]
		if *p.NodePort != port || *p.Port != 80 || p.TargetPort.StrVal != "http" || *p.Protocol != corev1.ProtocolTCP {
			t.Errorf("port %+v", p)
		}
		for k, v := range s.Spec.Selector {
			if Labels("site")[k] != v {
				t.Errorf("selector %s=%s does not match the pods", k, v)
			}
		}
		checkOwner(t, s.OwnerReferences[0].Controller, s.OwnerReferences[0].BlockOwnerDeletion, *s.OwnerReferences[0].UID)
	}
}
