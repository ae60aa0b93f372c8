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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	appv1 "github.com/operator101/operator101/api/app/v1"
)

// This AppService is app.example.com/v1's under the names of the kubebuilder tutorial: the number of pods is
// replicas (there: size); everything else is appv1.Application, and the status is appv1.AppServiceStatus.
// One controller (internal/controller/appservice) serves both.

// AppServiceSpec is an application: an image run as replicas pods, reachable through a Service.
// +kubebuilder:validation:XValidation:rule="!has(self.ingress) || (has(self.ports) && self.ports.exists(p, !has(p.protocol) || p.protocol == 'TCP'))",message="ingress needs a TCP port to route to"
// +kubebuilder:validation:XValidation:rule="!has(self.httpRoute) || (has(self.ports) && self.ports.exists(p, !has(p.protocol) || p.protocol == 'TCP'))",message="httpRoute needs a TCP port to route to"
// +kubebuilder:validation:XValidation:rule="!has(self.serviceType) || self.serviceType != 'ClusterIP' || !has(self.ports) || self.ports.all(p, !has(p.nodePort))",message="a port's nodePort needs serviceType NodePort or LoadBalancer: a ClusterIP Service has no node port"
type AppServiceSpec struct {
	// replicas is the number of pods (default 1). `kubectl scale appservices.batch.schwarzeni.github.com NAME
	// --replicas=N` sets it.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Replicas",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:podCount"}
	Replicas *int32 `json:"replicas,omitempty"`

	appv1.Application `json:",inline"`
}

// AppService runs an application: a Deployment of replicas pods and a Service for its ports.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +operator-sdk:csv:customresourcedefinitions:displayName="App Service (batch.schwarzeni.github.com)",resources={{Deployment,v1,deployments},{Service,v1,services},{PodDisruptionBudget,v1,poddisruptionbudgets},{Ingress,v1,ingresses},{HTTPRoute,v1,httproutes},{Event,v1,events}}
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
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
	Status appv1.AppServiceStatus `json:"status,omitempty"`
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
