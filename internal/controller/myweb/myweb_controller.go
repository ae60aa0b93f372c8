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
	"context"
	"errors"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1ac "sigs.k8s.io/gateway-api/applyconfiguration/apis/v1"

	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/controller/apply"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/internal/controller/rollout"
	"github.com/operator101/operator101/internal/controller/route"
)

// The MyWeb controller reads MyWebs and their children from the manager's cache and writes children with
// server-side apply (patch; create when the child does not exist yet). The cache holds a MyWeb without its
// page (ForCache), so a MyWeb whose children are not converged is read whole from the API server first. It never deletes: garbage collection
// removes the children of a deleted MyWeb through their owner references.
//
// namespace=system makes these rules a Role: the CSV's permissions, which OLM grants only in the namespaces
// the operator is installed for (docs/admin/security.md).
// +kubebuilder:rbac:groups=operator.k8s-summit.org,resources=mywebs,verbs=get;list;watch,namespace=system
// +kubebuilder:rbac:groups=operator.k8s-summit.org,resources=mywebs/status,verbs=get;patch,namespace=system
// finalizers (update): every child's owner reference sets blockOwnerDeletion, which the
// OwnerReferencesPermissionEnforcement admission plugin (on by default in OpenShift) admits only from a user
// who may update the owner's finalizers subresource. The operator sets no finalizer on a MyWeb.
// +kubebuilder:rbac:groups=operator.k8s-summit.org,resources=mywebs/finalizers,verbs=update,namespace=system
// +kubebuilder:rbac:groups="",resources=configmaps;services,verbs=get;list;watch;create;patch,namespace=system
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch,namespace=system
// pods (list): the pods of a Deployment that has unready ones, read to tell a failing readiness probe.
// +kubebuilder:rbac:groups="",resources=pods,verbs=list,namespace=system
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;list;watch;create;patch;delete,namespace=system
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=httproutes,verbs=get;list;watch;create;patch;delete,namespace=system
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch;delete,namespace=system
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch,namespace=system

// MyWebReconciler makes a MyWeb's ConfigMap, Deployment, Service and PodDisruptionBudget match its spec, and reports the Deployment's
// progress in the MyWeb's status.
type MyWebReconciler struct {
	reconciler.Base
	// routes is which route kinds the cluster served at setup (Config).
	routes route.Served
}

// Reconcile brings one MyWeb's children to its spec and writes what it observed to its status.
func (r *MyWebReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &operatorv1.MyWeb{}
	if err := r.Client.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if w.DeletionTimestamp != nil {
		return ctrl.Result{}, nil // the garbage collector deletes the children
	}

	cm, dep, svc, pdb, ing := &corev1.ConfigMap{}, &appsv1.Deployment{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{}, &networkingv1.Ingress{}
	if err := apply.ReadChildren(ctx, r.Client, "MyWeb", w, cm, dep, svc, pdb, ing); err != nil {
		return ctrl.Result{}, err
	}
	children := map[string]client.Object{"ConfigMap": cm, "Deployment": dep, "Service": svc, "PodDisruptionBudget": pdb, "Ingress": ing}
	hr := &gatewayv1.HTTPRoute{}
	if r.routes.HTTPRoute {
		if err := apply.ReadChildren(ctx, r.Client, "MyWeb", w, hr); err != nil {
			return ctrl.Result{}, err
		}
		children["HTTPRoute"] = hr
	}
	// The cache's copy of w has no page (ForCache); it tells whether the children are already what the
	// builders would make of the whole MyWeb. Only when they are not is the MyWeb read whole, past the cache.
	var applyErr error
	if !apply.CachedConverged(r.Memory.Applied, w, children) {
		whole := &operatorv1.MyWeb{}
		if found, err := apply.ReadWhole(ctx, r.Reader, w, whole); err != nil || !found || whole.DeletionTimestamp != nil {
			return ctrl.Result{}, err
		}
		taken := apply.NameTaken(whole.Status.Conditions)
		// The Deployment last: its rollout's events bring the next reconcile, by when the cache should hold
		// the others.
		applyErr = errors.Join(
			apply.Child(ctx, r.Applier(), whole, "ConfigMap", cm, ConfigMap(whole), corev1ac.ExtractConfigMap, taken),
			apply.Child(ctx, r.Applier(), whole, "Service", svc, Service(whole), corev1ac.ExtractService, taken),
			apply.Optional(ctx, r.Applier(), whole, "PodDisruptionBudget", pdb, DisruptionBudget(whole), policyv1ac.ExtractPodDisruptionBudget, taken),
			apply.Optional(ctx, r.Applier(), whole, "Ingress", ing, Ingress(whole), networkingv1ac.ExtractIngress, taken),
			r.applyHTTPRoute(ctx, whole, hr, taken),
			apply.Child(ctx, r.Applier(), whole, "Deployment", dep, Deployment(whole, r.ProxyEnv), appsv1ac.ExtractDeployment, taken))
	}

	if rollout.DeploymentUnseen(dep, applyErr) {
		return rollout.UnseenRetry(), nil
	}
	// Pods that run but do not get ready: a failing readiness probe, which the status names (a lookup past the
	// cache only while some pod is not ready).
	probeFailing, recheck, err := rollout.CheckProbes(ctx, r.Reader, apply.Controlled(dep, w), w.Namespace, podLabels(w.Name), r.Clock.Now())
	if err != nil {
		return ctrl.Result{}, err
	}
	before := w.DeepCopy()
	routeState := route.HTTPRouteState{Served: r.routes.HTTPRoute, Route: apply.Controlled(hr, w)}
	w.Status = Status(w, apply.Controlled(dep, w), apply.Controlled(svc, w), apply.Controlled(ing, w), routeState, probeFailing,
		applyErr, metav1.NewTime(r.Clock.Now()))
	res, err := r.ReportRollout(ctx, before, w, before.Status.Conditions, w.Status.Conditions, applyErr)
	return rollout.RecheckProbes(res, err, recheck)
}

// applyHTTPRoute applies w's HTTPRoute (observed: what the cache holds) where the cluster serves HTTPRoute;
// elsewhere there is none to apply, and the status says so.
func (r *MyWebReconciler) applyHTTPRoute(ctx context.Context, w *operatorv1.MyWeb, observed *gatewayv1.HTTPRoute, taken bool) error {
	if !r.routes.HTTPRoute {
		return nil
	}
	return apply.Optional(ctx, r.Applier(), w, "HTTPRoute", observed, HTTPRoute(w), gatewayv1ac.ExtractHTTPRoute, taken)
}
