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

package apply

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The cache's copies of Deployments, Services, Ingresses, PodDisruptionBudgets and HTTPRoutes are small types of
// our own: an API type's Go struct is as large however much of it is zeroed (a Deployment 1232 bytes, a Service
// 592), and the cache holds one per child. Each holds the child's metadata (as childMetadataForCache leaves it)
// and what the reconcilers read of the rest: a Deployment's status, a Service's node ports and load balancers, an Ingress's
// and an HTTPRoute's status; a PodDisruptionBudget nothing more. docs/contributing/performance.md measures what
// that saves.
//
// A reader never sees them. Every read from controller-runtime's cache (Get and List, whatever the cache's
// namespaces) hands out a deep copy of what the informer stores, made by the stored object's DeepCopyObject, and
// only then checks that it is of the type asked for. So each DeepCopyObject here returns the API type, filled
// from the small copy: a reconcile that gets an *appsv1.Deployment from the cache receives the same Deployment as
// when the cache held the API type, and nothing it changes reaches the cache (a read with
// client.UnsafeDisableDeepCopy gets no such copy, and the cache refuses it). Written by hand, not by deepcopy-gen,
// since what they return is not a copy of their own type. The informers' event handlers (Owns, Watches and their
// predicates, reconciler.Memory's) read only their metadata, which they have. Our own instead of a reader that
// converts from the informers' stores: with --watch-namespaces the cache hands out informers that do not show
// their stores (controller-runtime's multiNamespaceInformer).

// cachedMeta is the metadata every small copy holds, and what makes it a runtime.Object besides DeepCopyObject.
type cachedMeta struct {
	metav1.ObjectMeta
}

// GetObjectKind is empty: no kind is kept in the copies (a TypeMeta would cost 32 bytes each), and the cache sets
// the kind of what it hands out.
func (*cachedMeta) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// cachedCopy marks the small copies: a cache transform handed one (client-go may hand a transform its own
// output) returns it as it is.
func (*cachedMeta) cachedCopy() {}

type cachedCopy interface{ cachedCopy() }

// meta is a deep copy of c's metadata.
func (c *cachedMeta) meta() metav1.ObjectMeta {
	var m metav1.ObjectMeta
	c.DeepCopyInto(&m) // ObjectMeta's
	return m
}

// cachedDeployment is the cache's copy of a Deployment: its status, whose conditions rollout.Conditions reads
// (deploymentConditionsForCache).
type cachedDeployment struct {
	cachedMeta
	Status appsv1.DeploymentStatus
}

// DeepCopyObject is the Deployment c stands for, without a spec.
func (c *cachedDeployment) DeepCopyObject() runtime.Object {
	return &appsv1.Deployment{ObjectMeta: c.meta(), Status: *c.Status.DeepCopy()}
}

// cachedService is the cache's copy of a Service: the node port of each of its ports (the ones the cluster
// chose) and its load balancers' addresses, which a MyWeb's URL reads.
type cachedService struct {
	cachedMeta
	NodePorts    []int32
	LoadBalancer corev1.LoadBalancerStatus
}

// DeepCopyObject is the Service c stands for: its ports with nothing but their node ports, its status with
// nothing but its load balancers.
func (c *cachedService) DeepCopyObject() runtime.Object {
	svc := &corev1.Service{ObjectMeta: c.meta(), Status: corev1.ServiceStatus{LoadBalancer: *c.LoadBalancer.DeepCopy()}}
	if len(c.NodePorts) > 0 {
		svc.Spec.Ports = make([]corev1.ServicePort, len(c.NodePorts))
		for i, n := range c.NodePorts {
			svc.Spec.Ports[i].NodePort = n
		}
	}
	return svc
}

// cachedIngress is the cache's copy of an Ingress: its status, whether a controller admitted it.
type cachedIngress struct {
	cachedMeta
	Status networkingv1.IngressStatus
}

// DeepCopyObject is the Ingress c stands for, without a spec.
func (c *cachedIngress) DeepCopyObject() runtime.Object {
	return &networkingv1.Ingress{ObjectMeta: c.meta(), Status: *c.Status.DeepCopy()}
}

// cachedPodDisruptionBudget is the cache's copy of a PodDisruptionBudget: its metadata alone.
type cachedPodDisruptionBudget struct {
	cachedMeta
}

// DeepCopyObject is the PodDisruptionBudget c stands for, without a spec or status.
func (c *cachedPodDisruptionBudget) DeepCopyObject() runtime.Object {
	return &policyv1.PodDisruptionBudget{ObjectMeta: c.meta()}
}

// cachedHTTPRoute is the cache's copy of an HTTPRoute: its status, whether its Gateways accepted it.
type cachedHTTPRoute struct {
	cachedMeta
	Status gatewayv1.HTTPRouteStatus
}

// DeepCopyObject is the HTTPRoute c stands for, without a spec.
func (c *cachedHTTPRoute) DeepCopyObject() runtime.Object {
	return &gatewayv1.HTTPRoute{ObjectMeta: c.meta(), Status: *c.Status.DeepCopy()}
}
