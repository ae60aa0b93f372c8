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

package myweb

import (
	"encoding/json"
	"regexp"
	"testing"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/proxyenv"
)

var sha256Hex = regexp.MustCompile("^[0-9a-f]{64}$")

// FuzzMyWebChildren feeds the builders any spec the schema admits (and names it must) and checks that no
// builder panics and every child is a well-formed object that selects the right pods. The f.Add seeds are the
// committed corpus and run in make test; go test -fuzz=FuzzMyWebChildren explores further.
func FuzzMyWebChildren(f *testing.F) {
	f.Add("myweb", "nginx", "<html><body><h1>Hello, World!</h1></body></html>", int32(30100), int32(1))
	f.Add("a", "registry.example:5000/team/web@sha256:abc", "", int32(30000), int32(0))
	f.Add("x-1", "nginx:1.27", "\x00\"'\\`$(rm -rf /)\n<script>", int32(32767), int32(100))
	f.Add("unicode-page", "nginx", "页面 ✓ 🚀", int32(31000), int32(3))
	f.Fuzz(func(t *testing.T, name, image, page string, nodePort, replicas int32) {
		// Only what the API server would store: valid UTF-8 (JSON), the schema's ranges and a DNS-label name.
		if !utf8.ValidString(image) || !utf8.ValidString(page) || len(validation.IsDNS1123Label(name)) > 0 || image == "" || nodePort < 1 || nodePort > 65535 ||
			replicas < 0 || replicas > 100 {
			t.Skip()
		}
		w := &operatorv1.MyWeb{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: "uid"},
			Spec:       operatorv1.MyWebSpec{Image: image, NodePortNumber: nodePort, PageContentHtml: page, Replicas: ptr.To(replicas)},
		}
		var cm corev1.ConfigMap
		roundTrip(t, ConfigMap(w), &cm)
		if cm.Data[pageKey] != page || len(validation.IsConfigMapKey(pageKey)) > 0 {
			t.Fatalf("ConfigMap data = %q", cm.Data)
		}

		var d appsv1.Deployment
		roundTrip(t, Deployment(w, proxyenv.New([]corev1.EnvVar{{Name: "HTTP_PROXY", Value: "http://proxy:3128"}})), &d)
		if d.Spec.Replicas == nil || *d.Spec.Replicas != replicas {
			t.Fatalf("replicas = %v, want %d", d.Spec.Replicas, replicas)
		}
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Fatalf("selector %v does not select the template's labels %v (%v)", d.Spec.Selector, d.Spec.Template.Labels, err)
		}
		if h := d.Spec.Template.Annotations[pageHashAnnotation]; !sha256Hex.MatchString(h) {
			t.Fatalf("page hash annotation = %q", h)
		}
		c := d.Spec.Template.Spec.Containers
		if len(c) != 1 || c[0].Image != image || len(validation.IsDNS1123Label(c[0].Name)) > 0 {
			t.Fatalf("containers = %+v", c)
		}
		if v := d.Spec.Template.Spec.Volumes; len(v) != 1 || v[0].ConfigMap == nil || v[0].ConfigMap.Name != cm.Name ||
			len(c[0].VolumeMounts) != 1 || c[0].VolumeMounts[0].Name != v[0].Name {
			t.Fatalf("the page volume is not the ConfigMap %q: %+v / %+v", cm.Name, v, c[0].VolumeMounts)
		}

		var s corev1.Service
		roundTrip(t, Service(w), &s)
		if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].NodePort != nodePort || s.Spec.Type != ServiceType(w) {
			t.Fatalf("service ports = %+v", s.Spec.Ports)
		}
		if !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Fatalf("the Service selects %v, not the pods %v", s.Spec.Selector, d.Spec.Template.Labels)
		}

		for _, m := range []metav1.Object{&cm, &d, &s} {
			if m.GetName() != name || m.GetNamespace() != "ns" {
				t.Fatalf("child %s/%s, want ns/%s", m.GetNamespace(), m.GetName(), name)
			}
			if refs := m.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != "uid" || refs[0].Controller == nil || !*refs[0].Controller {
				t.Fatalf("owner references = %+v", refs)
			}
			for k, v := range m.GetLabels() {
				if len(validation.IsQualifiedName(k)) > 0 || len(validation.IsValidLabelValue(v)) > 0 {
					t.Fatalf("invalid label %q=%q", k, v)
				}
			}
		}
	})
}

// roundTrip turns an apply configuration into the typed object the API server would decode.
func roundTrip(t *testing.T, ac any, into any) {
	t.Helper()
	raw, err := json.Marshal(ac)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatalf("the rendered object does not decode: %v\n%s", err, raw)
	}
}
