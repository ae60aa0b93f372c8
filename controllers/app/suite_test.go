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

package app_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/operator101/operator101/api/app/v1"
	"github.com/operator101/operator101/controllers/app"
	"github.com/operator101/operator101/controllers/internal/apply"
	"github.com/operator101/operator101/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

const timeout = 30 * time.Second

var ctx = context.Background()

// startOperator runs the AppService controller in a manager on cfg (env.Config when nil), with the cache
// transform of the real manager.
func startOperator(t *testing.T, cfg *rest.Config) (*testenv.Manager, *testenv.Reconciles) {
	t.Helper()
	rec := testenv.NewReconciles()
	mgr := env.StartManager(t, cfg, func(mgr ctrl.Manager) error {
		return app.Setup(mgr, 2, app.WithReconciled(rec.Add))
	}, func(o *ctrl.Options) { o.Cache = cache.Options{DefaultTransform: apply.TrimForCache} })
	return mgr, rec
}

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "appservice-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func eventually(t *testing.T, f func(g gomega.Gomega)) {
	t.Helper()
	gomega.NewWithT(t).Eventually(f).WithTimeout(timeout).WithPolling(50 * time.Millisecond).Should(gomega.Succeed())
}

func getApp(g gomega.Gomega, key types.NamespacedName) *appv1.AppService {
	a := &appv1.AppService{}
	g.Expect(env.Client.Get(ctx, key, a)).To(gomega.Succeed())
	return a
}

func patchApp(t *testing.T, key types.NamespacedName, f func(*appv1.AppService)) {
	t.Helper()
	a := &appv1.AppService{}
	if err := env.Client.Get(ctx, key, a); err != nil {
		t.Fatal(err)
	}
	before := a.DeepCopy()
	f(a)
	if err := env.Client.Patch(ctx, a, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

// setDeploymentStatus plays the Deployment controller, which envtest does not run.
func setDeploymentStatus(t *testing.T, key types.NamespacedName, f func(*appsv1.DeploymentStatus, *appsv1.Deployment)) {
	t.Helper()
	dep := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, key, dep); err != nil {
		t.Fatal(err)
	}
	f(&dep.Status, dep)
	if err := env.Client.Status().Update(ctx, dep); err != nil {
		t.Fatal(err)
	}
}

// markAvailable writes the status of a Deployment whose pods all run and are ready.
func markAvailable(t *testing.T, key types.NamespacedName) {
	t.Helper()
	setDeploymentStatus(t, key, func(s *appsv1.DeploymentStatus, d *appsv1.Deployment) {
		n := *d.Spec.Replicas
		*s = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
			}}
	})
}

// events lists "type reason" of the Events about an AppService.
func events(g gomega.Gomega, ns, name string) []string {
	list := &eventsv1.EventList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(gomega.Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "AppService" && e.Regarding.Name == name {
			out = append(out, e.Type+" "+e.Reason)
		}
	}
	return out
}

// waitQuiet waits until the writes have stopped: the counter does not move across a reconcile of key (poked
// through an annotation).
func waitQuiet(t *testing.T, rec *testenv.Reconciles, key types.NamespacedName, counter *testenv.Counter) {
	t.Helper()
	testenv.WaitQuiet(t, rec, key, counter, func() {
		patchApp(t, key, func(o *appv1.AppService) {
			if o.Annotations == nil {
				o.Annotations = map[string]string{}
			}
			o.Annotations["poke"] += "x"
		})
	}, timeout)
}
