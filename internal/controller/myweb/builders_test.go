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
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"

	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/proxyenv"

	"github.com/operator101/operator101/test/testenv"
)

func newWeb(name string, replicas *int32, page string, port int32) *operatorv1.MyWeb {
	return &operatorv1.MyWeb{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec:       operatorv1.MyWebSpec{Image: "nginx:1.27", NodePortNumber: port, PageContentHtml: page, Replicas: replicas},
	}
}

func TestConfigMapHoldsThePage(t *testing.T) {
	w := newWeb("site", nil, "<h1>hi</h1>", 30100)
	cm := ConfigMap(w)
	if *cm.Name != "site" || *cm.Namespace != "ns" {
		t.Errorf("name %s/%s, want ns/site", *cm.Namespace, *cm.Name)
	}
	if got := cm.Data[pageKey]; got != "<h1>hi</h1>" {
		t.Errorf("index.html = %q", got)
	}
	checkOwner(t, cm.OwnerReferences, w)
}

func checkOwner(t *testing.T, refs []metav1ac.OwnerReferenceApplyConfiguration, w *operatorv1.MyWeb) {
	t.Helper()
	if len(refs) != 1 {
		t.Fatalf("%d owner references, want 1", len(refs))
	}
	r := refs[0]
	if *r.Kind != "MyWeb" || *r.APIVersion != operatorv1.GroupVersion.String() || *r.Name != w.Name || *r.UID != w.UID ||
		!*r.Controller || !*r.BlockOwnerDeletion {
		t.Errorf("owner reference %s %s/%s controller=%v, want the MyWeb %s/%s as controller", *r.Kind, *r.Name, *r.UID, *r.Controller, w.Name, w.UID)
	}
}

func TestDeployment(t *testing.T) {
	proxyEnv := []corev1.EnvVar{{Name: "HTTPS_PROXY", Value: "http://proxy:3128"}, {Name: "https_proxy", Value: "http://proxy:3128"}}
	cases := []struct {
		name         string
		web          *operatorv1.MyWeb
		proxy        []corev1.EnvVar
		wantReplicas int32
	}{
		{"replicas default to 1", newWeb("a", nil, "x", 30100), nil, 1},
		{"replicas from the spec", newWeb("b", ptr.To[int32](3), "x", 30100), nil, 3},
		{"zero replicas stop the site", newWeb("c", ptr.To[int32](0), "x", 30100), nil, 0},
		{"proxy env passed on", newWeb("d", nil, "x", 30100), proxyEnv, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Deployment(tc.web, proxyenv.New(tc.proxy))
			if *d.Spec.Replicas != tc.wantReplicas {
				t.Errorf("replicas %d, want %d", *d.Spec.Replicas, tc.wantReplicas)
			}
			if !equality.Semantic.DeepEqual(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
				t.Errorf("selector %v does not match the template's labels %v", d.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
			}
			checkOwner(t, d.OwnerReferences, tc.web)
			pod := d.Spec.Template.Spec
			c := pod.Containers[0]
			if *c.Image != tc.web.Spec.Image {
				t.Errorf("image %s", *c.Image)
			}
			if len(c.VolumeMounts) != 1 || *c.VolumeMounts[0].MountPath != htmlDir || *c.VolumeMounts[0].Name != *pod.Volumes[0].Name {
				t.Errorf("the page is not mounted at %s: %+v", htmlDir, c.VolumeMounts)
			}
			if *pod.Volumes[0].ConfigMap.Name != tc.web.Name {
				t.Errorf("volume from ConfigMap %s, want %s", *pod.Volumes[0].ConfigMap.Name, tc.web.Name)
			}
			if len(c.Env) != len(tc.proxy) {
				t.Fatalf("env %d variables, want %d", len(c.Env), len(tc.proxy))
			}
			for i, e := range tc.proxy {
				if *c.Env[i].Name != e.Name || *c.Env[i].Value != e.Value {
					t.Errorf("env[%d] = %s=%s, want %s=%s", i, *c.Env[i].Name, *c.Env[i].Value, e.Name, e.Value)
				}
			}
			if got := d.Spec.Template.Annotations[pageHashAnnotation]; got != pageHash(tc.web.Spec.PageContentHtml) {
				t.Errorf("page hash annotation %q", got)
			}
		})
	}
}

// A new page changes the pod template (so the Deployment rolls the pods); the same page does not.
func TestPageChangeRollsThePods(t *testing.T) {
	a := Deployment(newWeb("w", nil, "<h1>one</h1>", 30100), proxyenv.Env{})
	same := Deployment(newWeb("w", nil, "<h1>one</h1>", 30100), proxyenv.Env{})
	b := Deployment(newWeb("w", nil, "<h1>two</h1>", 30100), proxyenv.Env{})
	if !equality.Semantic.DeepEqual(a.Spec.Template, same.Spec.Template) {
		t.Error("the same page gave two pod templates: pods would roll for nothing")
	}
	if equality.Semantic.DeepEqual(a.Spec.Template, b.Spec.Template) {
		t.Error("a new page left the pod template unchanged: pods would keep serving the old page")
	}
}

func TestService(t *testing.T) {
	for _, port := range []int32{30000, 30100, 32767} {
		w := newWeb("s", nil, "x", port)
		s := Service(w)
		if *s.Spec.Type != corev1.ServiceTypeNodePort {
			t.Errorf("type %s", *s.Spec.Type)
		}
		if len(s.Spec.Ports) != 1 || *s.Spec.Ports[0].NodePort != port || *s.Spec.Ports[0].Port != 80 {
			t.Errorf("ports %+v, want node port %d to port 80", s.Spec.Ports, port)
		}
		d := Deployment(w, proxyenv.Env{})
		if !equality.Semantic.DeepEqual(s.Spec.Selector, d.Spec.Template.Labels) {
			t.Errorf("service selector %v does not select the pods %v", s.Spec.Selector, d.Spec.Template.Labels)
		}
		if name := s.Spec.Ports[0].TargetPort.StrVal; name != *d.Spec.Template.Spec.Containers[0].Ports[0].Name {
			t.Errorf("target port %q is not the container's port", name)
		}
		checkOwner(t, s.OwnerReferences, w)
		if got, want := URL(w, nil), "http://NODE:"+itoa(port)+"/"; got != want {
			t.Errorf("URL %s, want %s", got, want)
		}
	}
}

func itoa(i int32) string { return strconv.Itoa(int(i)) }

// The web server pods get no ServiceAccount token unless the spec asks for one.
func TestDeploymentServiceAccountToken(t *testing.T) {
	cases := []struct {
		name  string
		field *bool
		want  bool
	}{
		{"unset: no token", nil, false},
		{"false: no token", ptr.To(false), false},
		{"true: the token is mounted", ptr.To(true), true},
	}
	for _, tc := range cases {
		w := newWeb("w", nil, "x", 30100)
		w.Spec.AutomountServiceAccountToken = tc.field
		got := Deployment(w, proxyenv.Env{}).Spec.Template.Spec.AutomountServiceAccountToken
		if got == nil || *got != tc.want {
			t.Errorf("%s: automountServiceAccountToken = %v, want %v", tc.name, ptr.Deref(got, true), tc.want)
		}
	}
}

// TestDeploymentSecurityContext: the pods always have the RuntimeDefault seccomp profile and no privilege
// escalation, which nginx running as root allows; runAsNonRoot adds runAsNonRoot and drops every capability
// (the rest of the restricted Pod Security Standard); no runAsUser either way; containerPort moves the
// container's port, not the Service's.
func TestDeploymentSecurityContext(t *testing.T) {
	for _, nonRoot := range []*bool{nil, ptr.To(false), ptr.To(true)} {
		w := newWeb("a", nil, "x", 30100)
		w.Spec.RunAsNonRoot = nonRoot
		spec := Deployment(w, proxyenv.Env{}).Spec.Template.Spec
		testenv.CheckPodSecurity(t, nonRoot, spec)
	}

	w := newWeb("a", nil, "x", 30100)
	if got := *Deployment(w, proxyenv.Env{}).Spec.Template.Spec.Containers[0].Ports[0].ContainerPort; got != 80 {
		t.Errorf("container port %d, want nginx's 80 by default", got)
	}
	w.Spec.ContainerPort = ptr.To[int32](8080)
	p := Deployment(w, proxyenv.Env{}).Spec.Template.Spec.Containers[0].Ports[0]
	if *p.ContainerPort != 8080 || *p.Name != "http" {
		t.Errorf("container port %s %d, want http 8080", *p.Name, *p.ContainerPort)
	}
	s := Service(w).Spec.Ports[0]
	if *s.Port != 80 || s.TargetPort.String() != "http" {
		t.Errorf("Service port %d -> %s, want 80 -> http (the container's named port)", *s.Port, s.TargetPort.String())
	}
}

// The operator's proxy reaches the web servers' pods (OLM's cluster-proxy convention), but not the user and
// password its URL carries: those are the operator's, and the pods are the tenant's.
func TestDeploymentDropsProxyCredentials(t *testing.T) {
	d := Deployment(newWeb("p", nil, "x", 30100), testenv.ProxyWithCredentials(t, ".svc,.cluster.local"))
	testenv.ExpectProxyEnv(t, d, []string{"HTTP_PROXY=http://proxy.example:3128", "http_proxy=http://proxy.example:3128",
		"HTTPS_PROXY=http://proxy.example:3129", "https_proxy=http://proxy.example:3129",
		"NO_PROXY=.svc,.cluster.local", "no_proxy=.svc,.cluster.local"})
}

func TestServiceType(t *testing.T) {
	cases := []struct {
		name     string
		typ      operatorv1.ServiceType
		nodePort int32
		want     corev1.ServiceType
		wantPort int32
		wantURL  string
	}{
		{"the seed's node port", "", 30100, corev1.ServiceTypeNodePort, 30100, "http://NODE:30100/"},
		{"no node port asked", "", 0, corev1.ServiceTypeClusterIP, 0, "http://s.ns.svc/"},
		{"ClusterIP", operatorv1.ServiceTypeClusterIP, 0, corev1.ServiceTypeClusterIP, 0, "http://s.ns.svc/"},
		{"NodePort, the cluster's choice", operatorv1.ServiceTypeNodePort, 0, corev1.ServiceTypeNodePort, 0, "http://NODE:31999/"},
		{"NodePort on a port", operatorv1.ServiceTypeNodePort, 30200, corev1.ServiceTypeNodePort, 30200, "http://NODE:30200/"},
		{"LoadBalancer", operatorv1.ServiceTypeLoadBalancer, 0, corev1.ServiceTypeLoadBalancer, 0, "http://lb.example/"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWeb("s", nil, "x", tc.nodePort)
			w.Spec.ServiceType = tc.typ
			s := Service(w)
			if *s.Spec.Type != tc.want {
				t.Errorf("type %s, want %s", *s.Spec.Type, tc.want)
			}
			if got := ptr.Deref(s.Spec.Ports[0].NodePort, 0); got != tc.wantPort {
				t.Errorf("node port %d, want %d", got, tc.wantPort)
			}
			observed := &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, NodePort: 31999}}}}
			observed.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{Hostname: "lb.example"}}
			if tc.want == corev1.ServiceTypeClusterIP {
				observed.Spec.Ports[0].NodePort = 0
			}
			if got := URL(w, observed); got != tc.wantURL {
				t.Errorf("URL %s, want %s", got, tc.wantURL)
			}
		})
	}
}

// The web server's probes GET the page on its port unless the MyWeb gives its own; resources and the rollout
// strategy are passed on.
func TestDeploymentHealthAndRollout(t *testing.T) {
	w := newWeb("h", nil, "x", 30100)
	var d appsv1.Deployment
	roundTrip(t, Deployment(w, proxyenv.Env{}), &d)
	c := d.Spec.Template.Spec.Containers[0]
	for name, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/" || p.HTTPGet.Port != intstr.FromString("http") {
			t.Errorf("default %s probe %+v, want an HTTP GET of / on the port named http", name, p)
		}
	}
	if c.Ports[0].Name != "http" {
		t.Errorf("the probes' port %q is not the container's", c.Ports[0].Name)
	}
	if c.Resources.Limits != nil || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		t.Errorf("resources %+v, strategy %+v: want none and RollingUpdate", c.Resources, d.Spec.Strategy)
	}

	own := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8081)}}}
	w.Spec.ReadinessProbe, w.Spec.LivenessProbe = own, own
	w.Spec.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}
	w.Spec.Strategy = &appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	d = appsv1.Deployment{}
	roundTrip(t, Deployment(w, proxyenv.Env{}), &d)
	c = d.Spec.Template.Spec.Containers[0]
	if !equality.Semantic.DeepEqual(c.ReadinessProbe, own) || !equality.Semantic.DeepEqual(c.LivenessProbe, own) {
		t.Errorf("probes %+v / %+v, want the MyWeb's %+v", c.ReadinessProbe, c.LivenessProbe, own)
	}
	if !equality.Semantic.DeepEqual(c.Resources, w.Spec.Resources) {
		t.Errorf("resources %+v, want %+v", c.Resources, w.Spec.Resources)
	}
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("strategy %+v, want Recreate", d.Spec.Strategy)
	}
}
