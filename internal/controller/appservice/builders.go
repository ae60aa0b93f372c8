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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	"k8s.io/utils/ptr"
	gatewayv1ac "sigs.k8s.io/gateway-api/applyconfiguration/apis/v1"

	appv1 "github.com/operator101/operator101/api/app/v1"
	"github.com/operator101/operator101/internal/controller/managed"
	"github.com/operator101/operator101/internal/controller/podsecurity"
	"github.com/operator101/operator101/internal/controller/podtemplate"
	"github.com/operator101/operator101/internal/controller/route"
	"github.com/operator101/operator101/internal/proxyenv"
)

// containerName is the name of the application's container.
const containerName = "app"

// podLabels select the pods of one AppService; they are also set on both children.
func podLabels(name string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":     "appservice",
		"app.kubernetes.io/instance": name,
		managed.ByLabel:              managed.By,
	}
}

// tutorialLabel is the label the tutorials' controllers (seeds 003 and 004) give an AppService's pods, with its
// name, and their readers look for: kubectl get pods -l app=<name>.
const tutorialLabel = "app"

// templateLabels are the pods' labels: podLabels, by which the Deployment and the Service select them, and
// tutorialLabel. Selectors leave tutorialLabel out: a Deployment's selector cannot change, and the Deployments
// of an earlier version have none.
func templateLabels(name string) map[string]string {
	l := podLabels(name)
	l[tutorialLabel] = name
	return l
}

// selector is podLabels as a label selector string, for the scale subresource.
func selector(name string) string {
	return labels.SelectorFromSet(podLabels(name)).String()
}

// ownerRef makes the AppService the controller of a child, so that deleting it deletes the children. Its
// apiVersion is the object's own (app.example.com/v1 unless set: a batch.schwarzeni.github.com AppService's
// view carries its apiVersion).
func ownerRef(a *appv1.AppService) *metav1ac.OwnerReferenceApplyConfiguration {
	apiVersion := a.APIVersion
	if apiVersion == "" {
		apiVersion = appv1.GroupVersion.String()
	}
	return metav1ac.OwnerReference().
		WithAPIVersion(apiVersion).
		WithKind("AppService").
		WithName(a.Name).
		WithUID(a.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}

// desiredSize is spec.size, 1 when unset.
func desiredSize(a *appv1.AppService) int32 {
	if a.Spec.Size != nil {
		return *a.Spec.Size
	}
	return 1
}

// targetPort is the container port a service port reaches: targetPort, or port when unset.
func targetPort(p appv1.ServicePort) int32 {
	if p.TargetPort != nil {
		return *p.TargetPort
	}
	return p.Port
}

func protocol(p appv1.ServicePort) corev1.Protocol {
	if p.Protocol == "" {
		return corev1.ProtocolTCP
	}
	return corev1.Protocol(p.Protocol)
}

// Deployment runs spec.size pods of spec.image with spec.resources and spec.envs. proxyEnv (OLM's proxy
// settings, from proxy.ReadProxyVarsFromEnv) comes first in the environment, without the user and password a
// proxy URL may carry (proxyenv.Env never holds them), unless spec.envs names the same variable: the spec
// wins. Each port's target is declared on the container. The pods get no ServiceAccount token unless
// spec.automountServiceAccountToken asks for it, and the securityContext of podsecurity.Contexts(spec.runAsNonRoot).
// Its readiness and liveness probes are the spec's, by default a TCP connection to the first TCP port (none
// without one); spec.strategy is passed on as it is.
func Deployment(a *appv1.AppService, proxyEnv proxyenv.Env) (*appsv1ac.DeploymentApplyConfiguration, error) {
	container := corev1ac.Container().WithName(containerName).WithImage(a.Spec.Image)

	own := map[string]bool{}
	for _, e := range a.Spec.Envs {
		own[e.Name] = true
	}
	for e := range proxyEnv.All() {
		if !own[e.Name] {
			container.WithEnv(corev1ac.EnvVar().WithName(e.Name).WithValue(e.Value))
		}
	}
	for _, e := range a.Spec.Envs {
		env := corev1ac.EnvVar().WithName(e.Name)
		if e.Value != "" {
			env.WithValue(e.Value)
		}
		if e.ValueFrom != nil {
			src := &corev1ac.EnvVarSourceApplyConfiguration{}
			if err := convert(e.ValueFrom, src); err != nil {
				return nil, fmt.Errorf("env %s: %w", e.Name, err)
			}
			env.WithValueFrom(src)
		}
		container.WithEnv(env)
	}

	if res := podtemplate.Resources(a.Spec.Resources); res != nil {
		container.WithResources(res)
	}

	type portKey struct {
		port  int32
		proto corev1.Protocol
	}
	declared := map[portKey]bool{}
	for _, p := range a.Spec.Ports {
		k := portKey{targetPort(p), protocol(p)}
		if declared[k] {
			continue // two service ports may reach the same container port
		}
		declared[k] = true
		container.WithPorts(corev1ac.ContainerPort().WithContainerPort(k.port).WithProtocol(k.proto))
	}

	var readiness, liveness *corev1ac.ProbeApplyConfiguration
	if port, ok := firstTCPPort(a); ok {
		readiness, liveness = podtemplate.TCPReadiness(port), podtemplate.TCPLiveness(port)
	}
	if p := podtemplate.Probe(a.Spec.ReadinessProbe, readiness); p != nil {
		container.WithReadinessProbe(p)
	}
	if p := podtemplate.Probe(a.Spec.LivenessProbe, liveness); p != nil {
		container.WithLivenessProbe(p)
	}

	podSecurity, containerSecurity := podsecurity.Contexts(ptr.Deref(a.Spec.RunAsNonRoot, false))
	container.WithSecurityContext(containerSecurity)

	spec := appsv1ac.DeploymentSpec().WithStrategy(podtemplate.Strategy(a.Spec.Strategy))
	return appsv1ac.Deployment(a.Name, a.Namespace).
		WithLabels(podLabels(a.Name)).
		WithOwnerReferences(ownerRef(a)).
		WithSpec(spec.
			WithReplicas(desiredSize(a)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(podLabels(a.Name))).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(templateLabels(a.Name)).
				WithSpec(corev1ac.PodSpec().
					WithAutomountServiceAccountToken(ptr.Deref(a.Spec.AutomountServiceAccountToken, false)).
					WithSecurityContext(podSecurity).
					WithContainers(container)))), nil
}

// firstTCPPort is the container port of the first TCP port of spec.ports, which the default probes connect to.
func firstTCPPort(a *appv1.AppService) (int32, bool) {
	for _, p := range a.Spec.Ports {
		if protocol(p) == corev1.ProtocolTCP {
			return targetPort(p), true
		}
	}
	return 0, false
}

// ServiceType is the type of a's Service: spec.serviceType; unset, NodePort when a port names a nodePort (the
// tutorials' examples) and ClusterIP otherwise.
func ServiceType(a *appv1.AppService) corev1.ServiceType {
	if a.Spec.ServiceType != "" {
		return corev1.ServiceType(a.Spec.ServiceType)
	}
	for _, p := range a.Spec.Ports {
		if p.NodePort != 0 {
			return corev1.ServiceTypeNodePort
		}
	}
	return corev1.ServiceTypeClusterIP
}

// Service exposes spec.ports through a Service of ServiceType; nil when there are no ports. A port's nodePort
// is set where the spec names one (never on a ClusterIP Service); otherwise a NodePort or LoadBalancer
// Service gets the one the cluster chooses.
func Service(a *appv1.AppService) *corev1ac.ServiceApplyConfiguration {
	if len(a.Spec.Ports) == 0 {
		return nil
	}
	t := ServiceType(a)
	spec := corev1ac.ServiceSpec().WithType(t).WithSelector(podLabels(a.Name))
	for _, p := range a.Spec.Ports {
		sp := corev1ac.ServicePort().
			WithProtocol(protocol(p)).
			WithPort(p.Port).
			WithTargetPort(intstr.FromInt32(targetPort(p)))
		if p.Name != "" {
			sp.WithName(p.Name)
		}
		if p.NodePort != 0 && t != corev1.ServiceTypeClusterIP {
			sp.WithNodePort(p.NodePort)
		}
		spec.WithPorts(sp)
	}
	return corev1ac.Service(a.Name, a.Namespace).
		WithLabels(podLabels(a.Name)).
		WithOwnerReferences(ownerRef(a)).
		WithSpec(spec)
}

// convert copies an API type into its apply configuration, through JSON (both have the same JSON form).
func convert(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encoding %T: %w", in, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("decoding into %T: %w", out, err)
	}
	return nil
}

// DisruptionBudget keeps a drain from evicting more than one of a's pods at a time; nil (none may exist) when
// a wants one pod or none (podtemplate.DisruptionBudget).
func DisruptionBudget(a *appv1.AppService) *policyv1ac.PodDisruptionBudgetApplyConfiguration {
	return podtemplate.DisruptionBudget(a.Name, a.Namespace, podLabels(a.Name), ownerRef(a), desiredSize(a))
}

// routeSpec is what spec.ingress asks of the Ingress.
func routeSpec(a *appv1.AppService) route.Spec {
	in := a.Spec.Ingress
	return route.Spec{Host: in.Host, Path: in.Path, ClassName: in.ClassName, TLSSecretName: in.TLSSecretName}
}

// Ingress routes spec.ingress's host and path to the Service's first TCP port; nil (none may exist) without
// spec.ingress, or without a TCP port (the schema refuses that).
func Ingress(a *appv1.AppService) *networkingv1ac.IngressApplyConfiguration {
	port, ok := routedPort(a)
	if a.Spec.Ingress == nil || !ok {
		return nil
	}
	return route.Ingress(a.Name, a.Namespace, podLabels(a.Name), ownerRef(a), routeSpec(a), port)
}

// routedPort is the Service's port an Ingress or HTTPRoute routes to: that of the first TCP port of spec.ports.
func routedPort(a *appv1.AppService) (int32, bool) {
	for _, p := range a.Spec.Ports {
		if protocol(p) == corev1.ProtocolTCP {
			return p.Port, true
		}
	}
	return 0, false
}

// httpRouteSpec is what spec.httpRoute asks of the HTTPRoute.
func httpRouteSpec(a *appv1.AppService) route.RouteSpec {
	in := a.Spec.HTTPRoute
	spec := route.RouteSpec{Hostnames: in.Hostnames}
	for _, p := range in.ParentRefs {
		spec.Parents = append(spec.Parents, route.Parent{Name: p.Name, Namespace: p.Namespace, SectionName: p.SectionName})
	}
	return spec
}

// HTTPRoute routes every path of spec.httpRoute's host names, through its Gateways, to the Service's first TCP
// port; nil (none may exist) without spec.httpRoute, or without a TCP port (the schema refuses that).
func HTTPRoute(a *appv1.AppService) *gatewayv1ac.HTTPRouteApplyConfiguration {
	port, ok := routedPort(a)
	if a.Spec.HTTPRoute == nil || !ok {
		return nil
	}
	return route.HTTPRoute(a.Name, a.Namespace, podLabels(a.Name), ownerRef(a), httpRouteSpec(a), port)
}
