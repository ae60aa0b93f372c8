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

package at_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	atctl "github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/internal/controller/reconciler"
)

// atTable is what `kubectl get at` shows: the API server's Table of the namespace's Ats, as cells by column
// name, by At name.
func atTable(t *testing.T, ns string) map[string]map[string]any {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.GroupVersion, cfg.APIPath = &cnatv1alpha1.GroupVersion, "/apis"
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(cfg)
	must(t, err)
	body, err := rc.Get().Namespace(ns).Resource("ats").SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
		DoRaw(context.Background())
	must(t, err)
	table := &metav1.Table{}
	if err := json.Unmarshal(body, table); err != nil {
		t.Fatalf("%v: %.300s", err, body)
	}
	out := map[string]map[string]any{}
	for _, row := range table.Rows {
		cells := map[string]any{}
		for i, c := range table.ColumnDefinitions {
			cells[c.Name] = row.Cells[i]
		}
		out[fmt.Sprint(cells["Name"])] = cells
	}
	return out
}

// kubectl get at shows the zone, the next run (the schedule in UTC, while PENDING) and the last result (the
// Succeeded condition's reason).
func TestPrinterColumns(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	r := atctl.NewReconciler(env.Client, events.NewFakeRecorder(100), reconciler.Options{Clock: newClock(), Reader: env.Client}, atctl.Config{})
	berlin := createAt(t, ns, "berlin", "2030-06-01T16:00:00", "date", func(a *cnatv1alpha1.At) { a.Spec.TimeZone = ptr.To("Europe/Berlin") })
	missed := createAt(t, ns, "missed", sched(t0.Add(-10*time.Minute)), "date", func(a *cnatv1alpha1.At) { a.Spec.StartingDeadlineSeconds = ptr.To[int64](1) })
	for _, at := range []*cnatv1alpha1.At{berlin, missed} {
		_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key(at)})
		must(t, err)
	}
	rows := atTable(t, ns)
	g.Expect(rows["berlin"]).To(gomega.HaveKeyWithValue("Zone", "Europe/Berlin"))
	g.Expect(rows["berlin"]).To(gomega.HaveKeyWithValue("Next Run", "2030-06-01T14:00:00Z"))
	g.Expect(rows["berlin"]).To(gomega.HaveKeyWithValue("Phase", cnatv1alpha1.PhasePending))
	g.Expect(rows["berlin"]).To(gomega.HaveKeyWithValue("Result", cnatv1alpha1.ReasonScheduled))
	g.Expect(rows["missed"]).To(gomega.HaveKeyWithValue("Phase", cnatv1alpha1.PhaseMissed))
	g.Expect(rows["missed"]).To(gomega.HaveKeyWithValue("Result", cnatv1alpha1.ReasonMissed))
	g.Expect(rows["missed"]["Next Run"]).To(gomega.BeNil(), "a MISSED At has no next run")
}
