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

package route

import (
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/discovery"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1ac "sigs.k8s.io/gateway-api/applyconfiguration/apis/v1"

	"github.com/operator101/operator101/api/conditions"
)

// RestartHint is how a CRD installed after the operator started is picked up: HTTPRouteNotServed's message
// and the guides say it. The pod is deleted, and its Deployment starts another: under OLM the Deployment is
// OLM's, which may undo a change to its template such as `kubectl rollout restart` makes. The e2e
// (TestOLM/RoutesThroughTraefik) restarts an operator that started before the CRDs so.
const RestartHint = "kubectl -n operator101-system delete pod -l control-plane=controller-manager"

// Served is which route kinds beside Ingress the cluster serves, as Discover found them once, when the
// manager's cache and controllers were set up: a kind not served then is neither cached nor watched, so the
// manager starts (and gets ready) on a cluster without it.
type Served struct {
	// HTTPRoute: the cluster serves the Gateway API's gateway.networking.k8s.io/v1 httproutes.
	HTTPRoute bool
}

// Discover asks the API server (dc; nil: nothing is served) which route kinds it serves. An API group the
// server does not serve is no error; a failed discovery is.
func Discover(dc discovery.ServerResourcesInterface) (Served, error) {
	if dc == nil {
		return Served{}, nil
	}
	list, err := dc.ServerResourcesForGroupVersion(gatewayv1.GroupVersion.String())
	if apierrors.IsNotFound(err) {
		return Served{}, nil
	}
	if err != nil {
		return Served{}, fmt.Errorf("discovering %s: %w", gatewayv1.GroupVersion, err)
	}
	for _, r := range list.APIResources {
		if r.Name == "httproutes" {
			return Served{HTTPRoute: true}, nil
		}
	}
	return Served{}, nil
}

// Parent is one Gateway (or one of its listeners) an HTTPRoute attaches to; Namespace empty is the route's own.
type Parent struct {
	Name, Namespace, SectionName string
}

// RouteSpec is what a tenant asks of an HTTPRoute: its parents and host names (none: every host name the
// parents' listeners accept).
type RouteSpec struct {
	Parents   []Parent
	Hostnames []string
}

// HTTPRoute routes every path of spec's host names, through spec's parents, to port of the Service name; it is
// named name in namespace, labelled labels and controlled by owner. Its lists are atomic: the fields the CRD
// defaults in them (a parent's group and kind, a backend's group, kind and weight) are set as the defaults
// would be, or the fields the API server keeps under FieldManager would never equal what is applied, and every
// reconcile would write.
func HTTPRoute(name, namespace string, labels map[string]string, owner *metav1ac.OwnerReferenceApplyConfiguration,
	spec RouteSpec, port int32) *gatewayv1ac.HTTPRouteApplyConfiguration {
	rs := gatewayv1ac.HTTPRouteSpec()
	for _, p := range spec.Parents {
		ref := gatewayv1ac.ParentReference().WithGroup(gatewayv1.GroupName).WithKind("Gateway").WithName(gatewayv1.ObjectName(p.Name))
		if p.Namespace != "" {
			ref.WithNamespace(gatewayv1.Namespace(p.Namespace))
		}
		if p.SectionName != "" {
			ref.WithSectionName(gatewayv1.SectionName(p.SectionName))
		}
		rs.WithParentRefs(ref)
	}
	for _, h := range spec.Hostnames {
		rs.WithHostnames(gatewayv1.Hostname(h))
	}
	rs.WithRules(gatewayv1ac.HTTPRouteRule().
		WithMatches(gatewayv1ac.HTTPRouteMatch().WithPath(gatewayv1ac.HTTPPathMatch().
			WithType(gatewayv1.PathMatchPathPrefix).WithValue("/"))).
		WithBackendRefs(gatewayv1ac.HTTPBackendRef().WithGroup("").WithKind("Service").WithName(gatewayv1.ObjectName(name)).
			WithPort(port).WithWeight(1)))
	return gatewayv1ac.HTTPRoute(name, namespace).WithLabels(labels).WithOwnerReferences(owner).WithSpec(rs)
}

// String names p as Gateway namespace/name, with its listener when it names one; namespace is the route's.
func (p Parent) String(namespace string) string {
	if p.Namespace != "" {
		namespace = p.Namespace
	}
	s := "Gateway " + namespace + "/" + p.Name
	if p.SectionName != "" {
		s += " (listener " + p.SectionName + ")"
	}
	return s
}

// HTTPRouteState is what Admitted needs to know of an object's HTTPRoute beyond the route itself.
type HTTPRouteState struct {
	// Wanted: the object asks for an HTTPRoute. Served: the cluster served HTTPRoute at setup (Served).
	Wanted, Served bool
	// Route is the HTTPRoute as observed, nil when there is none yet.
	Route *gatewayv1.HTTPRoute
	// Spec is what the object asks of it.
	Spec RouteSpec
}

// HTTPRouteAdmitted sets HTTPRouteAdmitted in conds from st while the object asks for an HTTPRoute, and
// removes it otherwise. A Gateway's controller writes, per parent, an Accepted condition into the route's
// status.parents: True for every parent of the spec is True; False for any is False (NotAccepted, with that
// controller's reason and message); otherwise Unknown (Pending) until every parent has answered for the
// route's current generation. Without the Gateway API at setup, False (HTTPRouteNotServed).
func HTTPRouteAdmitted(conds []metav1.Condition, st HTTPRouteState, generation int64, now metav1.Time) []metav1.Condition {
	if !st.Wanted {
		meta.RemoveStatusCondition(&conds, conditions.HTTPRouteAdmitted)
		return conds
	}
	c := metav1.Condition{Type: conditions.HTTPRouteAdmitted, ObservedGeneration: generation, LastTransitionTime: now}
	switch {
	case !st.Served:
		c.Status, c.Reason = metav1.ConditionFalse, conditions.ReasonHTTPRouteNotServed
		c.Message = "the cluster did not serve the Gateway API's HTTPRoute (gateway.networking.k8s.io/v1) when the " +
			"operator started, so there is none; once its CRD is installed, restart the operator to pick it up: " + RestartHint
	case st.Route == nil:
		c.Status, c.Reason = metav1.ConditionUnknown, conditions.ReasonHTTPRoutePending
		c.Message = "the HTTPRoute does not exist yet"
	default:
		c.Status, c.Reason, c.Message = parentsAnswer(st.Route, st.Spec)
	}
	meta.SetStatusCondition(&conds, c)
	return conds
}

// parentsAnswer reads the Accepted condition route's status holds for each parent of spec.
func parentsAnswer(route *gatewayv1.HTTPRoute, spec RouteSpec) (metav1.ConditionStatus, string, string) {
	var pending, accepted []string
	for _, p := range spec.Parents {
		name := p.String(route.Namespace)
		acc := acceptedFor(route, p)
		switch {
		case acc == nil || (acc.ObservedGeneration != 0 && acc.ObservedGeneration < route.Generation) ||
			acc.Status == metav1.ConditionUnknown:
			pending = append(pending, name)
		case acc.Status == metav1.ConditionFalse:
			return metav1.ConditionFalse, conditions.ReasonHTTPRouteNotAccepted,
				fmt.Sprintf("%s did not accept HTTPRoute %s: %s: %s", name, route.Name, acc.Reason, acc.Message)
		default:
			accepted = append(accepted, name)
		}
	}
	if len(pending) > 0 {
		return metav1.ConditionUnknown, conditions.ReasonHTTPRoutePending,
			fmt.Sprintf("no answer yet from %s about HTTPRoute %s: is there a controller for its GatewayClass?",
				strings.Join(pending, ", "), route.Name)
	}
	return metav1.ConditionTrue, conditions.ReasonHTTPRouteAccepted,
		fmt.Sprintf("HTTPRoute %s is accepted by %s", route.Name, strings.Join(accepted, ", "))
}

// acceptedFor is the Accepted condition route's status holds for parent p, nil when none.
func acceptedFor(route *gatewayv1.HTTPRoute, p Parent) *metav1.Condition {
	ns := p.Namespace
	if ns == "" {
		ns = route.Namespace
	}
	for i := range route.Status.Parents {
		ps := &route.Status.Parents[i]
		ref := ps.ParentRef
		if string(ref.Name) != p.Name || string(deref(ref.SectionName)) != p.SectionName ||
			(ref.Namespace != nil && string(*ref.Namespace) != ns) || (ref.Namespace == nil && ns != route.Namespace) ||
			(ref.Group != nil && *ref.Group != gatewayv1.GroupName) || (ref.Kind != nil && *ref.Kind != "Gateway") {
			continue
		}
		if c := meta.FindStatusCondition(ps.Conditions, string(gatewayv1.RouteConditionAccepted)); c != nil {
			return c
		}
	}
	return nil
}

func deref[T ~string](p *T) T {
	if p == nil {
		return ""
	}
	return *p
}
