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

// Command lowerbound is the bench's lower bound: a plain client-go program that does, for every MyWeb and
// AppService of a bench size, the API work that brings it to Available, with nothing in between: create the
// object, server-side apply its children (the operator's own builders, so the same objects), mark the
// Deployment available (what the bench's stand-in kubelet does in the operator's run) and write one
// status-sized status patch. No cache, no watch, no client-side rate limit (QPS -1). It prints one JSON line.
//
// With -design it makes, besides, the requests operator101's design adds for every object: the read of the
// object whole past the cache (the cache holds it without its page or environment) and the one Event of a new
// object. It is the lower bound of the design,
// where the plain one is the lower bound of the work; the two ratios separate what the design costs from what
// the manager adds on top of it (docs/contributing/performance.md).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	appv1 "github.com/operator101/operator101/api/app/v1"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/controller/appservice"
	"github.com/operator101/operator101/internal/controller/myweb"
	"github.com/operator101/operator101/internal/controller/route"
	"github.com/operator101/operator101/internal/proxyenv"
	"github.com/operator101/operator101/test/bench/benchutil"
)

// Result is what the program prints.
type Result struct {
	Workers  int     `json:"workers"`
	Objects  int     `json:"objects"`
	Requests int64   `json:"requests"`
	Seconds  float64 `json:"seconds"`
	// Done is when each object got its status (seconds from the start, ascending): the chart's curve.
	Done []float64 `json:"done"`
	// ToAvailable is, per object, the time from the start of its create to its last status write (seconds,
	// ascending).
	ToAvailable []float64 `json:"toAvailable"`
	Design      bool      `json:"design,omitempty"`
}

var (
	mywebsGVR = operatorv1.GroupVersion.WithResource("mywebs")
	appsGVR   = appv1.GroupVersion.WithResource("appservices")
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "lowerbound: %v\n", err)
		os.Exit(1)
	}
}

type lb struct {
	ns       string
	plan     benchutil.Plan
	cs       *kubernetes.Clientset
	dyn      dynamic.Interface
	requests atomic.Int64
	start    time.Time
	design   bool
	mu       sync.Mutex
	done     []float64
	took     []float64
}

// finished records that the object whose create started at began has its status.
func (l *lb) finished(began time.Time) {
	now := time.Now()
	l.mu.Lock()
	l.done = append(l.done, now.Sub(l.start).Seconds())
	l.took = append(l.took, now.Sub(began).Seconds())
	l.mu.Unlock()
}

func run() error {
	// Its own flag set: controller-runtime, imported through the builders, registers -kubeconfig globally.
	fs := flag.NewFlagSet("lowerbound", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the API server")
	ns := fs.String("namespace", "lowerbound", "namespace (must exist)")
	n := fs.Int("n", 1000, "bench size (see benchutil.PlanFor)")
	workers := fs.Int("workers", 8, "objects worked on at once")
	design := fs.Bool("design", false, "also the read past the cache and the Event operator101 makes per object")
	_ = fs.Parse(os.Args[1:])

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fmt.Errorf("loading %s: %w", *kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit
	l := &lb{ns: *ns, plan: benchutil.PlanFor(*n), design: *design}
	if l.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if l.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}

	jobs := make(chan func(context.Context) error)
	errs := make(chan error, *workers)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	l.start = start
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range jobs {
				if err := job(ctx); err != nil {
					select {
					case errs <- err:
					default:
					}
					cancel()
				}
			}
		}()
	}
	// MyWebs and AppServices interleaved, as the bench creates them for the operator.
feed:
	for i := range max(l.plan.MyWebs, l.plan.AppServices) {
		for _, job := range []func(context.Context) error{
			func(ctx context.Context) error { return l.myweb(ctx, i) },
			func(ctx context.Context) error { return l.appService(ctx, i) },
		} {
			select {
			case jobs <- job:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	wg.Wait()
	elapsed := time.Since(start)
	select {
	case err := <-errs:
		return err
	default:
	}
	sort.Float64s(l.done)
	sort.Float64s(l.took)
	return json.NewEncoder(os.Stdout).Encode(Result{Workers: *workers, Objects: l.plan.Objects(),
		Requests: l.requests.Load(), Seconds: elapsed.Seconds(), Done: l.done, ToAvailable: l.took, Design: l.design})
}

var apply = metav1.ApplyOptions{FieldManager: "operator101", Force: true}

// create creates obj (a typed API object) through the dynamic client and fills it with the answer.
func (l *lb) create(ctx context.Context, gvr schema.GroupVersionResource, kind string, obj runtime.Object) error {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u["apiVersion"], u["kind"] = gvr.GroupVersion().String(), kind
	l.requests.Add(1)
	got, err := l.dyn.Resource(gvr).Namespace(l.ns).Create(ctx, &unstructured.Unstructured{Object: u}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating %s: %w", gvr.Resource, err)
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object, obj)
}

// readWhole is, with -design, the read of a new object whole past the cache, as the manager makes it
// (apply.ReadWhole): a version not older than the one created, which kube-apiserver answers from its watch cache.
func (l *lb) readWhole(ctx context.Context, gvr schema.GroupVersionResource, name, resourceVersion string) error {
	if !l.design {
		return nil
	}
	l.requests.Add(1)
	if _, err := l.dyn.Resource(gvr).Namespace(l.ns).Get(ctx, name, metav1.GetOptions{ResourceVersion: resourceVersion}); err != nil {
		return fmt.Errorf("reading %s %s: %w", gvr.Resource, name, err)
	}
	return nil
}

// event is, with -design, the Event of a new object (operator101's Available).
func (l *lb) event(ctx context.Context, kind, apiVersion, name string) error {
	if !l.design {
		return nil
	}
	l.requests.Add(1)
	now := metav1.NowMicro()
	_, err := l.cs.EventsV1().Events(l.ns).Create(ctx, &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", name, now.UnixNano())}, // as client-go names Events
		EventTime:           now,
		ReportingController: "operator101.io/lowerbound",
		ReportingInstance:   "lowerbound",
		Action:              "Reconcile",
		Reason:              "Available",
		Regarding:           corev1.ObjectReference{Kind: kind, APIVersion: apiVersion, Namespace: l.ns, Name: name},
		Note:                "every replica is available",
		Type:                corev1.EventTypeNormal,
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("event of %s %s: %w", kind, name, err)
	}
	return nil
}

// markAvailable does the stand-in kubelet's write.
func (l *lb) markAvailable(ctx context.Context, dep *appsv1.Deployment) error {
	l.requests.Add(1)
	_, err := l.cs.AppsV1().Deployments(l.ns).Patch(ctx, dep.Name, types.MergePatchType,
		benchutil.AvailableStatusPatch(dep, metav1.Now()), metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("marking deployment %s available: %w", dep.Name, err)
	}
	return nil
}

// status writes the status of a MyWeb or AppService, as a merge patch of the status subresource.
func (l *lb) status(ctx context.Context, gvr schema.GroupVersionResource, name string, status any) error {
	b, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	l.requests.Add(1)
	if _, err := l.dyn.Resource(gvr).Namespace(l.ns).Patch(ctx, name, types.MergePatchType, b, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("writing the status of %s %s: %w", gvr.Resource, name, err)
	}
	return nil
}

func (l *lb) myweb(ctx context.Context, i int) error {
	if i >= l.plan.MyWebs {
		return nil
	}
	w := l.plan.MyWeb(l.ns, i)
	began := time.Now()
	if err := l.create(ctx, mywebsGVR, "MyWeb", w); err != nil {
		return err
	}
	if err := l.readWhole(ctx, mywebsGVR, w.Name, w.ResourceVersion); err != nil {
		return err
	}
	cms, deps, svcs := l.cs.CoreV1().ConfigMaps(l.ns), l.cs.AppsV1().Deployments(l.ns), l.cs.CoreV1().Services(l.ns)
	l.requests.Add(1)
	if _, err := cms.Apply(ctx, myweb.ConfigMap(w), apply); err != nil {
		return fmt.Errorf("configmap %s: %w", w.Name, err)
	}
	l.requests.Add(1)
	dep, err := deps.Apply(ctx, myweb.Deployment(w, proxyenv.Env{}), apply)
	if err != nil {
		return fmt.Errorf("deployment %s: %w", w.Name, err)
	}
	l.requests.Add(1)
	if _, err := svcs.Apply(ctx, myweb.Service(w), apply); err != nil {
		return fmt.Errorf("service %s: %w", w.Name, err)
	}
	if err := l.markAvailable(ctx, dep); err != nil {
		return err
	}
	avail := dep.DeepCopy()
	avail.Status = appsv1.DeploymentStatus{}
	_ = json.Unmarshal(benchutil.AvailableStatusPatch(dep, metav1.Now()), &struct {
		Status *appsv1.DeploymentStatus `json:"status"`
	}{&avail.Status})
	// The status the operator computes, from the same function.
	if err := l.status(ctx, mywebsGVR, w.Name, myweb.Status(w, avail, nil, nil, route.HTTPRouteState{}, "", nil, metav1.Now())); err != nil {
		return err
	}
	l.finished(began)
	return l.event(ctx, "MyWeb", operatorv1.GroupVersion.String(), w.Name)
}

func (l *lb) appService(ctx context.Context, i int) error {
	if i >= l.plan.AppServices {
		return nil
	}
	a := l.plan.AppService(l.ns, i)
	began := time.Now()
	if err := l.create(ctx, appsGVR, "AppService", a); err != nil {
		return err
	}
	if err := l.readWhole(ctx, appsGVR, a.Name, a.ResourceVersion); err != nil {
		return err
	}
	desired, err := appservice.Deployment(a, proxyenv.Env{})
	if err != nil {
		return err
	}
	deps, svcs := l.cs.AppsV1().Deployments(l.ns), l.cs.CoreV1().Services(l.ns)
	l.requests.Add(1)
	dep, err := deps.Apply(ctx, desired, apply)
	if err != nil {
		return fmt.Errorf("deployment %s: %w", a.Name, err)
	}
	if svc := appservice.Service(a); svc != nil {
		l.requests.Add(1)
		if _, err := svcs.Apply(ctx, svc, apply); err != nil {
			return fmt.Errorf("service %s: %w", a.Name, err)
		}
	}
	if err := l.markAvailable(ctx, dep); err != nil {
		return err
	}
	avail := dep.DeepCopy()
	_ = json.Unmarshal(benchutil.AvailableStatusPatch(dep, metav1.Now()), &struct {
		Status *appsv1.DeploymentStatus `json:"status"`
	}{&avail.Status})
	if err := l.status(ctx, appsGVR, a.Name, appservice.Status(a, avail, nil, route.HTTPRouteState{}, "", nil, metav1.Now())); err != nil {
		return err
	}
	l.finished(began)
	return l.event(ctx, "AppService", appv1.GroupVersion.String(), a.Name)
}
