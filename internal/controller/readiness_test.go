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

package controller_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator101/operator101/internal/controller"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/internal/controller/route"
	"github.com/operator101/operator101/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

// Watched names operator101's seven kinds and the six kinds of child the cache holds, and nothing else.
func TestWatched(t *testing.T) {
	watched, err := controller.Watched(controller.CacheOptions(controller.Options{}, reconciler.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, obj := range watched {
		got = append(got, fmt.Sprintf("%T", obj))
	}
	want := []string{"*v1.AppService", "*v1.ConfigMap", "*v1.Deployment", "*v1.Ingress", "*v1.MyWeb", "*v1.Pod", "*v1.PodDisruptionBudget", "*v1.Service",
		"*v1alpha1.AppService", "*v1alpha1.At", "*v1alpha1.Database", "*v1alpha1.DatabaseTarget", "*v1alpha1.DatabaseUser"}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("watched %v, want %v", got, want)
	}

	// Where the cluster serves HTTPRoute, and only there, /readyz waits for HTTPRoutes too.
	watched, err = controller.Watched(controller.CacheOptions(controller.Options{Routes: route.Served{HTTPRoute: true}}, reconciler.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, obj := range watched {
		got = append(got, fmt.Sprintf("%T", obj))
	}
	slices.Sort(got)
	if want = slices.Insert(want, slices.Index(want, "*v1.Ingress"), "*v1.HTTPRoute"); !slices.Equal(got, want) {
		t.Errorf("HTTPRoute served: watched %v, want %v", got, want)
	}
}

// Not ready before the manager's cache has started; ready once it has synced every watched kind; not ready
// while a watched kind cannot be cached.
func TestReadiness(t *testing.T) {
	// As cmd/main.go asks: this API server has no Gateway API, so HTTPRoute is neither cached nor waited for.
	o, err := controller.Discover(controller.Options{Discovery: discovery.NewDiscoveryClientForConfigOrDie(env.Config)})
	if err != nil {
		t.Fatal(err)
	}
	if o.Routes.HTTPRoute {
		t.Fatal("HTTPRoute discovered on an API server without its CRD")
	}
	watched, err := controller.Watched(controller.CacheOptions(o, reconciler.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	ready := func(mgr ctrl.Manager, kinds []client.Object) error {
		return controller.Readiness(mgr, kinds)(httptest.NewRequest("GET", "/readyz", nil))
	}
	var beforeStart error
	memory := reconciler.NewMemory()
	m := env.StartManager(t, nil, func(mgr ctrl.Manager) error {
		beforeStart = ready(mgr, watched)
		return controller.SetupWithManager(mgr, o, memory)
	}, func(co *ctrl.Options) { co.Cache = controller.CacheOptions(o, memory) })
	if beforeStart == nil {
		t.Error("ready before the manager started")
	}
	// The leader's check (this manager leads as soon as it runs: no leader election).
	select {
	case <-m.Elected():
	case <-time.After(30 * time.Second):
		t.Fatal("the manager did not start its controllers")
	}
	testenv.Eventually(t, 30*time.Second, func(g gomega.Gomega) {
		g.Expect(ready(m.Manager, watched)).To(gomega.Succeed())
	})

	missing := &unstructured.Unstructured{}
	missing.SetGroupVersionKind(schema.GroupVersionKind{Group: "missing.example.com", Version: "v1", Kind: "Missing"})
	if err := ready(m.Manager, append(slices.Clone(watched), missing)); err == nil {
		t.Error("ready while a watched kind has no CRD")
	}
}
