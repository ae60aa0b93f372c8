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
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/operator101/operator101/api/conditions"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/controller/health"
	"github.com/operator101/operator101/internal/controller/rollout"
	"github.com/operator101/operator101/internal/controller/route"
)

// desiredReplicas is spec.replicas, 1 when unset (the CRD defaults it, but an object read from an older
// storage version may lack it).
func desiredReplicas(w *operatorv1.MyWeb) int32 {
	if w.Spec.Replicas != nil {
		return *w.Spec.Replicas
	}
	return 1
}

// Status is the status a MyWeb gets from its Deployment, Service and Ingress (nil when they do not exist yet), its
// HTTPRoute (hr: whether the cluster serves HTTPRoute, and the route observed; Status fills in the rest), the pods
// that fail their readiness probe (rollout.ProbeFailures; empty when none) and the error
// of writing its children (nil when they match the spec). Unchanged conditions keep their lastTransitionTime;
// now is the lastTransitionTime of those that change.
func Status(w *operatorv1.MyWeb, dep *appsv1.Deployment, svc *corev1.Service, ing *networkingv1.Ingress, hr route.HTTPRouteState,
	probeFailing string, applyErr error, now metav1.Time) operatorv1.MyWebStatus {
	desired := desiredReplicas(w)
	url := URL(w, svc)
	if w.Spec.Ingress != nil {
		url = route.URL(routeSpec(w))
	}
	s := operatorv1.MyWebStatus{
		ObservedGeneration: w.Generation,
		Conditions: rollout.Conditions(w.Status.Conditions, rollout.Input{
			Generation: w.Generation, Desired: desired, Deployment: dep, ApplyErr: applyErr,
			Where: "the page is served at " + url, Now: now, ProbeFailing: probeFailing,
		}),
		URL:      url,
		Selector: labels.SelectorFromSet(podLabels(w.Name)).String(),
	}
	if dep != nil {
		s.Replicas = dep.Status.Replicas
		s.ReadyReplicas = dep.Status.ReadyReplicas
	}
	s.Ready = fmt.Sprintf("%d/%d", s.ReadyReplicas, desired)
	s.Completed = meta.IsStatusConditionTrue(s.Conditions, conditions.Available)
	if w.Spec.Ingress != nil {
		s.Conditions = route.Admitted(s.Conditions, true, ing, routeSpec(w), w.Generation, now)
	} else {
		s.Conditions = route.Admitted(s.Conditions, false, nil, route.Spec{}, w.Generation, now)
	}
	hr.Wanted = w.Spec.HTTPRoute != nil
	if hr.Wanted {
		hr.Spec = httpRouteSpec(w)
	}
	s.Conditions = route.HTTPRouteAdmitted(s.Conditions, hr, w.Generation, now)
	s.Conditions = health.Set(s.Conditions, w.Generation, health.Rollout(s.Conditions), now)
	return s
}
