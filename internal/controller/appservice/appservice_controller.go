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
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1ac "sigs.k8s.io/gateway-api/applyconfiguration/apis/v1"

	appv1 "github.com/operator101/operator101/api/app/v1"
	batchv1alpha1 "github.com/operator101/operator101/api/batch/v1alpha1"
	"github.com/operator101/operator101/internal/controller/apply"
	"github.com/operator101/operator101/internal/controller/health"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/internal/controller/rollout"
	"github.com/operator101/operator101/internal/controller/route"
)

// The AppService controller serves both AppService APIs, app.example.com/v1 and batch.schwarzeni.github.com/v1alpha1,
// with one reconcile: it works on the app.example.com/v1 form of an object (apiOf), so the builders and the
// status are the same for both. It reads AppServices and their children from the manager's cache and writes children
// with server-side apply (patch; create when the child does not exist yet). It deletes a Service only when
// the AppService no longer has ports; garbage collection removes the children of a deleted AppService.
//
// namespace=system makes these rules a Role: the CSV's permissions, which OLM grants only in the namespaces
// the operator is installed for (docs/admin/security.md).
// +kubebuilder:rbac:groups=app.example.com,resources=appservices,verbs=get;list;watch,namespace=system
// +kubebuilder:rbac:groups=app.example.com,resources=appservices/status,verbs=get;patch,namespace=system
// +kubebuilder:rbac:groups=batch.schwarzeni.github.com,resources=appservices,verbs=get;list;watch,namespace=system
// +kubebuilder:rbac:groups=batch.schwarzeni.github.com,resources=appservices/status,verbs=get;patch,namespace=system
// finalizers (update): every child's owner reference sets blockOwnerDeletion, which the
// OwnerReferencesPermissionEnforcement admission plugin (on by default in OpenShift) admits only from a user
// who may update the owner's finalizers subresource. The operator sets no finalizer on an AppService.
// +kubebuilder:rbac:groups=app.example.com,resources=appservices/finalizers,verbs=update,namespace=system
// +kubebuilder:rbac:groups=batch.schwarzeni.github.com,resources=appservices/finalizers,verbs=update,namespace=system
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch;delete,namespace=system
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch,namespace=system
// pods (list): the pods of a Deployment that has unready ones, read to tell a failing readiness probe.
// +kubebuilder:rbac:groups="",resources=pods,verbs=list,namespace=system
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;list;watch;create;patch;delete,namespace=system
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=httproutes,verbs=get;list;watch;create;patch;delete,namespace=system
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch;delete,namespace=system
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch,namespace=system

// AppServiceReconciler makes an AppService's Deployment and Service match its spec, and reports the
// Deployment's progress in the AppService's status; T is the API it serves.
type AppServiceReconciler[T client.Object] struct {
	reconciler.Base
	api apiOf[T]
	// routes is which route kinds the cluster served at setup (Config).
	routes route.Served
}

// apiOf is what the reconcile needs to know of one AppService API.
type apiOf[T client.Object] struct {
	new func() T
	// view is the object in the app.example.com/v1 form that the builders and Status take, carrying its own
	// apiVersion (the children's owner references name it). It shares the object's maps: read only.
	view func(T) *appv1.AppService
	// status is where the object keeps its status.
	status func(T) *appv1.AppServiceStatus
}

// v1API is app.example.com/v1: already the form the reconcile works on.
var v1API = apiOf[*appv1.AppService]{
	new:    func() *appv1.AppService { return &appv1.AppService{} },
	view:   func(a *appv1.AppService) *appv1.AppService { return a },
	status: func(a *appv1.AppService) *appv1.AppServiceStatus { return &a.Status },
}

// batchAPI is batch.schwarzeni.github.com/v1alpha1: replicas is v1's size, the rest is the same.
var batchAPI = apiOf[*batchv1alpha1.AppService]{
	new: func() *batchv1alpha1.AppService { return &batchv1alpha1.AppService{} },
	view: func(b *batchv1alpha1.AppService) *appv1.AppService {
		return &appv1.AppService{
			TypeMeta:   metav1.TypeMeta{APIVersion: batchv1alpha1.GroupVersion.String(), Kind: "AppService"},
			ObjectMeta: b.ObjectMeta,
			Spec:       appv1.AppServiceSpec{Size: b.Spec.Replicas, Application: b.Spec.Application},
			Status:     b.Status,
		}
	},
	status: func(b *batchv1alpha1.AppService) *appv1.AppServiceStatus { return &b.Status },
}

// Reconcile brings one AppService's children to its spec and writes what it observed to its status.
func (r *AppServiceReconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.api.new()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if obj.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil // the garbage collector deletes the children
	}
	a := r.api.view(obj)

	dep, svc, pdb, ing := &appsv1.Deployment{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{}, &networkingv1.Ingress{}
	if err := apply.ReadChildren(ctx, r.Client, "AppService", a, dep, svc, pdb, ing); err != nil {
		return ctrl.Result{}, err
	}
	children := map[string]client.Object{"Deployment": dep, "Service": svc, "PodDisruptionBudget": pdb, "Ingress": ing}
	hr := &gatewayv1.HTTPRoute{}
	if r.routes.HTTPRoute {
		if err := apply.ReadChildren(ctx, r.Client, "AppService", a, hr); err != nil {
			return ctrl.Result{}, err
		}
		children["HTTPRoute"] = hr
	}
	// The cache's copy of the object has no environment (ForCache); it tells whether the children are already
	// what the builders would make of the whole object. Only when they are not is it read whole.
	var errs []error
	if !apply.CachedConverged(r.Memory.Applied, a, children) {
		whole := r.api.new()
		if found, err := apply.ReadWhole(ctx, r.Reader, obj, whole); err != nil || !found || whole.GetDeletionTimestamp() != nil {
			return ctrl.Result{}, err
		}
		errs = r.apply(ctx, r.api.view(whole), dep, svc, pdb, ing, hr)
	}
	applyErr := errors.Join(errs...)

	if rollout.DeploymentUnseen(dep, applyErr) {
		return rollout.UnseenRetry(), nil
	}
	// Pods that run but do not get ready: a failing readiness probe, which the status names (a lookup past the
	// cache only while some pod is not ready).
	probeFailing, recheck, err := rollout.CheckProbes(ctx, r.Reader, apply.Controlled(dep, a), a.Namespace, podLabels(a.Name), r.Clock.Now())
	if err != nil {
		return ctrl.Result{}, err
	}
	before := obj.DeepCopyObject().(T)
	routeState := route.HTTPRouteState{Served: r.routes.HTTPRoute, Route: apply.Controlled(hr, a)}
	*r.api.status(obj) = Status(a, apply.Controlled(dep, a), apply.Controlled(ing, a), routeState, probeFailing, applyErr,
		metav1.NewTime(r.Clock.Now()))
	res, err := r.ReportRollout(ctx, before, obj, r.api.status(before).Conditions, r.api.status(obj).Conditions, applyErr)
	return rollout.RecheckProbes(res, err, recheck)
}

// apply applies a's children unless they already match (dep, svc and pdb are what the cache holds), and deletes
// the Service when a has no ports and the PodDisruptionBudget when it wants one pod or none. The HTTPRoute (hr) is
// applied only where the cluster serves HTTPRoute.
func (r *AppServiceReconciler[T]) apply(ctx context.Context, a *appv1.AppService, dep *appsv1.Deployment, svc *corev1.Service,
	pdb *policyv1.PodDisruptionBudget, ing *networkingv1.Ingress, hr *gatewayv1.HTTPRoute) []error {
	var errs []error
	taken := apply.NameTaken(a.Status.Conditions)
	if desired := Service(a); desired != nil {
		errs = append(errs, apply.Child(ctx, r.Applier(), a, "Service", svc, desired, corev1ac.ExtractService, taken))
	} else if apply.Controlled(svc, a) != nil {
		// No ports any more: the Service has nothing to expose.
		err := r.Client.Delete(ctx, svc, client.Preconditions{UID: &svc.UID})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting Service %s/%s, which has no ports left: %w", a.Namespace, a.Name, err))
		}
	}
	errs = append(errs, apply.Optional(ctx, r.Applier(), a, "PodDisruptionBudget", pdb, DisruptionBudget(a), policyv1ac.ExtractPodDisruptionBudget, taken),
		apply.Optional(ctx, r.Applier(), a, "Ingress", ing, Ingress(a), networkingv1ac.ExtractIngress, taken))
	if r.routes.HTTPRoute {
		errs = append(errs, apply.Optional(ctx, r.Applier(), a, "HTTPRoute", hr, HTTPRoute(a), gatewayv1ac.ExtractHTTPRoute, taken))
	}
	// The Deployment last: its rollout's events bring the next reconcile, by when the cache should hold the
	// Service.
	if desired, err := Deployment(a, r.ProxyEnv); err != nil {
		errs = append(errs, fmt.Errorf("rendering the Deployment: %w", err))
	} else {
		errs = append(errs, apply.Child(ctx, r.Applier(), a, "Deployment", dep, desired, appsv1ac.ExtractDeployment, taken))
	}
	return errs
}

// Status is the status an AppService gets from its Deployment and Ingress (nil when they do not exist yet), its
// HTTPRoute (hr: whether the cluster serves HTTPRoute, and the route observed; Status fills in the rest), the pods that
// fail their readiness probe (rollout.ProbeFailures; empty when none) and the error of writing its children. Unchanged conditions keep their lastTransitionTime; now is the
// lastTransitionTime of those that change.
func Status(a *appv1.AppService, dep *appsv1.Deployment, ing *networkingv1.Ingress, hr route.HTTPRouteState, probeFailing string,
	applyErr error, now metav1.Time) appv1.AppServiceStatus {
	desired := desiredSize(a)
	where := ""
	if len(a.Spec.Ports) > 0 {
		where = "exposed by Service " + a.Name
	}
	s := appv1.AppServiceStatus{
		ObservedGeneration: a.Generation,
		Conditions: rollout.Conditions(a.Status.Conditions, rollout.Input{
			Generation: a.Generation, Desired: desired, Deployment: dep, ApplyErr: applyErr, Where: where, Now: now,
			ProbeFailing: probeFailing,
		}),
		Selector: selector(a.Name),
	}
	if dep != nil {
		s.Replicas = dep.Status.Replicas
		s.ReadyReplicas = dep.Status.ReadyReplicas
		s.AvailableReplicas = dep.Status.AvailableReplicas
		s.UpdatedReplicas = dep.Status.UpdatedReplicas
		s.UnavailableReplicas = dep.Status.UnavailableReplicas
	}
	s.Ready = fmt.Sprintf("%d/%d", s.ReadyReplicas, desired)
	if a.Spec.Ingress != nil {
		s.Conditions = route.Admitted(s.Conditions, true, ing, routeSpec(a), a.Generation, now)
	} else {
		s.Conditions = route.Admitted(s.Conditions, false, nil, route.Spec{}, a.Generation, now)
	}
	hr.Wanted = a.Spec.HTTPRoute != nil
	if hr.Wanted {
		hr.Spec = httpRouteSpec(a)
	}
	s.Conditions = route.HTTPRouteAdmitted(s.Conditions, hr, a.Generation, now)
	s.Conditions = health.Set(s.Conditions, a.Generation, health.Rollout(s.Conditions), now)
	return s
}
