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

// Package metrics holds the metrics about what operator101 manages, beside controller-runtime's own: the
// objects of each kind by the kstatus condition that is True and its reason, the At runs and their start
// delay, the DatabaseUser checks and their latency per target, whether each DatabaseTarget is up, and the
// children refused as not owned. Definitions lists them all; docs/admin/monitoring.md's table is generated from
// it (hack/apidocs). Every label takes a bounded set of values: kinds, condition types and reasons the API
// defines (an At's failure reason is the kubelet's), and DatabaseTarget names, which the cluster admin owns.
//
// A Metrics is built once per manager (New) and passed to the controllers in reconciler.Options; cmd/main.go
// registers it, and the Objects collector, with controller-runtime's registry. No package-level state.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Namespace prefixes every metric name.
const Namespace = "operator101"

// The names of the metrics, without Namespace.
const (
	ObjectsName             = "objects"
	AtRunsName              = "at_runs_total"
	AtStartDelayName        = "at_start_delay_seconds"
	DatabaseUserChecksName  = "databaseuser_checks_total"
	DatabaseUserLatencyName = "databaseuser_check_duration_seconds"
	DatabaseTargetUpName    = "databasetarget_up"
	ChildrenNotOwnedName    = "children_not_owned_total"
)

// Definition is one metric: its full name, type, help and labels, as the docs' table shows them.
type Definition struct {
	Name   string
	Type   string
	Help   string
	Labels []string
}

// Definitions lists every metric of this package, in the docs' order.
func Definitions() []Definition {
	return []Definition{
		{Namespace + "_" + ObjectsName, "gauge",
			"Objects of each kind by the kstatus condition that is True (Ready, Reconciling, Stalled; None before the first status) and its reason, read from the manager's cache at scrape time.",
			[]string{"group", "kind", "condition", "reason"}},
		{Namespace + "_" + AtRunsName, "counter",
			"At runs that ended, by result: Succeeded (DONE), Failed (FAILED), Missed (MISSED).",
			[]string{"result"}},
		{Namespace + "_" + AtStartDelayName, "histogram",
			"Seconds from an At's schedule to the creation of its pod, for each At that starts.",
			nil},
		{Namespace + "_" + DatabaseUserChecksName, "counter",
			"DatabaseUser checks (an account made to match its spec) by target and result, the Ready reason; target is empty when the DatabaseUser names no existing DatabaseTarget.",
			[]string{"target", "result"}},
		{Namespace + "_" + DatabaseUserLatencyName, "histogram",
			"Seconds a DatabaseUser check took, by target (empty when the DatabaseUser names no existing DatabaseTarget).",
			[]string{"target"}},
		{Namespace + "_" + DatabaseTargetUpName, "gauge",
			"1 when the operator's last check of the DatabaseTarget logged in (Ready=True), else 0; read from the manager's cache at scrape time.",
			[]string{"target"}},
		{Namespace + "_" + ChildrenNotOwnedName, "counter",
			"Children the operator refused to write because an object it does not control has their name, by the child's kind; counted at each look (every 30 s while the name stays taken).",
			[]string{"kind"}},
	}
}

// Metrics holds the collectors the controllers write. Its methods are safe for concurrent use, and do
// nothing on a nil Metrics.
type Metrics struct {
	atRuns       *prometheus.CounterVec
	atStartDelay prometheus.Histogram
	dbuChecks    *prometheus.CounterVec
	dbuLatency   *prometheus.HistogramVec
	notOwned     *prometheus.CounterVec
}

// New returns the collectors, registered nowhere (Register).
func New() *Metrics {
	d := map[string]Definition{}
	for _, def := range Definitions() {
		d[def.Name] = def
	}
	opts := func(name string) (string, string) { return Namespace + "_" + name, d[Namespace+"_"+name].Help }
	counter := func(name string) *prometheus.CounterVec {
		n, h := opts(name)
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: n, Help: h}, d[n].Labels)
	}
	m := &Metrics{atRuns: counter(AtRunsName), dbuChecks: counter(DatabaseUserChecksName), notOwned: counter(ChildrenNotOwnedName)}
	// From a prompt start to the 5 minutes of a pod that does not start, and past it for an operator that was
	// down at the schedule.
	n, h := opts(AtStartDelayName)
	m.atStartDelay = prometheus.NewHistogram(prometheus.HistogramOpts{Name: n, Help: h,
		Buckets: []float64{0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900}})
	// A check on a near server takes milliseconds, one on an unreachable server its timeout.
	n, h = opts(DatabaseUserLatencyName)
	m.dbuLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: n, Help: h,
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}}, d[n].Labels)
	return m
}

// Register registers m's collectors with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.atRuns, m.atStartDelay, m.dbuChecks, m.dbuLatency, m.notOwned} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// AtRunEnded counts an At run that ended with result (Succeeded, Failed, Missed).
func (m *Metrics) AtRunEnded(result string) {
	if m != nil {
		m.atRuns.WithLabelValues(result).Inc()
	}
}

// AtStarted observes the delay from an At's schedule to its pod's creation.
func (m *Metrics) AtStarted(delay time.Duration) {
	if m != nil {
		m.atStartDelay.Observe(max(delay, 0).Seconds())
	}
}

// DatabaseUserChecked counts a DatabaseUser check on target that ended with result (the Ready reason) and
// took took. target is "" when it names no existing DatabaseTarget, which keeps a tenant's typo out of the labels.
func (m *Metrics) DatabaseUserChecked(target, result string, took time.Duration) {
	if m != nil {
		m.dbuChecks.WithLabelValues(target, result).Inc()
		m.dbuLatency.WithLabelValues(target).Observe(took.Seconds())
	}
}

// ChildNotOwned counts a child of kind refused because an object the owner does not control has its name.
func (m *Metrics) ChildNotOwned(kind string) {
	if m != nil {
		m.notOwned.WithLabelValues(kind).Inc()
	}
}
