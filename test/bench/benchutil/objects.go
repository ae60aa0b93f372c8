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

// Package benchutil holds what the bench driver and the lower-bound program share: the objects they create,
// and the pure helpers that turn an audit log into numbers (percentiles, write counts, tables).
package benchutil

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "github.com/operator101/operator101/api/app/v1"
	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
)

// Node ports: the bench's API server runs with --service-node-port-range FirstNodePort-LastNodePort, wider than
// a cluster's default 30000-32767 (2,768 ports), so that every object of the largest size holds its own port.
const (
	FirstNodePort = 30000
	LastNodePort  = 39999
	NodePorts     = LastNodePort - FirstNodePort + 1 // 10,000
)

// Plan is how many objects of each kind one size creates. Every MyWeb and every AppService with a port holds
// its own explicit node port from the bench API server's range, so that no two Services ever ask for the same
// port: a Service whose port the API server allocated itself could take a port a MyWeb is about to claim, and
// that MyWeb would then be Degraded. The ports go to MyWebs first, the rest to AppServices; up to N=5,000 every
// object has one. Past that, AppServices run without a port (a Deployment and no Service) and MyWebs stop at
// NodePorts.
type Plan struct {
	// N is the size asked for.
	N int `json:"n"`
	// MyWebs created (at most NodePorts).
	MyWebs int `json:"mywebs"`
	// AppServices created (always N).
	AppServices int `json:"appservices"`
	// AppServicesWithPort is how many of them have a port, hence a NodePort Service.
	AppServicesWithPort int `json:"appservicesWithPort"`
	// PageBytes is the size of each MyWeb's page: 0 for Page, else a page of exactly that many bytes
	// (at most the schema's 524288, what a tenant may give) that differs from one MyWeb to the next.
	PageBytes int `json:"pageBytes,omitempty"`
	// Routes gives every MyWeb and AppService the optional children too: an Ingress (host, class, TLS
	// Secret), an HTTPRoute attached to the Gateway GatewayName (which need not exist: no Gateway controller
	// runs) and 2 replicas, hence a PodDisruptionBudget. The API server must serve the Gateway API's CRDs.
	Routes bool `json:"routes,omitempty"`
}

// PlanFor is the plan of size n.
func PlanFor(n int) Plan {
	p := Plan{N: n, MyWebs: min(n, NodePorts), AppServices: n}
	p.AppServicesWithPort = min(n, NodePorts-p.MyWebs)
	return p
}

// Objects is the number of MyWebs and AppServices.
func (p Plan) Objects() int { return p.MyWebs + p.AppServices }

// MyWebName and AppServiceName name the i-th object; children carry their parent's name.
func MyWebName(i int) string      { return fmt.Sprintf("web-%05d", i) }
func AppServiceName(i int) string { return fmt.Sprintf("app-%05d", i) }
func AtName(i int) string         { return fmt.Sprintf("at-%05d", i) }

// Page is the page every bench MyWeb serves (a small one: the bench measures the operator, not etcd).
const Page = "<html><body><h1>operator101 bench</h1></body></html>\n"

// PageOf is the page of the i-th MyWeb: Page, or PageBytes bytes of HTML that begin with the MyWeb's name.
func (p Plan) PageOf(i int) string {
	if p.PageBytes <= 0 {
		return Page
	}
	head := "<html><body><h1>" + MyWebName(i) + "</h1><p>"
	tail := "</p></body></html>\n"
	fill := max(p.PageBytes-len(head)-len(tail), 0)
	return (head + strings.Repeat("operator101 ", fill/12+1))[:len(head)+fill] + tail
}

// Image of the bench's web servers and applications (never pulled: no kubelet runs).
const Image = "nginx:1.27"

// What the objects of a Plan with Routes ask for: the Gateway their HTTPRoutes attach to, the IngressClass of
// their Ingresses, and the domain under which each has a host name of its own (HostOf).
const (
	GatewayName  = "bench-gateway"
	IngressClass = "bench"
	Domain       = "bench.example.com"
	// RoutesReplicas is the replicas of every object of a Plan with Routes: more than 1, so each has a
	// PodDisruptionBudget.
	RoutesReplicas = 2
)

// HostOf is the host name of the object named name (a Plan with Routes).
func HostOf(name string) string { return name + "." + Domain }

// TLSSecretOf is the name of the TLS Secret of the Ingress of the object named name (a Plan with Routes; it
// need not exist: no ingress controller runs).
func TLSSecretOf(name string) string { return name + "-tls" }

// MyWeb is the i-th MyWeb of plan p in namespace ns.
func (p Plan) MyWeb(ns string, i int) *operatorv1.MyWeb {
	w := &operatorv1.MyWeb{
		ObjectMeta: metav1.ObjectMeta{Name: MyWebName(i), Namespace: ns},
		Spec: operatorv1.MyWebSpec{Image: Image, NodePortNumber: int32(FirstNodePort + i),
			PageContentHtml: p.PageOf(i), Replicas: ptr.To[int32](1)},
	}
	if p.Routes {
		host := HostOf(w.Name)
		w.Spec.Replicas = ptr.To[int32](RoutesReplicas)
		w.Spec.Ingress = &operatorv1.Ingress{Host: host, ClassName: IngressClass, TLSSecretName: TLSSecretOf(w.Name)}
		w.Spec.HTTPRoute = &operatorv1.HTTPRoute{ParentRefs: []operatorv1.ParentReference{{Name: GatewayName}},
			Hostnames: []string{host}}
	}
	return w
}

// AppService is the i-th AppService of plan p in namespace ns.
func (p Plan) AppService(ns string, i int) *appv1.AppService {
	a := &appv1.AppService{
		ObjectMeta: metav1.ObjectMeta{Name: AppServiceName(i), Namespace: ns},
		Spec:       appv1.AppServiceSpec{Size: ptr.To[int32](1), Application: appv1.Application{Image: Image}},
	}
	if i < p.AppServicesWithPort {
		a.Spec.Ports = []appv1.ServicePort{{Name: "http", Protocol: "TCP", Port: 80,
			NodePort: int32(FirstNodePort + p.MyWebs + i)}}
	}
	if p.Routes {
		host := HostOf(a.Name)
		a.Spec.Size = ptr.To[int32](RoutesReplicas)
		if len(a.Spec.Ports) == 0 {
			return a // an Ingress and an HTTPRoute need a port to route to (past N=5,000)
		}
		a.Spec.Ingress = &appv1.Ingress{Host: host, ClassName: IngressClass, TLSSecretName: TLSSecretOf(a.Name)}
		a.Spec.HTTPRoute = &appv1.HTTPRoute{ParentRefs: []appv1.ParentReference{{Name: GatewayName}},
			Hostnames: []string{host}}
	}
	return a
}

// At is the i-th At, due at schedule (whole seconds, UTC).
func At(ns string, i int, schedule string) *cnatv1alpha1.At {
	return &cnatv1alpha1.At{
		ObjectMeta: metav1.ObjectMeta{Name: AtName(i), Namespace: ns},
		Spec:       cnatv1alpha1.AtSpec{Schedule: schedule, Command: "true"},
	}
}
