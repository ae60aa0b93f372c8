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
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/api/conditions"
	atctl "github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/internal/metrics"
	"github.com/operator101/operator101/test/kstatustest"
	"github.com/operator101/operator101/test/testenv"
)

// Through the reconciler, as Flux reads it: an At a year ahead is Current at once, a failed one is Failed;
// and the metrics count the run's start and its end.
func TestKstatusAndMetricsThroughTheReconciler(t *testing.T) {
	ns := env.NewNamespace(t, "at")
	m := metrics.New()
	reg := prometheus.NewPedanticRegistry()
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
	startOperator(t, nil, ns, reconciler.Options{Clock: newClock(), Metrics: m}, atctl.Config{})
	kstatusOf := func(g gomega.Gomega, k types.NamespacedName) status.Status {
		return kstatustest.Compute(t, getAt(g, k), cnatv1alpha1.GroupVersion.WithKind("At")).Status
	}

	later := createAt(t, ns, "next-year", sched(t0.AddDate(1, 0, 0)), "true")
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		g.Expect(kstatusOf(g, key(later))).To(gomega.Equal(status.CurrentStatus))
	})

	fails := createAt(t, ns, "fails", sched(t0), "exit 3")
	waitPhase(t, key(fails), cnatv1alpha1.PhaseRunning)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		g.Expect(kstatusOf(g, key(fails))).To(gomega.Equal(status.CurrentStatus))
	})
	setPodStatus(t, key(fails), corev1.PodFailed, &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error", FinishedAt: metav1.NewTime(t0)})
	waitPhase(t, key(fails), cnatv1alpha1.PhaseFailed)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		g.Expect(kstatusOf(g, key(fails))).To(gomega.Equal(status.FailedStatus))
	})

	const want = `
# HELP operator101_at_runs_total At runs that ended, by result: Succeeded (DONE), Failed (FAILED), Missed (MISSED).
# TYPE operator101_at_runs_total counter
operator101_at_runs_total{result="Failed"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "operator101_at_runs_total"); err != nil {
		t.Error(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	started := uint64(0)
	for _, f := range families {
		if f.GetName() == "operator101_at_start_delay_seconds" {
			started = f.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	if started != 1 {
		t.Errorf("%d starts observed, want 1 (the At a year ahead has not started)", started)
	}
}

// An At that finished under an operator without Ready, Reconciling and Stalled gets them from this one, in one
// write, and then none.
func TestFinishedBeforeTheUpgradeGetsReady(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	at := createAt(t, ns, "done-long-ago", sched(t0.Add(-time.Hour)), "true")
	at.Status = cnatv1alpha1.AtStatus{Phase: cnatv1alpha1.PhaseDone, Message: "the command exited 0",
		Conditions: []metav1.Condition{{Type: cnatv1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue,
			Reason: cnatv1alpha1.ReasonCompleted, Message: "the command exited 0", LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))}}}
	must(t, env.Client.Status().Update(context.Background(), at))

	cfg, counter := testenv.Counting(env.Config)
	rec := startOperator(t, cfg, ns, reconciler.Options{Clock: newClock()}, atctl.Config{}).Reconciles
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		got := getAt(g, key(at))
		g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, conditions.Ready)).To(gomega.BeTrue())
		g.Expect(kstatustest.Compute(t, got, cnatv1alpha1.GroupVersion.WithKind("At")).Status).To(gomega.Equal(status.CurrentStatus))
	})
	counter.Reset()
	testenv.WaitReconciled(t, rec, key(at), timeout, func() { testenv.Poke(t, env.Client, key(at), &cnatv1alpha1.At{}) })
	g.Expect(counter.Total()).To(gomega.Equal(0), "writes at rest: %s", counter)
}
