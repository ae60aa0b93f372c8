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

package at

import (
	"testing"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
)

// FuzzAtPod feeds the Pod builder any At the API server would store: no panic, a valid deterministic pod name,
// the command passed whole to the shell (never split), valid labels, and the restricted security settings.
// The f.Add seeds run in make test; go test -fuzz=FuzzAtPod explores further.
func FuzzAtPod(f *testing.F) {
	f.Add("example-at", "echo YAY", "")
	f.Add("a.b.c", `echo "a  b" | tr a c; exit 3`, "busybox:1.36")
	f.Add("x", "$(cat /etc/passwd) `id` ; rm -rf / # '\"", "registry.local:5000/tools@sha256:0")
	f.Add("dots.and-dashes.v1", "printf '%s\\n' 页面 🚀", "")
	f.Fuzz(func(t *testing.T, name, command, image string) {
		if len(validation.IsDNS1123Subdomain(name)) > 0 || command == "" || len(command) > 4096 ||
			!utf8.ValidString(command) || !utf8.ValidString(image) {
			t.Skip() // the API server would not store such an At
		}
		at := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: "uid"},
			Spec: cnatv1alpha1.AtSpec{Schedule: "2019-04-12T10:12:00Z", Command: command, Image: image}}
		pod := Pod(at, PodDefaults{})
		if pod.Name != PodName(name) || len(validation.IsDNS1123Subdomain(pod.Name)) > 0 {
			t.Fatalf("pod name %q for At %q is not a valid, deterministic name", pod.Name, name)
		}
		c := pod.Spec.Containers
		if len(c) != 1 || len(c[0].Command) != 3 || c[0].Command[0] != "/bin/sh" || c[0].Command[1] != "-c" || c[0].Command[2] != command {
			t.Fatalf("command = %q, want [/bin/sh -c %q]", c[0].Command, command)
		}
		if image != "" && c[0].Image != image || image == "" && c[0].Image != cnatv1alpha1.DefaultImage {
			t.Fatalf("image = %q for spec image %q", c[0].Image, image)
		}
		for k, v := range pod.Labels {
			if len(validation.IsQualifiedName(k)) > 0 || len(validation.IsValidLabelValue(v)) > 0 {
				t.Fatalf("invalid label %q=%q", k, v)
			}
		}
		sc := c[0].SecurityContext
		if pod.Spec.RestartPolicy != "Never" || sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
			sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" ||
			pod.Spec.SecurityContext == nil || pod.Spec.SecurityContext.RunAsNonRoot == nil || !*pod.Spec.SecurityContext.RunAsNonRoot {
			t.Fatalf("the pod is not restricted: %+v / %+v", pod.Spec.SecurityContext, sc)
		}
		if d := pod.Spec.ActiveDeadlineSeconds; d == nil || *d != cnatv1alpha1.DefaultActiveDeadlineSeconds {
			t.Fatalf("activeDeadlineSeconds = %v, want the default for an At without one", d)
		}
		if refs := pod.OwnerReferences; len(refs) != 1 || refs[0].UID != "uid" || refs[0].Controller == nil || !*refs[0].Controller {
			t.Fatalf("owner references = %+v", refs)
		}
	})
}
