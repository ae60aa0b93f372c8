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

package metrics_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/operator101/operator101/api"
	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/api/conditions"
	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/metrics"
)

// Every name follows Prometheus' conventions: the operator101_ prefix, snake case, _total on counters only,
// a unit suffix on histograms; no label is an object's name or namespace except a DatabaseTarget's.
func TestDefinitionsFollowConventions(t *testing.T) {
	name := regexp.MustCompile(`^operator101_[a-z][a-z0-9_]*[a-z0-9]$`)
	for _, d := range metrics.Definitions() {
		if !name.MatchString(d.Name) {
			t.Errorf("%s: not a Prometheus name with the operator101_ prefix", d.Name)
		}
		if (d.Type == "counter") != strings.HasSuffix(d.Name, "_total") {
			t.Errorf("%s: a %s; only counters end in _total", d.Name, d.Type)
		}
		if d.Type == "histogram" && !strings.HasSuffix(d.Name, "_seconds") {
			t.Errorf("%s: a histogram without its unit", d.Name)
		}
		for _, l := range d.Labels {
			if l == "name" || l == "namespace" || l == "user" {
				t.Errorf("%s: label %s is unbounded", d.Name, l)
			}
		}
		if d.Help == "" {
			t.Errorf("%s: no help", d.Name)
		}
	}
}

// The collectors register, and a nil Metrics (a controller set up without one) counts nothing without failing.
func TestMetricsRecord(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := metrics.New()
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
	m.AtRunEnded("Succeeded")
	m.AtRunEnded("Failed")
	m.AtRunEnded("Failed")
	m.AtStarted(1500 * time.Millisecond)
	m.DatabaseUserChecked("main", "Ready", 20*time.Millisecond)
	m.ChildNotOwned("Service")
	const want = `
# HELP operator101_at_runs_total At runs that ended, by result: Succeeded (DONE), Failed (FAILED), Missed (MISSED).
# TYPE operator101_at_runs_total counter
operator101_at_runs_total{result="Failed"} 2
operator101_at_runs_total{result="Succeeded"} 1
# HELP operator101_children_not_owned_total Children the operator refused to write because an object it does not control has their name, by the child's kind; counted at each look (every 30 s while the name stays taken).
# TYPE operator101_children_not_owned_total counter
operator101_children_not_owned_total{kind="Service"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "operator101_at_runs_total", "operator101_children_not_owned_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "operator101_at_start_delay_seconds", "operator101_databaseuser_checks_total",
		"operator101_databaseuser_check_duration_seconds"); n != 3 {
		t.Errorf("%d series of the start delay and the checks, want 3", n)
	}
	var none *metrics.Metrics
	none.AtRunEnded("Succeeded")
	none.AtStarted(time.Second)
	none.DatabaseUserChecked("main", "Ready", time.Second)
	none.ChildNotOwned("Pod")
}

// The objects are counted per kind and kstatus condition from what the reader holds, at each scrape.
func TestObjects(t *testing.T) {
	cond := func(typ string, st metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: st, Reason: reason}
	}
	ready := []metav1.Condition{cond(conditions.Ready, "True", "MinimumReplicasAvailable"),
		cond(conditions.Reconciling, "False", "MinimumReplicasAvailable"), cond(conditions.Stalled, "False", "MinimumReplicasAvailable")}
	stalled := []metav1.Condition{cond(conditions.Ready, "False", "ChildNotOwned"),
		cond(conditions.Reconciling, "False", "ChildNotOwned"), cond(conditions.Stalled, "True", "ChildNotOwned")}
	web := func(name string, conds []metav1.Condition) *operatorv1.MyWeb {
		return &operatorv1.MyWeb{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Status: operatorv1.MyWebStatus{Conditions: conds}}
	}
	scheme := runtime.NewScheme()
	if err := api.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		web("a", ready), web("b", ready), web("c", stalled), web("d", nil),
		&cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns"}, Status: cnatv1alpha1.AtStatus{Conditions: []metav1.Condition{
			cond(conditions.Ready, "False", "Error"), cond(conditions.Stalled, "True", "Error")}}},
		&mygroupv1alpha1.DatabaseTarget{ObjectMeta: metav1.ObjectMeta{Name: "main"}, Status: mygroupv1alpha1.DatabaseTargetStatus{
			Conditions: []metav1.Condition{cond(mygroupv1alpha1.ConditionReady, "True", mygroupv1alpha1.ReasonConnected)}}},
		&mygroupv1alpha1.DatabaseTarget{ObjectMeta: metav1.ObjectMeta{Name: "old"}, Status: mygroupv1alpha1.DatabaseTargetStatus{
			Conditions: []metav1.Condition{cond(mygroupv1alpha1.ConditionReady, "False", mygroupv1alpha1.ReasonDatabaseUnreachable)}}},
	).Build()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewObjects(c, logr.Discard()))
	const want = `
# HELP operator101_databasetarget_up 1 when the operator's last check of the DatabaseTarget logged in (Ready=True), else 0; read from the manager's cache at scrape time.
# TYPE operator101_databasetarget_up gauge
operator101_databasetarget_up{target="main"} 1
operator101_databasetarget_up{target="old"} 0
# HELP operator101_objects Objects of each kind by the kstatus condition that is True (Ready, Reconciling, Stalled; None before the first status) and its reason, read from the manager's cache at scrape time.
# TYPE operator101_objects gauge
operator101_objects{condition="None",group="mygroup.handsomeguy.cn",kind="DatabaseTarget",reason=""} 1
operator101_objects{condition="None",group="operator.k8s-summit.org",kind="MyWeb",reason=""} 1
operator101_objects{condition="Ready",group="mygroup.handsomeguy.cn",kind="DatabaseTarget",reason="Connected"} 1
operator101_objects{condition="Ready",group="operator.k8s-summit.org",kind="MyWeb",reason="MinimumReplicasAvailable"} 2
operator101_objects{condition="Stalled",group="cnat.programming-kubernetes.info",kind="At",reason="Error"} 1
operator101_objects{condition="Stalled",group="operator.k8s-summit.org",kind="MyWeb",reason="ChildNotOwned"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
