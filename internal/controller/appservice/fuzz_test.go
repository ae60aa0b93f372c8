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

package appservice

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	appv1 "github.com/operator101/operator101/api/app/v1"
	"github.com/operator101/operator101/internal/proxyenv"
)

// The schema's patterns, as in api/app/v1.
var (
	appName     = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	envName     = regexp.MustCompile(`^[-._a-zA-Z][-._a-zA-Z0-9]*$`)
	portNameRex = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
)

// fuzzProxy is the proxy environment OLM would give the operator.
var fuzzProxy = []corev1.EnvVar{{Name: "HTTP_PROXY", Value: "http://proxy:3128"}, {Name: "NO_PROXY", Value: ".svc"}}

// FuzzAppServiceChildren feeds the builders any spec the schema admits and checks that no builder panics and
// that the Deployment and the Service are well-formed objects that select the application's pods, carry the
// ports and the environment as given, and are owned by the AppService. The inputs are decoded into a spec:
//   - envs: lines "NAME=value", or "NAME<secret/key" for a value from a Secret;
//   - ports: 7 bytes a port: port (2 bytes), targetPort (2, 0 for none), nodePort (2, 0 for none; else
//     30000 + n mod 2768), and a byte whose low 2 bits choose the protocol (TCP, UDP, SCTP, default) and
//     whose bit 2 gives the port a name;
//   - cpu and memory: a limit each, when they parse as quantities.
//
// The f.Add seeds and testdata/fuzz/FuzzAppServiceChildren are the committed corpus and run in make test;
// go test -fuzz=FuzzAppServiceChildren explores further.
func FuzzAppServiceChildren(f *testing.F) {
	f.Add("example-appservice", "nginx:1.7.9", int32(2), "", []byte{0, 80, 0, 0, 0, 2, 0}, "", "")
	f.Add("a", "registry.example:5000/team/app@sha256:abc", int32(0), "MODE=prod\nNO_PROXY=none\nTOKEN<creds/token",
		[]byte{0, 80, 31, 144, 0, 0, 4, 0, 53, 0, 0, 0, 0, 5, 0, 81, 31, 144, 10, 0, 6}, "500m", "128Mi")
	f.Add("x-1", "nginx", int32(100), "_=$(HOME)\n.a=\x00\"'`\nb-c=页面 ✓ 🚀", []byte{255, 255, 255, 255, 10, 207, 3}, "1", "1Gi")
	f.Add("no-ports", "busybox", int32(1), "A=", []byte{}, "", "")
	f.Fuzz(func(t *testing.T, name, image string, size int32, envs string, ports []byte, cpu, memory string) {
		a, ok := admitted(name, image, size, envs, ports, cpu, memory)
		if !ok {
			t.Skip()
		}
		checkChildren(t, a)
	})
}

// admitted builds the AppService the inputs describe, and says whether the API server would store it.
func admitted(name, image string, size int32, envs string, ports []byte, cpu, memory string) (*appv1.AppService, bool) {
	if !appName.MatchString(name) || len(name) > 63 || image == "" || len(image) > 512 || !utf8.ValidString(image) ||
		size < 0 || size > 100 || !utf8.ValidString(envs) {
		return nil, false
	}
	a := &appv1.AppService{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: "uid"},
		Spec:       appv1.AppServiceSpec{Size: ptr.To(size), Application: appv1.Application{Image: image}},
	}
	seen := map[string]bool{}
	if envs != "" {
		for _, line := range strings.Split(envs, "\n") {
			var e appv1.EnvVar
			if n, v, ok := strings.Cut(line, "="); ok {
				e = appv1.EnvVar{Name: n, Value: v}
			} else if n, ref, ok := strings.Cut(line, "<"); ok {
				s, k, _ := strings.Cut(ref, "/")
				e = appv1.EnvVar{Name: n, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: s}, Key: k}}}
			} else {
				return nil, false
			}
			if !envName.MatchString(e.Name) || len(e.Name) > 256 || len(e.Value) > 32768 || seen[e.Name] {
				return nil, false
			}
			seen[e.Name] = true
			a.Spec.Envs = append(a.Spec.Envs, e)
		}
		if len(a.Spec.Envs) > 100 {
			return nil, false
		}
	}
	type key struct {
		port  int32
		proto appv1.Protocol
	}
	portSeen, nodePortSeen := map[key]bool{}, map[int32]bool{}
	for i := 0; i+7 <= len(ports); i += 7 {
		b := ports[i : i+7]
		p := appv1.ServicePort{Port: int32(b[0])<<8 | int32(b[1])}
		if t := int32(b[2])<<8 | int32(b[3]); t != 0 {
			p.TargetPort = ptr.To(t)
		}
		if n := int32(b[4])<<8 | int32(b[5]); n != 0 {
			p.NodePort = 30000 + n%2768
		}
		// The schema defaults the protocol to TCP; the builder also copes with it unset.
		p.Protocol = []appv1.Protocol{"TCP", "UDP", "SCTP", ""}[b[6]&3]
		if b[6]&4 != 0 {
			p.Name = "p" + string(rune('a'+i/7%26)) + strings.Repeat("0", i/7/26)
		}
		proto := p.Protocol
		if proto == "" {
			proto = "TCP"
		}
		if p.Port < 1 || (p.TargetPort != nil && *p.TargetPort < 1) || portSeen[key{p.Port, proto}] ||
			(p.NodePort != 0 && nodePortSeen[p.NodePort]) || (p.Name != "" && (!portNameRex.MatchString(p.Name) || len(p.Name) > 15)) {
			return nil, false
		}
		portSeen[key{p.Port, proto}], nodePortSeen[p.NodePort] = true, p.NodePort != 0
		a.Spec.Ports = append(a.Spec.Ports, p)
	}
	if len(a.Spec.Ports) > 20 {
		return nil, false
	}
	if len(a.Spec.Ports) > 1 {
		for _, p := range a.Spec.Ports {
			if p.Name == "" {
				return nil, false
			}
		}
	}
	for res, s := range map[corev1.ResourceName]string{corev1.ResourceCPU: cpu, corev1.ResourceMemory: memory} {
		if s == "" {
			continue
		}
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return nil, false
		}
		if a.Spec.Resources.Limits == nil {
			a.Spec.Resources.Limits = corev1.ResourceList{}
		}
		a.Spec.Resources.Limits[res] = q
	}
	return a, true
}

// checkChildren renders the children of a and fails t when one is not what the spec asks for.
func checkChildren(t *testing.T, a *appv1.AppService) {
	t.Helper()
	dac, err := Deployment(a, proxyenv.New(fuzzProxy))
	if err != nil {
		t.Fatalf("Deployment: %v", err)
	}
	var d appsv1.Deployment
	roundTrip(t, dac, &d)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != *a.Spec.Size {
		t.Fatalf("replicas = %v, want %d", d.Spec.Replicas, *a.Spec.Size)
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Fatalf("selector %v does not select the template's labels %v (%v)", d.Spec.Selector, d.Spec.Template.Labels, err)
	}
	if s, err := labels.Parse(selector(a.Name)); err != nil || !s.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Fatalf("the scale selector %q does not select the pods (%v)", selector(a.Name), err)
	}
	c := d.Spec.Template.Spec.Containers
	if len(c) != 1 || c[0].Image != a.Spec.Image || len(validation.IsDNS1123Label(c[0].Name)) > 0 {
		t.Fatalf("containers = %+v", c)
	}

	// The environment: the proxy variables the spec does not name, then the spec's, in order, as given.
	var want []corev1.EnvVar
	own := map[string]bool{}
	for _, e := range a.Spec.Envs {
		own[e.Name] = true
	}
	for _, e := range fuzzProxy {
		if !own[e.Name] {
			want = append(want, e)
		}
	}
	for _, e := range a.Spec.Envs {
		want = append(want, corev1.EnvVar{Name: e.Name, Value: e.Value, ValueFrom: e.ValueFrom})
	}
	if len(c[0].Env) != len(want) {
		t.Fatalf("env = %+v, want %+v", c[0].Env, want)
	}
	for i := range want {
		got := c[0].Env[i]
		if got.Name != want[i].Name || got.Value != want[i].Value || (got.ValueFrom == nil) != (want[i].ValueFrom == nil) ||
			!equality.Semantic.DeepEqual(got.ValueFrom, want[i].ValueFrom) {
			t.Fatalf("env[%d] = %+v, want %+v", i, got, want[i])
		}
	}

	// Every port's target is declared on the container once, with its protocol.
	declared := map[string]int{}
	for _, p := range c[0].Ports {
		if p.ContainerPort < 1 || p.ContainerPort > 65535 {
			t.Fatalf("container port %d", p.ContainerPort)
		}
		declared[string(p.Protocol)+"/"+itoa(p.ContainerPort)]++
	}
	for k, n := range declared {
		if n != 1 {
			t.Fatalf("container port %s declared %d times", k, n)
		}
	}

	if !equalLimits(c[0].Resources.Limits, a.Spec.Resources.Limits) {
		t.Fatalf("limits = %v, want %v", c[0].Resources.Limits, a.Spec.Resources.Limits)
	}

	children := []metav1.Object{&d}
	sac := Service(a)
	if (sac == nil) != (len(a.Spec.Ports) == 0) {
		t.Fatalf("Service = %v for %d ports", sac, len(a.Spec.Ports))
	}
	if sac != nil {
		var s corev1.Service
		roundTrip(t, sac, &s)
		if s.Spec.Type != ServiceType(a) || len(s.Spec.Ports) != len(a.Spec.Ports) {
			t.Fatalf("service = %+v", s.Spec)
		}
		for i, p := range a.Spec.Ports {
			sp := s.Spec.Ports[i]
			proto := corev1.Protocol(p.Protocol)
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			if sp.Port != p.Port || sp.NodePort != p.NodePort || sp.Name != p.Name || sp.Protocol != proto ||
				sp.TargetPort.IntValue() != int(targetPort(p)) {
				t.Fatalf("service port %d = %+v, want %+v", i, sp, p)
			}
			if declared[string(proto)+"/"+itoa(targetPort(p))] != 1 {
				t.Fatalf("the target of port %+v is not declared on the container: %+v", p, c[0].Ports)
			}
		}
		if len(s.Spec.Selector) == 0 || !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Fatalf("the Service selects %v, not the pods %v", s.Spec.Selector, d.Spec.Template.Labels)
		}
		children = append(children, &s)
	}

	for _, m := range children {
		if m.GetName() != a.Name || m.GetNamespace() != a.Namespace {
			t.Fatalf("child %s/%s, want %s/%s", m.GetNamespace(), m.GetName(), a.Namespace, a.Name)
		}
		refs := m.GetOwnerReferences()
		if len(refs) != 1 || refs[0].UID != a.UID || refs[0].Name != a.Name || refs[0].Kind != "AppService" ||
			refs[0].APIVersion != appv1.GroupVersion.String() || !ptr.Deref(refs[0].Controller, false) ||
			!ptr.Deref(refs[0].BlockOwnerDeletion, false) {
			t.Fatalf("owner references = %+v", refs)
		}
		for k, v := range m.GetLabels() {
			if len(validation.IsQualifiedName(k)) > 0 || len(validation.IsValidLabelValue(v)) > 0 {
				t.Fatalf("invalid label %q=%q", k, v)
			}
		}
	}
}

func equalLimits(got, want corev1.ResourceList) bool {
	if len(got) != len(want) {
		return false
	}
	for k, q := range want {
		g, ok := got[k]
		if !ok || g.Cmp(q) != 0 {
			return false
		}
	}
	return true
}

func itoa(i int32) string { return strconv.Itoa(int(i)) }

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
