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
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	"k8s.io/utils/ptr"
	gatewayv1ac "sigs.k8s.io/gateway-api/applyconfiguration/apis/v1"

	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/controller/managed"
	"github.com/operator101/operator101/internal/controller/podsecurity"
	"github.com/operator101/operator101/internal/controller/podtemplate"
	"github.com/operator101/operator101/internal/controller/route"
	"github.com/operator101/operator101/internal/proxyenv"
)

// The children of a MyWeb all carry its name: a ConfigMap with the page, a Deployment and a Service.
const (
	// pageKey is the ConfigMap key, and the file name, of the page.
	pageKey = "index.html"
	// pageHashAnnotation on the pod template holds the SHA-256 of the page: a new page changes the template,
	// so the Deployment rolls the pods and they mount the new page.
	pageHashAnnotation = "operator.k8s-summit.org/page-sha256"
	// htmlDir is where nginx serves files from.
	htmlDir = "/usr/share/nginx/html"

	containerName = "web"
	volumeName    = "page"
	// httpPort is the Service's port, and the container's unless spec.containerPort says otherwise.
	httpPort = 80
)

// ContainerPort is the port the web server listens on: spec.containerPort, 80 (nginx's) when unset.
func ContainerPort(w *operatorv1.MyWeb) int32 {
	if w.Spec.ContainerPort != nil && *w.Spec.ContainerPort > 0 {
		return *w.Spec.ContainerPort
	}
	return httpPort
}

// podLabels select the pods of one MyWeb; they are also set on every child.
func podLabels(name string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":     "myweb",
		"app.kubernetes.io/instance": name,
		managed.ByLabel:              managed.By,
	}
}

// ownerRef makes the MyWeb the controller of a child, so that deleting it deletes the children.
func ownerRef(w *operatorv1.MyWeb) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(operatorv1.GroupVersion.String()).
		WithKind("MyWeb").
		WithName(w.Name).
		WithUID(w.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}

// pageHash is the hex SHA-256 of a page.
func pageHash(page string) string {
	sum := sha256.Sum256([]byte(page))
	return hex.EncodeToString(sum[:])
}

// ConfigMap holds the page as index.html.
func ConfigMap(w *operatorv1.MyWeb) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap(w.Name, w.Namespace).
		WithLabels(podLabels(w.Name)).
		WithOwnerReferences(ownerRef(w)).
		WithData(map[string]string{pageKey: w.Spec.PageContentHtml})
}

// Deployment runs spec.replicas web servers (1 when unset) that serve the page from the ConfigMap. proxyEnv
// (OLM's proxy settings, from proxy.ReadProxyVarsFromEnv) is passed to the container, without the user and
// password a proxy URL may carry (proxyenv.Env never holds them). The pods get no ServiceAccount token unless
// spec.automountServiceAccountToken asks for it, and the securityContext of podsecurity.Contexts(spec.runAsNonRoot);
// the web server listens on ContainerPort. Its readiness and liveness probes are the spec's, by default an HTTP
// GET of the page; spec.resources and spec.strategy are passed on as they are.
func Deployment(w *operatorv1.MyWeb, proxyEnv proxyenv.Env) *appsv1ac.DeploymentApplyConfiguration {
	replicas := int32(1)
	if w.Spec.Replicas != nil {
		replicas = *w.Spec.Replicas
	}
	podSecurity, containerSecurity := podsecurity.Contexts(ptr.Deref(w.Spec.RunAsNonRoot, false))
	container := corev1ac.Container().
		WithName(containerName).
		WithImage(w.Spec.Image).
		WithPorts(corev1ac.ContainerPort().WithName("http").WithContainerPort(ContainerPort(w)).WithProtocol(corev1.ProtocolTCP)).
		WithSecurityContext(containerSecurity).
		WithVolumeMounts(corev1ac.VolumeMount().WithName(volumeName).WithMountPath(htmlDir).WithReadOnly(true)).
		WithReadinessProbe(podtemplate.Probe(w.Spec.ReadinessProbe, podtemplate.HTTPReadiness("/", "http"))).
		WithLivenessProbe(podtemplate.Probe(w.Spec.LivenessProbe, podtemplate.HTTPLiveness("/", "http")))
	for e := range proxyEnv.All() {
		container.WithEnv(corev1ac.EnvVar().WithName(e.Name).WithValue(e.Value))
	}
	if res := podtemplate.Resources(w.Spec.Resources); res != nil {
		container.WithResources(res)
	}
	spec := appsv1ac.DeploymentSpec().WithStrategy(podtemplate.Strategy(w.Spec.Strategy))
	return appsv1ac.Deployment(w.Name, w.Namespace).
		WithLabels(podLabels(w.Name)).
		WithOwnerReferences(ownerRef(w)).
		WithSpec(spec.
			WithReplicas(replicas).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(podLabels(w.Name))).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(podLabels(w.Name)).
				WithAnnotations(map[string]string{pageHashAnnotation: pageHash(w.Spec.PageContentHtml)}).
				WithSpec(corev1ac.PodSpec().
					WithAutomountServiceAccountToken(ptr.Deref(w.Spec.AutomountServiceAccountToken, false)).
					WithSecurityContext(podSecurity).
					WithContainers(container).
					WithVolumes(corev1ac.Volume().WithName(volumeName).
						WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(w.Name))))))
}

// ServiceType is the type of w's Service: spec.serviceType; unset, NodePort when spec.nodePortNumber names a
// port (the seed's meaning) and ClusterIP otherwise.
func ServiceType(w *operatorv1.MyWeb) corev1.ServiceType {
	switch {
	case w.Spec.ServiceType != "":
		return corev1.ServiceType(w.Spec.ServiceType)
	case w.Spec.NodePortNumber != 0:
		return corev1.ServiceTypeNodePort
	}
	return corev1.ServiceTypeClusterIP
}

// Service exposes the web servers on port 80 inside the cluster, and on a node port where ServiceType has
// one: spec.nodePortNumber, or the cluster's choice when it is unset (the builder then leaves nodePort to
// the API server, which keeps the port it allocated).
func Service(w *operatorv1.MyWeb) *corev1ac.ServiceApplyConfiguration {
	port := corev1ac.ServicePort().
		WithName("http").
		WithProtocol(corev1.ProtocolTCP).
		WithPort(httpPort).
		WithTargetPort(intstr.FromString("http"))
	t := ServiceType(w)
	if t != corev1.ServiceTypeClusterIP && w.Spec.NodePortNumber != 0 {
		port.WithNodePort(w.Spec.NodePortNumber)
	}
	return corev1ac.Service(w.Name, w.Namespace).
		WithLabels(podLabels(w.Name)).
		WithOwnerReferences(ownerRef(w)).
		WithSpec(corev1ac.ServiceSpec().
			WithType(t).
			WithSelector(podLabels(w.Name)).
			WithPorts(port))
}

// URL is where the page is served: on a node port, NODE stands for the address of any node; svc (nil when
// not observed yet) gives the node port the cluster chose, and a load balancer's address once it has one.
// Without either, the Service's name inside the cluster.
func URL(w *operatorv1.MyWeb, svc *corev1.Service) string {
	t := ServiceType(w)
	if t == corev1.ServiceTypeLoadBalancer && svc != nil {
		for _, in := range svc.Status.LoadBalancer.Ingress {
			if host := cmp.Or(in.Hostname, in.IP); host != "" {
				return fmt.Sprintf("http://%s/", host)
			}
		}
	}
	if t != corev1.ServiceTypeClusterIP {
		if w.Spec.NodePortNumber != 0 {
			return fmt.Sprintf("http://NODE:%d/", w.Spec.NodePortNumber)
		}
		if svc != nil && len(svc.Spec.Ports) > 0 && svc.Spec.Ports[0].NodePort != 0 {
			return fmt.Sprintf("http://NODE:%d/", svc.Spec.Ports[0].NodePort)
		}
	}
	return fmt.Sprintf("http://%s.%s.svc/", w.Name, w.Namespace)
}

// DisruptionBudget keeps a drain from evicting more than one of w's pods at a time; nil (none may exist) when
// w wants one pod or none (podtemplate.DisruptionBudget).
func DisruptionBudget(w *operatorv1.MyWeb) *policyv1ac.PodDisruptionBudgetApplyConfiguration {
	return podtemplate.DisruptionBudget(w.Name, w.Namespace, podLabels(w.Name), ownerRef(w), desiredReplicas(w))
}

// routeSpec is what spec.ingress asks of the Ingress.
func routeSpec(w *operatorv1.MyWeb) route.Spec {
	in := w.Spec.Ingress
	return route.Spec{Host: in.Host, Path: in.Path, ClassName: in.ClassName, TLSSecretName: in.TLSSecretName}
}

// Ingress routes spec.ingress's host and path to the Service's port 80; nil (none may exist) without
// spec.ingress.
func Ingress(w *operatorv1.MyWeb) *networkingv1ac.IngressApplyConfiguration {
	if w.Spec.Ingress == nil {
		return nil
	}
	return route.Ingress(w.Name, w.Namespace, podLabels(w.Name), ownerRef(w), routeSpec(w), httpPort)
}

// httpRouteSpec is what spec.httpRoute asks of the HTTPRoute.
func httpRouteSpec(w *operatorv1.MyWeb) route.RouteSpec {
	in := w.Spec.HTTPRoute
	spec := route.RouteSpec{Hostnames: in.Hostnames}
	for _, p := range in.ParentRefs {
		spec.Parents = append(spec.Parents, route.Parent{Name: p.Name, Namespace: p.Namespace, SectionName: p.SectionName})
	}
	return spec
}

// HTTPRoute routes every path of spec.httpRoute's host names, through its Gateways, to the Service's port 80;
// nil (none may exist) without spec.httpRoute.
func HTTPRoute(w *operatorv1.MyWeb) *gatewayv1ac.HTTPRouteApplyConfiguration {
	if w.Spec.HTTPRoute == nil {
		return nil
	}
	return route.HTTPRoute(w.Name, w.Namespace, podLabels(w.Name), ownerRef(w), httpRouteSpec(w), httpPort)
}
