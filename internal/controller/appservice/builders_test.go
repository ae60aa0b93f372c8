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
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appv1 "github.com/operator101/operator101/api/app/v1"
	"github.com/operator101/operator101/internal/controller/route"
	"github.com/operator101/operator101/internal/proxyenv"

	"github.com/operator101/operator101/test/testenv"
)

func newApp(mod func(*appv1.AppServiceSpec)) *appv1.AppService {
	a := &appv1.AppService{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-app", Namespace: "ns", UID: "u1"},
		Spec: appv1.AppServiceSpec{Size: ptr.To[int32](2), Application: appv1.Application{Image: "nginx:1.7.9",
			Ports: []appv1.ServicePort{{Port: 80, TargetPort: ptr.To[int32](8080), NodePort: 30002, Protocol: "TCP"}}}},
	}
	if mod != nil {
		mod(&a.Spec)
	}
	return a
}

func TestDeployment(t *testing.T) {
	proxyEnv := []corev1.EnvVar{{Name: "HTTP_PROXY", Value: "http://proxy:3128"}, {Name: "NO_PROXY", Value: ".svc"}}
	cases := []struct {
		name      string
		app       *appv1.AppService
		proxy     []corev1.EnvVar
		replicas  int32
		env       []string // NAME=value, in order
		ports     []int32
		resources bool
	}{
		{"the seed's example", newApp(nil), nil, 2, nil, []int32{8080}, false},
		{"size unset is 1", newApp(func(s *appv1.AppServiceSpec) { s.Size = nil }), nil, 1, nil, []int32{8080}, false},
		{"target port defaults to port", newApp(func(s *appv1.AppServiceSpec) { s.Ports[0].TargetPort = nil }), nil, 2, nil, []int32{80}, false},
		{"two service ports on one container port", newApp(func(s *appv1.AppServiceSpec) {
			s.Ports = []appv1.ServicePort{{Name: "a", Port: 80, TargetPort: ptr.To[int32](8080)}, {Name: "b", Port: 8080}, {Name: "c", Port: 53, Protocol: "UDP"}}
		}), nil, 2, nil, []int32{8080, 53}, false},
		{"envs and proxy: proxy first, the spec wins", newApp(func(s *appv1.AppServiceSpec) {
			s.Envs = []appv1.EnvVar{{Name: "MODE", Value: "prod"}, {Name: "NO_PROXY", Value: "none"}}
		}), proxyEnv, 2, []string{"HTTP_PROXY=http://proxy:3128", "MODE=prod", "NO_PROXY=none"}, []int32{8080}, false},
		{"resources", newApp(func(s *appv1.AppServiceSpec) {
			s.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}
		}), nil, 2, nil, []int32{8080}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Deployment(tc.app, proxyenv.New(tc.proxy))
			if err != nil {
				t.Fatal(err)
			}
			if *d.Spec.Replicas != tc.replicas {
				t.Errorf("replicas %d, want %d", *d.Spec.Replicas, tc.replicas)
			}
			if r := d.OwnerReferences[0]; *r.Kind != "AppService" || *r.UID != tc.app.UID || !*r.Controller || !*r.BlockOwnerDeletion {
				t.Errorf("owner reference %+v", r)
			}
			if !labels.SelectorFromSet(d.Spec.Selector.MatchLabels).Matches(labels.Set(d.Spec.Template.Labels)) {
				t.Errorf("selector does not match the pods")
			}
			if !equality.Semantic.DeepEqual(d.Spec.Selector.MatchLabels, podLabels(tc.app.Name)) {
				t.Errorf("selector %v, want podLabels: a Deployment's selector cannot change", d.Spec.Selector.MatchLabels)
			}
			// The tutorials' readers find the pods by their label (kubectl get pods -l app=<name>).
			if got := d.Spec.Template.Labels["app"]; got != tc.app.Name {
				t.Errorf("pod label app=%q, want %q", got, tc.app.Name)
			}
			sel, err := labels.Parse(selector(tc.app.Name))
			if err != nil || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
				t.Errorf("status selector %q does not select the pods: %v", selector(tc.app.Name), err)
			}
			c := d.Spec.Template.Spec.Containers[0]
			if *c.Image != tc.app.Spec.Image {
				t.Errorf("image %s", *c.Image)
			}
			var env []string
			for _, e := range c.Env {
				env = append(env, *e.Name+"="+*e.Value)
			}
			if !equality.Semantic.DeepEqual(env, tc.env) {
				t.Errorf("env %v, want %v", env, tc.env)
			}
			var ports []int32
			for _, p := range c.Ports {
				ports = append(ports, *p.ContainerPort)
			}
			if !equality.Semantic.DeepEqual(ports, tc.ports) {
				t.Errorf("container ports %v, want %v", ports, tc.ports)
			}
			if (c.Resources != nil) != tc.resources {
				t.Errorf("resources %+v, want set=%v", c.Resources, tc.resources)
			}
		})
	}
}

func TestEnvValueFrom(t *testing.T) {
	a := newApp(func(s *appv1.AppServiceSpec) {
		s.Envs = []appv1.EnvVar{{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	})
	d, err := Deployment(a, proxyenv.Env{})
	if err != nil {
		t.Fatal(err)
	}
	e := d.Spec.Template.Spec.Containers[0].Env[0]
	if e.Value != nil || e.ValueFrom == nil || *e.ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("env %+v", e)
	}
}

func TestService(t *testing.T) {
	if s := Service(newApp(func(s *appv1.AppServiceSpec) { s.Ports = nil })); s != nil {
		t.Errorf("no ports gave a Service: %+v", s)
	}
	a := newApp(func(s *appv1.AppServiceSpec) {
		s.Ports = append(s.Ports, appv1.ServicePort{Name: "metrics", Port: 9090})
		s.Ports[0].Name = "http"
	})
	s := Service(a)
	if *s.Spec.Type != corev1.ServiceTypeNodePort || len(s.Spec.Ports) != 2 {
		t.Fatalf("service %+v", s.Spec)
	}
	p0, p1 := s.Spec.Ports[0], s.Spec.Ports[1]
	if *p0.Name != "http" || *p0.Port != 80 || p0.TargetPort.IntVal != 8080 || *p0.NodePort != 30002 || *p0.Protocol != corev1.ProtocolTCP {
		t.Errorf("port 0 %+v", p0)
	}
	if p1.NodePort != nil || p1.TargetPort.IntVal != 9090 {
		t.Errorf("port 1 %+v: no node port asked, target = port", p1)
	}
	d, _ := Deployment(a, proxyenv.Env{})
	if !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("service selector does not select the pods")
	}
}

// The status carries the Deployment's own replica counts, as the AppService tutorials show them, beside the
// conditions: here in the middle of a rollout from 2 to 4 pods.
func TestStatusReplicaCounts(t *testing.T) {
	a := newApp(func(s *appv1.AppServiceSpec) { s.Size = ptr.To[int32](4) })
	dep := &appsv1.Deployment{Status: appsv1.DeploymentStatus{Replicas: 5, ReadyReplicas: 3, AvailableReplicas: 3,
		UpdatedReplicas: 2, UnavailableReplicas: 2}}
	s := Status(a, dep, nil, route.HTTPRouteState{}, "", nil, metav1.Now())
	got := [5]int32{s.Replicas, s.ReadyReplicas, s.AvailableReplicas, s.UpdatedReplicas, s.UnavailableReplicas}
	if want := [5]int32{5, 3, 3, 2, 2}; got != want {
		t.Errorf("replicas, ready, available, updated, unavailable = %v, want %v", got, want)
	}
	if s.Ready != "3/4" || len(s.Conditions) != 6 {
		t.Errorf("ready %q and %d conditions, want 3/4 and Available, Progressing, Degraded, Ready, Reconciling, Stalled", s.Ready, len(s.Conditions))
	}
}

// The application's pods get no ServiceAccount token unless the spec asks for one.
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
		d, err := Deployment(newApp(func(s *appv1.AppServiceSpec) { s.AutomountServiceAccountToken = tc.field }), proxyenv.Env{})
		if err != nil {
			t.Fatal(err)
		}
		got := d.Spec.Template.Spec.AutomountServiceAccountToken
		if got == nil || *got != tc.want {
			t.Errorf("%s: automountServiceAccountToken = %v, want %v", tc.name, ptr.Deref(got, true), tc.want)
		}
	}
}

// TestDeploymentSecurityContext: the pods always have the RuntimeDefault seccomp profile and no privilege
// escalation, which an image running as root allows; runAsNonRoot adds runAsNonRoot and drops every
// capability (the rest of the restricted Pod Security Standard); no runAsUser either way.
func TestDeploymentSecurityContext(t *testing.T) {
	for _, nonRoot := range []*bool{nil, ptr.To(false), ptr.To(true)} {
		d, err := Deployment(newApp(func(s *appv1.AppServiceSpec) { s.RunAsNonRoot = nonRoot }), proxyenv.Env{})
		if err != nil {
			t.Fatal(err)
		}
		spec := d.Spec.Template.Spec
		testenv.CheckPodSecurity(t, nonRoot, spec)
	}
}

// The operator's proxy reaches the application's pods (OLM's cluster-proxy convention), but not the user and
// password its URL carries: those are the operator's, and the pods are the tenant's. A variable the spec sets
// itself is the spec's, as always.
func TestDeploymentDropsProxyCredentials(t *testing.T) {
	a := newApp(func(s *appv1.AppServiceSpec) {
		s.Envs = []appv1.EnvVar{{Name: "https_proxy", Value: "http://tenant:theirs@proxy.tenant:8080"}}
	})
	d, err := Deployment(a, testenv.ProxyWithCredentials(t, ".svc"))
	if err != nil {
		t.Fatal(err)
	}
	testenv.ExpectProxyEnv(t, d, []string{"HTTP_PROXY=http://proxy.example:3128", "http_proxy=http://proxy.example:3128",
		"HTTPS_PROXY=http://proxy.example:3129", "NO_PROXY=.svc", "no_proxy=.svc",
		"https_proxy=http://tenant:theirs@proxy.tenant:8080"})
}

func TestServiceType(t *testing.T) {
	cases := []struct {
		name     string
		typ      appv1.ServiceType
		nodePort int32
		want     corev1.ServiceType
		wantPort int32
	}{
		{"the tutorials' node port", "", 30002, corev1.ServiceTypeNodePort, 30002},
		{"no node port asked", "", 0, corev1.ServiceTypeClusterIP, 0},
		{"ClusterIP", appv1.ServiceTypeClusterIP, 0, corev1.ServiceTypeClusterIP, 0},
		{"NodePort, the cluster's choice", appv1.ServiceTypeNodePort, 0, corev1.ServiceTypeNodePort, 0},
		{"LoadBalancer on a node port", appv1.ServiceTypeLoadBalancer, 30003, corev1.ServiceTypeLoadBalancer, 30003},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := Service(newApp(func(s *appv1.AppServiceSpec) { s.ServiceType = tc.typ; s.Ports[0].NodePort = tc.nodePort }))
			if *s.Spec.Type != tc.want {
				t.Errorf("type %s, want %s", *s.Spec.Type, tc.want)
			}
			if got := ptr.Deref(s.Spec.Ports[0].NodePort, 0); got != tc.wantPort {
				t.Errorf("node port %d, want %d", got, tc.wantPort)
			}
		})
	}
}

// The default probes connect to the first TCP port's container port (an application need not speak HTTP); a
// UDP port gets none, and the AppService's own probes win.
func TestDeploymentProbes(t *testing.T) {
	cases := []struct {
		name  string
		ports []appv1.ServicePort
		want  *intstr.IntOrString
	}{
		{"no ports", nil, nil},
		{"udp only", []appv1.ServicePort{{Port: 53, Protocol: "UDP"}}, nil},
		{"first tcp port's target", []appv1.ServicePort{{Name: "dns", Port: 53, Protocol: "UDP"},
			{Name: "web", Port: 80, TargetPort: ptr.To[int32](8080)}, {Name: "admin", Port: 9000}}, ptr.To(intstr.FromInt32(8080))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ac, err := Deployment(newApp(func(s *appv1.AppServiceSpec) { s.Ports = tc.ports }), proxyenv.Env{})
			if err != nil {
				t.Fatal(err)
			}
			var d appsv1.Deployment
			roundTrip(t, ac, &d)
			c := d.Spec.Template.Spec.Containers[0]
			for name, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
				switch {
				case tc.want == nil && p != nil:
					t.Errorf("%s probe %+v, want none", name, p)
				case tc.want != nil && (p == nil || p.TCPSocket == nil || p.TCPSocket.Port != *tc.want):
					t.Errorf("%s probe %+v, want a TCP check of %s", name, p, tc.want)
				}
			}
		})
	}
	own := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
	ac, _ := Deployment(newApp(func(s *appv1.AppServiceSpec) {
		s.ReadinessProbe, s.LivenessProbe = own, own
		s.Strategy = &appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	}), proxyenv.Env{})
	var d appsv1.Deployment
	roundTrip(t, ac, &d)
	c := d.Spec.Template.Spec.Containers[0]
	if !equality.Semantic.DeepEqual(c.ReadinessProbe, own) || !equality.Semantic.DeepEqual(c.LivenessProbe, own) {
		t.Errorf("probes %+v / %+v, want the AppService's", c.ReadinessProbe, c.LivenessProbe)
	}
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("strategy %+v, want Recreate", d.Spec.Strategy)
	}
}
