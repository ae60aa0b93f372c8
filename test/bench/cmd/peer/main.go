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

// Command peer is the bench's peer contender: a MyWeb and AppService controller written the way tutorials
// write theirs, to set operator101's figures beside. Every reconcile reads the object, runs
// controllerutil.CreateOrUpdate on each child (the child's fields set in a mutate function, the owner set with
// SetControllerReference) and updates the status (Status().Update), whether anything changed or not. It keeps
// controller-runtime's defaults: the client as ctrl.GetConfig makes it (no client-side rate limit), one worker
// per controller, a cache of every ConfigMap, Deployment and Service of the watched namespace, whole. It is not
// operator101 and is not shipped: it lives in test/bench only. It takes the manager's flags that the bench
// passes (addresses, leader election) and WATCH_NAMESPACE.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	appv1 "github.com/operator101/operator101/api/app/v1"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "peer: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	fs := flag.NewFlagSet("peer", flag.ExitOnError)
	metricsAddr := fs.String("metrics-bind-address", ":8080", "metrics address")
	probeAddr := fs.String("health-probe-bind-address", ":8081", "probe address")
	pprofAddr := fs.String("pprof-bind-address", "", "pprof address")
	leaderElect := fs.Bool("leader-elect", false, "ignored: the bench runs one replica")
	_ = fs.Bool("metrics-secure", false, "ignored: metrics are plain HTTP")
	_ = leaderElect
	_ = fs.Parse(os.Args[1:])
	ctrl.SetLogger(zap.New())

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(operatorv1.AddToScheme(scheme))
	utilruntime.Must(appv1.AddToScheme(scheme))
	opts := ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: *metricsAddr},
		HealthProbeBindAddress: *probeAddr,
	}
	if ns := os.Getenv("WATCH_NAMESPACE"); ns != "" {
		opts.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), opts)
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if *pprofAddr != "" {
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		srv := &http.Server{Addr: *pprofAddr, Handler: mux}
		go func() { _ = srv.ListenAndServe() }()
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	if err := ctrl.NewControllerManagedBy(mgr).For(&operatorv1.MyWeb{}).
		Owns(&corev1.ConfigMap{}).Owns(&appsv1.Deployment{}).Owns(&corev1.Service{}).
		Complete(&webReconciler{Client: mgr.GetClient(), scheme: scheme}); err != nil {
		return fmt.Errorf("MyWeb controller: %w", err)
	}
	if err := ctrl.NewControllerManagedBy(mgr).For(&appv1.AppService{}).
		Owns(&appsv1.Deployment{}).Owns(&corev1.Service{}).
		Complete(&appReconciler{Client: mgr.GetClient(), scheme: scheme}); err != nil {
		return fmt.Errorf("AppService controller: %w", err)
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

func labels(kind, name string) map[string]string {
	return map[string]string{"app.kubernetes.io/name": kind, "app.kubernetes.io/instance": name}
}

// availableCondition is the tutorial's Available condition from the Deployment's status.
func availableCondition(dep *appsv1.Deployment, desired, generation int64) metav1.Condition {
	c := metav1.Condition{Type: "Available", Status: metav1.ConditionFalse, Reason: "RollingOut",
		Message: "waiting for the deployment", ObservedGeneration: generation}
	if dep.Status.ObservedGeneration >= dep.Generation && int64(dep.Status.AvailableReplicas) >= desired {
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, "DeploymentAvailable", "all replicas are available"
	}
	return c
}

type webReconciler struct {
	client.Client
	scheme *runtime.Scheme
}

func (r *webReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &operatorv1.MyWeb{}
	if err := r.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	l := labels("myweb", w.Name)
	replicas := int32(1)
	if w.Spec.Replicas != nil {
		replicas = *w.Spec.Replicas
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Labels = l
		cm.Data = map[string]string{"index.html": w.Spec.PageContentHtml}
		return controllerutil.SetControllerReference(w, cm, r.scheme)
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("configmap: %w", err)
	}

	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, dep, func() error {
		dep.Labels = l
		dep.Spec.Replicas = &replicas
		dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: l}
		dep.Spec.Template.Labels = l
		dep.Spec.Template.Spec.Containers = []corev1.Container{{
			Name: "web", Image: w.Spec.Image,
			Ports:        []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
			VolumeMounts: []corev1.VolumeMount{{Name: "page", MountPath: "/usr/share/nginx/html", ReadOnly: true}},
		}}
		dep.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "page", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: w.Name}}}}}
		return controllerutil.SetControllerReference(w, dep, r.scheme)
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("deployment: %w", err)
	}

	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, svc, func() error {
		svc.Labels = l
		svc.Spec.Type = corev1.ServiceTypeNodePort
		svc.Spec.Selector = l
		svc.Spec.Ports = []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80,
			TargetPort: intstr.FromString("http"), NodePort: w.Spec.NodePortNumber}}
		return controllerutil.SetControllerReference(w, svc, r.scheme)
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("service: %w", err)
	}

	w.Status.ObservedGeneration = w.Generation
	w.Status.Replicas, w.Status.ReadyReplicas = dep.Status.Replicas, dep.Status.ReadyReplicas
	w.Status.Ready = fmt.Sprintf("%d/%d", dep.Status.ReadyReplicas, replicas)
	w.Status.URL = fmt.Sprintf("http://NODE:%d/", w.Spec.NodePortNumber)
	meta.SetStatusCondition(&w.Status.Conditions, availableCondition(dep, int64(replicas), w.Generation))
	w.Status.Completed = meta.IsStatusConditionTrue(w.Status.Conditions, "Available")
	if err := r.Status().Update(ctx, w); err != nil {
		return ctrl.Result{}, fmt.Errorf("status: %w", err)
	}
	return ctrl.Result{}, nil
}

type appReconciler struct {
	client.Client
	scheme *runtime.Scheme
}

func (r *appReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	a := &appv1.AppService{}
	if err := r.Get(ctx, req.NamespacedName, a); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	l := labels("appservice", a.Name)
	size := int32(1)
	if a.Spec.Size != nil {
		size = *a.Spec.Size
	}

	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: a.Name, Namespace: a.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, dep, func() error {
		dep.Labels = l
		dep.Spec.Replicas = &size
		dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: l}
		dep.Spec.Template.Labels = l
		c := corev1.Container{Name: "app", Image: a.Spec.Image, Resources: a.Spec.Resources}
		for _, e := range a.Spec.Envs {
			c.Env = append(c.Env, corev1.EnvVar{Name: e.Name, Value: e.Value, ValueFrom: e.ValueFrom})
		}
		for _, p := range a.Spec.Ports {
			target := p.Port
			if p.TargetPort != nil {
				target = *p.TargetPort
			}
			c.Ports = append(c.Ports, corev1.ContainerPort{ContainerPort: target, Protocol: corev1.Protocol(p.Protocol)})
		}
		dep.Spec.Template.Spec.Containers = []corev1.Container{c}
		return controllerutil.SetControllerReference(a, dep, r.scheme)
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("deployment: %w", err)
	}

	if len(a.Spec.Ports) > 0 {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: a.Name, Namespace: a.Namespace}}
		if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, svc, func() error {
			svc.Labels = l
			svc.Spec.Type = corev1.ServiceTypeNodePort
			svc.Spec.Selector = l
			svc.Spec.Ports = nil
			for _, p := range a.Spec.Ports {
				target := p.Port
				if p.TargetPort != nil {
					target = *p.TargetPort
				}
				svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: p.Name, Protocol: corev1.Protocol(p.Protocol),
					Port: p.Port, TargetPort: intstr.FromInt32(target), NodePort: p.NodePort})
			}
			return controllerutil.SetControllerReference(a, svc, r.scheme)
		}); err != nil {
			return ctrl.Result{}, fmt.Errorf("service: %w", err)
		}
	}

	a.Status.ObservedGeneration = a.Generation
	a.Status.Replicas, a.Status.ReadyReplicas = dep.Status.Replicas, dep.Status.ReadyReplicas
	a.Status.AvailableReplicas, a.Status.UpdatedReplicas = dep.Status.AvailableReplicas, dep.Status.UpdatedReplicas
	a.Status.UnavailableReplicas = dep.Status.UnavailableReplicas
	a.Status.Ready = fmt.Sprintf("%d/%d", dep.Status.ReadyReplicas, size)
	meta.SetStatusCondition(&a.Status.Conditions, availableCondition(dep, int64(size), a.Generation))
	if err := r.Status().Update(ctx, a); err != nil {
		return ctrl.Result{}, fmt.Errorf("status: %w", err)
	}
	return ctrl.Result{}, nil
}
