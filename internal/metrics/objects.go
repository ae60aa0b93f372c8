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

package metrics

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/operator101/operator101/api/app/v1"
	batchv1alpha1 "github.com/operator101/operator101/api/batch/v1alpha1"
	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/api/conditions"
	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
)

// None is the condition label of an object none of whose Ready, Reconciling and Stalled is True: its status
// is not written yet.
const None = "None"

// scrapeTimeout bounds the reads of one scrape: a cache that has not synced yet leaves its kind out.
const scrapeTimeout = 5 * time.Second

// Objects computes, at each scrape, operator101_objects and operator101_databasetarget_up from the objects in
// reader (the manager's cache): no state is kept between scrapes, and an object that is gone is in no series.
type Objects struct {
	reader  client.Reader
	log     logr.Logger
	objects *prometheus.Desc
	up      *prometheus.Desc
}

// NewObjects returns the collector reading reader; log tells of a kind it could not read.
func NewObjects(reader client.Reader, log logr.Logger) *Objects {
	o := &Objects{reader: reader, log: log}
	for _, d := range Definitions() {
		switch d.Name {
		case Namespace + "_" + ObjectsName:
			o.objects = prometheus.NewDesc(d.Name, d.Help, d.Labels, nil)
		case Namespace + "_" + DatabaseTargetUpName:
			o.up = prometheus.NewDesc(d.Name, d.Help, d.Labels, nil)
		}
	}
	return o
}

// Describe implements prometheus.Collector.
func (o *Objects) Describe(ch chan<- *prometheus.Desc) {
	ch <- o.objects
	ch <- o.up
}

// kinds is every kind the operator reconciles: its group, its kind and an empty list of it.
func kinds() []struct {
	group, kind string
	list        client.ObjectList
} {
	return []struct {
		group, kind string
		list        client.ObjectList
	}{
		{operatorv1.GroupVersion.Group, "MyWeb", &operatorv1.MyWebList{}},
		{appv1.GroupVersion.Group, "AppService", &appv1.AppServiceList{}},
		{batchv1alpha1.GroupVersion.Group, "AppService", &batchv1alpha1.AppServiceList{}},
		{cnatv1alpha1.GroupVersion.Group, "At", &cnatv1alpha1.AtList{}},
		{mygroupv1alpha1.GroupVersion.Group, "DatabaseUser", &mygroupv1alpha1.DatabaseUserList{}},
		{mygroupv1alpha1.GroupVersion.Group, "Database", &mygroupv1alpha1.DatabaseList{}},
		{mygroupv1alpha1.GroupVersion.Group, "DatabaseTarget", &mygroupv1alpha1.DatabaseTargetList{}},
	}
}

// conditionsOf is the conditions of every item of list, by namespace/name (by name, cluster-scoped).
func conditionsOf(list client.ObjectList) (map[string][]metav1.Condition, error) {
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("items of %T: %w", list, err)
	}
	out := make(map[string][]metav1.Condition, len(items))
	for _, it := range items {
		obj, ok := it.(interface {
			client.Object
			conditions.Getter
		})
		if !ok {
			return nil, fmt.Errorf("%T has no conditions", it)
		}
		name := obj.GetName()
		if obj.GetNamespace() != "" {
			name = obj.GetNamespace() + "/" + name
		}
		out[name] = obj.GetConditions()
	}
	return out, nil
}

// State is the kstatus condition of conds that is True (Ready, Reconciling or Stalled), with its reason; None
// and "" when none is.
func State(conds []metav1.Condition) (condition, reason string) {
	for _, t := range []string{conditions.Stalled, conditions.Reconciling, conditions.Ready} {
		if c := meta.FindStatusCondition(conds, t); c != nil && c.Status == metav1.ConditionTrue {
			return t, c.Reason
		}
	}
	return None, ""
}

// Collect implements prometheus.Collector.
func (o *Objects) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	for _, k := range kinds() {
		if err := o.reader.List(ctx, k.list, client.UnsafeDisableDeepCopy); err != nil {
			o.log.Error(err, "metrics: cannot read the objects", "group", k.group, "kind", k.kind)
			continue
		}
		byName, err := conditionsOf(k.list)
		if err != nil {
			o.log.Error(err, "metrics: cannot read the objects", "group", k.group, "kind", k.kind)
			continue
		}
		type key struct{ condition, reason string }
		counts := map[key]int{}
		for name, conds := range byName {
			c, r := State(conds)
			counts[key{c, r}]++
			if k.kind == "DatabaseTarget" {
				up := 0.0
				if meta.IsStatusConditionTrue(conds, mygroupv1alpha1.ConditionReady) {
					up = 1
				}
				ch <- prometheus.MustNewConstMetric(o.up, prometheus.GaugeValue, up, name)
			}
		}
		for kv, n := range counts {
			ch <- prometheus.MustNewConstMetric(o.objects, prometheus.GaugeValue, float64(n), k.group, k.kind, kv.condition, kv.reason)
		}
	}
}
