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

// ServiceType is the type of the Service that exposes the pods.
// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
type ServiceType string

// The Service types a MyWeb or an AppService may ask for.
const (
	ServiceTypeClusterIP    ServiceType = "ClusterIP"
	ServiceTypeNodePort     ServiceType = "NodePort"
	ServiceTypeLoadBalancer ServiceType = "LoadBalancer"
)

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

// MyWebSpec is the web site a MyWeb serves: one HTML page, served by nginx behind a Service.
// +kubebuilder:validation:XValidation:rule="!has(self.nodePortNumber) || !has(self.serviceType) || self.serviceType != 'ClusterIP'",message="nodePortNumber needs serviceType NodePort or LoadBalancer: a ClusterIP Service has no node port"
type MyWebSpec struct {
	// image of the web server. It must serve the files in /usr/share/nginx/html on containerPort (80 unless
	// set), as nginx does.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Image",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	Image string `json:"image"`

	// nodePortNumber is the port every node opens for the site (a NodePort Service, unless serviceType says
	// LoadBalancer). It must lie in the cluster's node-port range (30000-32767 unless the cluster is set up
	// otherwise), and two Services cannot share a node port: a port outside the range or already in use shows
	// as Degraded. Leave it out to get no node port (a ClusterIP Service), or one the cluster chooses
	// (serviceType NodePort or LoadBalancer).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Node Port",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	NodePortNumber int32 `json:"nodePortNumber,omitempty"`

	// serviceType is the type of the site's Service: ClusterIP (reached inside the cluster, or through an
	// Ingress or a route), NodePort (every node opens a port: nodePortNumber, or one the cluster chooses) or
	// LoadBalancer (the cluster's load balancer, with a node port as the cluster decides). Unset, it is
	// NodePort when nodePortNumber is set and ClusterIP otherwise.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Service Type",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:ClusterIP","urn:alm:descriptor:com.tectonic.ui:select:NodePort","urn:alm:descriptor:com.tectonic.ui:select:LoadBalancer"}
	ServiceType ServiceType `json:"serviceType,omitempty"`

	// pageContentHtml is the page served as index.html.
	// A change rolls the pods, so that the new page is served without deleting anything by hand.
	// +kubebuilder:validation:MaxLength=524288
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Page Content (HTML)",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	PageContentHtml string `json:"pageContentHtml"`

	// replicas is the number of web server pods (default 1; 0 stops the site and keeps its configuration).
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Replicas",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:podCount"}
	Replicas *int32 `json:"replicas,omitempty"`

	// automountServiceAccountToken mounts the token of the namespace's default ServiceAccount into the web
	// server pods (default false: they get no credentials for the Kubernetes API). Set it to true only for an
	// image that calls the Kubernetes API; a change rolls the pods.
	// +kubebuilder:default=false
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Automount Service Account Token",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:booleanSwitch","urn:alm:descriptor:com.tectonic.ui:advanced"}
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken,omitempty"`

	// containerPort is the port the web server listens on in its container (default 80, as nginx does). An
	// image that runs as a non-root user listens on a port above 1023: 8080 for nginxinc/nginx-unprivileged.
	// The Service's node port reaches it whatever it is.
	// +kubebuilder:default=80
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Container Port",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number","urn:alm:descriptor:com.tectonic.ui:advanced"}
	ContainerPort *int32 `json:"containerPort,omitempty"`

	// runAsNonRoot says that image runs as a non-root user (a numeric USER other than 0, or any UID the
	// cluster gives it, as nginxinc/nginx-unprivileged does): the pods then set runAsNonRoot and drop every
	// capability, and so meet the restricted Pod Security Standard. Default false: the pods may run as root, as
	// nginx's official image does, and a namespace enforcing the restricted standard refuses them (Degraded,
	// ReplicaFailure, with the admission's message). Every pod has the RuntimeDefault seccomp profile and no
	// privilege escalation either way. A change rolls the pods.
	// +kubebuilder:default=false
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Run As Non-Root",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:booleanSwitch","urn:alm:descriptor:com.tectonic.ui:advanced"}
	RunAsNonRoot *bool `json:"runAsNonRoot,omitempty"`

	// resources are the web server's CPU and memory requests and limits. A change rolls the pods.
	// +kubebuilder:validation:XValidation:rule="!has(self.claims)",message="resource claims are not supported: use limits and requests"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Resources",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:resourceRequirements"}
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// readinessProbe tells when a pod is ready to serve; only ready pods receive traffic, and the MyWeb is
	// Available only once its pods are ready. Default: an HTTP GET of the page (/) on containerPort. A change rolls the pods.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Readiness Probe",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:advanced"}
	ReadinessProbe *corev1.Probe `json:"readinessProbe,omitempty"`

	// livenessProbe tells when a container is stuck: the kubelet restarts it. Default: the same HTTP GET, failing 3 times in a row 10 s apart. A change
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

	// ingress routes HTTP requests for a host name to the page's Service (port 80) through the cluster's ingress controller,
	// over TLS with tlsSecretName: an Ingress of the same name. Unset, there is none. Whether a controller
	// admitted it shows as the condition IngressAdmitted.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Ingress"
	Ingress *Ingress `json:"ingress,omitempty"`

	// httpRoute routes every path of its hostnames to the page's Service (port 80) through the Gateways it names in
	// parentRefs: an HTTPRoute (gateway.networking.k8s.io/v1) of the same name. Unset, there is none. Whether
	// the Gateways accepted it shows as the condition HTTPRouteAdmitted; on a cluster that did not serve the
	// Gateway API when the operator started, HTTPRouteAdmitted is False (HTTPRouteNotServed).
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="HTTP Route"
	HTTPRoute *HTTPRoute `json:"httpRoute,omitempty"`
}

// MyWebStatus is what the operator observed of the site.
type MyWebStatus struct {
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

	// replicas is the number of web server pods the Deployment has (any version of the page).
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// readyReplicas is the number of pods ready to serve.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// ready reads "ready/desired" pods, as kubectl shows for a Deployment.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Ready",xDescriptors={"urn:alm:descriptor:text"}
	Ready string `json:"ready,omitempty"`

	// selector is the label selector of the pods, for the scale subresource (and a HorizontalPodAutoscaler).
	// +optional
	Selector string `json:"selector,omitempty"`

	// url is where the page is served: any node's address, on the node port.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="URL",xDescriptors={"urn:alm:descriptor:org.w3:link"}
	URL string `json:"url,omitempty"`

	// completed is true when the site is Available (kept from the original MyWeb API; read the conditions).
	// +optional
	Completed bool `json:"completed"`
}

// MyWeb serves one HTML page with nginx behind a Service.
// A ConfigMap holds the page, a Deployment serves it and a Service (ClusterIP, NodePort or LoadBalancer) exposes it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=web,categories=all
// +operator-sdk:csv:customresourcedefinitions:displayName="My Web",resources={{ConfigMap,v1,configmaps},{Deployment,v1,deployments},{Service,v1,services},{PodDisruptionBudget,v1,poddisruptionbudgets},{Ingress,v1,ingresses},{HTTPRoute,v1,httproutes},{Event,v1,events}}
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && self.metadata.name.size() <= 63",message="metadata.name must be a DNS label of at most 63 characters starting with a letter (it names the Service)"
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.ready`
// +kubebuilder:printcolumn:name="Node-Port",type=integer,JSONPath=`.spec.nodePortNumber`
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MyWeb struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the site wanted.
	// +required
	Spec MyWebSpec `json:"spec"`

	// status is the site observed.
	// +optional
	Status MyWebStatus `json:"status,omitempty"`
}

// MyWebList is a list of MyWebs.
// +kubebuilder:object:root=true
type MyWebList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MyWeb `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, &MyWeb{}, &MyWebList{})
		return nil
	})
}
