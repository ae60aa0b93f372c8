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

package operator_test

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/operator101/operator101/controllers/internal/kit"
	"github.com/operator101/operator101/controllers/operator"
	"github.com/operator101/operator101/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

const timeout = 30 * time.Second

var ctx = context.Background()

// startOperator runs the MyWeb controller in a manager on cfg (env.Config when nil).
func startOperator(t *testing.T, cfg *rest.Config) (*testenv.Manager, *testenv.Reconciles) {
	t.Helper()
	rec := testenv.NewReconciles()
	mgr := env.StartManager(t, cfg, func(mgr ctrl.Manager) error {
		return operator.Setup(mgr, kit.Options{Workers: 2, AfterReconcile: rec.Add}, operator.Config{})
	})
	return mgr, rec
}
