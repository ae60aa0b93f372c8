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

package appservice_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	appv1 "github.com/operator101/operator101/api/app/v1"
	"github.com/operator101/operator101/internal/controller/appservice"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/internal/controller/route"
	"github.com/operator101/operator101/test/testenv"
	"github.com/operator101/operator101/test/webkindtest"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

const timeout = 30 * time.Second

var ctx = context.Background()

// app is the AppService (app.example.com) for test/webkindtest: app().Start runs the controllers of both
// AppService APIs, and the checks the MyWeb suite shares take it.
func app() webkindtest.Kind[*appv1.AppService] {
	setup := func(mgr ctrl.Manager, o reconciler.Options, routes route.Served) error {
		return appservice.Setup(mgr, o, appservice.Config{Routes: routes})
	}
	return webkindtest.Kind[*appv1.AppService]{Env: env, Name: "AppService", Resource: "appservices", Setup: setup,
		Conditions: conditionsOf}
}

// conditionsOf reads the conditions of the AppService key.
func conditionsOf(g gomega.Gomega, key types.NamespacedName) []metav1.Condition {
	return getApp(g, key).Status.Conditions
}

func getApp(g gomega.Gomega, key types.NamespacedName) *appv1.AppService {
	a := &appv1.AppService{}
	g.Expect(env.Client.Get(ctx, key, a)).To(gomega.Succeed())
	return a
}

func patchApp(t *testing.T, key types.NamespacedName, f func(*appv1.AppService)) {
	t.Helper()
	testenv.Patch(t, env.Client, key, &appv1.AppService{}, f)
}

// events lists "type reason" of the Events about an AppService.
func events(g gomega.Gomega, ns, name string) []string {
	return app().Events(g, ns, name)
}

// waitQuiet waits until the writes have stopped: the counter does not move across a reconcile of key (poked
// through an annotation).
func waitQuiet(t *testing.T, rec *testenv.Reconciles, key types.NamespacedName, counter *testenv.Counter) {
	t.Helper()
	app().WaitQuiet(t, rec, key, counter, timeout)
}
