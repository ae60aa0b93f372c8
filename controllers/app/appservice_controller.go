/*
Copyright 2026 The operator101 Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package app

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/operator101/operator101/apis/app/v1"
	"github.com/operator101/operator101/controllers/internal/kit"
)

// The AppService controller reads AppServices and their children from the manager's cache and writes children
// with server-side apply (patch; create when the child does not exist yet). It deletes a Service only when
// the AppService no longer has ports; garbage collection removes the children of a deleted AppService.
//
// +kubebuilder:rbac:groups=app.example.com,resources=appservices,verbs=get;list;watch
// +kubebuilder:rbac:groups=app.example.com,resources=appservices/status,verbs=get;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// AppServiceReconciler makes an AppService's Deployment and Service match its spec, and reports the
// Deployment's progress in the AppService's status.
type AppServiceReconciler struct {
	kit.Base
}

// Reconcile brings one AppService's children to its spec and writes what it observed to its status.
func (r *AppServiceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	a := &appv1.AppService{}
	if err := r.Client.Get(ctx, req.NamespacedName, a); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if a.DeletionTimestamp != nil {
		return ctrl.Result{}, nil // the garbage collector deletes the children
	}

	dep, svc := &appsv1.Deployment{}, &corev1.Service{}
	if err := kit.ReadChildren(ctx, r.Client, "AppService", a, dep, svc); err != nil {
		return ctrl.Result{}, err
	}
	var errs []error
	if desired, err := Deployment(a, r.ProxyEnv); err != nil {
		errs = append(errs, fmt.Errorf("rendering the Deployment: %w", err))
	} else {
		errs = append(errs, kit.ApplyChild(ctx, r.Client, a, "Deployment", dep, desired, appsv1ac.ExtractDeployment))
	}
	if desired := Service(a); desired != nil {
		errs = append(errs, kit.ApplyChild(ctx, r.Client, a, "Service", svc, desired, corev1ac.ExtractService))
	} else if kit.Found(svc) != nil && metav1.IsControlledBy(svc, a) {
		// No ports any more: the Service has nothing to expose.
		err := r.Client.Delete(ctx, svc, client.Preconditions{UID: &svc.UID})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting Service %s/%s, which has no ports left: %w", a.Namespace, a.Name, err))
		}
	}
	applyErr := errors.Join(errs...)

	before := a.DeepCopy()
	a.Status = Status(a, kit.Found(dep), applyErr, metav1.NewTime(r.Clock.Now()))
	return r.ReportRollout(ctx, before, a, before.Status.Conditions, a.Status.Conditions, applyErr)
}

// Status is the status an AppService gets from its Deployment (nil when it does not exist yet) and the
// error of writing its children. Unchanged conditions keep their lastTransitionTime; now is the
// lastTransitionTime of those that change.
func Status(a *appv1.AppService, dep *appsv1.Deployment, applyErr error, now metav1.Time) appv1.AppServiceStatus {
	desired := desiredSize(a)
	where := ""
	if len(a.Spec.Ports) > 0 {
		where = "exposed by Service " + a.Name
	}
	s := appv1.AppServiceStatus{
		ObservedGeneration: a.Generation,
		Conditions: kit.RolloutConditions(a.Status.Conditions, kit.RolloutInput{
			Generation: a.Generation, Desired: desired, Deployment: dep, ApplyErr: applyErr, Where: where, Now: now,
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
	return s
}
