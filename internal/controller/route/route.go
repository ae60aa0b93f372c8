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

// Package route holds the HTTP routes MyWeb and AppService give their Service when the tenant asks for them: an
// Ingress, and the condition that says whether an ingress controller admitted it; a Gateway API HTTPRoute, and
// the condition that says whether its Gateways accepted it (on a cluster that serves HTTPRoute: Discover).
package route

import (
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"

	"github.com/operator101/operator101/api/conditions"
)

// Spec is what a tenant asks of an Ingress: host, path prefix (/ when empty), IngressClass (the cluster's
// default when empty) and the TLS Secret (plain HTTP when empty).
type Spec struct {
	Host, Path, ClassName, TLSSecretName string
}

// Ingress routes spec's host and path to port of the Service name, named name in namespace, labelled labels
// and controlled by owner.
func Ingress(name, namespace string, labels map[string]string, owner *metav1ac.OwnerReferenceApplyConfiguration,
	spec Spec, port int32) *networkingv1ac.IngressApplyConfiguration {
	path := spec.Path
	if path == "" {
		path = "/"
	}
	is := networkingv1ac.IngressSpec().WithRules(networkingv1ac.IngressRule().
		WithHost(spec.Host).
		WithHTTP(networkingv1ac.HTTPIngressRuleValue().WithPaths(networkingv1ac.HTTPIngressPath().
			WithPath(path).
			WithPathType(networkingv1.PathTypePrefix).
			WithBackend(networkingv1ac.IngressBackend().WithService(networkingv1ac.IngressServiceBackend().
				WithName(name).
				WithPort(networkingv1ac.ServiceBackendPort().WithNumber(port)))))))
	if spec.ClassName != "" {
		is.WithIngressClassName(spec.ClassName)
	}
	if spec.TLSSecretName != "" {
		is.WithTLS(networkingv1ac.IngressTLS().WithHosts(spec.Host).WithSecretName(spec.TLSSecretName))
	}
	return networkingv1ac.Ingress(name, namespace).WithLabels(labels).WithOwnerReferences(owner).WithSpec(is)
}

// URL is where spec routes: https with a TLS Secret, http without.
func URL(spec Spec) string {
	scheme := "http"
	if spec.TLSSecretName != "" {
		scheme = "https"
	}
	path := spec.Path
	if path == "" {
		path = "/"
	}
	return fmt.Sprintf("%s://%s%s", scheme, spec.Host, path)
}

// Admitted sets IngressAdmitted in conds from ing (the Ingress as observed; nil when there is none yet) while
// the object asks for an Ingress (wanted), and removes it otherwise. An ingress controller that admits an
// Ingress writes its address into the Ingress's status; without one, none serves the Ingress's class.
func Admitted(conds []metav1.Condition, wanted bool, ing *networkingv1.Ingress, spec Spec, generation int64, now metav1.Time) []metav1.Condition {
	if !wanted {
		meta.RemoveStatusCondition(&conds, conditions.IngressAdmitted)
		return conds
	}
	c := metav1.Condition{Type: conditions.IngressAdmitted, ObservedGeneration: generation, LastTransitionTime: now,
		Status: metav1.ConditionFalse, Reason: conditions.ReasonIngressNotAdmitted}
	class := spec.ClassName
	if class == "" {
		class = "the cluster's default"
	}
	switch {
	case ing == nil:
		c.Message = "the Ingress does not exist yet"
	case len(ing.Status.LoadBalancer.Ingress) == 0:
		c.Message = fmt.Sprintf("no ingress controller has admitted Ingress %s (class %s): is there a controller for that IngressClass?", ing.Name, class)
	default:
		a := ing.Status.LoadBalancer.Ingress[0]
		addr := a.Hostname
		if addr == "" {
			addr = a.IP
		}
		c.Status, c.Reason = metav1.ConditionTrue, conditions.ReasonIngressAdmitted
		c.Message = fmt.Sprintf("%s is served by the ingress controller at %s", URL(spec), addr)
	}
	meta.SetStatusCondition(&conds, c)
	return conds
}
