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

package v1

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Its conditions are the shared Available, Progressing and Degraded of package
// github.com/operator101/operator101/api/conditions.

// ServiceType is the type of the Service that exposes an AppService's ports.
// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
type ServiceType string

// The Service types an AppService may ask for.
const (
	ServiceTypeClusterIP    ServiceType = "ClusterIP"
	ServiceTypeNodePort     ServiceType = "NodePort"
	ServiceTypeLoadBalancer ServiceType = "LoadBalancer"
)

// Protocol is the network protocol of a port.
// +kubebuilder:validation:Enum=TCP;UDP;SCTP
type Protocol string

// EnvVar is one environment variable of the application's container.
type EnvVar struct {
	// name of the variable: letters, digits, '_', '-' and '.', not starting with a digit.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z][-._a-zA-Z0-9]*$`
	// +required
	Name string `json:"name"`

	// value of the variable; $(OTHER) refers to a variable defined earlier in the list.
	// +kubebuilder:validation:MaxLength=32768
	// +optional
	Value string `json:"value,omitempty"`

	// valueFrom takes the value from a ConfigMap, a Secret, or a field of the pod instead of value.
	// +optional
	ValueFrom *corev1.EnvVarSource `json:"valueFrom,omitempty"`
}

// ServicePort is one port the application listens on, exposed on every node by a NodePort Service.
type ServicePort struct {
	// name of the port; required when there is more than one port.
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Name string `json:"name,omitempty"`

	// protocol of the port: TCP (the default), UDP or SCTP.
	// +kubebuilder:default=TCP
	// +optional
	Protocol Protocol `json:"protocol,omitempty"`

	// port the Service listens on inside the cluster.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +required
	Port int32 `json:"port"`

	// targetPort is the port the container listens on, from 1 to 65535 (default: the same as port).
	// The operator declares it on the container.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	TargetPort *int32 `json:"targetPort,omitempty"`

	// nodePort is the port every node opens (default: one chosen by the cluster when serviceType is NodePort
	// or LoadBalancer; none when it is ClusterIP). It must lie in the
	// cluster's node-port range (30000-32767 unless the cluster is set up otherwise), and two Services cannot
	// share a node port: a port outside the range or already in use shows as Degraded.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	NodePort int32 `json:"nodePort,omitempty"`
}

// Ingress routes HTTP requests for a host name to the Service, through the cluster's ingress controller.
type Ingress struct {
	// host is the host name requests are routed by, such as shop.example.com.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	Host string `json:"host"`

	// path is the path prefix routed (default /: every path).
	// +kubebuilder:default="/"
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	// +optional
	Path string `json:"path,omitempty"`

	// className is the IngressClass of the controller that serves it (default: the cluster's default class).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ClassName string `json:"className,omitempty"`

	// tlsSecretName names a Secret of type kubernetes.io/tls in the namespace whose certificate the ingress
	// controller serves for host; without it the route is plain HTTP.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	TLSSecretName string `json:"tlsSecretName,omitempty"`
}

// HTTPRoute routes HTTP requests for host names to the Service through Gateways of the Gateway API
// (gateway.networking.k8s.io), whose controller serves them.
type HTTPRoute struct {
	// parentRefs are the Gateways (or one listener of each) the route attaches to.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +required
	ParentRefs []ParentReference `json:"parentRefs"`

	// hostnames are the host names requests are routed by, such as shop.example.com; none: every host name the
	// Gateway's listener accepts.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +listType=atomic
	// +optional
	Hostnames []string `json:"hostnames,omitempty"`
}

// ParentReference names a Gateway an HTTPRoute attaches to.
type ParentReference struct {
	// name of the Gateway.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// namespace of the Gateway (default: the object's own). A Gateway in another namespace must allow routes
	// from this one (its listeners' allowedRoutes).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// sectionName names one listener of the Gateway (default: every listener that allows the route).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	SectionName string `json:"sectionName,omitempty"`
}

// AppServiceSpec is an application: an image run as size pods, reachable through a Service.
// +kubebuilder:validation:XValidation:rule="!has(self.ingress) || (has(self.ports) && self.ports.exists(p, !has(p.protocol) || p.protocol == 'TCP'))",message="ingress needs a TCP port to route to"
// +kubebuilder:validation:XValidation:rule="!has(self.httpRoute) || (has(self.ports) && self.ports.exists(p, !has(p.protocol) || p.protocol == 'TCP'))",message="httpRoute needs a TCP port to route to"
// +kubebuilder:validation:XValidation:rule="!has(self.serviceType) || self.serviceType != 'ClusterIP' || !has(self.ports) || self.ports.all(p, !has(p.nodePort))",message="a port's nodePort needs serviceType NodePort or LoadBalancer: a ClusterIP Service has no node port"
type AppServiceSpec struct {
	// size is the number of pods (default 1). `kubectl scale appservice NAME --replicas=N` sets it.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Size",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:podCount"}
	Size *int32 `json:"size,omitempty"`

	Application `json:",inline"`
}

// Application is what both AppService APIs run, besides the number of pods: app.example.com/v1 (size) and
// batch.schwarzeni.github.com/v1alpha1 (replicas) share it, and one controller serves both.
type Application struct {
	// image of the application's container.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Image",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	Image string `json:"image"`

	// resources are the container's CPU and memory requests and limits.
	// +kubebuilder:validation:XValidation:rule="!has(self.claims)",message="resource claims are not supported: use limits and requests"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Resources",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:resourceRequirements"}
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// envs are the container's environment variables.
	// The operator's proxy settings (HTTP_PROXY, HTTPS_PROXY, NO_PROXY: OLM sets them on a cluster with a proxy)
	// come first, unless named here.
	// +kubebuilder:validation:MaxItems=100
	// +listType=map
	// +listMapKey=name
	// +optional
	Envs []EnvVar `json:"envs,omitempty"`

	// serviceType is the type of the Service that exposes the ports: ClusterIP (reached inside the cluster, or
	// through an Ingress or a route), NodePort (every node opens each port's nodePort, or one the cluster
	// chooses) or LoadBalancer (the cluster's load balancer). Unset, it is NodePort when a port names a
	// nodePort, as the tutorials' examples do, and ClusterIP otherwise.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Service Type",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:ClusterIP","urn:alm:descriptor:com.tectonic.ui:select:NodePort","urn:alm:descriptor:com.tectonic.ui:select:LoadBalancer"}
	ServiceType ServiceType `json:"serviceType,omitempty"`

	// ports the application listens on, each exposed by the Service (serviceType). Without ports there is no
	// Service.
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:XValidation:rule="self.size() <= 1 || self.all(p, has(p.name) && p.name != '')",message="every port needs a name when there is more than one"
	// +kubebuilder:validation:XValidation:rule="self.all(p, self.exists_one(q, q.port == p.port && q.protocol == p.protocol))",message="two ports cannot share a port number and protocol"
	// +kubebuilder:validation:XValidation:rule="self.all(p, !has(p.nodePort) || self.exists_one(q, has(q.nodePort) && q.nodePort == p.nodePort))",message="two ports cannot share a nodePort"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Ports"
	Ports []ServicePort `json:"ports,omitempty"`

	// readinessProbe tells when a pod is ready to serve; only ready pods receive traffic, and the AppService is
	// Available only once its pods are ready. Default: a TCP connection to the first TCP port's targetPort (none without a TCP port). A change rolls the pods.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Readiness Probe",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:advanced"}
	ReadinessProbe *corev1.Probe `json:"readinessProbe,omitempty"`

	// livenessProbe tells when a container is stuck: the kubelet restarts it. Default: the same TCP check, failing 3 times in a row 10 s apart. A change
	// rolls the pods.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Liveness Probe",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:advanced"}
	LivenessProbe *corev1.Probe `json:"livenessProbe,omitempty"`

	// strategy is how the Deployment replaces old pods by new ones: RollingUpdate (the default, with
	// maxUnavailable and maxSurge, 25% each unless set) or Recreate (all old pods stop first).
	// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type != 'Recreate' || !has(self.rollingUpdate)",message="rollingUpdate is only for type RollingUpdate"
	// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type in ['RollingUpdate', 'Recreate']",message="type must be RollingUpdate or Recreate"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Strategy",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:updateStrategy"}
	Strategy *appsv1.DeploymentStrategy `json:"strategy,omitempty"`

	// ingress routes HTTP requests for a host name to the Service's first TCP port through the cluster's ingress controller,
	// over TLS with tlsSecretName: an Ingress of the same name. Unset, there is none. Whether a controller
	// admitted it shows as the condition IngressAdmitted.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Ingress"
	Ingress *Ingress `json:"ingress,omitempty"`

	// httpRoute routes every path of its hostnames to the Service's first TCP port through the Gateways it names in
	// parentRefs: an HTTPRoute (gateway.networking.k8s.io/v1) of the same name. Unset, there is none. Whether
	// the Gateways accepted it shows as the condition HTTPRouteAdmitted; on a cluster that did not serve the
	// Gateway API when the operator started, HTTPRouteAdmitted is False (HTTPRouteNotServed).
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="HTTP Route"
	HTTPRoute *HTTPRoute `json:"httpRoute,omitempty"`

	// automountServiceAccountToken mounts the token of the namespace's default ServiceAccount into the
	// application's pods (default false: they get no credentials for the Kubernetes API). Set it to true only
	// for an application that calls the Kubernetes API; a change rolls the pods.
	// +kubebuilder:default=false
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Automount Service Account Token",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:booleanSwitch","urn:alm:descriptor:com.tectonic.ui:advanced"}
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken,omitempty"`

	// runAsNonRoot says that image runs as a non-root user (a numeric USER other than 0, or any UID the
	// cluster gives it, as nginxinc/nginx-unprivileged does; such an image listens on a port above 1023, its
	// targetPort): the pods then set runAsNonRoot and drop every capability, and so meet the restricted Pod
	// Security Standard. Default false: the pods may run as root, as nginx's official image does, and a
	// namespace enforcing the restricted standard refuses them (Degraded, ReplicaFailure, with the admission's
	// message). Every pod has the RuntimeDefault seccomp profile and no privilege escalation either way. A
	// change rolls the pods.
	// +kubebuilder:default=false
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Run As Non-Root",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:booleanSwitch","urn:alm:descriptor:com.tectonic.ui:advanced"}
	RunAsNonRoot *bool `json:"runAsNonRoot,omitempty"`
}

// AppServiceStatus is what the operator observed of the application.
type AppServiceStatus struct {
	// observedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Available, Progressing and Degraded, each with a reason and a message; and Ready (the
	// current spec is rolled out and available), Reconciling (a rollout is under way) and Stalled (Degraded),
	// as kstatus reads them (Flux, kpt): exactly one of the three is True.
	// +listType=map
	// +listMapKey=type
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Conditions",xDescriptors={"urn:alm:descriptor:io.kubernetes.conditions"}
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// replicas is the number of pods the Deployment has (the scale subresource reads it).
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// readyReplicas is the number of pods ready to serve.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Ready Replicas",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:podCount"}
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// availableReplicas is the number of pods ready for the Deployment's minReadySeconds (the Deployment's own
	// count, as the AppService tutorials show it).
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`

	// updatedReplicas is the number of pods that run the current spec.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas,omitempty"`

	// unavailableReplicas is the number of pods the Deployment still misses to be complete.
	// +optional
	UnavailableReplicas int32 `json:"unavailableReplicas,omitempty"`

	// ready reads "ready/desired" pods, as kubectl shows for a Deployment.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Ready",xDescriptors={"urn:alm:descriptor:text"}
	Ready string `json:"ready,omitempty"`

	// selector is the label selector of the pods, for the scale subresource (and a HorizontalPodAutoscaler).
	// +optional
	Selector string `json:"selector,omitempty"`
}

// AppService runs an application: a Deployment of size pods and a Service for its ports.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +operator-sdk:csv:customresourcedefinitions:displayName="App Service",resources={{Deployment,v1,deployments},{Service,v1,services},{PodDisruptionBudget,v1,poddisruptionbudgets},{Ingress,v1,ingresses},{HTTPRoute,v1,httproutes},{Event,v1,events}}
// +kubebuilder:subresource:scale:specpath=.spec.size,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && self.metadata.name.size() <= 63",message="metadata.name must be a DNS label of at most 63 characters starting with a letter (it names the Service)"
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.ready`
// +kubebuilder:printcolumn:name="Node-Ports",type=string,JSONPath=`.spec.ports[*].nodePort`
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AppService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the application wanted.
	// +required
	Spec AppServiceSpec `json:"spec"`

	// status is the application observed.
	// +optional
	Status AppServiceStatus `json:"status,omitempty"`
}

// AppServiceList is a list of AppServices.
// +kubebuilder:object:root=true
type AppServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AppService `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, &AppService{}, &AppServiceList{})
		return nil
	})
}
