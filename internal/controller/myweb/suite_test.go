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

package myweb_test

import (
	"context"
	"os"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/controller/myweb"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/internal/controller/route"
	"github.com/operator101/operator101/test/testenv"
	"github.com/operator101/operator101/test/webkindtest"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

const timeout = 30 * time.Second

var ctx = context.Background()

// web is the MyWeb for test/webkindtest: web().Start runs its controller, and the checks the AppService suite
// shares take it.
func web() webkindtest.Kind[*operatorv1.MyWeb] {
	return webkindtest.Kind[*operatorv1.MyWeb]{Env: env, Name: "MyWeb", Resource: "mywebs", Conditions: conditionsOf,
		Setup: func(mgr ctrl.Manager, o reconciler.Options, routes route.Served) error {
			return myweb.Setup(mgr, o, myweb.Config{Routes: routes})
		}}
}
